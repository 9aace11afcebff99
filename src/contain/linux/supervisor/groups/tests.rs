//! The groups' record and end, on real processes.

use super::*;

fn sleeper(new_group: bool) -> std::process::Child {
    let mut c = std::process::Command::new("sleep");
    c.arg("30");
    if new_group {
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
    }
    c.spawn().unwrap()
}

/// How `child` ended, waited for up to `within`; None while it runs.
fn ended_within(
    child: &mut std::process::Child,
    within: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let deadline = std::time::Instant::now() + within;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether `child` was killed (SIGKILL) within 10 seconds; killed here
/// otherwise, so that no sleeper outlives a failed test.
fn killed(child: &mut std::process::Child) -> bool {
    let status = ended_within(child, std::time::Duration::from_secs(10));
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) == Some(libc::SIGKILL)
}

/// A sleeper in a group of its own, recorded in `made` with its pidfd.
fn a_group_in(made: &Escapes) -> (std::process::Child, i32) {
    let child = sleeper(true);
    let pid = child.id() as i32;
    assert!(made.record(pid, || crate::pidfd::pidfd_open(pid as u32)));
    (child, pid)
}

/// A group whose first process lives is killed whole; recorded twice,
/// it is killed once; ending forgets it.
#[test]
fn a_group_with_its_first_process_is_killed_whole() {
    let made = Escapes::default();
    let (mut child, pid) = a_group_in(&made);
    assert!(made.record(pid, || panic!("recorded once")));
    assert!(made.holds(pid));
    // Killed whole: no member is signalled one by one.
    assert_eq!(made.end(), 0);
    assert!(killed(&mut child));
    assert!(!made.holds(pid));
    assert_eq!(made.end(), 0);
}

/// Whatever is recorded, the runner never kills every process, init's
/// group or its own. (Were this to fail, the test process's group
/// would be killed: the suite fails loudly.)
#[test]
fn the_runners_own_group_is_never_killed() {
    let me = std::process::id();
    // SAFETY: getpgrp cannot fail.
    let own = unsafe { libc::getpgrp() };
    assert!(!may_kill(-1) && !may_kill(0) && !may_kill(1));
    assert!(!may_kill(me as i32) && !may_kill(own));
    let made = Escapes::default();
    assert!(made.record(own, || crate::pidfd::pidfd_open(me)));
    assert!(made.record(me as i32, || crate::pidfd::pidfd_open(me)));
    assert_eq!(made.end(), 0);
    assert!(!made.holds(own));
}

/// A spawn holds at most MAX_PIDFDS descriptors (past them, groups are
/// recorded by number), lets go of those of first processes gone, and
/// makes at most MAX_GROUPS groups.
#[test]
fn what_is_recorded_is_bounded() {
    let me = std::process::id();
    let made = Escapes::default();
    for g in 0..MAX_PIDFDS as i32 {
        assert!(made.record(1_000_000 + g, || crate::pidfd::pidfd_open(me)));
    }
    let open = || {
        let m = made.lock();
        let counted = m.groups.values().filter(|f| f.is_some()).count();
        assert_eq!(counted, m.open);
        counted
    };
    assert_eq!(open(), MAX_PIDFDS);
    // A first process gone: its descriptor is let go, and the next
    // group gets one.
    let mut child = sleeper(false);
    made.lock()
        .groups
        .insert(1_000_000, crate::pidfd::pidfd_open(child.id()));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(open(), MAX_PIDFDS);
    assert!(made.record(-3, || crate::pidfd::pidfd_open(me)));
    assert_eq!(open(), MAX_PIDFDS);
    assert!(made.lock().groups[&-3].is_some());
    assert!(made.lock().groups[&1_000_000].is_none());
    // Past the bound, a group is recorded by its number alone (and
    // the descriptors are looked over again only MAX_PIDFDS later).
    assert!(made.record(-4, || crate::pidfd::pidfd_open(me)));
    assert!(made.lock().groups[&-4].is_none());
    assert_eq!(open(), MAX_PIDFDS);
    let recorded = made.lock().groups.len();
    for g in recorded..MAX_GROUPS {
        assert!(made.record(2_000_000 + g as i32, || None));
    }
    assert!(!made.record(9, || None));
    assert!(made.record(1_000_000, || None), "a group recorded already");
    // Nothing of these numbers is ours to kill: forgotten.
    *made.lock() = Made::default();
}

