//! `runner run --apply`: each passing task's changes merged into its
//! original workspace, one task after another. A task whose changes do
//! not merge becomes a failure (`conflict`), its outputs rewritten with
//! the reason; its diff stays in `changes.diff`.

use std::path::Path;

use super::outputs::write_task_outputs;
use super::task::TaskResult;
use crate::report::{Outcome, OutcomeStatus};
use crate::workspace::{ApplyError, apply_changes};

/// Applies the changes of every passing task; false when one could not be
/// applied.
pub fn apply_passed(results: &mut [TaskResult], out: &Path) -> bool {
    let mut all_applied = true;
    for r in results
        .iter_mut()
        .filter(|r| r.passed() && !r.changes.is_empty())
    {
        match apply_changes(&r.workspace, &r.changes) {
            Ok(n) => eprintln!(
                "[{}] applied {n} change(s) to {}",
                r.transcript.task,
                r.workspace.display()
            ),
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
