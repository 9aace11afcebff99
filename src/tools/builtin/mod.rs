//! The built-in tools, one file each. To add a tool: write its file and add
//! one line to [`all`].

mod bash;
mod edit_file;
mod files;
mod glob;
mod grep;
mod ls;
#[cfg(feature = "test-tools")]
mod probe;
mod read_file;
mod save_memory;
mod task;
mod web_fetch;
mod write_file;

use std::sync::Arc;

use super::tool::{DynTool, typed};

pub use bash::bash_is_read_only;
pub(crate) use files::{
    diff_stats, io_error, looks_binary, path_signatures, read_text, regular_file, text_diff,
};
pub use task::TaskTool;

/// Every built-in tool, in the order the model sees them.
pub fn all() -> Vec<Arc<dyn DynTool>> {
    vec![
        typed(read_file::ReadFile),
        typed(write_file::WriteFile),
        typed(edit_file::EditFile),
        typed(ls::Ls),
        typed(glob::Glob),
        typed(grep::Grep),
        typed(bash::Bash),
        typed(save_memory::SaveMemory),
        typed(web_fetch::WebFetch),
        #[cfg(feature = "test-tools")]
        typed(probe::Probe),
    ]
}

/// Built-in tools a task gets only when its `tools:` names them: what
/// reaches beyond the machine is asked for, not handed out.
pub const OPT_IN: &[&str] = &["web_fetch"];
