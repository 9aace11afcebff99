//! The file an exec names (or the folder of a Unix socket a connect
//! names), found as the process that named it would find it.
//!
//! The supervisor decides an exec from the runner, so every lookup it
//! makes is the runner's: `/proc/self` (and `/dev/fd`, `/dev/stdin`,
//! which lead to it) would name the runner's own descriptors, not the
//! command's. `execv("/proc/self/fd/3", ["x", "push", ...])` on a
//! descriptor of `git` would then be decided as whatever the runner's
//! descriptor 3 is. So the path is resolved here one component at a
//! time, each symlink read and followed, and `/proc/self` and
//! `/proc/thread-self` are put as the process's own folder
//! (`/proc/<tid>`). What is left is a path that means the same from the
//! runner: a path with no symlink, or one ending in a link of the
//! process's `/proc` folder (a descriptor, `exe`), which the kernel
//! follows for that process whoever asks. Most paths cross no such link:
//! one `openat2` that refuses magic links tells, and only the others are
//! walked.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::contain::os::private_tmp::TmpView;

/// Links followed before giving up, as the kernel does (`ELOOP`).
const MAX_LINKS: usize = 40;

/// `path` (absolute) as process `tid` resolves it, in terms the runner
/// resolves the same way; `None` past [`MAX_LINKS`] links.
pub(super) fn as_process_sees(tid: u32, path: &Path, view: Option<&TmpView>) -> Option<PathBuf> {
    if opened_without_magic_links(path).is_some() {
        return Some(path.to_path_buf());
    }
    resolve(tid, path, view)
}

/// [`as_process_sees`] for a file an exec names, with the file's metadata
/// when the lookup that tells opened it (no second lookup for its `stat`).
pub(super) fn file_as_process_sees(
    tid: u32,
    path: &Path,
    view: Option<&TmpView>,
) -> Option<(PathBuf, Option<std::fs::Metadata>)> {
    if let Some(fd) = opened_without_magic_links(path) {
        return Some((path.to_path_buf(), std::fs::File::from(fd).metadata().ok()));
    }
    resolve(tid, path, view).map(|p| (p, None))
}

/// The path a process names by `path`: as it is when absolute, else from
/// its folder (or the folder `dirfd` holds open) through its own `/proc`
/// folder, which [`as_process_sees`] follows as the kernel does for it.
/// Where commands have a private `/tmp`, an absolute path is the runner's
/// for it (`view`).
pub(super) fn named(tid: u32, dirfd: Option<i32>, path: &Path, view: Option<&TmpView>) -> PathBuf {
    if path.is_absolute() {
        return view.map_or_else(|| path.to_path_buf(), |v| v.runner_path(path));
    }
    let from = match dirfd {
        Some(fd) => format!("/proc/{tid}/fd/{fd}"),
        None => format!("/proc/{tid}/cwd"),
    };
    Path::new(&from).join(path)
}

