//! What a run leaves behind: transcript.json per task,
//! changes.diff per task, junit.xml and summary.md for the run, and the
//! progress lines on stderr. Reporters only read results; they never steer
//! the run.

pub mod bars;
pub mod events;
pub mod html;
pub mod junit;
pub(crate) mod matrix;
pub(crate) mod money;
pub mod progress;
pub(crate) mod repeats;
pub(crate) mod repositories;
pub(crate) mod shadow;
pub mod summary;
pub mod transcript;

pub use transcript::{CheckRecord, Outcome, OutcomeStatus, Transcript, TranscriptRecorder};

/// How the reason of a task skipped because the run's `--max-cost` was
/// spent begins.
pub const BUDGET_SPENT: &str = "the run's --max-cost of $";

/// Whether `t` did not start because the run's budget was spent.
pub fn skipped_by_budget(t: &Transcript) -> bool {
    t.outcome.status == OutcomeStatus::Skipped && t.outcome.reason.starts_with(BUDGET_SPENT)
}
