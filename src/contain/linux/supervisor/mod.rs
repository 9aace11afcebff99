//! The supervisor: the wall behind the sandbox for what Landlock cannot
//! decide. A seccomp filter hands each `connect` of a confined command to
//! the runner (seccomp user notification), which decides it:
//!
//! - **IP**: with `network:` rules, only the runner's proxy, by address
//!   *and* port (Landlock's TCP rule is by port alone: any host listening
//!   on the proxy's port would do). Without rules, any address.
//! - **Unix sockets by path**: only sockets inside the task's writable
//!   folders (its copy and temp folder), so no daemon outside (a container
//!   engine, a bus that starts units) can act for a command, whatever its
//!   path or `DOCKER_HOST` says.
//! - **Abstract Unix sockets**: refused. Landlock's scope keeps them to
//!   the task's own domain, but a connection the runner makes on the
//!   command's behalf is not in that domain.
//!
//! No time-of-check/time-of-use race: the runner never lets the call go on
//! with an address it read from the command's memory (another thread could
//! change it in between). It takes a copy of the command's socket
//! (`pidfd_getfd`), connects that copy to the address it decided on, and
//! answers with the result; the command's descriptor is the same socket,
//! now connected (or `EINPROGRESS`, for a non-blocking one). A Unix socket
//! is connected through an `O_PATH` descriptor of the socket file itself
//! (`/proc/self/fd/N`), opened without following a last symlink, whose
//! place the kernel reports: swapping a path for a symlink after the check
//! reaches nothing.
//!
//! - **Signals**, where Landlock cannot scope them (below ABI 6): only to
//!   the spawn's own processes ([`signal`]), so a command cannot kill the
//!   runner or another command.
//! - **Execs**, where the policy denies programs: decided on the path and
//!   argv the caller names ([`exec`]), and each one let go is followed to
//!   where the kernel commits it and decided again there ([`follow`]).
//! - **Process groups**: each group a command's processes make (`setsid`,
//!   `setpgid`) is recorded and killed when the command ends, and joining
//!   a group the command did not make is refused ([`groups`]), so nothing
//!   it starts outlives it by leaving its group.
//!
//! The filter also refuses `io_uring` (whose operations seccomp cannot
//! see), datagram Unix sockets (which send to an address without
//! `connect`) and every system call of a foreign ABI.
//!
//! Each confined process tree has its own filter and listener: the child
//! installs the filter between `fork` and `exec` and passes the listener
//! to the runner over a socket pair (`SCM_RIGHTS`); a thread of the runner
//! serves it until the tree is gone (the kernel then hangs the listener
//! up). A child that fails before sending ends the thread's wait, as the
//! runner closes its copy of the child's end once the child is started.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::{Mutex, OnceLock};

mod connect;
mod exe_path;
mod exec;
mod filter;
pub mod follow;
mod groups;
mod memory;
mod procs;
mod records;
mod rules;
mod signal;
mod targets;

use super::seccomp::{self, Op};
use crate::contain::{ExecRefusal, RefusedCall};
use connect::decide_connect;
use exec::{First, conclude, decide_exec, follow_exec};
pub use filter::filter;
use groups::decide_group;
pub use groups::{Escapes, end_all as end_all_escapes};
use records::Records;
use rules::Answer;
pub use rules::{IpRule, Rules};
use signal::{Root, decide_signal};
use targets::decide_target;

/// Set (to anything) to act as if the kernel refused the supervisor
/// (seccomp user notification missing or disabled): how the tests see that
/// such a run says so and stays strict.
pub const SIMULATE_NO_SUPERVISOR: &str = "RUNNER_SIMULATE_NO_SUPERVISOR";

/// Why the runner cannot supervise commands here (said in the
/// transcript's `sandbox`).
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoSupervisor {
    #[error("simulated by {SIMULATE_NO_SUPERVISOR}")]
    Simulated,
    /// The errno of `prctl(PR_SET_NO_NEW_PRIVS)`.
    #[error("no_new_privs: {}", io::Error::from_raw_os_error(*.0))]
    NoNewPrivs(i32),
    /// The errno of installing a filter with a listener.
    #[error("seccomp user notification: {}", io::Error::from_raw_os_error(*.0))]
    NoNotification(i32),
    #[error("the probe failed")]
    ProbeFailed,
}

/// Whether this kernel lets the runner supervise commands; why not when
/// it does not. Probed once: a thread of its own installs a filter with a
/// listener (the filter stays with that thread, which then ends).
pub fn available() -> Result<(), NoSupervisor> {
    static PROBE: OnceLock<Result<(), NoSupervisor>> = OnceLock::new();
    if std::env::var_os(SIMULATE_NO_SUPERVISOR).is_some() {
        return Err(NoSupervisor::Simulated);
    }
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    PROBE
        .get_or_init(|| {
            std::thread::spawn(move || {
                let prog = seccomp::assemble(&[Op::Ret(libc::SECCOMP_RET_ALLOW)]);
                // SAFETY: this thread only; it ends right after.
                unsafe {
                    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                        return Err(NoSupervisor::NoNewPrivs(errno()));
                    }
                    let fd = install(&prog, libc::SECCOMP_FILTER_FLAG_NEW_LISTENER);
                    if fd < 0 {
                        return Err(NoSupervisor::NoNotification(errno()));
                    }
                    libc::close(fd as RawFd);
                }
                Ok(())
            })
            .join()
            .unwrap_or(Err(NoSupervisor::ProbeFailed))
        })
        .clone()
}

