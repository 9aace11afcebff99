//! What the project's own tests need from the crate's private parts
//! (feature `test-tools`, never in a release build): running a process
//! under the sandbox commands get, with writes confined to given folders
//! and no network. The shell differential test runs real bash on
//! generated scripts this way, so that no script, however hostile, can
//! write outside its throwaway folder.

use std::path::PathBuf;
use std::process::Command;

/// The macOS profile's text, for its golden tests (made on every platform).
pub use crate::contain::HiddenTree;
/// Redaction, for its bench (the cost per megabyte of tool output).
pub use crate::contain::redact::Redactor;
pub use crate::contain::seatbelt;
/// The rate governor, for its bench (its cost per request).
pub use crate::provider::governor::{Governor, Limits};

/// Confines `cmd` (applied in the child before `exec`): writes only in
/// `writable` (and `/dev/null`), no network. Errors when this machine (or
/// build) has no sandbox: the caller must not run the command unconfined.
pub fn confine(
    cmd: &mut Command,
    writable: &[PathBuf],
) -> Result<String, crate::contain::SandboxError> {
    crate::contain::confine_std(cmd, writable)
}

/// Confines the calling thread and what it starts from then on, as
/// [`confine`] confines one command (Linux only): for a thread of the
/// test that starts many commands, which then start without a `fork` of
/// the whole test process. The thread stays confined until it ends: give
/// it its own thread.
pub fn confine_thread(writable: &[PathBuf]) -> Result<String, crate::contain::SandboxError> {
    crate::contain::confine_thread(writable)
}
