//! The supervisor's signal decision, where Landlock cannot scope signals
//! (ABI 6, Linux 6.12): a confined command may signal its spawn's own
//! processes ([`Tree`]) and no other, so `kill -9 $PPID`, a kill of the
//! runner's process group and a SIGIO owned by the runner all fail, and
//! the run goes on with its outputs whole.
//!
//! Each way to send a signal is handed over: `kill`, `tkill`, `tgkill`,
//! `rt_sigqueueinfo`, `rt_tgsigqueueinfo`, `pidfd_send_signal`, and
//! `fcntl(F_SETOWN)` (whose owner gets SIGIO and SIGURG later). The
//! filter refuses the other ways to name an owner (`F_SETOWN_EX`, the
//! `FIOSETOWN` and `SIOCSPGRP` ioctls), whose target sits in memory.
//!
//! Where a signal goes to a process other than the caller's, the runner
//! sends it itself through a pidfd opened before the check ([`super::procs`]
//! says why that holds), so the process it decided on is the process that
//! gets it. Three shapes go on in the kernel after the check instead, with
//! a window of microseconds in which the target could end and its number be
//! given to a new process outside the spawn: `tkill`, `tgkill` and
//! `rt_tgsigqueueinfo` (a thread is a target a pidfd names only from Linux
//! 6.9), and `F_SETOWN`. A signal to the caller's own process goes on in
//! the kernel (nothing to race), as does signal 0 (it only asks whether a
//! process exists). A signal the caller's own process is among the
//! targets of (`kill(0, sig)`) reaches it right after the answer: sent
//! while the caller waits, a handled one would restart the call for ever.

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use super::connect::still_valid;
use super::memory::read_memory;
use super::procs::{
    Tree, all_processes, ended, pidfd_target, process_fd, stat, take_fd, thread_group,
};
use super::rules::Answer;

/// `SI_MAX_SIZE`: the size of a `siginfo_t`.
const SIGINFO_SIZE: usize = 128;

/// The spawn's first process, as the runner reports it once started
/// ([`super::Supervised::spawned`]).
pub(super) struct Root {
    from_runner: Receiver<Option<OwnedFd>>,
    got: Option<Option<(i32, OwnedFd)>>,
}

impl Root {
    pub fn new(from_runner: Receiver<Option<OwnedFd>>) -> Self {
        Self {
            from_runner,
            got: None,
        }
    }

    /// The first process and its pidfd; waits for the runner to report it
    /// (it does right after starting the process). None when it could not
    /// be opened: the spawn is then the caller and its descendants.
    pub(super) fn get(&mut self) -> Option<(i32, &OwnedFd)> {
        let got = self.got.get_or_insert_with(|| {
            let fd = self
                .from_runner
                .recv_timeout(Duration::from_secs(5))
                .ok()
                .flatten()?;
            let pid = pidfd_target(&fd).filter(|p| *p > 0)?;
            Some((pid, fd))
        });
        got.as_ref().map(|(pid, fd)| (*pid, fd))
    }
}

/// A signal the runner sends once it has answered the call.
pub(super) struct Later {
    pidfd: OwnedFd,
    sig: i32,
    info: Option<Vec<u8>>,
    flags: u32,
}

impl Later {
    /// `sig` through `pidfd`, as `kill` sends it.
    fn plain(pidfd: OwnedFd, sig: i32) -> Self {
        Self {
            pidfd,
            sig,
            info: None,
            flags: 0,
        }
    }

    /// Sends it: 0 or the errno.
    pub fn send(&self) -> i32 {
        send(&self.pidfd, self.sig, self.info.as_deref(), self.flags)
    }
}

/// Sends `sig` (with `info`, a whole `siginfo_t`) through `pidfd`: 0 or
/// the errno.
fn send(pidfd: &OwnedFd, sig: i32, info: Option<&[u8]>, flags: u32) -> i32 {
    let info = info.map_or(std::ptr::null(), |i| i.as_ptr());
    // SAFETY: a pidfd of ours, and a siginfo buffer of its full size.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            sig,
            info,
            flags,
        )
    };
    if r == 0 {
        0
    } else {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPERM)
    }
}

fn answer_of(errno: i32) -> Answer {
    if errno == 0 {
        Answer::Value(0)
    } else {
        Answer::Error(errno)
    }
}

/// Refused: the target is not the spawn's.
fn refuse(what: &str, sig: i32, target: i32) -> Answer {
    tracing::warn!(
        "sandbox: signal {sig} to {what} {target} refused: outside the command's own processes"
    );
    Answer::Error(libc::EPERM)
}

