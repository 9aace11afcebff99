//! The runner's own wall: what keeps a command from acting on the
//! runner's process by its number where neither Landlock nor the
//! supervisor does. A fixed seccomp program, written for each command
//! with the runner's numbers in it (its process, its threads, its group).
//!
//! **Limits and scheduling, always.** Landlock scopes signals (ABI 6) but
//! not these, and the supervisor does not decide them: a command of the
//! same user could otherwise end the run without a signal.
//! `prlimit --pid $PPID --nofile=3:3` leaves the runner unable to write
//! its outputs, `--cpu=1:1` kills it, and `chrt --idle -p 0 $PPID` or
//! `renice` starves it under a busy command. The program refuses
//! (`EPERM`) `prlimit64`, `sched_setaffinity`, `sched_setscheduler`,
//! `sched_setparam` and `sched_setattr` naming the runner or a thread of
//! it, `setpriority` and `ioprio_set` naming it or its group, and both of
//! those for every process of the user (`PRIO_USER`, `IOPRIO_WHO_USER`)
//! outright.
//!
//! **The terminal, always.** A command run from a terminal (a pre-commit
//! hook, a run at a prompt) is in the terminal's session, and `TIOCSTI`
//! pushes characters into its input, which the shell reads as typed once
//! the run is over: `rm -rf ~` typed by a command. `TIOCSTI` and
//! `TIOCLINUX` (a console's selection paste) are refused, as bubblewrap
//! refuses them.
//!
//! **Signals, where neither Landlock's scope (ABI 6) nor the supervisor
//! is to be had.** Without them, `kill -9 $PPID` in a command ends the run
//! there (exit 137, no transcript, no junit.xml, the task's copy left on
//! disk). The program then also refuses:
//!
//! - `kill`, `tkill` and `rt_sigqueueinfo` naming the runner's process or
//!   any of its threads (a thread's number signals its whole process), the
//!   runner's process group (`-pgid`), or every process (`-1`); signal 0,
//!   which only asks whether a process is there, goes through;
//! - `tgkill` and `rt_tgsigqueueinfo` into the runner's process;
//! - `pidfd_open` of the runner or a thread of it, and
//!   `pidfd_send_signal` outright (a descriptor of the runner's `/proc`
//!   folder is a pidfd too, and what a descriptor names is out of a
//!   filter's sight);
//! - `setpgid` into the runner's group (whose kill would then be the
//!   command's own);
//! - the runner as the owner a file signals when ready (`F_SETOWN`), and
//!   the owner set through memory (`F_SETOWN_EX`, `FIOSETOWN`,
//!   `SIOCSPGRP`) outright.
//!
//! **What it does not hold.** A thread the runner starts after the
//! command did is not in the program: a command that lists
//! `/proc/$PPID/task` while it runs and names a new thread's number gets
//! through, where nothing else holds. Where the supervisor runs, it keeps
//! the limits and scheduling calls to the spawn's own processes
//! (`supervisor/targets.rs`), which covers such a thread and every other
//! process outside the task; without it, other processes (other
//! commands, the CI job's own) are not kept from them. Without Landlock,
//! the runner's `/proc` files a user may write (`oom_score_adj`,
//! `autogroup`) are not walled either. The transcript's `sandbox` says
//! which wall holds signals.

use super::seccomp::{
    self, F_SETOWN_EX, FIOSETOWN, Op, SETS_A_PROCESS, SETS_PRIORITY, SIOCSPGRP, WHO_GROUP,
    WHO_PROCESS, WHO_USER,
};

/// Most thread numbers written into a program (two instructions each, in
/// three lists, within BPF's 4,096).
const MAX_TIDS: usize = 512;

/// The numbers that name the runner.
#[derive(Debug, Clone)]
pub(super) struct RunnerIds {
    pid: u32,
    pgid: u32,
    /// Its threads' numbers (its own first), at most [`MAX_TIDS`].
    tids: Vec<u32>,
}

impl RunnerIds {
    /// This process's, now: its threads listed in `/proc/self/task`.
    pub(super) fn now() -> Self {
        let pid = std::process::id();
        // SAFETY: a plain system call.
        let pgid = unsafe { libc::getpgrp() } as u32;
        let mut tids = vec![pid];
        if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
            tids.extend(
                dir.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                    .filter(|t| *t != pid),
            );
        }
        tids.truncate(MAX_TIDS);
        Self { pid, pgid, tids }
    }
}

