//! `runner doctor --format json`: what this machine offers the sandbox,
//! and which backstops a run here would hold.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What this machine offers the runner's sandbox.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DoctorReport {
    /// `linux`, `macos`, `windows` ...
    pub platform: String,
    /// What sandboxes commands here: `landlock` (Linux), `seatbelt`
    /// (macOS), or `none` (no OS sandbox: the kernel offers none, or a
    /// portable build).
    #[serde(default)]
    pub sandbox: String,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
    /// Landlock's ABI version; absent when the kernel offers none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landlock_abi: Option<u32>,
    /// Whether seccomp's user notification works here (the supervisor's
    /// way of deciding a command's system calls).
    pub seccomp_notify: bool,
    /// Whether the runner's supervisor can run commands here.
    pub supervisor: bool,
    /// Whether unprivileged user namespaces are enabled.
    pub user_namespaces: bool,
    /// Whether the runner's commands keep capabilities here (root's would,
    /// but the sandbox drops them; a task may keep named ones).
    #[serde(default)]
    pub commands_keep_capabilities: bool,
    /// What commands hold of the runner's capabilities, and why.
    #[serde(default)]
    pub capabilities: String,
    /// Whether the runner may follow its commands' execs to where the
    /// kernel commits them (ptrace; the exec wall's second look).
    #[serde(default)]
    pub exec_follow: bool,
    /// How a task's copy of its workspace is made here: `overlay` (nothing
    /// copied) or `copy`, and why not an overlay.
    #[serde(default)]
    pub workspace_copy: String,
    /// Sockets of daemons that act outside a sandbox (a container engine,
    /// the system bus) that a command here could reach without the
    /// supervisor.
    pub daemon_sockets: Vec<String>,
    /// Each backstop a run here would hold behind the policy's deny rules.
    pub backstops: Vec<DoctorBackstop>,
    /// Outside the task's folders, what commands may not read here where
    /// Landlock holds: the readable world leaves out these trees (a home
    /// folder but its toolchains and caches, other homes, the machine's
    /// secrets). Empty without Landlock.
    #[serde(default)]
    pub unreadable: Vec<String>,
    /// The system and toolchain trees commands read outside their
    /// folders (the gate's readable world; the wall lets them read
    /// everything but `unreadable`).
    #[serde(default)]
    pub readable: Vec<String>,
}

/// One backstop: held or not, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DoctorBackstop {
    /// `reads`, `edits`, `confined`, `exec`, `private-tmp` or `network`.
    pub name: String,
    /// Whether a run here holds it.
    pub held: bool,
    /// What it rests on, or why it is missing.
    pub why: String,
}