/// Whether this kernel can hold a caller's wait in a notification
/// killable-only once the supervisor has received it
/// (`SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, Linux 6.0+): then a
/// `PTRACE_INTERRUPT` sent before the answer waits for the call to end
/// (see [`follow`]). Probed once, on a thread of its own.
pub fn killable_recv() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        std::thread::spawn(|| {
            let prog = seccomp::assemble(&[Op::Ret(libc::SECCOMP_RET_ALLOW)]);
            // SAFETY: this thread only; it ends right after.
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return false;
                }
                let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER
                    | libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
                let fd = install(&prog, flags);
                if fd < 0 {
                    return false;
                }
                libc::close(fd as RawFd);
            }
            true
        })
        .join()
        .unwrap_or(false)
    })
}

/// Installs `prog` on the calling thread with `flags`; the listener's
/// descriptor, or -1.
///
/// # Safety
/// Only system calls; `prog` outlives the call.
unsafe fn install(prog: &[libc::sock_filter], flags: libc::c_ulong) -> libc::c_long {
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: as the caller promises.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    }
}

/// One spawn's supervision: the child's end of the socket pair (closed in
/// the runner once the child is started) and the thread that serves the
/// listener it sends.
pub struct Supervised {
    child_end: Option<OwnedFd>,
    /// Where the spawn's first process goes to the serving thread.
    root: Option<std::sync::mpsc::Sender<Option<OwnedFd>>>,
    /// The execs this spawn's processes were refused.
    refusals: Arc<Mutex<Vec<ExecRefusal>>>,
    /// The calls they were refused with nothing to decide.
    calls: Arc<Mutex<Vec<RefusedCall>>>,
    /// The process groups its processes made.
    escapes: Arc<Escapes>,
}

