//! The violations phase: the backstop behind every edit deny rule.
//!
//! The analysis decides a call before it runs, from what its words show;
//! code it cannot see into (inline interpreter code an exact rule allowed,
//! an MCP server, a hook, a symlink made earlier) can still change a file
//! the policy denies editing. So after the agent stops, and before any
//! check runs or anything is compared, every change in the copy is
//! checked against the policy's deny rules (`Edit`, and `Read`: a path
//! denied to reading is denied to editing): a denied change is reverted in
//! the copy (the original's content, or the file removed), recorded as a
//! violation with its rule, and the task fails ([`verdict`]). Nothing the
//! policy denies can leave the copy: not in `changes.diff`, not through
//! `--apply`, not seen by a check. After the last attempt, however it
//! ended (a timeout, a cancellation), [`settle`] takes the changes that
//! remain.

use std::path::Path;

use runner_output::Violation;
use runner_policy::PolicySet;

use crate::report::transcript::Counts;
use crate::report::{Outcome, OutcomeStatus};
use crate::task::Task;
use crate::workspace::{ChangeKind, FileChange, FileContent, IsolatedWorkspace};

/// The changes the task leaves, once what the policy denies editing is
/// put back (recorded in `found`); or the error outcome when the copy
/// cannot be compared or put back (nothing of it is in the diff then).
pub(super) fn settle(
    iso: &IsolatedWorkspace,
    policy: &PolicySet,
    found: &mut Vec<Violation>,
    outcome: Outcome,
) -> (Outcome, Vec<FileChange>) {
    match revert_denied_changes(iso, policy, found) {
        Ok(changes) => (outcome, changes),
        Err(e) => (
            Outcome {
                status: OutcomeStatus::Error,
                reason: format!(
                    "could not compare the workspace with the original, or put back a change the policy denies (nothing of it is in the diff): {e}"
                ),
                error_class: None,
                tripwire: None,
            },
            Vec::new(),
        ),
    }
}

/// A passing task fails when a call was denied and it has
/// `fail_on_denial`, or when it changed a path the policy denies editing.
pub(super) fn verdict(
    outcome: Outcome,
    task: &Task,
    counts: &Counts,
    violations: &[Violation],
) -> Outcome {
    if outcome.status != OutcomeStatus::Passed {
        return outcome;
    }
    if task.fail_on_denial && counts.denied_calls > 0 {
        return Outcome {
            status: OutcomeStatus::Failed,
            reason: format!(
                "{} call(s) were denied and fail_on_denial is set",
                counts.denied_calls
            ),
            error_class: None,
            tripwire: None,
        };
    }
    match violations.first() {
        Some(v) => Outcome {
            status: OutcomeStatus::Failed,
            reason: format!(
                "the agent changed {} path(s) the policy denies editing (`{}`: {}, {}); the change(s) were dropped",
                violations.len(),
                v.path,
                v.rule,
                v.policy
            ),
            error_class: None,
            tripwire: None,
        },
        None => outcome,
    }
}

/// Reverts the copy's changes to paths `policy` denies editing, adds a
/// violation for each to `found` (once per path), and returns the other
/// changes. A policy without a path deny rule costs nothing more than the
/// comparison.
pub(crate) fn revert_denied_changes(
    iso: &IsolatedWorkspace,
    policy: &PolicySet,
    found: &mut Vec<Violation>,
) -> std::io::Result<Vec<FileChange>> {
    let mut changes = iso.changes()?;
    if !policy.denies_paths() {
        return Ok(changes);
    }
    let mut failed = None;
    changes.retain(|change| {
        let link = (change.new.as_ref()).and_then(|n| n.symlink.as_deref());
        let Some((rule, layer)) =
            super::links::edit_refusal(policy, iso.path(), &change.path, link)
        else {
            return true;
        };
        if let Err(e) = revert(iso.path(), change) {
            failed.get_or_insert(e);
        }
        if !found.iter().any(|v| v.path == change.path) {
            found.push(Violation {
                path: change.path.clone(),
                change: change.kind,
                rule,
                policy: layer,
            });
        }
        false
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(changes),
    }
}

/// Puts one path of the copy back as the original had it.
fn revert(root: &Path, change: &FileChange) -> std::io::Result<()> {
    let path = root.join(&change.path);
    if path.symlink_metadata().is_ok() {
        std::fs::remove_file(&path)?;
    }
    match (&change.kind, &change.old) {
        (ChangeKind::Added, _) | (_, None) => Ok(()),
        (_, Some(old)) => restore(&path, old),
    }
}

fn restore(path: &Path, old: &FileContent) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if let Some(target) = &old.symlink {
        return crate::sys::symlink(target, path);
    }
    std::fs::write(path, &old.bytes)?;
    crate::sys::set_mode(path, old.mode)
}