/// Decides one signal call; the answer, and a signal to send after it.
pub(super) fn decide_signal(
    req: &libc::seccomp_notif,
    listener: &OwnedFd,
    root: &mut Root,
) -> (Answer, Option<Later>) {
    let Some(caller) = thread_group(req.pid) else {
        return (Answer::Error(libc::ESRCH), None);
    };
    let root = root.get();
    let call = Call {
        req,
        listener,
        tree: Tree {
            caller: caller as i32,
            root,
        },
    };
    let a = &req.data.args;
    let nr = i64::from(req.data.nr);
    let int = |n: usize| a[n] as i32;
    match nr {
        libc::SYS_kill => call.kill(int(0), int(1)),
        libc::SYS_rt_sigqueueinfo => (call.queue(int(0), int(1), a[2]), None),
        libc::SYS_tgkill | libc::SYS_rt_tgsigqueueinfo => {
            (call.in_kernel(int(0), int(2), "process"), None)
        }
        libc::SYS_tkill => match thread_group(int(0).max(0) as u32) {
            Some(tgid) => (call.in_kernel(tgid as i32, int(1), "thread"), None),
            None => (Answer::Error(libc::ESRCH), None),
        },
        libc::SYS_pidfd_send_signal => call.pidfd(int(0), int(1), a[2], a[3] as u32),
        libc::SYS_fcntl => (call.owner(int(2)), None),
        _ => (Answer::Continue, None),
    }
}

/// One signal call being decided.
struct Call<'a> {
    req: &'a libc::seccomp_notif,
    listener: &'a OwnedFd,
    tree: Tree<'a>,
}

