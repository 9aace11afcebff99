//! `runner run --apply`: each passing task's changes merged into its
//! original workspace, one task after another. A task whose changes do
//! not merge becomes a failure (`conflict`), its outputs rewritten with
//! the reason; its diff stays in `changes.diff`.

use std::path::Path;

use super::outputs::{APPLIED, write_task_outputs};
use super::task::TaskResult;
use crate::report::{Outcome, OutcomeStatus};
use crate::workspace::{ApplyError, apply_changes};

/// The tasks `--resume --apply` kept (they ended in an earlier run) that
/// passed with changes no run applied: that run was killed before its
/// `--apply`, or had none. Said on stderr, never applied twice.
pub fn unapplied_kept(results: &[TaskResult], out: &Path) -> Vec<String> {
    results
        .iter()
        .filter(|r| r.passed() && r.changes.is_empty() && !r.diff.trim().is_empty())
        .filter(|r| !out.join(&r.transcript.task).join(APPLIED).exists())
        .map(|r| r.transcript.task.clone())
        .collect()
}

/// Applies the changes of every passing task; false when one could not be
/// applied.
pub fn apply_passed(results: &mut [TaskResult], out: &Path) -> bool {
    let mut all_applied = true;
    for r in results
        .iter_mut()
        .filter(|r| r.passed() && !r.changes.is_empty())
    {
        match apply_changes(&r.workspace, &r.changes) {
            Ok(n) => {
                eprintln!(
                    "[{}] applied {n} change(s) to {}",
                    r.transcript.task,
                    r.workspace.display()
                );
                // What a later `--resume --apply` reads: applied, not to be
                // applied again.
                let marker = out.join(&r.transcript.task).join(APPLIED);
                if let Err(e) =
                    crate::workspace::durable_write_str(&marker, &r.workspace.display().to_string())
                {
                    eprintln!("error: writing {}: {e}", marker.display());
                }
            }
            Err(e) => {
                eprintln!("error: [{}] --apply: {e}", r.transcript.task);
                let status = match e {
                    ApplyError::Conflict { .. } => OutcomeStatus::Conflict,
                    ApplyError::Io { .. } => OutcomeStatus::Error,
                };
                r.transcript.outcome = Outcome {
                    status,
                    reason: format!("--apply: {e} (its diff is in changes.diff)"),
                    error_class: None,
                };
                if let Err(e) = write_task_outputs(out, r) {
                    eprintln!("error: writing the outputs of {}: {e}", r.transcript.task);
                }
                all_applied = false;
            }
        }
    }
    all_applied
}
