//! A task's `sandbox:` and `limits:` settings, the same on every platform
//! (what each platform makes of them is its `os` module's).

use std::path::PathBuf;

/// `sandbox:` modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Sandbox where the kernel can; otherwise run unsandboxed and say so.
    #[default]
    BestEffort,
    /// Fail the task where the kernel cannot sandbox.
    Required,
    Off,
}

/// A task's `sandbox:` and `limits:`.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Whether commands may use the network (default true).
    pub network: bool,
    /// The runner's proxy (`network:` rules): commands may connect to this
    /// port only, where the kernel's Landlock has network rules (ABI 4+);
    /// elsewhere they get no network at all.
    pub proxy_port: Option<u16>,
    /// More folders commands may write (absolute, or relative to the task
    /// file; `~/` is the home folder).
    pub write: Vec<PathBuf>,
    /// RLIMIT_CPU, seconds.
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_AS, bytes.
    pub memory_bytes: Option<u64>,
    /// Most processes (and threads) the task's commands may have at once
    /// (a pids cgroup, see [`super::pids`]); `None`: no bound.
    pub processes: Option<u64>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::BestEffort,
            network: true,
            proxy_port: None,
            write: Vec::new(),
            cpu_seconds: None,
            memory_bytes: None,
            processes: None,
        }
    }
}

/// Why the sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// `sandbox: required` where this platform or machine has none.
    #[error("sandbox: required, but {0}")]
    Required(String),
    /// The sandbox could not be built (the Landlock ruleset, the Seatbelt
    /// profile).
    #[error("cannot prepare the sandbox: {0}")]
    Prepare(std::io::Error),
}
