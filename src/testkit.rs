//! What the project's own tests need from the crate's private parts
//! (feature `test-tools`, never in a release build): running a process
//! under the sandbox commands get, with writes confined to given folders
//! and no network. The shell differential test runs real bash on
//! generated scripts this way, so that no script, however hostile, can
//! write outside its throwaway folder.

use std::path::PathBuf;
use std::process::Command;

/// Redaction, for its bench (the cost per megabyte of tool output).
pub use crate::contain::redact::Redactor;
use crate::contain::{Confinement, SandboxMode, SandboxSettings};
/// The rate governor, for its bench (its cost per request).
pub use crate::provider::governor::{Governor, Limits};

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error(transparent)]
    Sandbox(#[from] crate::contain::SandboxError),
    #[error("no sandbox: {0}")]
    Unavailable(String),
}

/// Confines `cmd` (applied in the child before `exec`): writes only in
/// `writable` (and `/dev/null`), no network. Errors when the kernel has no
/// Landlock: the caller must not run the command unconfined.
pub fn confine(cmd: &mut Command, writable: &[PathBuf]) -> Result<String, ConfineError> {
    use std::os::unix::process::CommandExt;
    let settings = SandboxSettings {
        mode: SandboxMode::Required,
        network: false,
        ..SandboxSettings::default()
    };
    let (c, description) = Confinement::new(&settings, writable)?;
    let c = c.ok_or_else(|| ConfineError::Unavailable(description.clone()))?;
    // SAFETY: `apply` makes only system calls (no allocation, no locks),
    // which is what may run between fork and exec.
    unsafe {
        cmd.pre_exec(move || c.apply());
    }
    Ok(description)
}
