//! Opening and writing a checked path without a window for symlink swaps.
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
//!
//! Writes go the same way: the parent folder is reached (and created) one
//! component at a time with `mkdirat` and `openat2`, and the new content is
//! written to a temporary file in it and renamed over the target with
//! `renameat`, both relative to that folder's descriptor. A rename replaces
//! a symlink at the target itself rather than following it.

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
                let c = c_path(root.as_os_str()).ok()?;
                // SAFETY: a valid C string; the fd is owned below.
                let fd = unsafe { libc::open(c.as_ptr(), DIR_FLAGS) };
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
    let rel = match real.strip_prefix(root) {
        Ok(r) if r.as_os_str().is_empty() => Path::new("."),
        Ok(r) => r,
        Err(_) => return open_nofollow(real),
    };
    let Some(dir) = root_fd.get(root) else {
        return open_nofollow(real);
    };
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC;
    match openat2_beneath(dir.as_raw_fd(), rel, flags) {
        Some(fd) => fd.map(File::from),
        None => open_nofollow(real),
    }
}

/// A path for a system call (a NUL byte in it is invalid input).
fn c_path(p: &std::ffi::OsStr) -> std::io::Result<CString> {
    CString::new(p.as_bytes()).map_err(|_| std::io::ErrorKind::InvalidInput.into())
}

/// How a folder on the way is opened: only as a place (`O_PATH`) where
/// Linux has it.
#[cfg(target_os = "linux")]
const DIR_FLAGS: i32 = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: i32 = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;

/// `openat2` exists on Linux only: elsewhere the callers fall back.
#[cfg(not(target_os = "linux"))]
fn openat2_beneath(_dir: i32, _rel: &Path, _flags: i32) -> Option<std::io::Result<OwnedFd>> {
    None
}

/// `openat2` relative to `dir` with no symlinks and no escape; `None` when
/// the kernel has no `openat2` (or a filter hides it).
#[cfg(target_os = "linux")]
fn openat2_beneath(dir: i32, rel: &Path, flags: i32) -> Option<std::io::Result<OwnedFd>> {
    let c = match c_path(rel.as_os_str()) {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    // SAFETY: open_how is plain data; zeroed is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: valid fd, C string and struct of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        // SAFETY: a fresh descriptor nobody else owns.
        return Some(Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) }));
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS) | Some(libc::EPERM) | Some(libc::E2BIG) => None,
        Some(libc::ELOOP) | Some(libc::EXDEV) => Some(Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "a symlink appeared on the path after it was checked",
        ))),
        _ => Some(Err(e)),
    }
}

/// Writes `bytes` to `real` (absolute, symlinks resolved, under `root`)
/// atomically, creating missing folders, keeping an existing file's
/// permissions; refuses any symlink that appeared on the path since it was
/// resolved. Falls back to [`super::atomic_write`] without `openat2`.
pub fn write_beneath(
    root: &Path,
    root_fd: &RootFd,
    real: &Path,
    bytes: &[u8],
) -> std::io::Result<()> {
    let (Ok(rel), Some(dir)) = (real.strip_prefix(root), root_fd.get(root)) else {
        return super::atomic_write(real, bytes);
    };
    let Some(name) = rel.file_name() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the workspace root is not a file",
        ));
    };
    // The parent, one component at a time from the root.
    let mut cur: Option<OwnedFd> = None;
    for comp in rel.parent().unwrap_or(Path::new("")).components() {
        let std::path::Component::Normal(part) = comp else {
            return Err(std::io::ErrorKind::InvalidInput.into());
        };
        let at = cur.as_ref().map_or(dir.as_raw_fd(), |f| f.as_raw_fd());
        let c = c_path(part)?;
        // SAFETY: valid fd and C string. An existing entry is fine here:
        // openat2 below checks what it is.
        unsafe { libc::mkdirat(at, c.as_ptr(), 0o777) };
        match openat2_beneath(at, Path::new(part), DIR_FLAGS) {
            Some(fd) => cur = Some(fd?),
            None => return super::atomic_write(real, bytes),
        }
    }
    let at = cur.as_ref().map_or(dir.as_raw_fd(), |f| f.as_raw_fd());
    write_in(at, name, bytes)
}

