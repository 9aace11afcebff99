//! The exec wall's second look: each exec the supervisor lets go on is
//! followed to where the kernel commits it, and decided again there.
//!
//! The first look (seccomp user notification, [`super::exec`]) reads the
//! path and argv from the caller's memory while it waits in its call.
//! What the kernel then runs is looked up and read again after the
//! answer: a path swapped for a link once the supervisor has read the
//! file, an argv flipped by another thread, a `#!` line naming another
//! program, or a loader given a program to map all run something the
//! first look never saw. So the supervisor attaches to the calling thread
//! (`PTRACE_SEIZE` with `PTRACE_O_TRACEEXEC`, no stop) before it answers,
//! and the kernel stops the thread at `PTRACE_EVENT_EXEC`: the new image
//! is built, `/proc/PID/exe` is the file it mapped and argv is on the new
//! stack, no other thread of the process is left, and not one instruction
//! of the program has run. There the [`super::exec::decide_committed`]
//! decision is made; a refusal kills the process before it runs, an
//! allowed exec is detached and goes on.
//!
//! Only the exec is followed: no fork, clone or system call stops, so a
//! command pays for its execs and for nothing else. An exec that fails
//! after the answer (a format the kernel refuses, an argv it cannot
//! copy) never reaches that stop. Where the kernel holds a received
//! notification's wait killable-only (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`,
//! Linux 6.0+), the thread is also sent `PTRACE_INTERRUPT` before the
//! answer: the wait is not broken by it, and the thread stops as its call
//! returns, whether the exec committed (after the exec stop) or failed
//! (at once); detaching clears what is still pending. Elsewhere the wait
//! is bounded by a per-thread timer ([`Alarm`]) whose signal interrupts
//! it, and the thread is then interrupted and detached. The lookups that
//! fail before the kernel reads a file (no such file, a folder) are
//! answered by the first look itself and never followed.
//!
//! The supervisor's thread is the tracer: ptrace requests must come from
//! the thread that attached. `PTRACE_O_EXITKILL` ends a followed process
//! should that thread die with it attached. The spawn's first process is
//! the runner's own child: its exit, seen while following it, is left to
//! the runner's reaper (tokio waits on a pidfd, which reports exits only),
//! and only other processes' exits are taken here, which hands them back
//! to their parents.

use std::io;
use std::sync::OnceLock;
use std::time::Duration;

/// Set (to anything) to act as if the kernel refused the runner ptrace
/// (Yama's `ptrace_scope` 3, a container without it): how the tests see
/// that such a run says so and stays strict.
pub const SIMULATE_NO_FOLLOW: &str = "RUNNER_SIMULATE_NO_EXEC_FOLLOW";

/// How long an exec may take before the follower stops the thread to see
/// whether it failed (a failed exec never stops by itself).
const EXEC_BOUND: Duration = Duration::from_millis(5);

/// Why the supervisor cannot follow execs here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoFollow {
    #[error("simulated by {SIMULATE_NO_FOLLOW}")]
    Simulated,
    /// The errno of `PTRACE_SEIZE` of a child.
    #[error("ptrace refused: {}", io::Error::from_raw_os_error(*.0))]
    Refused(i32),
    #[error("the probe failed: {}", io::Error::from_raw_os_error(*.0))]
    ProbeFailed(i32),
}

/// Whether the runner may follow its commands' execs here (ptrace of its
/// own descendants); why not when it may not. Probed once, on a child
/// forked for it.
pub fn available() -> Result<(), NoFollow> {
    static PROBE: OnceLock<Result<(), NoFollow>> = OnceLock::new();
    if std::env::var_os(SIMULATE_NO_FOLLOW).is_some() {
        return Err(NoFollow::Simulated);
    }
    PROBE.get_or_init(probe).clone()
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn probe() -> Result<(), NoFollow> {
    // SAFETY: the child only waits (`pause` is async-signal-safe) until it
    // is killed; it touches nothing of the parent's.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        loop {
            // SAFETY: as above.
            unsafe { libc::pause() };
        }
    }
    if pid < 0 {
        return Err(NoFollow::ProbeFailed(errno()));
    }
    // SAFETY: plain system calls on the child just forked.
    unsafe {
        let seized = libc::ptrace(
            libc::PTRACE_SEIZE,
            pid,
            0,
            libc::PTRACE_O_EXITKILL as libc::c_long,
        );
        let why = errno();
        libc::kill(pid, libc::SIGKILL);
        let mut status = 0;
        libc::waitpid(pid, &mut status, libc::__WALL);
        if seized != 0 {
            return Err(NoFollow::Refused(why));
        }
    }
    Ok(())
}

