//! The tool system: typed tools, their registry and their outputs.
//!
//! A tool is one type implementing [`Tool`]: its arguments are one Rust struct
//! deriving `Deserialize` and `JsonSchema`, which is at once the type the tool
//! receives, the validator of the model's JSON and the schema the model sees.
//! The [`Registry`] holds tools behind the object-safe [`DynTool`], so
//! built-in, test and MCP tools sit side by side, and renders their
//! declarations in each provider's dialect. Adding a tool is one file in
//! `builtin/` and one line in [`builtin::all`]; the engine never changes.

pub mod builtin;
mod context;
mod output;
mod read_tracker;
mod registry;
mod spill;
mod tool;

pub use context::{Delegate, ToolContext};
pub use output::{ToolError, ToolErrorKind, ToolOutput};
pub use registry::Registry;
pub(crate) use spill::DEFAULT_MAX_RESULT_CHARS;
pub use spill::spill_if_large;
pub(crate) use tool::{
    CallFuture, Description, DynTool, PreparedCall, Risk, Tool, ToolKind, typed,
};
