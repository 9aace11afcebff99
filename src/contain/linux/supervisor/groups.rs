//! The process groups a command's processes make, so that what leaves the
//! command's group ends with the command.
//!
//! The runner kills a command's process group when the command ends,
//! times out or is cancelled. A process that leaves the group (`setsid`,
//! a daemon's fork and `setsid`, `timeout`, which puts itself in a group of
//! its own) used to outlive the command, and, without a pids cgroup (a run
//! as a user other than root), the run. The filter hands each `setsid` and
//! `setpgid` to the supervisor (no hot path makes them: `bash -c` makes
//! none), which:
//!
//! - records each group a call may make, before the call goes on: the
//!   group's number, and a pidfd of the process whose number it is;
//! - refuses (`EPERM`) to let a process join a group the command did not
//!   make: the runner's own, another command's. Joining one of its own
//!   (the group the runner started it in, one recorded) goes on;
//! - refuses a `setpgid` that names processes by number from a pid
//!   namespace of the command's own (numbers the runner cannot read).
//!
//! [`Escapes::end`] kills every recorded group when the command ends.
//!
//! **Which processes the kill reaches.** A group's number is its first
//! process's, and the kernel gives it to no new process while any member
//! of the group lives. While that first process lives (its pidfd says
//! so), `kill(-group)` reaches that group and no other. Once it has ended
//! (a daemon's fork: the parent that called `setsid` exits), the number
//! is held by the members left, if any; with none left it may, after the
//! whole range of numbers has been handed out, name another group. So
//! then the runner kills the members it finds in `/proc` one by one, each
//! through a pidfd, and only those still in the group that carry a
//! seccomp filter, as every process of a confined command does. Each round
//! of kills can race a member forking; rounds go on until one finds
//! nothing to kill ([`MAX_ROUNDS`] at most).

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Mutex;

use super::procs::{all_processes, ended, stat};
use super::rules::Answer;
use super::signal::Root;

/// Rounds of kills before giving up on a group that keeps forking.
const MAX_ROUNDS: usize = 16;

/// A group a command's process made (or may have made: recorded before
/// the call goes on).
struct Made {
    group: i32,
    /// The process whose number the group has, while it is alive.
    first: Option<OwnedFd>,
}

/// The groups one spawn's processes made, until [`Escapes::end`].
#[derive(Default)]
pub struct Escapes {
    made: Mutex<Vec<Made>>,
}

impl Escapes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Made>> {
        self.made.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn record(&self, group: i32, first: Option<OwnedFd>) {
        let mut made = self.lock();
        if !made.iter().any(|m| m.group == group) {
            made.push(Made { group, first });
        }
    }

    fn holds(&self, group: i32) -> bool {
        self.lock().iter().any(|m| m.group == group)
    }

    /// Kills every group recorded, and those made meanwhile, and forgets
    /// them. How many processes were signalled one by one (the groups
    /// killed whole are not counted).
    pub fn end(&self) -> usize {
        let mut one_by_one = 0;
        for _ in 0..MAX_ROUNDS {
            let made = std::mem::take(&mut *self.lock());
            if made.is_empty() {
                return one_by_one;
            }
            let mut left = Vec::new();
            for m in made {
                match &m.first {
                    Some(fd) if !ended(fd) => {
                        // SAFETY: a plain system call; the group's number
                        // is its live first process's. The kernel lets no
                        // fork escape a group's signal: done.
                        unsafe { libc::kill(-m.group, libc::SIGKILL) };
                    }
                    _ => {
                        let n = kill_members(m.group);
                        one_by_one += n;
                        if n > 0 {
                            left.push(m);
                        }
                    }
                }
            }
            // Groups killed one by one are looked at once more: a member
            // forked between the scan and its kill is killed next round.
            let mut made = self.lock();
            for m in left {
                if !made.iter().any(|n| n.group == m.group) {
                    made.push(Made {
                        group: m.group,
                        first: None,
                    });
                }
            }
        }
        let left = std::mem::take(&mut *self.lock());
        if !left.is_empty() {
            tracing::warn!(
                "sandbox: {} process group(s) a command made still had members after {MAX_ROUNDS} rounds of kills",
                left.len()
            );
        }
        one_by_one
    }
}

/// Kills, through a pidfd each, the processes of `group` that carry a
/// seccomp filter; how many.
fn kill_members(group: i32) -> usize {
    let mut killed = 0;
    for pid in all_processes() {
        if stat(pid).map(|s| s.pgrp) != Some(group) {
            continue;
        }
        let Some(fd) = crate::pidfd::pidfd_open(pid as u32) else {
            continue;
        };
        // Read again with the process held: still in the group, and a
        // confined command's.
        if stat(pid).map(|s| s.pgrp) != Some(group) || !filtered(pid) || ended(&fd) {
            continue;
        }
        // SAFETY: a pidfd of ours; no siginfo.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                fd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        if r == 0 {
            killed += 1;
        }
    }
    killed
}

