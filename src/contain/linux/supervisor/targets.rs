//! The supervisor's decision on calls that change another process without
//! a signal: its limits (`prlimit64`), its scheduling
//! (`sched_setaffinity`, `sched_setscheduler`, `sched_setparam`,
//! `sched_setattr`) and its priorities (`setpriority`, `ioprio_set`).
//!
//! Neither Landlock nor the kernel keeps a command from these on any
//! process of the same user: `renice`, `taskset -p` or `prlimit --pid` of
//! another command, or of the CI job's own processes, would starve or
//! re-limit them. The filter hands over each such call that names a
//! process other than the caller itself (a number other than 0), and the
//! runner lets it go on only for the spawn's own processes ([`Tree`]) or
//! the caller's own process group. Every process of a user at once
//! (`PRIO_USER`, `IOPRIO_WHO_USER`) is refused by the runner's own wall
//! (`runner_wall.rs`), which every sandboxed command has, the caller's
//! own user (`who` 0, never handed over) included; named here by another
//! number, it is refused too.
//!
//! The call goes on in the kernel after the check, as a thread-directed
//! signal does ([`super::signal`]): a window of microseconds in which the
//! target could end and its number be given to a new process outside the
//! spawn.

use std::os::fd::OwnedFd;

use super::super::seccomp::{SETS_A_PROCESS, SETS_PRIORITY, WHO_GROUP, WHO_PROCESS};
use super::connect::still_valid;
use super::procs::{Tree, ended, process_fd, stat, thread_group};
use super::rules::Answer;
use super::signal::Root;

/// Whether the supervisor decides call `nr` here.
pub(super) fn decides(nr: libc::c_long) -> bool {
    SETS_A_PROCESS.contains(&nr) || SETS_PRIORITY.contains(&nr)
}

/// Whom a call names: one process (or thread), or a process group.
enum Whom {
    Process(i32),
    Group(i32),
}

/// Decides one call it [`decides`].
pub(super) fn decide_target(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    root: &mut Root,
) -> Answer {
    let a = &req.data.args;
    let (which, who) = (a[0] as u32, a[1] as i32);
    let whom = match SETS_PRIORITY
        .iter()
        .position(|n| *n == i64::from(req.data.nr))
    {
        None => Whom::Process(which as i32),
        Some(i) if which == WHO_PROCESS[i] => Whom::Process(who),
        Some(i) if which == WHO_GROUP[i] => Whom::Group(who),
        // Every process of a user, or a `which` unknown.
        Some(_) => return refuse("every process of a user", who),
    };
    let Some(caller) = thread_group(req.pid).map(|p| p as i32) else {
        return Answer::Error(libc::ESRCH);
    };
    match whom {
        // Itself, or its own group; a number the kernel refuses anyway.
        Whom::Process(n) | Whom::Group(n) if n <= 0 => Answer::Continue,
        Whom::Group(g) => match stat(caller) {
            Some(s) if s.pgrp == g => Answer::Continue,
            _ => refuse("process group", g),
        },
        Whom::Process(p) => {
            // A thread's number names its process; held by a pidfd while
            // it is looked at.
            let Some(fd) = process_fd(p as u32) else {
                return Answer::Error(libc::ESRCH);
            };
            let process = thread_group(p as u32).map_or(p, |t| t as i32);
            let tree = Tree {
                caller,
                root: root.get(),
            };
            if !tree.holds(process) || ended(&fd) {
                return refuse("process", p);
            }
            if !still_valid(listener, req.id) {
                return Answer::Error(libc::ENOENT);
            }
            Answer::Continue
        }
    }
}

/// Refused: the target is not the spawn's.
fn refuse(what: &str, target: i32) -> Answer {
    tracing::warn!(
        "sandbox: a change to {what} {target} refused: outside the command's own processes"
    );
    Answer::Error(libc::EPERM)
}