/// Attaches to thread `tid` (waiting in its exec's notification) so that
/// the kernel stops it where the exec commits, and, with `interrupt` (its
/// wait is killable-only), asks it to stop as its call ends; the errno
/// when it cannot (the process is gone, not dumpable to this runner, or
/// traced already).
pub(super) fn attach(tid: i32, interrupt: bool) -> Result<(), i32> {
    let options = libc::PTRACE_O_TRACEEXEC | libc::PTRACE_O_EXITKILL;
    // SAFETY: plain system calls; the kernel checks the target.
    unsafe {
        if libc::ptrace(libc::PTRACE_SEIZE, tid, 0, options as libc::c_long) != 0 {
            return Err(errno());
        }
        if interrupt && libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) != 0 {
            let e = errno();
            detach(tid, 0);
            return Err(e);
        }
    }
    Ok(())
}

/// How a followed exec ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Committed {
    /// The new program is mapped and stopped before its first
    /// instruction, as process `pid`: decide, then [`release`] or
    /// [`kill`] it.
    Exec(i32),
    /// The exec failed (or never ran) and the thread is on its way,
    /// detached.
    Failed,
    /// The process ended meanwhile.
    Gone,
}

/// Waits for thread `tid` (of process `tgid`), attached by [`attach`] and
/// answered, to commit its exec or not. `interrupted`: [`attach`] asked
/// it to stop as its call ends (no timer is needed then).
pub(super) fn await_exec(alarm: &Alarm, tid: i32, tgid: i32, interrupted: bool) -> Committed {
    let bounded = !interrupted;
    let mut interrupted = interrupted;
    let mut pause = Duration::from_micros(20);
    let started = std::time::Instant::now();
    loop {
        // A thread other than its process's first changes its number to
        // the process's when the exec commits, and a failed one keeps its
        // own: both are looked at, without blocking.
        let event = if tid == tgid && !bounded {
            peek(tid, true)
        } else if tid == tgid {
            alarm.arm(EXEC_BOUND);
            let e = peek(tid, true);
            alarm.disarm();
            e
        } else {
            match peek(tgid, false) {
                Peek::Nothing => peek(tid, false),
                e => e,
            }
        };
        match event {
            Peek::Interrupted | Peek::Nothing => {
                if tid != tgid && (!bounded || started.elapsed() < EXEC_BOUND) {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(1));
                    continue;
                }
                if !interrupted {
                    // SAFETY: a plain system call on our tracee.
                    unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) };
                    interrupted = true;
                }
                if tid != tgid {
                    std::thread::sleep(pause);
                }
            }
            Peek::NoSuch => return Committed::Gone,
            Peek::Exited(pid) => {
                take_exit(pid);
                return Committed::Gone;
            }
            Peek::Stopped(pid, status) => {
                consume_stop(pid);
                if status == libc::SIGTRAP | (libc::PTRACE_EVENT_EXEC << 8) {
                    return Committed::Exec(pid);
                }
                // A stop of another kind: the exec is over without having
                // committed (a signal to deliver, the interrupt above, a
                // group stop). Detached, with its signal.
                let signal = if status & !0x7f == 0 { status } else { 0 };
                detach(pid, signal);
                return Committed::Failed;
            }
        }
    }
}

/// What a look at one tracee found.
enum Peek {
    /// A stop (`waitid`'s status: the signal, and a ptrace event above it).
    Stopped(i32, i32),
    Exited(i32),
    /// Nothing yet.
    Nothing,
    /// The wait was interrupted by the [`Alarm`].
    Interrupted,
    /// No such tracee (gone and taken already).
    NoSuch,
}

