//! Platforms other than Unix (Windows): what std offers, and safe answers
//! where it offers nothing (no modes, owners or process groups).

use std::ffi::{OsStr, OsString};
use std::fs::{File, FileType, Metadata};
use std::path::Path;

/// No mode bits: a read-only file is 0o444, another 0o644.
pub fn mode(m: &Metadata) -> u32 {
    if m.permissions().readonly() {
        0o100444
    } else {
        0o100644
    }
}

/// No mode bits to give: files keep what they have.
pub fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

pub fn set_file_mode(_file: &File, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// No execute bits: every file may be run.
pub fn is_executable(_m: &Metadata) -> bool {
    true
}

pub fn mtime_ns(m: &Metadata) -> i128 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128)
}

pub fn inode(_m: &Metadata) -> u64 {
    0
}

/// Without inodes, no two files are known to be the same.
pub fn same_file(_a: &Metadata, _b: &Metadata) -> bool {
    false
}

pub fn owner(_m: &Metadata) -> u32 {
    0
}

pub fn euid() -> u32 {
    0
}

pub fn uid() -> u32 {
    0
}

pub fn umask() -> u32 {
    0o022
}

pub fn is_socket(_ft: &FileType) -> bool {
    false
}

pub fn may_write(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly())
}

pub fn os_bytes(s: &OsStr) -> std::borrow::Cow<'_, [u8]> {
    match s.to_string_lossy() {
        std::borrow::Cow::Borrowed(t) => std::borrow::Cow::Borrowed(t.as_bytes()),
        std::borrow::Cow::Owned(t) => std::borrow::Cow::Owned(t.into_bytes()),
    }
}

pub fn os_from_bytes(b: &[u8]) -> OsString {
    OsString::from(String::from_utf8_lossy(b).into_owned())
}

pub fn symlink(_target: &Path, _link: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "symlinks are not made on this platform",
    ))
}

pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

/// No advisory locks here: a lock is never taken, so a sweep treats
/// every run's folder as live and removes none.
pub fn try_lock(_file: &File) -> bool {
    false
}

/// No process groups here: the command is killed alone.
pub fn own_group(_cmd: &mut tokio::process::Command) {}

pub fn kill_group(_pgid: i32) {}

pub fn exit_signal(_status: std::process::ExitStatus) -> Option<i32> {
    None
}

/// Ctrl-C, as it arrives (the only stop signal here; it counts as SIGINT).
pub struct StopSignals;

impl StopSignals {
    pub fn listen() -> Option<Self> {
        Some(Self)
    }

    pub async fn next(&mut self) -> &'static str {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        "SIGINT"
    }
}

/// Not done on this platform: the environment block stays as it was.
///
/// # Safety
/// None: it does nothing (the same signature as on Unix).
pub unsafe fn hide_secret_values(_secret: impl Fn(&str) -> bool) -> usize {
    0
}

/// No mounts are made here.
pub fn unmount_detached(_target: &Path) -> std::io::Result<()> {
    Ok(())
}

/// No execute bits: any file may be tried.
pub fn may_execute(_path: &Path) -> bool {
    true
}
