//! What the supervisor reads of processes: a thread's process, a process's
//! parent and group (`/proc`), a copy of one of its descriptors, and which
//! processes are the spawn's own ([`Tree`]).
//!
//! A number read from `/proc` can name another process by the time it is
//! used, once the first has ended and been reaped. The supervisor holds a
//! pidfd of each process it will act on, opened *before* it reads that
//! process's `/proc` entry, and checks afterwards that the process has not
//! ended: what it read was then that process's, and what it does through
//! the pidfd reaches that process and no other. The calling process is
//! held in its system call until the supervisor answers, so its number is
//! its own throughout (checked with `SECCOMP_IOCTL_NOTIF_ID_VALID`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A thread's `/proc/TID/status` (`self`: the runner's), read once for
/// the fields asked of it.
pub(super) struct Status(String);

impl Status {
    pub fn of(tid: &str) -> Option<Self> {
        std::fs::read_to_string(format!("/proc/{tid}/status"))
            .ok()
            .map(Self)
    }

    /// The value of field `name` (`Tgid`), trimmed.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.0.lines().find_map(|l| {
            l.strip_prefix(name)
                .and_then(|v| v.strip_prefix(':'))
                .map(str::trim)
        })
    }

    /// Field `name` as a number.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.field(name)?.parse().ok()
    }

    /// The process the thread belongs to.
    pub fn thread_group(&self) -> Option<u32> {
        self.field("Tgid")?.parse().ok()
    }

    /// How deep its pid namespace is (`NSpid`: one number a level).
    pub fn namespace_depth(&self) -> Option<usize> {
        Some(self.field("NSpid")?.split_whitespace().count())
    }
}

/// The process a thread belongs to.
pub(super) fn thread_group(tid: u32) -> Option<u32> {
    Status::of(&tid.to_string())?.thread_group()
}

/// A pidfd of thread `tid`'s process.
pub(super) fn process_fd(tid: u32) -> Option<OwnedFd> {
    crate::pidfd::pidfd_open(tid).or_else(|| thread_group(tid).and_then(crate::pidfd::pidfd_open))
}

/// A copy of descriptor `fd` of thread `tid`'s process.
pub(super) fn take_fd(tid: u32, fd: i32) -> io::Result<OwnedFd> {
    let pidfd = process_fd(tid).ok_or_else(io::Error::last_os_error)?;
    // SAFETY: a pidfd and a descriptor number; the kernel checks both.
    let got = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if got < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor of ours (close-on-exec).
    Ok(unsafe { OwnedFd::from_raw_fd(got as RawFd) })
}

/// A process's parent and process group, from `/proc/PID/stat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stat {
    pub ppid: i32,
    pub pgrp: i32,
}

/// Reads `pid`'s [`Stat`]; `None` once it is gone.
pub(super) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// The fields after the command name (which may hold spaces and `)`):
/// state, parent, process group.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(1);
    Some(Stat {
        ppid: fields.next()?.parse().ok()?,
        pgrp: fields.next()?.parse().ok()?,
    })
}

/// Whether the process behind `pidfd` has ended (readable: exited).
pub(super) fn ended(pidfd: &OwnedFd) -> bool {
    let mut pfd = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no wait.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    n != 0
}