/// Looks at tracee `pid` without taking what it finds.
fn peek(pid: i32, block: bool) -> Peek {
    // SAFETY: zeroed is a valid siginfo for waitid to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let mut flags =
        libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT | libc::__WALL | libc::__WNOTHREAD;
    if !block {
        flags |= libc::WNOHANG;
    }
    // SAFETY: a siginfo buffer of ours.
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
    if r != 0 {
        return match errno() {
            libc::EINTR => Peek::Interrupted,
            _ => Peek::NoSuch,
        };
    }
    // SAFETY: waitid filled these fields (si_pid 0: nothing yet).
    let (who, status) = unsafe { (info.si_pid(), info.si_status()) };
    if who == 0 {
        return Peek::Nothing;
    }
    match info.si_code {
        libc::CLD_TRAPPED | libc::CLD_STOPPED => Peek::Stopped(who, status),
        libc::CLD_CONTINUED => Peek::Nothing,
        _ => Peek::Exited(who),
    }
}

/// Takes the stop of `pid` just looked at.
fn consume_stop(pid: i32) {
    // SAFETY: as in `peek`.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WSTOPPED | libc::WNOHANG | libc::__WALL | libc::__WNOTHREAD;
    // SAFETY: a siginfo buffer of ours.
    unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
}

/// Takes the exit of tracee `pid`, which hands it back to its parent,
/// unless that parent is the runner: then the runner's own reaper takes
/// it (taken here, its status would be lost to the code waiting for it).
fn take_exit(pid: i32) {
    let parent = super::procs::stat(pid).map(|s| s.ppid);
    if parent == Some(std::process::id() as i32) {
        return;
    }
    // SAFETY: as in `peek`.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::__WALL | libc::__WNOTHREAD;
    // SAFETY: a siginfo buffer of ours.
    unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) };
}

fn detach(pid: i32, signal: i32) {
    // SAFETY: a plain system call on our tracee.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, signal as libc::c_long) };
}

/// Lets process `pid`, stopped where its exec committed, run its program.
pub(super) fn release(pid: i32) {
    detach(pid, 0);
}

/// Ends process `pid`, stopped where its exec committed, before its
/// program runs; waits for it to go (its exit taken as [`take_exit`]
/// says).
pub(super) fn kill(pid: i32) {
    // SAFETY: plain system calls on our stopped tracee.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    for _ in 0..1000 {
        match peek(pid, true) {
            Peek::Exited(p) => return take_exit(p),
            Peek::Stopped(p, _) => {
                // SIGKILL wakes a stopped tracee; a stop still queued
                // before it is taken and the wait goes on.
                consume_stop(p);
            }
            Peek::NoSuch => return,
            Peek::Nothing | Peek::Interrupted => {}
        }
    }
}

/// The signal [`Alarm`] sends (one the runner uses for nothing else; its
/// handler does nothing, installed without `SA_RESTART` so that it
/// interrupts the follower's wait).
fn alarm_signal() -> i32 {
    libc::SIGRTMIN() + 4
}

extern "C" fn on_alarm(_: libc::c_int) {}

/// A timer of the supervisor's thread that interrupts its wait for an
/// exec past [`EXEC_BOUND`].
pub(super) struct Alarm {
    timer: libc::timer_t,
}

impl Alarm {
    /// The calling thread's alarm.
    pub(super) fn new() -> io::Result<Self> {
        static HANDLER: OnceLock<()> = OnceLock::new();
        HANDLER.get_or_init(|| {
            // SAFETY: a handler that does nothing, for a signal nothing else
            // uses; zeroed is an empty mask and no flags.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_alarm as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(alarm_signal(), &sa, std::ptr::null_mut());
            }
        });
        // SAFETY: zeroed is a valid sigevent; the fields are set below.
        let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = alarm_signal();
        // SAFETY: a plain system call.
        event.sigev_notify_thread_id = unsafe { libc::gettid() };
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: a sigevent and a timer of ours.
        if unsafe { libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { timer })
    }

    fn set(&self, after: Duration) {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: after.as_secs() as libc::time_t,
                tv_nsec: after.subsec_nanos() as libc::c_long,
            },
        };
        // SAFETY: our timer and a spec of ours.
        unsafe { libc::timer_settime(self.timer, 0, &spec, std::ptr::null_mut()) };
    }

    fn arm(&self, after: Duration) {
        self.set(after);
    }

    fn disarm(&self) {
        self.set(Duration::ZERO);
    }
}