/// `ioctl`s that put input into a terminal (`TIOCLINUX`'s selection
/// paste on a console), the same on x86-64 and AArch64.
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// The program for `ids`; with `signals`, the signal calls too. A call
/// of a foreign ABI returns `foreign`: `EPERM`, or let through where the
/// supervisor's filter refuses (and records) it.
pub(super) fn filter(ids: &RunnerIds, signals: bool, foreign: u32) -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let allow = libc::SECCOMP_RET_ALLOW;
    let nr = |n: libc::c_long| n as u32;
    // A process group is named by its number negated (as the low half of
    // the argument, which is all the kernel reads of a `pid_t`).
    let group = (ids.pgid as i32).wrapping_neg() as u32;
    let every = u32::MAX; // -1
    let mut ops = Vec::from(seccomp::native_only(foreign));
    ops.extend(SETS_A_PROCESS.iter().map(|n| IfEq(nr(*n), "target0")));
    ops.extend([
        IfEq(nr(SETS_PRIORITY[0]), "priority"),
        IfEq(nr(SETS_PRIORITY[1]), "ioprio"),
        IfEq(nr(libc::SYS_ioctl), "ioctl"),
    ]);
    if signals {
        ops.extend([
            IfEq(nr(libc::SYS_kill), "kill"),
            IfEq(nr(libc::SYS_tkill), "kill"),
            IfEq(nr(libc::SYS_rt_sigqueueinfo), "kill"),
            IfEq(nr(libc::SYS_tgkill), "tgkill"),
            IfEq(nr(libc::SYS_rt_tgsigqueueinfo), "tgkill"),
            IfEq(nr(libc::SYS_pidfd_open), "target0"),
            IfEq(nr(libc::SYS_pidfd_send_signal), "deny"),
            IfEq(nr(libc::SYS_setpgid), "setpgid"),
            IfEq(nr(libc::SYS_fcntl), "fcntl"),
        ]);
    }
    ops.extend([
        Ret(allow),
        // The lists below can be longer than a conditional jump reaches.
        Label("target0"),
        Goto("by_arg0"),
    ]);
    // setpriority's and ioprio_set's (who, whom): by their own numbers.
    for (label, i) in [("priority", 0), ("ioprio", 1)] {
        ops.extend([
            Label(label),
            Load(seccomp::arg(0)),
            IfEq(WHO_USER[i], "deny"),
            IfEq(WHO_GROUP[i], "who_group"),
            IfEq(WHO_PROCESS[i], "who_process"),
            Ret(allow),
        ]);
    }
    ops.extend([
        Label("who_group"),
        Load(seccomp::arg(1)),
        IfEq(ids.pgid, "deny"),
        Ret(allow),
        Label("who_process"),
        Goto("by_arg1"),
        // Input pushed into the terminal, which its shell reads once the
        // run is over (a pre-commit hook's terminal), and, with signals,
        // a signal's owner named in memory.
        Label("ioctl"),
        Load(seccomp::arg(1)),
        IfEq(TIOCSTI, "deny"),
        IfEq(TIOCLINUX, "deny"),
    ]);
    if signals {
        ops.extend([IfEq(FIOSETOWN, "deny"), IfEq(SIOCSPGRP, "deny")]);
    }
    ops.push(Ret(allow));
    if signals {
        ops.extend([
            Label("kill"),
            Load(seccomp::arg(1)),
            IfEq(0, "allow"),
            Goto("by_arg0"),
            Label("fcntl"),
            Load(seccomp::arg(1)),
            IfEq(libc::F_SETOWN as u32, "owner"),
            IfEq(F_SETOWN_EX, "deny"),
            Ret(allow),
            Label("owner"),
            Goto("by_arg2"),
            Label("tgkill"),
            Load(seccomp::arg(2)),
            IfEq(0, "allow"),
            Load(seccomp::arg(0)),
            IfEq(ids.pid, "deny"),
            Ret(allow),
            Label("setpgid"),
            Load(seccomp::arg(1)),
            IfEq(ids.pgid, "deny"),
        ]);
    }
    ops.extend([Label("allow"), Ret(allow), Label("deny"), Ret(deny)]);
    // Whether the argument names the runner: its process or a thread, its
    // group, or every process.
    let lists: &[(&'static str, u32)] = if signals {
        &[("by_arg0", 0), ("by_arg1", 1), ("by_arg2", 2)]
    } else {
        &[("by_arg0", 0), ("by_arg1", 1)]
    };
    for &(label, arg) in lists {
        ops.extend([Label(label), Load(seccomp::arg(arg))]);
        ops.extend(ids.tids.iter().map(|t| RetIfEq(*t, deny)));
        ops.extend([RetIfEq(group, deny), RetIfEq(every, deny), Ret(allow)]);
    }
    seccomp::assemble(&ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EPERM_RET: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

    /// What `script` (Python, after a preamble that defines `t(name,
    /// result)` and `tr(name, callable)`, each printing `ok` or the errno)
    /// prints, run under `prog` (in a group of its own, as a command, when
    /// `own_group`).
    fn under(prog: Vec<libc::sock_filter>, script: &str, own_group: bool) -> String {
        let script = format!(
            "import ctypes, os, platform, resource\n\
             c = ctypes.CDLL(None, use_errno=True)\n\
             def t(name, r):\n\
             \x20   print(name, 'ok' if r == 0 else ctypes.get_errno())\n\
             def tr(name, f):\n\
             \x20   try:\n\
             \x20       f(); print(name, 'ok')\n\
             \x20   except OSError as e:\n\
             \x20       print(name, e.errno)\n\
             {script}"
        );
        let filter = (!prog.is_empty()).then_some(prog);
        super::super::test_support::python_under(filter, &script, own_group)
    }

    /// A thread of this process, alive until the sender is dropped, and
    /// its number.
    fn a_thread() -> (
        std::sync::mpsc::Sender<()>,
        std::thread::JoinHandle<()>,
        i32,
    ) {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            // SAFETY: a plain system call.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            let _ = rx.recv();
        });
        (tx, t, tid_rx.recv().unwrap())
    }

    /// Every way to change the runner's limits or scheduling is refused,
    /// by its process, a thread, its group or as every process of the
    /// user; the command's own go through. (Each call is a read or sets
    /// what is already set, so that a broken wall changes nothing here.)
    #[test]
    fn the_runners_limits_and_scheduling_are_out_of_reach() {
        let me = std::process::id();
        let (tx, t, tid) = a_thread();
        let ids = RunnerIds::now();
        assert!(ids.tids.contains(&(tid as u32)), "{ids:?}");
        let nobody = 54321; // a user with no process: ESRCH were it let through
        let script = format!(
            "me, tid, grp = {me}, {tid}, {pgid}\n\
             tr('prlimit', lambda: resource.prlimit(me, resource.RLIMIT_NOFILE))\n\
             tr('prlimit-thread', lambda: resource.prlimit(tid, resource.RLIMIT_CPU))\n\
             tr('affinity', lambda: os.sched_setaffinity(tid, os.sched_getaffinity(tid)))\n\
             tr('scheduler', lambda: os.sched_setscheduler(me, os.sched_getscheduler(me), os.sched_param(0)))\n\
             tr('param', lambda: os.sched_setparam(me, os.sched_param(0)))\n\
             t('setattr', c.syscall({setattr}, me, None, 0))\n\
             tr('nice', lambda: os.setpriority(os.PRIO_PROCESS, me, os.getpriority(os.PRIO_PROCESS, me)))\n\
             tr('nice-group', lambda: os.setpriority(os.PRIO_PGRP, grp, os.getpriority(os.PRIO_PGRP, grp)))\n\
             tr('nice-user', lambda: os.setpriority(os.PRIO_USER, {nobody}, 0))\n\
             t('ioprio', c.syscall({ioprio}, 1, me, c.syscall({ioprio_get}, 1, me)))\n\
             t('ioprio-user', c.syscall({ioprio}, 3, {nobody}, 0))\n\
             tr('own-prlimit', lambda: resource.prlimit(0, resource.RLIMIT_NOFILE))\n\
             tr('own-affinity', lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)))\n\
             tr('own-nice', lambda: os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0)))\n\
             tr('own-group-nice', lambda: os.setpriority(os.PRIO_PGRP, 0, os.getpriority(os.PRIO_PGRP, 0)))\n",
            pgid = ids.pgid,
            setattr = libc::SYS_sched_setattr,
            ioprio = libc::SYS_ioprio_set,
            ioprio_get = libc::SYS_ioprio_get,
        );
        let e = libc::EPERM;
        let want = format!(
            "prlimit {e}\nprlimit-thread {e}\naffinity {e}\nscheduler {e}\nparam {e}\nsetattr {e}\n\
             nice {e}\nnice-group {e}\nnice-user {e}\nioprio {e}\nioprio-user {e}\n\
             own-prlimit ok\nown-affinity ok\nown-nice ok\nown-group-nice ok\n"
        );
        for signals in [false, true] {
            assert_eq!(
                under(filter(&ids, signals, EPERM_RET), &script, true),
                want,
                "{signals}"
            );
        }
        // The control: without the program, each of them is let through
        // (or fails for its own reason).
        let open = under(Vec::new(), &script, true);
        assert!(
            open.starts_with("prlimit ok\nprlimit-thread ok\n"),
            "{open}"
        );
        assert!(
            !open.lines().any(|l| l.ends_with(&format!(" {e}"))),
            "{open}"
        );
        drop(tx);
        t.join().unwrap();
    }

    /// With signals, every way to signal the runner is refused (signal 0
    /// or a harmless one, each refused before it is sent), and the
    /// command's own go through; without, the program leaves signals to
    /// Landlock or the supervisor.
    #[test]
    fn every_way_to_signal_the_runner_is_refused_and_the_commands_own_are_not() {
        let me = std::process::id();
        let (tx, t, tid) = a_thread();
        let ids = RunnerIds::now();
        // SIGWINCH (28): ignored by default, were it to get through.
        let script = format!(
            "tkill = {{'x86_64': 200, 'aarch64': 130}}[platform.machine()]\n\
             t('kill', c.kill({me}, 28))\n\
             t('probe', c.kill({me}, 0))\n\
             t('thread', c.kill({tid}, 28))\n\
             t('tkill', c.syscall(tkill, {tid}, 28))\n\
             t('group', c.kill(-{pgid}, 28))\n\
             t('every', c.kill(-1, 28))\n\
             t('tgkill', c.tgkill({me}, {tid}, 28))\n\
             t('sigqueue', c.sigqueue({me}, 28, None))\n\
             t('own', c.kill(os.getpid(), 28))\n\
             t('own-group', c.kill(0, 28))\n\
             t('pidfd', min(c.syscall({pidfd_open}, {me}, 0), 0))\n\
             t('pidfd-own', min(c.syscall({pidfd_open}, os.getpid(), 0), 0))\n\
             t('send', c.syscall({send}, 0, 28, None, 0))\n\
             t('join', c.setpgid(0, {pgid}))\n\
             r, w = os.pipe()\n\
             t('owner', c.fcntl(r, 8, {me}))\n\
             t('owner-group', c.fcntl(r, 8, -{pgid}))\n\
             t('owner-own', c.fcntl(r, 8, os.getpid()))\n\
             t('owner-ex', c.fcntl(r, 15, None))\n",
            pgid = ids.pgid,
            pidfd_open = libc::SYS_pidfd_open,
            send = libc::SYS_pidfd_send_signal,
        );
        let e = libc::EPERM;
        assert_eq!(
            under(filter(&ids, true, EPERM_RET), &script, true),
            format!(
                "kill {e}\nprobe ok\nthread {e}\ntkill {e}\ngroup {e}\nevery {e}\n\
                 tgkill {e}\nsigqueue {e}\nown ok\nown-group ok\npidfd {e}\npidfd-own ok\n\
                 send {e}\njoin {e}\nowner {e}\nowner-group {e}\nowner-own ok\nowner-ex {e}\n"
            )
        );
        // Without signals: only the probe of the same (kill(me, 0)) is
        // tried, and goes through.
        let probe = format!(
            "t('probe', c.kill({me}, 0))\nt('pidfd', min(c.syscall({}, {me}, 0), 0))\n",
            libc::SYS_pidfd_open
        );
        assert_eq!(
            under(filter(&ids, false, EPERM_RET), &probe, true),
            "probe ok\npidfd ok\n"
        );
        drop(tx);
        t.join().unwrap();
    }

    /// No command pushes input into a terminal, its controlling one
    /// included (`TIOCSTI`; `TIOCLINUX`, a console's paste); other
    /// terminal `ioctl`s go through. (Not in a group of its own: the
    /// script makes a session, whose terminal a pty becomes.)
    #[test]
    fn no_input_is_pushed_into_a_terminal() {
        let script = "import fcntl, pty, termios\n\
            m, s = pty.openpty()\n\
            os.setsid()\n\
            fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n\
            tr('sti', lambda: fcntl.ioctl(s, termios.TIOCSTI, b'x'))\n\
            tr('linux', lambda: fcntl.ioctl(s, 0x541C, b'\\x00'))\n\
            tr('size', lambda: fcntl.ioctl(s, termios.TIOCGWINSZ, bytes(8)))\n";
        let e = libc::EPERM;
        for signals in [false, true] {
            let got = under(filter(&RunnerIds::now(), signals, EPERM_RET), script, false);
            assert_eq!(got, format!("sti {e}\nlinux {e}\nsize ok\n"), "{signals}");
        }
        // The control: `TIOCSTI` goes through (or the kernel's switch
        // refuses it, `EIO`); `TIOCLINUX` is no pty's.
        let open = under(Vec::new(), script, false);
        assert!(
            !open.contains(&format!("sti {e}\n")) && !open.contains(&format!("linux {e}\n")),
            "{open}"
        );
        assert!(open.ends_with("size ok\n"), "{open}");
    }

    /// However many threads the runner has, the program is built (its
    /// lists are past a conditional jump's reach).
    #[test]
    fn a_runner_of_many_threads_gets_its_program() {
        let ids = RunnerIds {
            pid: 100,
            pgid: 100,
            tids: (100..100 + MAX_TIDS as u32).collect(),
        };
        for signals in [false, true] {
            let prog = filter(&ids, signals, EPERM_RET);
            assert!(
                prog.len() > 4 * MAX_TIDS && prog.len() < 4096,
                "{}",
                prog.len()
            );
        }
    }
}