impl Supervised {
    /// Starts the thread that waits for the listener of the next child.
    pub fn start(rules: Arc<Rules>) -> io::Result<Self> {
        let mut fds = [0; 2];
        // SAFETY: a plain system call writing two descriptors.
        if unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both are new descriptors of ours.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let refusals = Arc::new(Mutex::new(Vec::new()));
        let found = refusals.clone();
        let calls = Arc::new(Mutex::new(Vec::new()));
        let called = calls.clone();
        let escapes = Escapes::registered();
        let made = escapes.clone();
        let (root_tx, root_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("runner-supervisor".into())
            .spawn(move || {
                // No `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`: handing over on
                // one processor doubled the round trip on this project's
                // 2-vCPU machines (docs/src/performance-log.md).
                if let Some(listener) = receive_fd(&ours) {
                    let records = Records {
                        execs: &found,
                        calls: &called,
                    };
                    serve(&listener, &rules, records, &made, Root::new(root_rx));
                }
            })?;
        Ok(Self {
            child_end: Some(theirs),
            root: Some(root_tx),
            refusals,
            calls,
            escapes,
        })
    }

    /// The descriptor the child sends its listener on.
    pub fn child_fd(&self) -> RawFd {
        self.child_end.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// The execs refused so far (each is recorded before the process hears
    /// of it, so all of them once the process tree has ended).
    pub fn exec_refusals(&self) -> Vec<ExecRefusal> {
        self.refusals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The calls refused with nothing to decide so far.
    pub fn refused_calls(&self) -> Vec<RefusedCall> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Kills the process groups the spawn's processes made (see
    /// [`groups`]); at the end of the command, while its first process is
    /// still unreaped.
    pub fn end_escapes(&self) {
        self.escapes.end();
    }

    /// The child was started (`pid`, not yet reaped) or not (`None`): the
    /// runner's copy of its end is closed, so that a child that died first
    /// ends the wait, and the serving thread learns which process is the
    /// spawn's first.
    pub fn spawned(&mut self, pid: Option<u32>) {
        self.child_end = None;
        if let Some(tx) = self.root.take() {
            let _ = tx.send(pid.and_then(crate::pidfd::pidfd_open));
        }
    }
}

/// In the child, between `fork` and `exec`: installs the filter with a
/// listener (its waits killable-only once received, with `killable`) and
/// sends the listener to the runner on `sock`.
///
/// # Safety
/// Only system calls, on stack values.
pub unsafe fn install_in_child(
    prog: &[libc::sock_filter],
    sock: RawFd,
    killable: bool,
) -> io::Result<()> {
    let mut flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    if killable {
        flags |= libc::SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    }
    // SAFETY: as the caller promises; every pointer is to a stack value.
    unsafe {
        let fd = install(prog, flags);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = fd as RawFd;
        let mut byte = 0u8;
        let mut iov = libc::iovec {
            iov_base: &mut byte as *mut u8 as *mut libc::c_void,
            iov_len: 1,
        };
        let mut space = [0u64; 4];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
        let sent = libc::sendmsg(sock, &msg, 0);
        let err = io::Error::last_os_error();
        libc::close(fd);
        libc::close(sock);
        if sent != 1 {
            return Err(err);
        }
    }
    Ok(())
}

/// The listener a child sent on `sock`; none when it ended first.
fn receive_fd(sock: &OwnedFd) -> Option<OwnedFd> {
    let mut byte = 0u8;
    let mut iov = libc::iovec {
        iov_base: &mut byte as *mut u8 as *mut libc::c_void,
        iov_len: 1,
    };
    let mut space = [0u64; 4];
    // SAFETY: zeroed is a valid msghdr; every pointer is to a local.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&space) as _;
    // SAFETY: as above.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n != 1 {
        return None;
    }
    // SAFETY: the kernel filled the control buffer.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const RawFd);
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// Serves the listener until no process uses the filter any more (the
/// kernel then reports a hang-up).
fn serve(listener: &OwnedFd, rules: &Rules, records: Records, escapes: &Escapes, mut root: Root) {
    let refusals = &exec::Refused {
        list: records.execs,
        said: &rules.said,
    };
    // Until a call comes that the runner can read, the calls are the
    // spawn's own `execve`s of the program the runner chose (one per
    // folder of `PATH` tried): nothing else runs under the filter yet.
    let mut spawning = true;
    // The timer that bounds a wait for a followed exec (made at the
    // first one).
    let mut alarm: Option<follow::Alarm> = None;
    loop {
        let mut pfd = libc::pollfd {
            fd: listener.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
            || pfd.revents & libc::POLLIN == 0
        {
            // Every process of the filter is gone (a notification still
            // pending then has no caller to answer).
            return;
        }
        // SAFETY: zeroed is what SECCOMP_IOCTL_NOTIF_RECV wants.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the listener and a notification buffer.
        if unsafe {
            libc::ioctl(
                listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                &mut req,
            )
        } != 0
        {
            match io::Error::last_os_error().raw_os_error() {
                // The caller died meanwhile, or a signal: wait again.
                Some(libc::ENOENT | libc::EINTR) => continue,
                // Anything else would fail the same way on every try.
                _ => return,
            }
        }
        let nr = i64::from(req.data.nr);
        let mut later = None;
        let mut followed = None;
        let answer = if let Some(call) = filter::refused(&req, rules) {
            records.call(call, req.pid);
            Answer::Error(libc::EPERM)
        } else if nr == libc::SYS_connect {
            decide_connect(&req, listener, rules)
        } else if nr == libc::SYS_execve || nr == libc::SYS_execveat {
            match &rules.exec {
                Some(guard) => {
                    match decide_exec(&req, listener, guard, rules, refusals, &mut spawning) {
                        First::Answered(a) => a,
                        First::Spawning => Answer::Continue,
                        First::Follow(_) if !rules.follows => Answer::Continue,
                        First::Follow(read) => {
                            match follow_exec(&req, rules, &mut alarm, refusals, &read) {
                                Ok(f) => {
                                    followed = Some(f);
                                    Answer::Continue
                                }
                                Err(a) => a,
                            }
                        }
                    }
                }
                None => Answer::Continue,
            }
        } else if nr == libc::SYS_setsid || nr == libc::SYS_setpgid {
            decide_group(&req, &mut root, escapes)
        } else if targets::decides(nr) {
            decide_target(&req, listener, &mut root)
        } else if rules.signals {
            let (answer, then) = decide_signal(&req, listener, &mut root);
            later = then;
            answer
        } else {
            Answer::Continue
        };
        // Any other call comes from a program the spawn has started.
        if nr != libc::SYS_execve && nr != libc::SYS_execveat {
            spawning = false;
        }
        let mut resp = libc::seccomp_notif_resp {
            id: req.id,
            val: 0,
            error: 0,
            flags: 0,
        };
        match answer {
            Answer::Continue => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
            Answer::Value(v) => resp.val = v,
            Answer::Error(e) => resp.error = -e,
        }
        // SAFETY: the listener and a response; ENOENT (the caller died)
        // needs nothing.
        unsafe { libc::ioctl(listener.as_raw_fd(), libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
        if let Some(signal) = later {
            signal.send();
        }
        if let (Some((tid, tgid)), Some(alarm), Some(guard)) = (followed, &alarm, &rules.exec) {
            conclude(alarm, tid, tgid, guard, rules, refusals);
        }
    }
}

#[cfg(test)]
mod tests;