/// The file the runner's own lookup of `path` reaches without crossing a
/// link of `/proc` that depends on who looks (`openat2` with
/// `RESOLVE_NO_MAGICLINKS`, one system call; an `O_PATH` descriptor): then
/// it finds what the process would, and the path is decided as it is.
/// `/proc/self` itself is a plain link to the looker's folder, so paths
/// under `/proc` are never taken this way; nothing that leads there from
/// elsewhere ends in a file that could run or a folder that could hold a
/// socket (the folder's plain files and folders cannot).
fn opened_without_magic_links(path: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    if path.starts_with("/proc") {
        return None;
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: zero is a valid `open_how` (no flags, no mode, no resolve).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: a NUL-terminated path and an `open_how` of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    // Below zero: a magic link crossed (ELOOP), no such file, or a kernel
    // before 5.6 (ENOSYS): the walk decides.
    // SAFETY: a descriptor just opened, owned from here on.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// [`as_process_sees`] by walking the path here, one component at a time.
/// An absolute link's target is the process's path, the runner's by
/// `view` (a private `/tmp`); the readlink text of a process's own links
/// (`cwd`) is the path from its root too.
fn resolve(tid: u32, path: &Path, view: Option<&TmpView>) -> Option<PathBuf> {
    let own = PathBuf::from(format!("/proc/{tid}"));
    let mut pending: Vec<PathBuf> = Vec::new(); // components still to walk, last first
    push_components(&mut pending, path);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == Path::new("/") {
            out = PathBuf::from("/");
            continue;
        }
        if part == Path::new("..") {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        if next == Path::new("/proc/self") || next == Path::new("/proc/thread-self") {
            out = own.clone();
            continue;
        }
        // The last component may be a link of a process's /proc folder
        // (`fd/N`, `exe`): it names that process's file for any reader,
        // and what it reads as text may be no path at all (`pipe:[…]`, a
        // deleted file). Before the last, such a link (`cwd`, `root`, a
        // folder's descriptor) is followed as any other: what lies below
        // it is resolved here too.
        if pending.is_empty() && is_process_link(&next) {
            out = next;
            continue;
        }
        match std::fs::read_link(&next) {
            Ok(target) => {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                let target = match view {
                    Some(v) if target.is_absolute() => v.runner_path(&target),
                    _ => target,
                };
                push_components(&mut pending, &target);
            }
            Err(_) => out = next,
        }
    }
    Some(out)
}

/// Puts `path`'s components on `pending` so that the first is popped
/// first (an absolute path starts with `/`, which restarts the walk).
fn push_components(pending: &mut Vec<PathBuf>, path: &Path) {
    let parts: Vec<PathBuf> = path
        .components()
        .filter_map(|c| match c {
            Component::RootDir => Some(PathBuf::from("/")),
            Component::ParentDir => Some(PathBuf::from("..")),
            Component::Normal(n) => Some(PathBuf::from(n)),
            Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    pending.extend(parts.into_iter().rev());
}

/// `/proc/<number>/...`, below a process's folder: links there are the
/// kernel's, bound to that process.
fn is_process_link(path: &Path) -> bool {
    let mut c = path.components();
    let (Some(Component::RootDir), Some(Component::Normal(proc)), Some(Component::Normal(n))) =
        (c.next(), c.next(), c.next())
    else {
        return false;
    };
    proc == OsStr::new("proc") && is_number(n) && c.next().is_some()
}

fn is_number(s: &OsStr) -> bool {
    !s.is_empty() && s.as_bytes().iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_is_the_process_and_links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir(d.join("bin")).unwrap();
        std::fs::write(d.join("bin/tool"), "").unwrap();
        std::os::unix::fs::symlink(d.join("bin"), d.join("b")).unwrap();
        std::os::unix::fs::symlink("../bin/tool", d.join("b/rel")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd/3", d.join("fd3")).unwrap();
        std::os::unix::fs::symlink("loop2", d.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", d.join("loop2")).unwrap();
        let seen = |p: &str| resolve(4242, Path::new(p), None);
        assert_eq!(seen("/proc/self/fd/3"), Some("/proc/4242/fd/3".into()));
        assert_eq!(seen("/proc/thread-self/exe"), Some("/proc/4242/exe".into()));
        // `/dev/fd` is a link to `/proc/self/fd`.
        if Path::new("/dev/fd").is_symlink() {
            assert_eq!(seen("/dev/fd/7"), Some("/proc/4242/fd/7".into()));
        }
        let p = |s: &str| d.join(s).display().to_string();
        assert_eq!(seen(&p("b/tool")), Some(d.join("bin/tool")));
        // A relative path, from the process's folder or a descriptor's,
        // through its own /proc folder (this process's: the test's own
        // folder and a descriptor of `d/b`).
        let me = std::process::id();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(named(me, None, Path::new("/abs"), None), Path::new("/abs"));
        assert_eq!(
            resolve(me, &named(me, None, Path::new("x"), None), None),
            Some(cwd.join("x"))
        );
        let b = std::fs::File::open(d.join("b")).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&b);
        assert_eq!(
            resolve(me, &named(me, Some(fd), Path::new("rel"), None), None),
            Some(d.join("bin/tool"))
        );
        assert_eq!(seen(&p("b/rel")), Some(d.join("bin/tool")));
        assert_eq!(seen(&p("bin/../b/./tool")), Some(d.join("bin/tool")));
        assert_eq!(seen(&p("fd3")), Some("/proc/4242/fd/3".into()));
        assert_eq!(seen(&p("loop1")), None);
        // A file that does not exist is left as named.
        assert_eq!(seen(&p("b/none")), Some(d.join("bin/none")));
        // A folder link of /proc is followed, and what lies below it
        // resolved here.
        let me = std::process::id();
        assert_eq!(
            resolve(
                me,
                Path::new(&format!("/proc/self/root{}", p("b/rel"))),
                None
            ),
            Some(d.join("bin/tool"))
        );
        assert_eq!(
            resolve(me, Path::new(&format!("/proc/self/root{}", p("fd3"))), None),
            Some(format!("/proc/{me}/fd/3").into())
        );
    }

    /// A link below a process's own folder is the kernel's: only
    /// `/proc/<number>/...`.
    #[test]
    fn only_links_below_a_process_folder_are_the_kernels() {
        for p in ["/proc/123/fd/3", "/proc/1/exe", "/proc/42/root/x"] {
            assert!(is_process_link(Path::new(p)), "{p}");
        }
        for p in [
            "/proc/self/fd/3",
            "/proc/thread-self/exe",
            "/proc/12a/fd",
            "/proc/123",
            "/sys/123/fd",
            "/tmp/proc/123/fd",
            "proc/123/fd",
        ] {
            assert!(!is_process_link(Path::new(p)), "{p}");
        }
        assert!(is_number(OsStr::new("0")));
        assert!(!is_number(OsStr::new("")));
        assert!(!is_number(OsStr::new("1x")));
    }

    /// The walk follows as many links as the kernel does, and gives up
    /// where it gives up (`ELOOP`).
    #[test]
    fn links_are_followed_up_to_the_kernels_bound() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::write(d.join("tool"), "").unwrap();
        let mut last = "tool".to_string();
        for i in 1..=MAX_LINKS + 1 {
            let link = format!("l{i}");
            std::os::unix::fs::symlink(&last, d.join(&link)).unwrap();
            last = link;
        }
        let at_bound = d.join(format!("l{MAX_LINKS}"));
        let past = d.join(format!("l{}", MAX_LINKS + 1));
        assert!(std::fs::metadata(&at_bound).is_ok());
        let e = std::fs::metadata(&past).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        assert_eq!(resolve(4242, &at_bound, None), Some(d.join("tool")));
        assert_eq!(resolve(4242, &past, None), None);
    }

    /// A path that crosses no magic link is taken as it is; one that
    /// does, or lies under `/proc`, is walked.
    #[test]
    fn only_paths_through_proc_are_walked() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().canonicalize().unwrap();
        std::fs::create_dir(d.join("bin")).unwrap();
        std::fs::write(d.join("bin/tool"), "").unwrap();
        std::os::unix::fs::symlink(d.join("bin"), d.join("b")).unwrap();
        std::os::unix::fs::symlink("/proc/self/fd/0", d.join("fd0")).unwrap();
        let me = std::process::id();
        assert_eq!(
            as_process_sees(me, &d.join("b/tool"), None),
            Some(d.join("b/tool"))
        );
        assert_eq!(
            as_process_sees(4242, &d.join("fd0"), None),
            Some("/proc/4242/fd/0".into())
        );
        assert_eq!(
            as_process_sees(4242, Path::new("/proc/self/exe"), None),
            Some("/proc/4242/exe".into())
        );
        if Path::new("/dev/stdin").is_symlink() {
            assert_eq!(
                as_process_sees(4242, Path::new("/dev/stdin"), None),
                Some("/proc/4242/fd/0".into())
            );
        }
    }
}
