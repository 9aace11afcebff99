//! A task's tripwires: `max_denials` and `fail_fast`, read and checked
//! here (the agent loop trips them, [`crate::engine::Tripwires`]).

use std::path::Path;

use runner_output::Tripwire;
use runner_policy::CanariesFile;
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

/// Whether a task plants canaries, and how strictly. A policy layer's
/// `canaries: true` holds whatever the task says (a policy only adds
/// walls); otherwise the task's `canaries:`, else a layer's `false`, else
/// on in CI (`CI=true` in the runner's environment). `fail_on_read` when
/// the task or any layer says so.
pub fn canaries<'a>(
    task: Option<&CanariesFile>,
    layers: impl IntoIterator<Item = &'a runner_policy::Policy>,
) -> Option<CanariesFile> {
    let said: Vec<&CanariesFile> = layers
        .into_iter()
        .filter_map(|l| l.canaries.as_ref())
        .collect();
    let fail_on_read = task.is_some_and(|t| t.fail_on_read) || said.iter().any(|l| l.fail_on_read);
    let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    let enabled = if said.iter().any(|l| l.enabled) {
        true
    } else if let Some(t) = task {
        t.enabled
    } else if !said.is_empty() {
        false
    } else {
        ci
    };
    let inspect_https =
        task.is_some_and(|t| t.inspect_https) || said.iter().any(|l| l.inspect_https);
    enabled.then(|| CanariesFile {
        enabled,
        fail_on_read,
        file: task.and_then(|t| t.file.clone()),
        inspect_https,
    })
}

/// A task's `canaries.file`: a path inside `workspace` where no file is
/// (a decoy is a file of its own, never one of the repository's).
pub fn check_decoy_file(
    (path, text): (&Path, &str),
    field: Option<&CanariesFile>,
    workspace: &Path,
    errors: &mut Vec<ConfigError>,
) {
    let Some(file) = field.and_then(|c| c.file.as_deref()) else {
        return;
    };
    let rel = Path::new(file);
    let inside = !file.is_empty()
        && rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let why = if !inside {
        format!(
            "canaries.file: `{file}` is outside the task's folders: name a path inside its workspace, such as config/credentials.json"
        )
    } else if workspace.join(rel).symlink_metadata().is_ok() {
        format!(
            "canaries.file: `{file}` exists in the workspace: a decoy is a file of its own, at a path where none is"
        )
    } else {
        return;
    };
    // The line of `canaries:` (the setting keeps no location of its own).
    let line = text
        .lines()
        .position(|l| l.starts_with("canaries:"))
        .map_or(0, |i| i as u64 + 1);
    errors.push(ConfigError::new(path, line, 1, why));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(canaries: Option<(bool, bool)>) -> runner_policy::Policy {
        let mut p = runner_policy::Policy::builtin_default();
        p.canaries = canaries.map(|(enabled, fail_on_read)| CanariesFile {
            enabled,
            fail_on_read,
            file: None,
            inspect_https: false,
        });
        p
    }

    fn on(enabled: bool) -> Option<CanariesFile> {
        Some(CanariesFile {
            enabled,
            fail_on_read: false,
            file: None,
            inspect_https: false,
        })
    }

    #[test]
    fn a_policys_true_holds_over_the_task_and_a_false_only_over_silence() {
        let required = layer(Some((true, false)));
        let silent = layer(None);
        let off = layer(Some((false, false)));
        assert!(canaries(on(false).as_ref(), [&required, &silent]).is_some());
        assert!(
            canaries(on(true).as_ref(), [&off]).is_some(),
            "the task asks"
        );
        assert!(canaries(None, [&off, &silent]).is_none());
        assert!(canaries(on(false).as_ref(), [&silent]).is_none());
        let strict = layer(Some((true, true)));
        assert!(canaries(on(true).as_ref(), [&strict]).unwrap().fail_on_read);
    }
}