/// Where the first process is gone, only members with a seccomp
/// filter are killed: a process of the group with none (here, the
/// test's own sleeper) is left alone.
#[test]
fn without_its_first_process_only_filtered_members_are_killed() {
    let mut child = sleeper(true);
    let pid = child.id() as i32;
    let made = Escapes::default();
    assert!(made.record(pid, || None));
    assert_eq!(made.end(), 0);
    // Nor with a pidfd of a first process that has ended: the group's
    // number is not taken as its any more.
    let mut gone = sleeper(false);
    let fd = crate::pidfd::pidfd_open(gone.id());
    gone.kill().unwrap();
    gone.wait().unwrap();
    assert!(made.record(pid, || fd));
    assert_eq!(made.end(), 0);
    assert!(
        ended_within(&mut child, std::time::Duration::from_millis(200)).is_none(),
        "an unfiltered process was killed"
    );
    assert!(!filtered(pid));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A member under a seccomp filter of its own, in a group whose first
/// process is gone (as far as the record says): killed through its
/// pidfd, and counted; the group is looked at again, and found empty.
#[test]
fn a_filtered_member_is_killed_one_by_one() {
    use std::os::unix::process::CommandExt;
    let allow = super::super::seccomp::assemble(&[super::super::Op::Ret(libc::SECCOMP_RET_ALLOW)]);
    let confinement = crate::contain::Confinement::with_filter(allow);
    let mut c = std::process::Command::new("sleep");
    c.arg("30").process_group(0);
    // SAFETY: `apply` makes system calls only.
    unsafe { c.pre_exec(move || confinement.apply()) };
    let mut child = c.spawn().unwrap();
    let pid = child.id() as i32;
    // The filter is installed before `exec`: wait for sleep itself.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !filtered(pid)
        || std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|e| !e.ends_with("sleep"))
    {
        assert!(std::time::Instant::now() < deadline, "never filtered");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let made = Escapes::default();
    assert!(made.record(pid, || None));
    assert_eq!(made.end(), 1);
    assert!(killed(&mut child));
    assert!(!made.holds(pid));
}

/// A second signal's hurried exit reaches every live spawn's record (one
/// dropped meanwhile is passed over).
#[test]
fn end_all_reaches_every_live_record() {
    let made = Escapes::registered();
    let (mut child, pid) = a_group_in(&made);
    let gone = Escapes::registered();
    drop(gone);
    end_all();
    assert!(killed(&mut child), "end_all left the group running");
    assert!(!made.holds(pid));
}

/// The descriptors are looked over for processes gone only once the
/// bound is reached, and then once per MAX_PIDFDS groups more.
#[test]
fn descriptors_are_looked_over_at_the_bound_and_then_seldom() {
    let me = std::process::id();
    let made = Escapes::default();
    let dead = || {
        let mut c = sleeper(false);
        let fd = crate::pidfd::pidfd_open(c.id());
        c.kill().unwrap();
        c.wait().unwrap();
        fd
    };
    // Under the bound, a dead process's descriptor stays.
    assert!(made.record(-1, dead));
    assert!(made.record(-2, || crate::pidfd::pidfd_open(me)));
    assert!(made.lock().groups[&-1].is_some());
    for g in 2..MAX_PIDFDS as i32 {
        assert!(made.record(-1 - g, || crate::pidfd::pidfd_open(me)));
    }
    // At the bound: looked over, -1's goes.
    assert!(made.record(1, || crate::pidfd::pidfd_open(me)));
    assert!(made.lock().groups[&-1].is_none());
    assert!(made.lock().groups[&1].is_some());
    // A process gone right after is not looked for until MAX_PIDFDS
    // groups later.
    made.lock().groups.insert(-2, dead());
    for g in 2..MAX_PIDFDS as i32 {
        assert!(made.record(g, || None));
        assert!(made.lock().groups[&-2].is_some(), "looked over at {g}");
    }
    assert!(made.record(MAX_PIDFDS as i32, || None));
    assert!(made.record(MAX_PIDFDS as i32 + 1, || None));
    assert!(made.lock().groups[&-2].is_none());
    *made.lock() = Made::default();
}
