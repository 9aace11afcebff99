//! The runner's own signal wall, where neither Landlock's signal scope
//! (ABI 6) nor the supervisor is to be had: a fixed seccomp program,
//! written for each command with the runner's numbers in it, that refuses
//! every way to signal the runner.
//!
//! Without it, `kill -9 $PPID` in a command ends the run there (exit 137,
//! no transcript, no junit.xml, the task's copy left on disk). The program
//! refuses (`EPERM`):
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
//! `/proc/$PPID/task` while it runs and signals a new thread's number
//! ends the run. Other processes outside the task (other commands, the
//! CI job's own) are not kept from it. The transcript's `sandbox` says
//! which wall holds signals.

use super::seccomp::{self, F_SETOWN_EX, FIOSETOWN, Op, SIOCSPGRP};

/// Most thread numbers written into a program (two instructions each, in
/// two lists, within BPF's 4,096).
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

/// The program for `ids`.
pub(super) fn filter(ids: &RunnerIds) -> Vec<libc::sock_filter> {
    use Op::*;
    let deny = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
    let allow = libc::SECCOMP_RET_ALLOW;
    let nr = |n: libc::c_long| n as u32;
    // A process group is named by its number negated (as the low half of
    // the argument, which is all the kernel reads of a `pid_t`).
    let group = (ids.pgid as i32).wrapping_neg() as u32;
    let every = u32::MAX; // -1
    let mut ops = Vec::from(seccomp::native_only(deny));
    ops.extend([
        IfEq(nr(libc::SYS_kill), "kill"),
        IfEq(nr(libc::SYS_tkill), "kill"),
        IfEq(nr(libc::SYS_rt_sigqueueinfo), "kill"),
        IfEq(nr(libc::SYS_tgkill), "tgkill"),
        IfEq(nr(libc::SYS_rt_tgsigqueueinfo), "tgkill"),
        IfEq(nr(libc::SYS_pidfd_open), "pidfd_open"),
        IfEq(nr(libc::SYS_pidfd_send_signal), "deny"),
        IfEq(nr(libc::SYS_setpgid), "setpgid"),
        IfEq(nr(libc::SYS_fcntl), "fcntl"),
        IfEq(nr(libc::SYS_ioctl), "ioctl"),
        Ret(allow),
        // The lists below can be longer than a conditional jump reaches.
        Label("kill"),
        Goto("by_pid"),
        Label("pidfd_open"),
        Goto("by_pid_any_signal"),
        Label("fcntl"),
        Load(seccomp::arg(1)),
        IfEq(libc::F_SETOWN as u32, "owner"),
        IfEq(F_SETOWN_EX, "deny"),
        Ret(allow),
        Label("owner"),
        Goto("by_owner"),
        Label("tgkill"),
        Load(seccomp::arg(2)),
        IfEq(0, "allow"),
        Load(seccomp::arg(0)),
        IfEq(ids.pid, "deny"),
        Ret(allow),
        Label("setpgid"),
        Load(seccomp::arg(1)),
        IfEq(ids.pgid, "deny"),
        Ret(allow),
        Label("ioctl"),
        Load(seccomp::arg(1)),
        IfEq(FIOSETOWN, "deny"),
        IfEq(SIOCSPGRP, "deny"),
        Label("allow"),
        Ret(allow),
        Label("deny"),
        Ret(deny),
        // kill, tkill, rt_sigqueueinfo: (pid, signal).
        Label("by_pid"),
        Load(seccomp::arg(1)),
        RetIfEq(0, allow),
        Label("by_pid_any_signal"),
        Load(seccomp::arg(0)),
    ]);
    let runner = |ops: &mut Vec<Op>| {
        ops.extend(ids.tids.iter().map(|t| RetIfEq(*t, deny)));
        ops.extend([RetIfEq(group, deny), RetIfEq(every, deny), Ret(allow)]);
    };
    runner(&mut ops);
    ops.extend([Label("by_owner"), Load(seccomp::arg(2))]);
    runner(&mut ops);
    seccomp::assemble(&ops)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each way of signalling this test process gets from a child
    /// under the program written for it (signal 0 or a harmless one, and
    /// each refused before it is sent): `ok` or the errno.
    #[test]
    fn every_way_to_signal_the_runner_is_refused_and_the_commands_own_are_not() {
        use std::os::unix::process::CommandExt;
        let me = std::process::id();
        // A thread of this process, alive while the child runs.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            // SAFETY: a plain system call.
            tid_tx.send(unsafe { libc::gettid() }).unwrap();
            let _ = rx.recv();
        });
        let tid = tid_rx.recv().unwrap();
        let ids = RunnerIds::now();
        assert!(ids.tids.contains(&(tid as u32)), "{ids:?}");
        let prog = filter(&ids);
        // SIGWINCH (28): ignored by default, were it to get through.
        let script = format!(
            "import ctypes, fcntl, os, platform, signal\n\
             c = ctypes.CDLL(None, use_errno=True)\n\
             tkill = {{'x86_64': 200, 'aarch64': 130}}[platform.machine()]\n\
             def t(name, r):\n\
             \x20   print(name, 'ok' if r == 0 else ctypes.get_errno())\n\
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
        let c = crate::contain::Confinement::with_filter(prog);
        let mut cmd = std::process::Command::new("python3");
        cmd.args(["-c", &script]);
        // A group of its own, as a command's.
        cmd.process_group(0);
        // SAFETY: `apply` makes system calls only.
        unsafe { cmd.pre_exec(move || c.apply()) };
        let out = cmd.output().expect("python3 runs");
        drop(tx);
        t.join().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let e = libc::EPERM;
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!(
                "kill {e}\nprobe ok\nthread {e}\ntkill {e}\ngroup {e}\nevery {e}\n\
                 tgkill {e}\nsigqueue {e}\nown ok\nown-group ok\npidfd {e}\npidfd-own ok\n\
                 send {e}\njoin {e}\nowner {e}\nowner-group {e}\nowner-own ok\nowner-ex {e}\n"
            )
        );
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
        let prog = filter(&ids);
        assert!(
            prog.len() > 4 * MAX_TIDS && prog.len() < 4096,
            "{}",
            prog.len()
        );
    }
}
