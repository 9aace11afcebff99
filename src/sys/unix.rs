//! Unix (Linux, macOS): modes, owners, inodes, process groups and signals
//! as the system has them.

use std::ffi::{OsStr, OsString};
use std::fs::{File, FileType, Metadata, Permissions};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// A file's mode bits (type and permissions).
pub fn mode(m: &Metadata) -> u32 {
    m.mode()
}

/// Gives `path` the permission bits of `mode`.
pub fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, Permissions::from_mode(mode & 0o7777))
}

/// Gives the open `file` the permission bits of `mode`.
pub fn set_file_mode(file: &File, mode: u32) -> std::io::Result<()> {
    file.set_permissions(Permissions::from_mode(mode & 0o7777))
}

/// Whether any execute bit is set.
pub fn is_executable(m: &Metadata) -> bool {
    m.mode() & 0o111 != 0
}

/// A file's modification time in nanoseconds since the epoch.
pub fn mtime_ns(m: &Metadata) -> i128 {
    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128
}

/// A file's inode number (0 where there is none).
pub fn inode(m: &Metadata) -> u64 {
    m.ino()
}

/// Whether two files are the same file (device and inode).
pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// A file's owner.
pub fn owner(m: &Metadata) -> u32 {
    m.uid()
}

/// This process's effective user.
pub fn euid() -> u32 {
    // SAFETY: a plain system call that cannot fail.
    unsafe { libc::geteuid() }
}

/// This process's real user.
pub fn uid() -> u32 {
    // SAFETY: a plain system call that cannot fail.
    unsafe { libc::getuid() }
}

/// The permission bits the process's umask takes away.
pub fn umask() -> u32 {
    // SAFETY: umask is async-signal-safe; it is set back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old as u32
    }
}

/// Whether `ft` is a socket.
pub fn is_socket(ft: &FileType) -> bool {
    ft.is_socket()
}

/// Whether this process may write `path` (`access(W_OK)`).
pub fn may_write(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Whether this process may execute `path` (its real user's rights).
pub fn may_execute(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// A name's bytes.
pub fn os_bytes(s: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Borrowed(s.as_bytes())
}

/// A name from its bytes.
pub fn os_from_bytes(b: &[u8]) -> OsString {
    OsString::from_vec(b.to_vec())
}

/// A symlink at `link` to `target`.
pub fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Opens `path` for reading without waiting (a FIFO does not wait for a
/// writer).
pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Takes `file`'s exclusive lock without waiting; whether it got it.
pub fn try_lock(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on an open descriptor.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Starts `cmd` in a process group of its own.
pub fn own_group(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

/// Kills process group `pgid` (gone already is fine).
pub fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: a plain system call; ESRCH (already gone) is fine.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// The signal that ended a process, if one did.
pub fn exit_signal(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

/// SIGINT and SIGTERM, as they arrive.
pub struct StopSignals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl StopSignals {
    /// Listens for both; `None` when the runtime cannot.
    pub fn listen() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Some(Self {
            int: signal(SignalKind::interrupt()).ok()?,
            term: signal(SignalKind::terminate()).ok()?,
        })
    }

    /// The next one's name.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.int.recv() => "SIGINT",
            _ = self.term.recv() => "SIGTERM",
        }
    }
}

/// The process's environment array (`environ`).
#[cfg(target_vendor = "apple")]
fn environ() -> *mut *mut libc::c_char {
    // SAFETY: libSystem's accessor; a shared library cannot name `environ`.
    unsafe { *libc::_NSGetEnviron() }
}

#[cfg(not(target_vendor = "apple"))]
fn environ() -> *mut *mut libc::c_char {
    unsafe extern "C" {
        static mut environ: *mut *mut libc::c_char;
    }
    // SAFETY: libc's own variable, read once.
    unsafe { environ }
}

/// Moves the values of the variables `secret` names out of the
/// environment block the process started with, which any process of the
/// same user can read (`/proc/PID/environ` on Linux, even from inside
/// Landlock; `ps -E` on macOS): each is set again (libc copies it to the
/// heap, which only this process reads), and the original bytes of its
/// value are zeroed. The process's own environment is unchanged. The
/// number of values hidden.
///
/// # Safety
/// No other thread may run (it sets variables), and nothing may hold a
/// pointer into the environment (call it first thing in `main`).
pub unsafe fn hide_secret_values(secret: impl Fn(&str) -> bool) -> usize {
    use std::ffi::CStr;
    let mut found: Vec<(*mut libc::c_char, OsString, OsString)> = Vec::new();
    let mut p = environ();
    // SAFETY: a null-terminated array of C strings, as libc keeps it; no
    // other thread changes it (the caller's promise).
    unsafe {
        while !p.is_null() && !(*p).is_null() {
            let entry = *p;
            let bytes = CStr::from_ptr(entry).to_bytes();
            if let Some(eq) = bytes.iter().position(|&b| b == b'=')
                && eq > 0
                && std::str::from_utf8(&bytes[..eq]).is_ok_and(&secret)
                && eq + 1 < bytes.len()
            {
                found.push((
                    entry,
                    OsStr::from_bytes(&bytes[..eq]).to_owned(),
                    OsStr::from_bytes(&bytes[eq + 1..]).to_owned(),
                ));
            }
            p = p.add(1);
        }
    }
    for (_, name, value) in &found {
        // SAFETY: no other thread runs (the caller's promise).
        unsafe { std::env::set_var(name, value) };
    }
    // Only where the array no longer points at the original (a name given
    // twice keeps its second entry as it was).
    let mut still = std::collections::HashSet::new();
    let mut p = environ();
    // SAFETY: as above.
    unsafe {
        while !p.is_null() && !(*p).is_null() {
            still.insert(*p);
            p = p.add(1);
        }
    }
    let mut hidden = 0;
    for (entry, name, value) in found.into_iter().filter(|f| !still.contains(&f.0)) {
        // SAFETY: the original entry's value, which nothing points at now.
        unsafe { std::ptr::write_bytes(entry.add(name.len() + 1), 0, value.len()) };
        hidden += 1;
    }
    hidden
}

/// Takes the mount at `target` away, at once for new lookups (files a
/// command still has open keep it alive until closed). Only Linux mounts
/// (a task's overlay workspace); elsewhere there is none to take.
pub fn unmount_detached(target: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let c =
            std::ffi::CString::new(target.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        // SAFETY: a NUL-terminated string.
        if unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = target;
    Ok(())
}
