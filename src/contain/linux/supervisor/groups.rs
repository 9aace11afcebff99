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
//! so), `kill(-group)` reaches that group and no other, and no fork
//! escapes it (the kernel makes a fork racing a group's signal start
//! over). Once it has ended (a daemon's fork: the parent that called
//! `setsid` exits), the number is held by the members left, if any; with
//! none left it may, after the whole range of numbers has been handed out,
//! name another group. So then the runner kills the members it finds in
//! `/proc` one by one, each through a pidfd, and only those still in the
//! group that carry more seccomp filters than the runner (every process
//! of a confined command carries its filter). Such a round can race a
//! member forking; rounds go on until one kills nothing ([`MAX_ROUNDS`] at
//! most), one `/proc` scan a round for all those groups.
//!
//! **Bounds.** A command making groups in a loop costs the runner no more
//! than [`MAX_PIDFDS`] descriptors (past them, a group is recorded by its
//! number alone, and ended by the scan) and [`MAX_GROUPS`] numbers; past
//! that many groups a command makes no more (`EPERM`: never one left
//! unrecorded).

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex, Weak};

use super::procs::{Status, all_processes, ended, stat};
use super::rules::Answer;
use super::signal::Root;

/// Rounds of kills before giving up on groups that keep forking.
const MAX_ROUNDS: usize = 16;
/// Most groups recorded with a pidfd of their first process.
const MAX_PIDFDS: usize = 256;
/// Most groups one spawn's processes may make.
const MAX_GROUPS: usize = 1 << 16;

/// The groups one spawn's processes made (or may have made: each is
/// recorded before the call goes on), until [`Escapes::end`].
#[derive(Default)]
pub struct Escapes {
    made: Mutex<Made>,
}

/// Every spawn's record while it lives, for [`end_all`].
static LIVE: Mutex<Vec<Weak<Escapes>>> = Mutex::new(Vec::new());

impl Escapes {
    /// A record of its own, which [`end_all`] reaches while it lives.
    pub fn registered() -> Arc<Self> {
        let made = Arc::new(Self::default());
        let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&made));
        made
    }
}

/// Ends the groups every live spawn's processes made: for an exit that
/// cannot wait for each command's end (a second signal).
pub fn end_all() {
    let live: Vec<Arc<Escapes>> = LIVE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for made in live {
        made.end();
    }
}

/// Each group's number, and a pidfd of the process whose number it is,
/// while alive; how many of those pidfds are open; from how many groups
/// on they are looked over next (once per [`MAX_PIDFDS`] groups made, for
/// those of processes gone).
#[derive(Default)]
struct Made {
    groups: HashMap<i32, Option<OwnedFd>>,
    open: usize,
    look_over_at: usize,
}

impl Escapes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Made> {
        self.made.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `group`, whose first process `first` opens; false when the
    /// spawn has made [`MAX_GROUPS`] already.
    fn record(&self, group: i32, first: impl FnOnce() -> Option<OwnedFd>) -> bool {
        let made = &mut *self.lock();
        if made.groups.contains_key(&group) {
            return true;
        }
        if made.groups.len() >= MAX_GROUPS {
            return false;
        }
        if made.open >= MAX_PIDFDS && made.groups.len() >= made.look_over_at {
            // The descriptors of first processes gone are let go.
            for f in made.groups.values_mut() {
                if f.as_ref().is_some_and(ended) {
                    *f = None;
                    made.open -= 1;
                }
            }
            made.look_over_at = made.groups.len() + MAX_PIDFDS;
        }
        let first = if made.open < MAX_PIDFDS {
            first()
        } else {
            None
        };
        made.open += usize::from(first.is_some());
        made.groups.insert(group, first);
        true
    }

    fn holds(&self, group: i32) -> bool {
        self.lock().groups.contains_key(&group)
    }