/// The process a pidfd stands for (`Pid:` of its fdinfo); `None` when
/// `fd` is no pidfd, -1 when the process has ended.
pub(super) fn pidfd_target(fd: &OwnedFd) -> Option<i32> {
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("Pid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Every process on the machine (the numbers in `/proc`).
pub(super) fn all_processes() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Longest parent chain the supervisor walks; past it, a process is not
/// the spawn's (refused, not guessed).
const MAX_DEPTH: usize = 1024;

/// The processes a spawn owns, as one calling process sees them: its own
/// process, its descendants, and the descendants of the spawn's first
/// process (the one the runner started) while that one lives. Another
/// spawn's processes, the runner and everything above it are not.
pub(super) struct Tree<'a> {
    /// The caller's process (held in its call: its number is its own).
    pub caller: i32,
    /// The spawn's first process, and a pidfd holding it; none once the
    /// runner could not open one.
    pub root: Option<(i32, &'a OwnedFd)>,
}

impl Tree<'_> {
    /// Whether `pid` is the spawn's, read now. Call with a pidfd of `pid`
    /// already open, and check it has not ended afterwards.
    pub fn holds(&self, pid: i32) -> bool {
        let runner = std::process::id() as i32;
        let mut at = pid;
        for _ in 0..MAX_DEPTH {
            if at == self.caller {
                return true;
            }
            if let Some((root, fd)) = self.root
                && at == root
            {
                // Alive now, so the number read was the root's.
                return !ended(fd);
            }
            if at <= 1 || at == runner {
                return false;
            }
            match stat(at) {
                Some(s) => at = s.ppid,
                None => return false,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_reads_past_a_name_with_spaces_and_parentheses() {
        let s = parse_stat("42 (a) b (c)) S 7 9 9 0 -1").unwrap();
        assert_eq!(s, Stat { ppid: 7, pgrp: 9 });
        assert_eq!(parse_stat("42 (a) S"), None);
        let me = stat(std::process::id() as i32).unwrap();
        // SAFETY: plain system calls.
        assert_eq!(me.ppid, unsafe { libc::getppid() });
        assert_eq!(me.pgrp, unsafe { libc::getpgrp() });
    }

    #[test]
    fn a_threads_process_its_descriptors_and_the_process_list_are_read() {
        let me = std::process::id();
        assert_eq!(thread_group(me), Some(me));
        // A field by its whole name, not one it begins (`Tgid` of
        // `TracerPid`'s neighbours); its namespace one number a level.
        let own = Status::of("self").unwrap();
        assert_eq!(own.number("Tgid"), Some(u64::from(me)));
        assert_eq!(own.field("Tg"), None);
        assert!(own.namespace_depth().is_some_and(|d| d >= 1));
        // A second thread's number names this process.
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: a plain system call.
            tx.send(unsafe { libc::gettid() } as u32).unwrap();
            let _ = stop_rx.recv();
        });
        let tid = rx.recv().unwrap();
        assert_ne!(tid, me);
        assert_eq!(thread_group(tid), Some(me));
        let fd = process_fd(tid).unwrap();
        assert_eq!(pidfd_target(&fd), Some(me as i32));
        stop_tx.send(()).unwrap();
        t.join().unwrap();
        assert_eq!(thread_group(u32::MAX >> 2), None);
        // A copy of one of this process's descriptors is the same file.
        let file = tempfile::tempfile().unwrap();
        let copy = take_fd(me, file.as_raw_fd()).unwrap();
        assert_ne!(copy.as_raw_fd(), file.as_raw_fd());
        let ino = |fd: RawFd| {
            // SAFETY: a stat buffer of ours.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
            st.st_ino
        };
        assert_eq!(ino(copy.as_raw_fd()), ino(file.as_raw_fd()));
        assert!(take_fd(me, 1 << 20).is_err());
        let all = all_processes();
        assert!(all.contains(&(me as i32)), "{} processes", all.len());
        assert!(all.iter().all(|p| *p > 0));
    }

    #[test]
    fn a_tree_holds_its_callers_descendants_and_its_roots_never_above() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let fd = crate::pidfd::pidfd_open(pid as u32).unwrap();
        let me = std::process::id() as i32;
        // The test process as the caller: its child is its own.
        let tree = Tree {
            caller: me,
            root: None,
        };
        assert!(tree.holds(pid));
        assert!(tree.holds(me));
        // The child as the caller: its parent (this process) is not its.
        let tree = Tree {
            caller: pid,
            root: None,
        };
        assert!(tree.holds(pid));
        assert!(!tree.holds(me));
        // SAFETY: plain system call.
        assert!(!tree.holds(unsafe { libc::getppid() }));
        assert!(!tree.holds(1));
        // The child as the root: it and what is under it, while it lives.
        let tree = Tree {
            caller: i32::MAX,
            root: Some((pid, &fd)),
        };
        assert!(tree.holds(pid));
        assert!(!tree.holds(me));
        assert!(!ended(&fd));
        assert_eq!(pidfd_target(&fd), Some(pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(ended(&fd));
        assert!(!tree.holds(pid));
    }
}
