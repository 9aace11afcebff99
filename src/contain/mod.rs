//! Containing what the agent runs: the policy decides what may run; this is
//! about what an allowed command can then do.
//!
//! What every platform shares:
//! - [`env`]: commands and checks get the runner's environment without the
//!   variables that look like secrets, unless a task passes them on.
//! - [`redact`]: the values of those variables, and well-known token shapes,
//!   become `[REDACTED]` in everything the model sees and every output.
//! - [`vars`]: `${NAME}` in settings filled in from the environment, each
//!   value a secret from then on.
//! - [`daemons`]: the sockets through which a confined command could have
//!   a daemon act for it, outside the sandbox.
//! - [`settings`]: a task's `sandbox:` and `limits:`; [`hidden`]: the
//!   original workspace commands may not read.
//! - [`seatbelt`]: the macOS profile of a task, as text (generated on
//!   every platform, so that `runner sandbox --platform macos --print`
//!   and its golden tests work anywhere).
//! - [`commands`]: everything a task's commands run under, and [`spawn`]:
//!   starting one under it; [`tmp_keeps`]: what they keep where `/tmp` is
//!   their own; [`world`]: what they may not read outside their folders.
//!
//! What each platform does, in `os` (one of three files with the same
//! API, chosen at build time):
//! - `linux/`: Landlock, seccomp, the supervisor behind them (with the
//!   exec wall, `exec_guard`: an exec decided against the policy's `Bash`
//!   deny rules), a pids cgroup for the process bound.
//! - `macos.rs`: Seatbelt (`sandbox-exec` with the [`seatbelt`] profile).
//! - `portable.rs`: no OS sandbox (other platforms, and a build with
//!   `--cfg runner_portable` or the `portable` feature on any): decisions
//!   stay as strict as with no backstop.
//!
//! Nothing outside this module names a platform but the few files that
//! must (`pidfd`, `workspace::open`'s `openat2`).

pub mod caps;
pub mod commands;
pub mod daemons;
pub mod env;
pub mod hidden;
#[cfg(all(any(target_os = "linux", target_os = "macos"), not(runner_portable)))]
mod limits;
pub mod redact;
pub mod seatbelt;
pub mod settings;
pub mod spawn;
pub mod tmp_keeps;
pub mod vars;
pub mod world;

#[cfg(all(target_os = "linux", not(runner_portable)))]
#[path = "linux/mod.rs"]
mod os;
#[cfg(all(target_os = "macos", not(runner_portable)))]
#[path = "macos.rs"]
mod os;
#[cfg(any(runner_portable, not(any(target_os = "linux", target_os = "macos"))))]
#[path = "portable.rs"]
mod os;
#[cfg(any(runner_portable, not(target_os = "linux")))]
mod unsupervised;

pub use commands::{CommandSetup, CommandSetupError, process_env};
pub use env::{
    EnvSettings, hide_own_secrets, is_secret_name, scrubbed_env, secrets_held_by_parent,
};
pub use hidden::HiddenTree;
pub use os::{Confinement, ProcessBound, doctor, remove_leftovers};
#[cfg(feature = "test-tools")]
pub use os::{confine_std, confine_thread};
pub use redact::{MIN_VALUE_LEN, add_decoy, add_secret, learn_task_secrets, redact};
pub use settings::{SandboxError, SandboxMode, SandboxSettings};
pub use spawn::{ConfinedCommand, ExecRefusal, RefusedCall};

/// The folders a task's commands get their own of, where the platform
/// allows (Linux's mount namespaces).
pub const PRIVATE_ROOTS: &[&str] = &["/tmp", "/var/tmp"];

impl Confinement {
    /// The confinement of commands writing to `writable` under `settings`
    /// ([`Confinement::hiding`] with nothing hidden): `Ok(None)` when there
    /// is nothing to apply (the description says why; `Err` only for
    /// `sandbox: required`).
    pub fn new(
        settings: &SandboxSettings,
        writable: &[std::path::PathBuf],
    ) -> Result<(Option<Confinement>, String), SandboxError> {
        Self::hiding(settings, writable, None)
    }
}

/// The files named `program` in the folders of `path` (the commands'
/// `PATH`; the usual folders when it is unset), in `PATH` order, with
/// their metadata (links followed): the executables a deny rule's program
/// is, for the exec wall and the macOS profile.
pub(crate) fn programs_on_path(
    program: &str,
    path: Option<&str>,
) -> Vec<(std::path::PathBuf, std::fs::Metadata)> {
    path.unwrap_or("/usr/local/bin:/usr/bin:/bin")
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .filter_map(|p| {
            std::fs::metadata(&p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| (p, m))
        })
        .collect()
}
