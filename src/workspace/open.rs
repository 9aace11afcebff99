//! Opening a checked path without a window for symlink swaps.
//!
//! A call's path is resolved (symlinks followed, containment checked) and
//! then opened. Between the two, a process the agent left running could
//! replace a folder on the path with a symlink to somewhere outside the
//! workspace, and a plain `open` would follow it. So the resolved real path,
//! which has no symlinks below the root by construction, is opened relative
//! to the root with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: the
//! kernel refuses any symlink or escape it meets, atomically. Where
//! `openat2` is missing (Linux before 5.6, or filtered by a container's
//! seccomp profile) the last component is still opened with `O_NOFOLLOW`.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::OnceLock;

/// The root folder, opened once (`O_PATH`) for `openat2`.
#[derive(Debug, Default)]
pub struct RootFd(OnceLock<Option<OwnedFd>>);

impl RootFd {
    fn get(&self, root: &Path) -> Option<&OwnedFd> {
        self.0
            .get_or_init(|| {
                let c = CString::new(root.as_os_str().as_bytes()).ok()?;
                // SAFETY: a valid C string; the fd is owned below.
                let fd = unsafe {
                    libc::open(
                        c.as_ptr(),
                        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                    )
                };
                // SAFETY: a fresh descriptor nobody else owns.
                (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
            })
            .as_ref()
    }
}

/// Opens `real` (absolute, symlinks already resolved, under `root`) for
/// reading, refusing any symlink that appeared on it since it was resolved.
/// `O_NONBLOCK` is set so that a FIFO does not wait for a writer.
pub fn open_read_beneath(root: &Path, root_fd: &RootFd, real: &Path) -> std::io::Result<File> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let rel = match real.strip_prefix(root) {
        Ok(r) if r.as_os_str().is_empty() => Path::new("."),
        Ok(r) => r,
        Err(_) => return open_nofollow(real),
    };
    let Some(dir) = root_fd.get(root) else {
        return open_nofollow(real);
    };
    let c = CString::new(rel.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: open_how is plain data; zeroed is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: valid fd, C string and struct of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir.as_raw_fd(),
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        // SAFETY: a fresh descriptor nobody else owns.
        return Ok(unsafe { File::from_raw_fd(fd as i32) });
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EPERM) | Some(libc::E2BIG) => open_nofollow(real),
        Some(libc::ELOOP) | Some(libc::EXDEV) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "a symlink appeared on the path after it was checked",
        )),
        _ => Err(e),
    }
}

/// The fallback: the last component is not followed.
fn open_nofollow(real: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;
    use std::io::Read;

    fn read(f: std::io::Result<File>) -> std::io::Result<String> {
        let mut s = String::new();
        f?.read_to_string(&mut s)?;
        Ok(s)
    }

    #[test]
    fn opens_checked_paths_and_refuses_a_folder_swapped_for_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("f.txt"), "secret").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        std::fs::write(ws.root().join("top.txt"), "top").unwrap();
        std::fs::create_dir(ws.root().join("sub")).unwrap();
        std::fs::write(ws.root().join("sub/f.txt"), "inside").unwrap();
        let top = ws.resolve("top.txt").unwrap().real;
        let nested = ws.resolve("sub/f.txt").unwrap().real;
        assert_eq!(read(ws.open_read(&top)).unwrap(), "top");
        assert_eq!(read(ws.open_read(&nested)).unwrap(), "inside");
        assert!(
            ws.open_read(ws.root())
                .unwrap()
                .metadata()
                .unwrap()
                .is_dir()
        );
        // Checked, then swapped: `sub` becomes a symlink to the outside.
        std::fs::rename(ws.root().join("sub"), ws.root().join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("sub")).unwrap();
        assert_eq!(
            read(File::open(&nested)).unwrap(),
            "secret",
            "a plain open follows it"
        );
        let e = ws.open_read(&nested).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
        assert!(e.to_string().contains("symlink appeared"), "{e}");
        // The fallback does not follow a last component swapped for a link.
        std::fs::remove_file(ws.root().join("top.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("f.txt"), ws.root().join("top.txt"))
            .unwrap();
        assert!(open_nofollow(&top).is_err());
        assert!(ws.open_read(&top).is_err());
    }
}