/// A temporary file in folder `at`, renamed over `name`.
fn write_in(at: i32, name: &std::ffi::OsStr, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let target = c_path(name)?;
    // The permissions of the file being replaced, if it is one.
    // SAFETY: stat is plain data; valid fd, C string and pointer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let existing =
        unsafe { libc::fstatat(at, target.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } == 0
            && (st.st_mode & libc::S_IFMT) == libc::S_IFREG;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp_name = format!(
        ".runner-tmp-{}-{}-{nanos}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let tmp = CString::new(tmp_name).expect("no NUL");
    // SAFETY: valid fd and C string; the descriptor is owned below.
    let fd = unsafe {
        libc::openat(
            at,
            tmp.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor nobody else owns.
    let mut file = unsafe { File::from_raw_fd(fd) };
    let written = (|| {
        file.write_all(bytes)?;
        if existing {
            // SAFETY: valid descriptor.
            if unsafe { libc::fchmod(file.as_raw_fd(), st.st_mode & 0o7777) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        drop(file);
        // SAFETY: valid fds and C strings.
        if unsafe { libc::renameat(at, tmp.as_ptr(), at, target.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    })();
    if written.is_err() {
        // SAFETY: valid fd and C string; removing our own temporary file.
        unsafe { libc::unlinkat(at, tmp.as_ptr(), 0) };
    }
    written
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

    #[test]
    fn writes_create_folders_keep_permissions_and_refuse_a_swapped_folder() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let deep = ws.resolve("a/b/new.txt").unwrap().real;
        ws.write_atomic(&deep, b"one").unwrap();
        assert_eq!(std::fs::read_to_string(&deep).unwrap(), "one");
        let kept = ws.resolve("a/b/new.txt").unwrap().real;
        std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o600)).unwrap();
        ws.write_atomic(&kept, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "two");
        let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Checked, then `a` swapped for a symlink to the outside.
        let target = ws.resolve("a/b/new.txt").unwrap().real;
        std::fs::create_dir_all(outside.path().join("b")).unwrap();
        std::fs::rename(ws.root().join("a"), ws.root().join("old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.root().join("a")).unwrap();
        let e = ws.write_atomic(&target, b"escaped").unwrap_err();
        assert!(e.to_string().contains("symlink appeared"), "{e}");
        assert!(!outside.path().join("b/new.txt").exists());
        // A target swapped for a link is replaced, not written through.
        std::fs::write(outside.path().join("victim"), "safe").unwrap();
        let file = ws.resolve("file.txt").unwrap().real;
        std::os::unix::fs::symlink(outside.path().join("victim"), &file).unwrap();
        ws.write_atomic(&file, b"mine").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("victim")).unwrap(),
            "safe"
        );
        assert!(!std::fs::symlink_metadata(&file).unwrap().is_symlink());
        // No temporary files left behind.
        let leftovers: Vec<_> = walk(ws.root())
            .into_iter()
            .filter(|p| p.to_string_lossy().contains(".runner-tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn without_a_root_descriptor_reads_and_writes_fall_back() {
        // What a kernel without openat2 (or a root that cannot be opened)
        // gets: the last component is still not followed.
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let none = RootFd(OnceLock::from(None));
        let file = root.join("sub/f.txt");
        write_beneath(&root, &none, &file, b"one").unwrap();
        assert_eq!(read(open_read_beneath(&root, &none, &file)).unwrap(), "one");
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(outside.path().join("secret"), &link).unwrap();
        assert!(open_read_beneath(&root, &none, &link).is_err());
        write_beneath(&root, &none, &link, b"mine").unwrap();
        assert_eq!(
            std::fs::read_to_string(outside.path().join("secret")).unwrap(),
            "secret"
        );
    }

    fn walk(p: &Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(p).unwrap().flatten() {
            let path = e.path();
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(&path));
            }
            out.push(path);
        }
        out
    }
}
