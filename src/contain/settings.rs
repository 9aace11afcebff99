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
    /// The task proxy's CA (PEM) when it reads HTTPS: commands are told
    /// to trust it (see `net::inspect`).
    pub proxy_ca: Option<std::sync::Arc<str>>,
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
    /// Capabilities a root runner's commands keep (their numbers, see
    /// [`super::caps`]), each with its reason; every other is dropped.
    /// Default none.
    pub keep_capabilities: Vec<(u32, String)>,
    /// Whether commands get a private `/tmp` where the machine allows it
    /// (default true; `sandbox: {private_tmp: false}` turns it off).
    pub private_tmp: bool,
    /// More paths commands may read that the readable world leaves out
    /// (`sandbox: {readable: [...]}`), and paths it would let them read
    /// that they may not (`unreadable:`); absolute.
    pub readable: Vec<PathBuf>,
    pub unreadable_paths: Vec<PathBuf>,
    /// The trees commands may not read where Landlock holds (the readable
    /// world's complement: see `contain::world`), made from the above when
    /// commands are prepared.
    pub unreadable: Vec<super::HiddenTree>,
}

impl SandboxSettings {
    /// The capabilities kept, as a mask (bit N: capability N).
    pub fn kept_capabilities(&self) -> u64 {
        self.keep_capabilities
            .iter()
            .fold(0, |m, (n, _)| m | (1 << n))
    }
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::BestEffort,
            network: true,
            proxy_port: None,
            proxy_ca: None,
            write: Vec::new(),
            cpu_seconds: None,
            memory_bytes: None,
            processes: None,
            keep_capabilities: Vec::new(),
            private_tmp: true,
            readable: Vec::new(),
            unreadable_paths: Vec::new(),
            unreadable: Vec::new(),
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
