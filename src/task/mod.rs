//! Task files: the YAML model, defaults and validation.
//!
//! Parsing keeps the YAML location of every value that is checked after
//! parsing (tool names, the policy path, durations), so each mistake is
//! reported as `file:line:column` with the field it is about.

pub(crate) mod agents;
mod agents_file;
mod duration;
mod load;
mod model;
mod options;
pub(crate) mod params;
mod resolve;
mod resolved;
mod sandbox_file;
mod sections;
mod shadow;
mod tripwires;

pub(crate) use crate::provider::ModelSpec;
pub(crate) use duration::{DurationError, parse_duration, show_duration};
pub(crate) use load::{FileKind, load_task, load_tasks, validate_file};
pub(crate) use model::{Mode, TaskFile};
pub use options::LoadOptions;
pub(crate) use resolved::{Task, TaskCheck};
pub(crate) use tripwires::canaries;
