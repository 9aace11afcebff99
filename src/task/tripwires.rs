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
    /// A fresh count for one run of the task, with its canaries; none
    /// when no wire is set.
    pub fn armed(
        &self,
        canaries: Option<&std::sync::Arc<crate::canary::Canaries>>,
    ) -> Option<std::sync::Arc<crate::engine::Tripwires>> {
        if self.max_denials.is_none() && self.fail_fast.is_empty() && canaries.is_none() {
            return None;
        }
        let wires = crate::engine::Tripwires::new(self.max_denials, self.fail_fast.clone());
        Some(std::sync::Arc::new(match canaries {
            Some(c) => wires.with_canaries(c.clone()),
            None => wires,
        }))
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

/// `canaries:` as written: `true`, `false`, or `{enabled, fail_on_read}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, schemars::JsonSchema)]
#[schemars(with = "CanariesAny")]
pub struct CanariesFile {
    pub enabled: bool,
    pub fail_on_read: bool,
}

/// The shapes `canaries:` takes, for the schema.
#[derive(schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum CanariesAny {
    On(bool),
    Settings {
        /// Default true.
        enabled: Option<bool>,
        /// A canary the model reads (in a tool's result) fails the task
        /// too (default false: an event and a summary line).
        fail_on_read: Option<bool>,
    },
}

impl<'de> serde::Deserialize<'de> for CanariesFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CanariesFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or {enabled, fail_on_read}")
            }
            fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<CanariesFile, E> {
                Ok(CanariesFile {
                    enabled: on,
                    fail_on_read: false,
                })
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<CanariesFile, M::Error> {
                let mut out = CanariesFile {
                    enabled: true,
                    fail_on_read: false,
                };
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "enabled" => out.enabled = map.next_value()?,
                        "fail_on_read" => out.fail_on_read = map.next_value()?,
                        other => {
                            return Err(serde::de::Error::unknown_field(
                                other,
                                &["enabled", "fail_on_read"],
                            ));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// Whether a task plants canaries, and how strictly: as its `canaries:`
/// says, else on in CI (`CI=true` in the runner's environment).
pub fn canaries(field: Option<CanariesFile>) -> Option<CanariesFile> {
    let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    let settings = field.unwrap_or(CanariesFile {
        enabled: ci,
        fail_on_read: false,
    });
    settings.enabled.then_some(settings)
}
