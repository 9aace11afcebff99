//! Task files: the YAML model, defaults and validation.
//!
//! Parsing keeps the YAML location of every value that is checked after
//! parsing (tool names, the policy path, durations), so each mistake is
//! reported as `file:line:column` with the field it is about.

mod duration;
mod load;
mod model;
pub mod params;
mod resolve;
mod sections;

pub use crate::provider::{ModelSpec, ScriptCall, ScriptTurn};
pub use duration::parse_duration;
pub use load::{FileKind, LoadOptions, Task, TaskCheck, load_task, load_tasks, validate_file};
pub use model::{Mode, PolicyRef, TaskFile};
