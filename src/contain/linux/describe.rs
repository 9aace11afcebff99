//! What the transcript's `sandbox` says of a task's commands: what
//! confines their writes, what they get of the network, who decides their
//! signals and connections, and what does not hold and why. The text is
//! for people (and the tests that read it); the backstops are what code
//! decides with.

use std::path::{Path, PathBuf};

use super::landlock::Net;
use super::supervisor::NoSupervisor;

/// With `sandbox: off`, the `network:` rules' note.
pub(super) const OFF_FOR_RULES_WITH_SANDBOX_OFF: &str =
    "; network off (seccomp): the policy's network: rules cannot be enforced with sandbox: off";

/// The exec wall, each exec followed to where the kernel commits it.
pub(super) const EXECS_FOLLOWED: &str = "; execs decided against the policy's program denies (supervisor), each again where the kernel runs it (ptrace)";

/// The exec wall with its first look only (the reason follows).
pub(super) const EXECS_NOT_FOLLOWED: &str = "; execs decided against the policy's program denies (supervisor), but not again where the kernel runs them, so the exec backstop is not held: ";

/// Without Landlock's signal scope or the supervisor, what keeps signals
/// from the runner.
const SIGNAL_WALL: &str = "; no signal to the runner (a fixed seccomp filter: its process, its group, its threads when the command started)";

/// What keeps the runner's limits and scheduling from commands, with the
/// sandbox on.
const RUNNER_WALL: &str = "; the runner's limits and scheduling out of reach (seccomp)";

/// Without Landlock, what keeps commands out of the runner's memory.
const NO_TRACE: &str =
    "; no command may trace the runner (it is not dumpable, and commands lack CAP_SYS_PTRACE)";

/// What the sandbox takes from commands ([`super::privileges`]): their
/// capabilities, but those a task keeps, and the calls that build worlds.
pub(super) fn privileges(keep: &[(u32, String)]) -> String {
    let kept: Vec<String> = keep
        .iter()
        .map(|(n, why)| format!("{} ({why})", crate::contain::caps::name(*n).unwrap_or("?")))
        .collect();
    let caps = if kept.is_empty() {
        "no capabilities".to_string()
    } else {
        format!("no capabilities but {}", kept.join(", "))
    };
    format!("; {caps}, no chroot, mounts, namespaces, ptrace or BPF (seccomp)")
}

/// What holds for a task's commands, as [`confined`] says it.
pub(super) struct Held<'a> {
    /// Landlock's ABI, or why there is none.
    pub landlock: Result<i32, &'a str>,
    pub writable: &'a [PathBuf],
    pub net: &'a Net,
    /// The tree commands cannot read.
    pub hidden: Option<&'a Path>,
    /// Why the supervisor does not run, where it does not.
    pub no_supervisor: Option<&'a NoSupervisor>,
}

/// Neither Landlock nor the supervisor (`best-effort`): only the limits,
/// and no network where `network:` rules or `network: false` ask for
/// less than all of it (`net`).
pub(super) fn unsandboxed(landlock: &str, supervisor: &NoSupervisor, net: &Net) -> String {
    let network = match net {
        Net::OffForRules => {
            "; network off (seccomp): the policy's network: rules cannot be enforced without Landlock or the runner's supervisor"
        }
        Net::Off => "; network off (seccomp)",
        Net::On | Net::Proxy(_) => "",
    };
    format!(
        "unavailable ({landlock}): commands ran unsandboxed (best-effort), and no supervisor ({supervisor}){network}{SIGNAL_WALL}{RUNNER_WALL}{NO_TRACE}"
    )
}

