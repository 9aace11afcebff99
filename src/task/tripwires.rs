//! A task's tripwires: `max_denials` and `fail_fast`, read and checked
//! here (the agent loop trips them, [`crate::engine::Tripwires`]).

use std::path::Path;

use runner_output::Tripwire;
use runner_policy::ConfigError;
use serde_saphyr::Spanned;

/// What ends a task at once on a denial.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskTripwires {
    /// End the task at this many denied calls.
    pub max_denials: Option<u32>,
    /// End it at the first denial of one of these classes.
    pub fail_fast: Vec<Tripwire>,
}

impl TaskTripwires {
    /// A fresh count for one run of the task; none when no wire is set.
    pub fn armed(&self) -> Option<std::sync::Arc<crate::engine::Tripwires>> {
        (self.max_denials.is_some() || !self.fail_fast.is_empty()).then(|| {
            std::sync::Arc::new(crate::engine::Tripwires::new(
                self.max_denials,
                self.fail_fast.clone(),
            ))
        })
    }
}

/// Reads `max_denials` and `fail_fast`; errors name the file, the line
/// and the field.
pub fn resolve(
    path: &Path,
    max_denials: Option<&Spanned<u32>>,
    fail_fast: &[Spanned<String>],
    errors: &mut Vec<ConfigError>,
) -> TaskTripwires {
    let max_denials = match max_denials {
        Some(m) if m.value == 0 => {
            errors.push(ConfigError::at(
                path,
                &m.referenced,
                "max_denials: must be at least 1 (leave it out for no budget; `fail_on_denial: true` fails the task at its end on any denial)",
            ));
            None
        }
        m => m.map(|m| m.value),
    };
    let mut classes = Vec::new();
    for entry in fail_fast {
        match Tripwire::fail_fast_class(entry.value.trim()) {
            Some(c) if !classes.contains(&c) => classes.push(c),
            Some(_) => {}
            None => {
                let known: Vec<&str> = Tripwire::FAIL_FAST.iter().map(|c| c.as_str()).collect();
                errors.push(ConfigError::at(
                    path,
                    &entry.referenced,
                    format!(
                        "fail_fast: unknown class `{}`; the classes are {}",
                        entry.value,
                        known.join(", ")
                    ),
                ));
            }
        }
    }
    TaskTripwires {
        max_denials,
        fail_fast: classes,
    }
}
