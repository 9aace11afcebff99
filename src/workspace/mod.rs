//! The workspace: where a task's agent works.
//!
//! Everything the agent touches goes through this module: path arguments are
//! resolved here (and refused when they leave the workspace), files are written
//! atomically, each task gets an isolated copy of the user's tree, and the copy
//! is compared with the original to produce a git-style diff.

mod apply;
mod atomic;
mod blob;
mod diff;
mod diff_bound;
mod git_config;
mod git_view;
mod history;
mod isolate;
#[cfg(unix)]
mod open;
#[cfg(not(unix))]
#[path = "open_other.rs"]
mod open;
pub mod overlay;
mod paths;
mod snapshot;

pub(crate) use apply::{ApplyError, apply_changes};
pub(crate) use atomic::{atomic_write, atomic_write_str, durable_write, durable_write_str};
pub(crate) use diff::{ChangeKind, FileChange, FileContent, render_file_diff, render_git_diff};
pub use diff_bound::{DEFAULT_MAX_DIFF_BYTES, render_bounded_diff};
#[doc(hidden)]
pub use history::forget_listings;
pub use isolate::{Differ, IsolatedWorkspace};
pub use overlay::WorkspaceMode;
pub(crate) use paths::{PathError, ResolveMemo, ResolvedPath};
pub use paths::{Workspace, normalize_lexically};