    /// Kills every group recorded, and those made meanwhile, and forgets
    /// them. How many processes were signalled one by one (the groups
    /// killed whole are not counted).
    pub fn end(&self) -> usize {
        let mut one_by_one = 0;
        // Killed already: a process takes a moment to go, and is not
        // killed (nor counted) again in the next round.
        let mut killed = HashSet::new();
        for _ in 0..MAX_ROUNDS {
            let made = std::mem::take(&mut *self.lock());
            if made.groups.is_empty() {
                return one_by_one;
            }
            let mut orphaned = HashSet::new();
            for (group, first) in made.groups {
                if !may_kill(group) {
                    tracing::warn!("sandbox: process group {group} is the runner's: not killed");
                    continue;
                }
                match first {
                    // SAFETY: a plain system call; the group's number is
                    // its live first process's.
                    Some(fd) if !ended(&fd) => unsafe {
                        libc::kill(-group, libc::SIGKILL);
                    },
                    _ => {
                        orphaned.insert(group);
                    }
                }
            }
            let n = kill_members(&orphaned, &mut killed);
            one_by_one += n;
            if n > 0 {
                // Looked at once more: a member forked between the scan
                // and its kill is killed next round.
                let mut made = self.lock();
                for group in orphaned {
                    made.groups.entry(group).or_insert(None);
                }
            }
        }
        let left = std::mem::take(&mut *self.lock()).groups.len();
        if left > 0 {
            tracing::warn!(
                "sandbox: {left} process group(s) a command made still had members after {MAX_ROUNDS} rounds of kills"
            );
        }
        one_by_one
    }
}

/// Whether the runner may kill group `group` whole: never every process
/// (`-1`), init's, or the runner's own (whatever was recorded).
fn may_kill(group: i32) -> bool {
    // SAFETY: getpgrp cannot fail.
    group > 1 && group != std::process::id() as i32 && group != unsafe { libc::getpgrp() }
}

/// Kills, through a pidfd each, the processes of `groups` that carry the
/// command's seccomp filter, but those in `killed` already (which it adds
/// to); how many it killed.
fn kill_members(groups: &HashSet<i32>, killed: &mut HashSet<i32>) -> usize {
    if groups.is_empty() {
        return 0;
    }
    let in_groups = |pid: i32| stat(pid).is_some_and(|s| groups.contains(&s.pgrp));
    let before = killed.len();
    for pid in all_processes() {
        if killed.contains(&pid) || !in_groups(pid) {
            continue;
        }
        let Some(fd) = crate::pidfd::pidfd_open(pid as u32) else {
            continue;
        };
        // Read again with the process held: still in a group, and a
        // confined command's.
        if !in_groups(pid) || !filtered(pid) || ended(&fd) {
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
            killed.insert(pid);
        }
    }
    killed.len() - before
}

/// Whether `pid` runs under more seccomp filters than the runner does
/// (a confined command's process has the runner's, if any, and its own):
/// `Seccomp_filters` (Linux 5.9), else a filter where the runner has none.
fn filtered(pid: i32) -> bool {
    let (Some(theirs), Some(own)) = (Status::of(&pid.to_string()), runner()) else {
        return false;
    };
    match (
        theirs.number("Seccomp_filters"),
        own.number("Seccomp_filters"),
    ) {
        (Some(t), Some(o)) => t > o,
        _ => theirs.number("Seccomp") == Some(2) && own.number("Seccomp") != Some(2),
    }
}

/// The runner's own status, read once.
fn runner() -> Option<&'static Status> {
    static OWN: std::sync::OnceLock<Option<Status>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| Status::of("self")).as_ref()
}

/// A thread's process and whether it is in a pid namespace below the
/// runner's (its `NSpid` has more numbers than the runner's own).
fn caller(tid: u32) -> Option<(i32, bool)> {
    let status = Status::of(&tid.to_string())?;
    let tgid = status.thread_group()? as i32;
    let nested = status.namespace_depth() != runner().and_then(Status::namespace_depth);
    Some((tgid, nested))
}

/// The answer to a call that makes a group: it goes on once recorded.
fn recorded(was: bool) -> Answer {
    if was {
        Answer::Continue
    } else {
        tracing::warn!("sandbox: a command made over {MAX_GROUPS} process groups: refused");
        Answer::Error(libc::EPERM)
    }
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
        return recorded(made.record(me, || crate::pidfd::pidfd_open(me as u32)));
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
    // The kernel moves only the caller or a child of its; anything else
    // fails there (`ESRCH`), and is never recorded: a group named after
    // the runner, recorded, would have the runner killed.
    let child = if target == me {
        None
    } else {
        let Some(fd) = crate::pidfd::pidfd_open(target as u32) else {
            return Answer::Error(libc::ESRCH);
        };
        if stat(target).map(|s| s.ppid) != Some(me) || ended(&fd) {
            return Answer::Error(libc::ESRCH);
        }
        Some(fd)
    };
    let group = if pgid == 0 { target } else { pgid };
    if group == target {
        // A group of its own (or the one it leads already).
        return recorded(made.record(group, || {
            child.or_else(|| crate::pidfd::pidfd_open(group as u32))
        }));
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
mod tests;
