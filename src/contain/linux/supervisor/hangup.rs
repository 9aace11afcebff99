//! Ending a serving thread that waits in `SECCOMP_IOCTL_NOTIF_RECV`.
//!
//! The thread that serves a listener waits in the receive itself, not in
//! `poll` first: one wake-up an exec instead of two, the difference
//! between about 25 and 2 µs added to an exec in C on this project's
//! machines (docs/src/performance.md). But a waiting receive does not
//! return when the last process of the filter is gone: the kernel tells
//! pollers of the hang-up, not receivers. So a second, small thread polls
//! the listener for the hang-up alone (no `POLLIN`: a notification does
//! not wake it), then interrupts the receive with a signal whose handler
//! does nothing, installed without `SA_RESTART` (the receive returns
//! `EINTR`), again every millisecond until the serving thread stops: a
//! signal that lands just before the receive begins would be lost.
//!
//! The serving thread owns the [`HangUp`] and drops it before it ends,
//! which stops the watcher (an `eventfd` it also polls) and joins it, so
//! the watcher never signals a thread that has ended.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The signal that interrupts a serving thread's receive: a real-time
/// signal no other part of the runner uses.
fn wake_signal() -> libc::c_int {
    libc::SIGRTMIN() + 4
}

extern "C" fn nothing(_: libc::c_int) {}

/// Installs the do-nothing handler, once per process, without
/// `SA_RESTART`.
fn install_handler() -> io::Result<()> {
    static INSTALLED: std::sync::OnceLock<Result<(), i32>> = std::sync::OnceLock::new();
    let done = INSTALLED.get_or_init(|| {
        // SAFETY: a zeroed sigaction with a handler that does nothing
        // (async-signal-safe) and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = nothing as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = 0;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(wake_signal(), &sa, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        Ok(())
    });
    done.map_err(io::Error::from_raw_os_error)
}

/// The watcher of one listener, owned by the thread it wakes.
pub struct HangUp {
    gone: Arc<AtomicBool>,
    stopped: Arc<AtomicBool>,
    stop: Arc<OwnedFd>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl HangUp {
    /// Starts watching `listener` for the calling thread, which then may
    /// wait in its receive: it returns `EINTR` once [`HangUp::is_gone`].
    pub fn watch(listener: RawFd) -> io::Result<Self> {
        install_handler()?;
        // SAFETY: a signal set on the stack; unblocks the wake signal for
        // this thread, whatever mask it inherited.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, wake_signal());
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
        // SAFETY: a new descriptor of ours, or an error.
        let efd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if efd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: just made, owned here.
        let stop = Arc::new(unsafe { OwnedFd::from_raw_fd(efd) });
        let gone = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(AtomicBool::new(false));
        // SAFETY: the calling thread, which outlives the watcher (it joins
        // it when the HangUp is dropped).
        let target = unsafe { libc::pthread_self() };
        let watcher = {
            let (gone, stopped, stop) = (gone.clone(), stopped.clone(), stop.clone());
            std::thread::Builder::new()
                .name("runner-hangup".into())
                .stack_size(64 * 1024)
                .spawn(move || {
                    if !wait_for_hangup(listener, stop.as_raw_fd()) {
                        return;
                    }
                    gone.store(true, Ordering::SeqCst);
                    while !stopped.load(Ordering::SeqCst) {
                        // SAFETY: `target` is alive (see above).
                        unsafe { libc::pthread_kill(target, wake_signal()) };
                        wait_readable(stop.as_raw_fd(), 1);
                    }
                })?
        };
        Ok(Self {
            gone,
            stopped,
            stop,
            watcher: Some(watcher),
        })
    }

    /// Whether every process of the filter is gone.
    pub fn is_gone(&self) -> bool {
        self.gone.load(Ordering::SeqCst)
    }
}

impl Drop for HangUp {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        let one: u64 = 1;
        // SAFETY: eight bytes to our eventfd.
        unsafe { libc::write(self.stop.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(w) = self.watcher.take() {
            let _ = w.join();
        }
    }
}

/// Waits until `listener` hangs up (true) or `stop` is readable (false).
fn wait_for_hangup(listener: RawFd, stop: RawFd) -> bool {
    loop {
        let mut fds = [
            // No events asked: only a hang-up (or an error) wakes it.
            libc::pollfd {
                fd: listener,
                events: 0,
                revents: 0,
            },
            libc::pollfd {
                fd: stop,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if n < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return false;
        }
        if fds[1].revents != 0 {
            return false;
        }
        if fds[0].revents != 0 {
            return true;
        }
    }
}

/// Whether `listener` has hung up, now (no wait).
pub fn hung_up(listener: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd: listener,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, 0) > 0 && p.revents != 0 }
}

/// Waits at most `ms` for `fd` to be readable.
fn wait_readable(fd: RawFd, ms: i32) {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) };
}

impl std::fmt::Debug for HangUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HangUp")
            .field("gone", &self.is_gone())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread waiting in a read that only a signal ends (a pipe whose
    /// writer stays open) is woken once the watched descriptor hangs up,
    /// and not before.
    #[test]
    fn a_hang_up_interrupts_the_wait() {
        let mut fds = [0; 2];
        // SAFETY: two descriptors of ours.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: just made.
        let (watched_r, watched_w) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: just made.
        let (wait_r, _wait_w) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let h = HangUp::watch(watched_r.as_raw_fd()).unwrap();
            assert!(!h.is_gone());
            // The eventfd is not inherited by what the runner starts.
            // SAFETY: reads a descriptor's flags.
            let fd_flags = unsafe { libc::fcntl(h.stop.as_raw_fd(), libc::F_GETFD) };
            assert_eq!(fd_flags & libc::FD_CLOEXEC, libc::FD_CLOEXEC);
            let mut interrupted = 0;
            loop {
                let mut b = 0u8;
                // SAFETY: one byte into a local.
                let n = unsafe { libc::read(wait_r.as_raw_fd(), (&mut b as *mut u8).cast(), 1) };
                assert!(n < 0, "nothing is written");
                assert_eq!(io::Error::last_os_error().raw_os_error(), Some(libc::EINTR));
                interrupted += 1;
                if h.is_gone() {
                    break;
                }
            }
            tx.send(interrupted).unwrap();
            // Dropped, it stops and joins the watcher, which then no
            // longer holds its flag (nor signals this thread).
            let stopped = h.stopped.clone();
            drop(h);
            assert_eq!(Arc::strong_count(&stopped), 1, "the watcher still runs");
            drop(watched_r);
        });
        // Not before the hang-up.
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err()
        );
        drop(watched_w);
        let interrupted = rx.recv_timeout(std::time::Duration::from_secs(10)).unwrap();
        assert!(interrupted >= 1);
        waiter.join().unwrap();
    }
}
