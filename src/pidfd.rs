//! Process descriptors (Linux 5.3+): a handle on a process that names it
//! and no other, even after its number is reused. The runner waits on one
//! for a command's end without reaping it, and the supervisor takes a
//! confined process's socket through one.

/// A process descriptor (Linux's only; elsewhere there is none).
#[cfg(target_os = "linux")]
pub type Pidfd = std::os::fd::OwnedFd;
/// A process descriptor (Linux's only; elsewhere there is none).
#[cfg(not(target_os = "linux"))]
pub enum Pidfd {}

/// A pidfd for `pid` (Linux 5.3+), or `None` where the kernel has none.
#[cfg(target_os = "linux")]
pub fn pidfd_open(pid: u32) -> Option<Pidfd> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain syscall; the fd returned is ours to own.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// No process descriptors here: callers wait by reaping.
#[cfg(not(target_os = "linux"))]
pub fn pidfd_open(_pid: u32) -> Option<Pidfd> {
    None
}

/// Never called: there is no pidfd here.
#[cfg(not(target_os = "linux"))]
pub async fn wait_exit(pidfd: Pidfd) {
    match pidfd {}
}

/// Resolves when the process behind `pidfd` has ended, without reaping it.
#[cfg(target_os = "linux")]
pub async fn wait_exit(pidfd: Pidfd) {
    // SAFETY: the OwnedFd is moved into the AsyncFd and is neither closed
    // nor replaced while it lives: it is the same open pidfd throughout.
    let registered = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)
    };
    match registered {
        Ok(fd) => {
            let _ = fd.readable().await;
        }
        // Not pollable: never resolves; the caller's reap takes over.
        Err(_) => std::future::pending().await,
    }
}
