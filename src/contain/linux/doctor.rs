//! What this Linux machine offers the sandbox, for `runner doctor`:
//! Landlock, seccomp's user notification, the supervisor, user namespaces,
//! daemons a command could reach, and the backstops a run here would hold
//! (a task with the default sandbox and network rules).

use runner_output::{DoctorBackstop, DoctorReport};

use super::landlock::landlock_abi;
use crate::contain::daemons::reachable_daemon_sockets;

/// What this machine offers.
pub fn examine() -> DoctorReport {
    let landlock = landlock_abi();
    let notify = super::supervisor::available();
    let follows = super::supervisor::follow::available();
    // The supervisor runs with or without Landlock.
    let supervisor = notify.is_ok();
    let daemons: Vec<String> = reachable_daemon_sockets()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let held = |name: &str, held: bool, why: String| DoctorBackstop {
        name: name.into(),
        held,
        why,
    };
    let no_landlock = |what: &str| match &landlock {
        Err(why) => format!("{why}: {what}"),
        Ok(_) => String::new(),
    };
    let no_supervisor = match &notify {
        Err(why) => format!("no supervisor: {why}"),
        Ok(()) => String::new(),
    };
    let confined = landlock.is_ok() && (supervisor || daemons.is_empty());
    let backstops = vec![
        held(
            "reads",
            landlock.is_ok(),
            match &landlock {
                Ok(abi) => format!(
                    "read-denied files are left out of the copy, and Landlock (ABI {abi}) keeps commands out of the original"
                ),
                Err(_) => no_landlock("commands could read the original workspace"),
            },
        ),
        held(
            "edits",
            true,
            "changes to edit-denied paths are reverted on the result (on every platform)".into(),
        ),
        held(
            "confined",
            confined,
            match (&landlock, supervisor) {
                (Err(_), _) => no_landlock("commands could write anywhere this user can"),
                (Ok(abi), true) => format!(
                    "Landlock (ABI {abi}) confines writes, no_new_privs holds, and the supervisor keeps Unix sockets inside the task"
                ),
                (Ok(abi), false) if daemons.is_empty() => format!(
                    "Landlock (ABI {abi}) confines writes and no_new_privs holds; no daemon socket is reachable ({no_supervisor})"
                ),
                (Ok(_), false) => format!(
                    "a command could ask a daemon to act outside the sandbox: {} ({no_supervisor})",
                    daemons.join(", ")
                ),
            },
        ),
        held(
            "exec",
            confined && supervisor && follows.is_ok(),
            if supervisor && confined {
                match &follows {
                    Ok(()) => "the supervisor decides every exec on its real argv against the Bash deny rules, and again where the kernel runs it (the file it mapped, the argv it placed; ptrace)".into(),
                    Err(why) => format!(
                        "partial: the supervisor decides every exec when it is asked for, but cannot follow it to where the kernel runs it ({why}), so a path swapped or an argv changed in between goes unseen"
                    ),
                }
            } else if !supervisor {
                no_supervisor.clone()
            } else if landlock.is_err() {
                no_landlock(
                    "the supervisor decides execs, but commands could write anywhere, so no deny rule is backed",
                )
            } else {
                "commands are not confined (see confined)".into()
            },
        ),
        held(
            "private-tmp",
            landlock.is_ok() && super::private_tmp::available().is_ok(),
            match (&landlock, super::private_tmp::available()) {
                (Err(_), _) => no_landlock(
                    "commands' writes to /tmp are not confined, and a private one would change nothing",
                ),
                (Ok(_), Ok(mode)) => format!(
                    "commands have a /tmp and /var/tmp of their own, folders of the task ({}): writes there are no edits outside the workspace",
                    match mode {
                        super::private_tmp::Mode::Root => "a mount namespace",
                        super::private_tmp::Mode::User => "a user and mount namespace",
                    }
                ),
                (Ok(_), Err(why)) => format!(
                    "{why}: commands' writes to /tmp are refused as edits outside the workspace"
                ),
            },
        ),
        held(
            "network",
            supervisor,
            if supervisor {
                "the supervisor decides every connection by address: only the runner's proxy, which applies the network: rules".into()
            } else {
                format!(
                    "{no_supervisor}: a task with network: rules runs with no network at all, as nothing else decides connections by address"
                )
            },
        ),
    ];
    let sandbox_on = landlock.is_ok();
    DoctorReport {
        workspace_copy: String::new(),
        platform: std::env::consts::OS.into(),
        sandbox: if landlock.is_ok() {
            super::SANDBOX
        } else {
            "none"
        }
        .into(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        landlock_abi: landlock.as_ref().ok().map(|a| *a as u32),
        seccomp_notify: notify.is_ok(),
        supervisor,
        user_namespaces: user_namespaces(),
        commands_keep_capabilities: false,
        capabilities: if super::privileges::runner_holds_capabilities() {
            "the runner holds capabilities (root); its commands drop every one, but those a task keeps (sandbox: capabilities), and cannot chroot, mount or make namespaces".into()
        } else {
            "the runner holds none; its commands cannot chroot, mount or make namespaces".into()
        },
        exec_follow: follows.is_ok(),
        daemon_sockets: daemons,
        backstops,
        unreadable: if sandbox_on {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            let path: Vec<std::path::PathBuf> = std::env::var("PATH")
                .unwrap_or_default()
                .split(':')
                .map(std::path::PathBuf::from)
                .collect();
            crate::contain::world::unreadable_trees(home.as_deref(), &path, &[], &[])
                .iter()
                .map(|t| t.root.display().to_string())
                .collect()
        } else {
            Vec::new()
        },
        readable: runner_policy::world::READABLE_TREES
            .iter()
            .map(|s| s.to_string())
            .collect(),
    }
}

/// Whether unprivileged user namespaces are enabled (Debian's switch and
/// the namespace limit).
fn user_namespaces() -> bool {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    read("/proc/sys/kernel/unprivileged_userns_clone") != Some(0)
        && read("/proc/sys/user/max_user_namespaces").is_some_and(|n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the report says of user namespaces is what a user other than
    /// root can do here: make one (as nobody, when the test runs as root).
    #[test]
    fn user_namespaces_says_what_an_unprivileged_user_can_do() {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new("unshare");
        cmd.args(["--user", "true"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: a plain system call.
        if unsafe { libc::geteuid() } == 0 {
            cmd.uid(65534).gid(65534);
        }
        let Ok(made) = cmd.status() else {
            eprintln!("no unshare here: nothing to compare with");
            return;
        };
        assert_eq!(user_namespaces(), made.success());
    }
}
