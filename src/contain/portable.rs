//! No OS sandbox: platforms other than Linux and macOS, and a build with
//! `--cfg runner_portable` (or the `portable` feature) on any platform.
//!
//! Commands run unconfined, with the scrubbed environment and a private
//! temp folder as everywhere; the transcript's `sandbox` says so. Nothing
//! stands behind the policy's deny rules but what holds on every platform
//! (read-denied files left out of the copy, edit-denied changes reverted
//! on the result), so the analysis decides as strictly as with no
//! backstop: inline code under a deny rule it cannot see past is refused.
//! The `network:` rules apply to the runner's own fetches and to commands
//! that use the proxy variables; nothing holds other connections.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::Arc;

pub use super::unsupervised::{ProcessBound, Watch, remove_leftovers};
use super::{HiddenTree, SandboxError, SandboxMode, SandboxSettings};

/// What sandboxes commands here (`runner doctor`'s `sandbox`).
pub const SANDBOX: &str = "none";

/// Why there is no sandbox.
#[cfg(runner_portable)]
const WHY: &str = "this build has no OS sandbox (a portable build)";
/// Why there is no sandbox.
#[cfg(not(runner_portable))]
const WHY: &str = "the runner has no sandbox on this platform";

/// Never made: [`Confinement::hiding`] always gives `None`.
#[derive(Debug)]
pub struct Confinement {
    pub description: String,
    pub hides: bool,
}

impl Confinement {
    pub fn hiding(
        settings: &SandboxSettings,
        _writable: &[PathBuf],
        _hidden: Option<&HiddenTree>,
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        match settings.mode {
            SandboxMode::Required => Err(SandboxError::Required(WHY.into())),
            SandboxMode::Off => Ok((None, "off".into())),
            SandboxMode::BestEffort => {
                let mut d = format!(
                    "none ({WHY}): commands ran unconfined, and the policy's deny rules were decided as with no backstop"
                );
                if settings.proxy_port.is_some() {
                    d.push_str(
                        "; the network: rules hold only for commands that use the proxy variables",
                    );
                }
                Ok((None, d))
            }
        }
    }

    pub fn with_policy(self, _policy: &runner_policy::PolicySet, _path: Option<&str>) -> Self {
        self
    }

    pub fn with_net_log(self, _log: Arc<crate::net::NetLog>) -> Self {
        self
    }

    pub fn pids(&self) -> Option<Arc<ProcessBound>> {
        None
    }

    pub fn confines_writes(&self) -> bool {
        false
    }

    pub fn supervises(&self) -> bool {
        false
    }

    pub fn supervises_exec(&self) -> bool {
        false
    }

    /// No private `/tmp` here: the same confinement.
    pub fn with_private_tmp(
        self,
        _base: &std::path::Path,
        _keeps: &[super::tmp_keeps::Keep],
    ) -> Self {
        self
    }

    pub fn has_private_tmp(&self) -> bool {
        false
    }

    /// Starts `cmd` (from [`Confinement::command`]).
    pub fn spawn(
        &self,
        cmd: &mut tokio::process::Command,
    ) -> std::io::Result<tokio::process::Child> {
        cmd.spawn()
    }

    pub fn command(
        self: &Arc<Self>,
        program: &OsStr,
    ) -> std::io::Result<(tokio::process::Command, Option<Watch>)> {
        Ok((tokio::process::Command::new(program), None))
    }
}

/// A test's process cannot be confined here.
#[cfg(feature = "test-tools")]
pub fn confine_std(
    _cmd: &mut std::process::Command,
    _writable: &[PathBuf],
) -> Result<String, SandboxError> {
    Err(SandboxError::Required(WHY.into()))
}

/// A test's thread cannot be confined here.
#[cfg(feature = "test-tools")]
pub fn confine_thread(_writable: &[PathBuf]) -> Result<String, SandboxError> {
    Err(SandboxError::Required(WHY.into()))
}

/// What `runner doctor` reports here.
pub mod doctor {
    use runner_output::{DoctorBackstop, DoctorReport};

    pub fn examine() -> DoctorReport {
        let no = |name: &str, why: &str| DoctorBackstop {
            name: name.into(),
            held: false,
            why: format!("{}: {why}", super::WHY),
        };
        DoctorReport {
            workspace_copy: String::new(),
            platform: std::env::consts::OS.into(),
            sandbox: super::SANDBOX.into(),
            kernel: String::new(),
            landlock_abi: None,
            seccomp_notify: false,
            supervisor: false,
            user_namespaces: false,
            commands_keep_capabilities: false,
            capabilities: "no capabilities on this platform".into(),
            exec_follow: false,
            daemon_sockets: Vec::new(),
            backstops: vec![
                no("reads", "commands could read the original workspace"),
                DoctorBackstop {
                    name: "edits".into(),
                    held: true,
                    why: "changes to edit-denied paths are reverted on the result (on every platform)"
                        .into(),
                },
                no("confined", "commands could write anywhere this user can"),
                no("exec", "nothing decides what a command starts"),
                no("network", "nothing decides a command's connections"),
            ],
            unreadable: Vec::new(),
            readable: runner_policy::world::READABLE_TREES
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
}