impl Drop for Alarm {
    fn drop(&mut self) {
        // SAFETY: our timer, deleted once.
        unsafe { libc::timer_delete(self.timer) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits until `pid` sleeps (in its `read`: its own exec long done).
    fn sleeping(pid: i32) {
        for _ in 0..2000 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('S'))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("{pid} never waited");
    }

    #[test]
    fn the_probe_sees_that_this_runner_may_follow_its_children() {
        // Root, or a machine without Yama's strictest settings: this
        // project's machines. The simulation says no.
        assert!(available().is_ok(), "{:?}", available());
    }

    /// `sh -c 'read _; SCRIPT'` waiting in its `read` (the stand-in for a
    /// thread waiting in its notification), attached: the child, its
    /// number, and the pipe whose line lets it go on.
    fn attached_shell(script: &str) -> (std::process::Child, i32, std::io::PipeWriter) {
        let (r, w) = std::io::pipe().unwrap();
        let child = std::process::Command::new("sh")
            .args(["-c", &format!("read _; {script}")])
            .stdin(r)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        sleeping(pid);
        attach(pid, false).unwrap();
        (child, pid, w)
    }

    /// A child waiting to exec (in `read`, the stand-in for a thread
    /// waiting in its notification): attached, let go, and seen where the
    /// kernel commits the exec, with the new program's file as its `exe`;
    /// a failing exec is seen as failed or gone, and the child goes on.
    #[test]
    fn an_exec_is_seen_where_it_commits_and_a_failed_one_is_let_go() {
        use std::io::Write;
        let alarm = Alarm::new().unwrap();
        for (program, commits) in [("/bin/true", true), ("/nonexistent/x", false)] {
            let (mut child, pid, mut w) = attached_shell(&format!("exec {program} 2>/dev/null"));
            w.write_all(b"\n").unwrap();
            let got = await_exec(&alarm, pid, pid, false);
            if commits {
                assert_eq!(got, Committed::Exec(pid));
                let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
                let want = std::fs::canonicalize("/bin/true").unwrap();
                assert_eq!(exe, want);
                release(pid);
                assert!(child.wait().unwrap().success());
            } else {
                // sh's exec fails and sh exits: its exit is left to this
                // test, its parent.
                assert!(
                    matches!(got, Committed::Failed | Committed::Gone),
                    "{got:?}"
                );
                assert!(!child.wait().unwrap().success());
            }
        }
    }

    /// A process killed between the two looks (attached, then killed
    /// before its exec commits): the wait ends with nothing to decide, no
    /// hang, and the runner's own child is left for its reaper.
    #[test]
    fn a_process_killed_between_the_looks_ends_the_wait() {
        let alarm = Alarm::new().unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        sleeping(pid);
        attach(pid, false).unwrap();
        // SAFETY: a plain system call on the test's own child.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let started = std::time::Instant::now();
        assert_eq!(await_exec(&alarm, pid, pid, false), Committed::Gone);
        assert!(started.elapsed() < Duration::from_secs(5));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn a_killed_exec_never_runs_its_program() {
        use std::io::Write;
        let alarm = Alarm::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("ran");
        let (mut child, pid, mut w) =
            attached_shell(&format!("exec /bin/touch {}", mark.display()));
        w.write_all(b"\n").unwrap();
        assert_eq!(await_exec(&alarm, pid, pid, false), Committed::Exec(pid));
        kill(pid);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
        assert!(!mark.exists());
    }
}
