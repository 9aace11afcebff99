//! Running tasks end to end: prepare an isolated workspace, run
//! the agent, run the checks (retrying with their output), diff the copy
//! against the original, and write the outputs atomically.

mod cancel;
mod checks;
mod outputs;
mod prompt;
mod shard;
mod task_run;

pub use cancel::Cancel;
pub use outputs::{write_run_outputs, write_run_reports, write_task_outputs};
pub use prompt::system_prompt;
pub use shard::{Shard, in_shard};
pub use task_run::{RunOptions, TaskResult, provider_config, run_task, task_registry};
