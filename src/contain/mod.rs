//! Containing what the agent runs: the policy decides what may run; this is
//! about what an allowed command can then do.
//!
//! - [`env`]: commands and checks get the runner's environment without the
//!   variables that look like secrets, unless a task passes them on.
//! - [`redact`]: the values of those variables, and well-known token shapes,
//!   become `[REDACTED]` in everything the model sees and every output.
//! - [`vars`]: `${NAME}` in settings filled in from the environment, each
//!   value a secret from then on.
//! - [`daemons`]: the sockets through which a confined command could have
//!   a daemon act for it, outside the sandbox.
//! - [`sandbox`]: on Linux, Landlock lets commands write only inside the
//!   task's workspace copy and its private temp folder; seccomp can cut the
//!   network; rlimits bound CPU time and memory. All of it is prepared in
//!   the runner and applied in the child between `fork` and `exec` with
//!   plain system calls.
//!   Landlock's ABI and the ruleset are [`landlock`]'s.
//! - [`pids`]: a pids cgroup of the task's own bounds how many processes
//!   its commands may have (a fork bomb stays bounded), where a task asks
//!   for it and the machine lets the runner make one.
//! - [`supervisor`]: behind the sandbox, the runner decides each `connect`
//!   of a confined command (the proxy by address and port; Unix sockets
//!   only inside the task's folders).

pub mod commands;
pub mod daemons;
pub mod env;
pub mod exec_guard;
pub mod landlock;
pub mod pids;
pub mod redact;
pub mod sandbox;
mod seccomp;
pub mod supervisor;
pub mod vars;

pub use commands::{CommandSetup, CommandSetupError, process_env};
pub use env::{EnvSettings, is_secret_name, scrubbed_env};
pub use landlock::HiddenTree;
pub use redact::{MIN_VALUE_LEN, add_secret, redact};
pub use sandbox::{Confinement, SandboxError, SandboxMode, SandboxSettings};
