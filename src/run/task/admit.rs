//! The first phase: whether the task starts at all, and with which model.
//! The provider comes first: a task that cannot reach its model should not
//! pay for a copy of the workspace.

use super::progress::Prior;
use super::scene::Scene;
use crate::provider::batch::BatchJoin;
use crate::report::{Outcome, OutcomeStatus};
use crate::run::models::make_provider;

/// Why a task did not start.
pub(super) enum NotAdmitted {
    /// Its model cannot be reached (no key, an unknown vendor ...).
    Failure(String),
    /// The run was cancelled before it started.
    Cancelled(String),
    /// The run's budget was spent before it started.
    Skipped(String),
}

impl From<NotAdmitted> for Outcome {
    fn from(e: NotAdmitted) -> Self {
        let (status, reason) = match e {
            NotAdmitted::Failure(r) => (OutcomeStatus::Error, r),
            NotAdmitted::Cancelled(r) => (OutcomeStatus::Cancelled, r),
            NotAdmitted::Skipped(r) => (OutcomeStatus::Skipped, r),
        };
        Outcome {
            status,
            reason,
            error_class: None,
            tripwire: None,
        }
    }
}

/// The task's model, unless the run was cancelled or its budget spent
/// before the task started. A resumed task's scripted model plays its
/// script from where the earlier runs left it; under `--batch`, its model
/// collects the batch an earlier run was waiting on.
pub(super) fn admit(
    scene: &Scene,
    prior: Option<&Prior>,
) -> Result<crate::provider::Seated, NotAdmitted> {
    let opts = scene.opts;
    if let Some(why) = opts.cancel.reason() {
        return Err(NotAdmitted::Cancelled(format!(
            "cancelled before it started ({why})"
        )));
    }
    if let Some(b) = &opts.budget
        && b.spent() >= b.max
    {
        return Err(NotAdmitted::Skipped(format!(
            "{}{} was spent (${:.4}) before it started",
            crate::report::BUDGET_SPENT,
            b.max,
            b.spent()
        )));
    }
    if let Some(m) = &scene.siblings
        && m.others() >= m.max
    {
        return Err(NotAdmitted::Skipped(format!(
            "the task's max_cost of ${} was spent by its other runs (${:.4}) before this one started",
            m.max,
            m.others()
        )));
    }
    if let Some(why) = (opts.best_of.as_ref()).and_then(|b| b.needless(&scene.task.name)) {
        return Err(NotAdmitted::Skipped(why));
    }
    if let (Some(b), Some(repo)) = (&opts.fleet, &scene.task.repository)
        && let Err(failed) = b.may_start(&repo.folder)
    {
        return Err(NotAdmitted::Skipped(format!(
            "not run: --max-failures reached ({failed} repositories had failed before this one started)"
        )));
    }
    let done = prior.map_or(0, |p| p.transcript.turns.len());
    let batch = opts
        .batch
        .filter(|_| scene.task.batch)
        .map(|timeout| BatchJoin {
            timeout,
            resume: prior.and_then(|p| p.transcript.pending_batch.clone()),
        });
    make_provider(scene.task, done, batch).map_err(|e| NotAdmitted::Failure(e.to_string()))
}
