//! Running tasks end to end: prepare an isolated workspace, run
//! the agent, run the checks (retrying with their output), diff the copy
//! against the original, and write the outputs atomically; run many
//! (`--jobs`, `--shard`), apply their changes (`--apply`) and stop them
//! on a signal.

mod agents;
mod apply;
mod backstops;
mod best_of;
mod cancel;
mod journal;
mod models;
mod outputs;
mod prompt;
mod resume;
mod schedule;
mod shard;
mod task;

pub(crate) use apply::refused_change;
pub use apply::{apply_kept, apply_passed};
pub use best_of::{BestOf, Keep};
pub use cancel::{Cancel, decide_exit, watch_signals};
pub use journal::read as read_journal;
pub use models::{fallback_configs, provider_config};
pub use outputs::{write_report_html, write_run_outputs, write_run_reports, write_task_outputs};
pub use resume::resumable;
pub use schedule::run_tasks;
pub use shard::{Shard, keep_shard, shards_of};
pub(crate) use task::{CopyPlan, Prepared, group_of, revert_denied_changes};
pub use task::{FailureBreaker, RunBudget, RunOptions, TaskResult, task_registry, unstarted};