/// The description of a confinement with Landlock, the supervisor or both.
pub(super) fn confined(h: &Held) -> String {
    let abi = h.landlock.ok();
    let mut d = match h.landlock {
        Ok(abi) => format!(
            "landlock (ABI {abi}): writes only in {}",
            h.writable
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(why) => format!(
            "unavailable ({why}): writes and reads not confined (best-effort), the rest decided by the runner's supervisor"
        ),
    };
    d += "; network ";
    d += &match (h.net, abi) {
        (Net::On, _) => "on".to_string(),
        (Net::Off, _) => "off (seccomp)".to_string(),
        (Net::Proxy(port), Some(4..)) => {
            format!("only through the runner's proxy (TCP to port {port}; landlock and seccomp)")
        }
        (Net::Proxy(port), _) => format!(
            "only through the runner's proxy (TCP to 127.0.0.1:{port}; the supervisor and seccomp)"
        ),
        (Net::OffForRules, _) => format!(
            "off (seccomp): the policy's network: rules need Landlock network rules (ABI 4) or the runner's supervisor, and this kernel has ABI {} and no supervisor ({})",
            abi.unwrap_or(0),
            h.no_supervisor.map(ToString::to_string).unwrap_or_default()
        ),
    };
    if let Some(root) = h.hidden {
        d += &format!("; {} unreadable", root.display());
    }
    d += match (abi, h.no_supervisor) {
        (Some(6..), _) => "; no signal or abstract Unix socket outside the task (Landlock scopes)",
        (Some(_), None) => {
            "; no signal outside the command's own processes (the runner's supervisor: Landlock cannot scope signals below ABI 6), no abstract Unix socket (supervisor)"
        }
        (None, None) => {
            "; no signal outside the command's own processes, no abstract Unix socket (the runner's supervisor)"
        }
        (_, Some(_)) => {
            "; signals to other processes and abstract Unix sockets outside the task not scoped (Landlock ABI 6 needed)"
        }
    };
    if h.no_supervisor.is_some() && abi.is_some_and(|abi| abi < 6) {
        d += SIGNAL_WALL;
    }
    d += RUNNER_WALL;
    d += &match (h.no_supervisor, h.net) {
        (None, Net::Proxy(port)) => format!(
            "; connections decided by the runner's supervisor (IP only to the proxy at 127.0.0.1:{port}; Unix sockets only inside the writable folders)"
        ),
        (None, _) => "; connections decided by the runner's supervisor (Unix sockets only inside the writable folders)".to_string(),
        (Some(why), _) => format!(
            "; no supervisor ({why}): Unix sockets outside the task are reachable, and a process that leaves a command's group outlives it"
        ),
    };
    if abi.is_none() {
        d += NO_TRACE;
    }
    d
}

/// What the readable world leaves out, where Landlock holds it: the
/// trees commands may not read (see `contain::world`).
pub(super) fn world(landlock: bool, unreadable: &[crate::contain::HiddenTree]) -> String {
    if !landlock || unreadable.is_empty() {
        return String::new();
    }
    let roots: Vec<String> = unreadable
        .iter()
        .map(|t| t.root.display().to_string())
        .collect();
    format!(
        "; outside the task's folders, unreadable: {} (but the toolchains and caches in a home)",
        roots.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runner's fixed signal filter is named where it is installed
    /// (no supervisor, Landlock below ABI 6) and nowhere else; its wall
    /// for limits and scheduling everywhere.
    #[test]
    fn the_fixed_signal_filter_is_named_only_where_it_holds() {
        let no = NoSupervisor::Simulated;
        let said = |abi: i32, no_supervisor: Option<&NoSupervisor>| {
            confined(&Held {
                landlock: Ok(abi),
                writable: &[],
                net: &Net::On,
                hidden: None,
                no_supervisor,
            })
        };
        for (abi, no_supervisor, named) in [
            (5, Some(&no), true),
            (6, Some(&no), false),
            (7, Some(&no), false),
            (5, None, false),
            (6, None, false),
        ] {
            let d = said(abi, no_supervisor);
            assert_eq!(d.contains(SIGNAL_WALL), named, "{abi}: {d}");
            assert!(d.contains(RUNNER_WALL), "{abi}: {d}");
        }
    }
}