impl Call<'_> {
    /// A pidfd of `pid` if it is the spawn's (read after opening it, and
    /// it has not ended since), while the caller still waits.
    fn own(&self, pid: i32) -> Result<(OwnedFd, i32), Answer> {
        if pid <= 0 {
            return Err(Answer::Error(libc::ESRCH));
        }
        // A thread's number names its process, as `kill` reads it.
        let Some(fd) = process_fd(pid as u32) else {
            return Err(Answer::Error(libc::ESRCH));
        };
        let process = thread_group(pid as u32).map_or(pid, |p| p as i32);
        if !self.tree.holds(process) || ended(&fd) {
            return Err(Answer::Error(libc::EPERM));
        }
        if !still_valid(self.listener, self.req.id) {
            return Err(Answer::Error(libc::ENOENT));
        }
        Ok((fd, process))
    }

    /// `kill(pid, sig)`: one process, a process group (`0`: the caller's,
    /// `-N`) or every process (`-1`).
    fn kill(&self, pid: i32, sig: i32) -> (Answer, Option<Later>) {
        if sig == 0 || pid == self.tree.caller {
            return (Answer::Continue, None);
        }
        if pid > 0 {
            return match self.own(pid) {
                // Another thread's number of the caller's own process: it
                // gets the signal after the answer (see `Later`).
                Ok((fd, process)) if process == self.tree.caller => {
                    (Answer::Value(0), Some(Later::plain(fd, sig)))
                }
                Ok((fd, _)) => (answer_of(send(&fd, sig, None, 0)), None),
                Err(Answer::Error(libc::EPERM)) => (refuse("process", sig, pid), None),
                Err(other) => (other, None),
            };
        }
        if pid == i32::MIN {
            return (Answer::Error(libc::ESRCH), None);
        }
        let group = match pid {
            0 => match stat(self.tree.caller) {
                Some(s) => Some(s.pgrp),
                None => return (Answer::Error(libc::ESRCH), None),
            },
            -1 => None,
            _ => Some(-pid),
        };
        let (targets, in_group) = self.members(group);
        if targets.is_empty() {
            if in_group == 0 {
                return (Answer::Error(libc::ESRCH), None);
            }
            return (refuse("process group", sig, -pid), None);
        }
        if !still_valid(self.listener, self.req.id) {
            return (Answer::Error(libc::ENOENT), None);
        }
        let mut later = None;
        let mut sent = false;
        let mut last = 0;
        for (p, fd) in targets {
            if p == self.tree.caller {
                // `kill(-1)` spares the caller; a group signal reaches it
                // after the answer.
                if group.is_some() {
                    later = Some(Later::plain(fd, sig));
                    sent = true;
                }
                continue;
            }
            last = send(&fd, sig, None, 0);
            sent |= last == 0;
        }
        let answer = if sent {
            Answer::Value(0)
        } else {
            answer_of(if last == 0 { libc::ESRCH } else { last })
        };
        (answer, later)
    }

    /// The spawn's processes in `group` (every process for `None`), each
    /// with a pidfd; and how many processes the group has in all.
    fn members(&self, group: Option<i32>) -> (Vec<(i32, OwnedFd)>, usize) {
        let mut out = Vec::new();
        let mut all = 0;
        for p in all_processes() {
            if p <= 1 || group.is_some_and(|g| stat(p).map(|s| s.pgrp) != Some(g)) {
                continue;
            }
            let Some(fd) = crate::pidfd::pidfd_open(p as u32) else {
                continue;
            };
            // Read again with the pidfd held: still in the group.
            if group.is_some_and(|g| stat(p).map(|s| s.pgrp) != Some(g)) {
                continue;
            }
            all += 1;
            if self.tree.holds(p) && !ended(&fd) {
                out.push((p, fd));
            }
        }
        (out, all)
    }

    /// `rt_sigqueueinfo(pid, sig, info)`: to another process, sent by the
    /// runner with the caller's `siginfo_t` (the kernel applies the same
    /// rule to it: no kernel or `kill` codes to another process).
    fn queue(&self, pid: i32, sig: i32, info: u64) -> Answer {
        if pid == self.tree.caller {
            return Answer::Continue;
        }
        let Some(mut info) = read_memory(self.req.pid, info, SIGINFO_SIZE) else {
            return Answer::Error(libc::EFAULT);
        };
        info[..4].copy_from_slice(&sig.to_ne_bytes());
        match self.own(pid) {
            // Another thread's number of the caller's own process: going
            // on in the kernel would name a thread that may end meanwhile,
            // and sent by the runner its code could be refused; refused
            // (`sigqueue` names the process's own number).
            Ok((_, process)) if process == self.tree.caller => {
                tracing::warn!(
                    "sandbox: rt_sigqueueinfo of signal {sig} to thread {pid} of the caller's own process refused (by the process's number only)"
                );
                Answer::Error(libc::EPERM)
            }
            Ok((fd, _)) => answer_of(send(&fd, sig, Some(&info), 0)),
            Err(Answer::Error(libc::EPERM)) => refuse("process", sig, pid),
            Err(other) => other,
        }
    }

    /// `tkill`, `tgkill`, `rt_tgsigqueueinfo` to a thread of process
    /// `pid`: decided here, sent by the kernel.
    fn in_kernel(&self, pid: i32, sig: i32, what: &str) -> Answer {
        if sig == 0 || pid == self.tree.caller {
            return Answer::Continue;
        }
        match self.own(pid) {
            Ok(_) => Answer::Continue,
            Err(Answer::Error(libc::EPERM)) => refuse(what, sig, pid),
            Err(other) => other,
        }
    }

    /// `pidfd_send_signal(fd, sig, info, flags)`: sent by the runner
    /// through its copy of the caller's pidfd (the caller could put
    /// another behind the same number once it was checked).
    fn pidfd(&self, fd: i32, sig: i32, info: u64, flags: u32) -> (Answer, Option<Later>) {
        let Ok(copy) = take_fd(self.req.pid, fd) else {
            return (Answer::Error(libc::EBADF), None);
        };
        let Some(target) = pidfd_target(&copy) else {
            return (Answer::Error(libc::EBADF), None);
        };
        if target <= 0 {
            return (Answer::Error(libc::ESRCH), None);
        }
        let info = if info == 0 {
            None
        } else {
            match read_memory(self.req.pid, info, SIGINFO_SIZE) {
                Some(i) => Some(i),
                None => return (Answer::Error(libc::EFAULT), None),
            }
        };
        // A thread's pidfd (Linux 6.9) names the thread.
        let process = thread_group(target as u32).map_or(target, |p| p as i32);
        if !self.tree.holds(process) || ended(&copy) {
            return (refuse("process", sig, process), None);
        }
        if !still_valid(self.listener, self.req.id) {
            return (Answer::Error(libc::ENOENT), None);
        }
        if process == self.tree.caller && sig != 0 {
            let later = Later {
                pidfd: copy,
                sig,
                info,
                flags,
            };
            return (Answer::Value(0), Some(later));
        }
        (answer_of(send(&copy, sig, info.as_deref(), flags)), None)
    }

    /// `fcntl(fd, F_SETOWN, owner)`: a process (`N`) or group (`-N`) the
    /// kernel will signal when the file is ready; every one the spawn's.
    fn owner(&self, owner: i32) -> Answer {
        if owner == 0 || owner == self.tree.caller {
            return Answer::Continue;
        }
        if owner > 0 {
            return match self.own(owner) {
                Ok(_) => Answer::Continue,
                Err(Answer::Error(libc::EPERM)) => refuse("owner", libc::SIGIO, owner),
                Err(other) => other,
            };
        }
        let group = owner.checked_neg().unwrap_or(0);
        // Every process of the group is the spawn's.
        let (own, in_group) = self.members(Some(group));
        if in_group > 0 && own.len() == in_group && still_valid(self.listener, self.req.id) {
            Answer::Continue
        } else {
            refuse("owner group", libc::SIGIO, group)
        }
    }
}