/// Whether `pid` runs under more seccomp filters than the runner does
/// (a confined command's process has the runner's, if any, and its own):
/// `Seccomp_filters:` (Linux 5.9), else a filter where the runner has none.
fn filtered(pid: i32) -> bool {
    static OWN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| std::fs::read_to_string("/proc/self/status").ok());
    let Ok(theirs) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    let field = |status: &str, name: &str| -> Option<usize> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    let own = own.as_deref().unwrap_or_default();
    match (
        field(&theirs, "Seccomp_filters:"),
        field(own, "Seccomp_filters:"),
    ) {
        (Some(t), Some(o)) => t > o,
        _ => field(&theirs, "Seccomp:") == Some(2) && field(own, "Seccomp:") != Some(2),
    }
}

/// A thread's process and whether it is in a pid namespace below the
/// runner's (its `NSpid:` has more numbers than the runner's own).
fn caller(tid: u32) -> Option<(i32, bool)> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().count())
    };
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))?
        .trim()
        .parse()
        .ok()?;
    static OWN_DEPTH: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    let own = *OWN_DEPTH.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("NSpid:"))
                    .map(|v| v.split_whitespace().count())
            })
    });
    Some((tgid, field("NSpid:") != own))
}

/// Decides one `setsid` or `setpgid`.
pub(super) fn decide_group(req: &libc::seccomp_notif, root: &mut Root, made: &Escapes) -> Answer {
    let Some((me, nested)) = caller(req.pid) else {
        return Answer::Error(libc::ESRCH);
    };
    if i64::from(req.data.nr) == libc::SYS_setsid {
        // A new session, whose group has the caller's number (or, for a
        // group's first process, EPERM: its group is recorded or the
        // command's, either way the command's).
        made.record(me, crate::pidfd::pidfd_open(me as u32));
        return Answer::Continue;
    }
    let (pid, pgid) = (req.data.args[0] as i32, req.data.args[1] as i32);
    if nested && (pid != 0 || pgid != 0) {
        tracing::warn!(
            "sandbox: setpgid({pid}, {pgid}) refused: from a pid namespace of the command's own"
        );
        return Answer::Error(libc::EPERM);
    }
    if pid < 0 || pgid < 0 {
        return Answer::Error(libc::EINVAL);
    }
    let target = if pid == 0 { me } else { pid };
    let group = if pgid == 0 { target } else { pgid };
    if group == target {
        // A group of its own (or the one it leads already).
        made.record(group, crate::pidfd::pidfd_open(group as u32));
        return Answer::Continue;
    }
    let command_group = root.get().map(|(p, _)| p);
    let current = stat(me).map(|s| s.pgrp);
    if Some(group) == command_group || Some(group) == current || made.holds(group) {
        return Answer::Continue;
    }
    tracing::warn!(
        "sandbox: setpgid({pid}, {pgid}) refused: group {group} is not one the command made"
    );
    Answer::Error(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sleeper(new_group: bool) -> std::process::Child {
        let mut c = std::process::Command::new("sleep");
        c.arg("30");
        if new_group {
            std::os::unix::process::CommandExt::process_group(&mut c, 0);
        }
        c.spawn().unwrap()
    }

    /// A group whose first process lives is killed whole; recorded twice,
    /// it is killed once; ending forgets it.
    #[test]
    fn a_group_with_its_first_process_is_killed_whole() {
        let mut child = sleeper(true);
        let pid = child.id() as i32;
        let made = Escapes::default();
        made.record(pid, crate::pidfd::pidfd_open(pid as u32));
        made.record(pid, None);
        assert!(made.holds(pid));
        // Killed whole: no member is signalled one by one.
        assert_eq!(made.end(), 0);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&child.wait().unwrap()),
            Some(libc::SIGKILL)
        );
        assert!(!made.holds(pid));
        assert_eq!(made.end(), 0);
    }

    /// Where the first process is gone, only members with a seccomp
    /// filter are killed: a process of the group with none (here, the
    /// test's own sleeper) is left alone.
    #[test]
    fn without_its_first_process_only_filtered_members_are_killed() {
        let mut child = sleeper(true);
        let pid = child.id() as i32;
        let made = Escapes::default();
        made.record(pid, None);
        assert_eq!(made.end(), 0);
        assert!(
            child.try_wait().unwrap().is_none(),
            "an unfiltered process was killed"
        );
        assert!(!filtered(pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
