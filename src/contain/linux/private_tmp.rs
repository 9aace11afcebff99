//! A private `/tmp` (and `/var/tmp`) for a task's commands (issue 73,
//! item 3).
//!
//! Agents write scratch files where every tutorial does: `cat <<'PY' >
//! /tmp/fix.py && python3 /tmp/fix.py`. Landlock lets commands write only
//! in their own folders, so the machine's `/tmp` is refused. Here each
//! command starts in a mount namespace of its own where `/tmp` is a folder
//! of the task's (created with its temp folder, removed with it), so the
//! write lands there and nothing reaches the machine's `/tmp`.
//!
//! **What stays.** The task's own folders often live in `/tmp` (the
//! workspace copy, its temp folder: `TMPDIR` is `/tmp` by default), and so
//! may a `PATH` folder or the runner's own. Those are bound back at their
//! paths inside the private folder: read-write where commands may write
//! them, read-only otherwise (the private folder is writable to Landlock,
//! and a bind mount beneath it would inherit that). A folder that holds
//! (or lies in) the tree hidden from commands is never bound back, but
//! for the object stores the copy's git view reads.
//!
//! **How.** As root: `unshare(CLONE_NEWNS)`, every mount made private, the
//! binds. Otherwise in a user namespace of its own that maps only the
//! runner's own user and group (so nothing changes owner), where such
//! namespaces are allowed. Which one works is probed once per process
//! (`runner doctor` says which, or why neither). It costs a command about
//! 0.3 ms (the namespace and its mount table, made and torn down).
//!
//! **The supervisor's view.** The supervisor decides from the runner's
//! namespace, where `/tmp/x` is the machine's. [`TmpView::runner_path`]
//! turns a command's path into the runner's: beneath a folder bound back
//! it is the same path, elsewhere in `/tmp` the private folder's.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The folders made private.
use crate::contain::PRIVATE_ROOTS as ROOTS;

/// How a private `/tmp` is made here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A mount namespace (the runner has `CAP_SYS_ADMIN`).
    Root,
    /// A user namespace mapping the runner's user, and a mount namespace.
    User,
}

/// Why commands cannot have a private `/tmp` here.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct NoPrivateTmp(String);

/// Whether commands can have a private `/tmp` here, and how; why not.
/// Probed once per process, by a child that tries.
pub fn available() -> Result<Mode, NoPrivateTmp> {
    static PROBE: OnceLock<Result<Mode, NoPrivateTmp>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<Mode, NoPrivateTmp> {
    let dir = tempfile::Builder::new()
        .prefix("runner-tmp-probe-")
        .tempdir()
        .map_err(|e| NoPrivateTmp(format!("no temp folder to probe with: {e}")))?;
    let root = try_mode(Mode::Root, dir.path());
    let Err(as_root) = root else {
        return Ok(Mode::Root);
    };
    match try_mode(Mode::User, dir.path()) {
        Ok(()) => Ok(Mode::User),
        Err(user) => Err(NoPrivateTmp(format!(
            "no mount namespace for commands (as root: {as_root}; in a user namespace: {user})"
        ))),
    }
}

/// Starts `true` in a private `/tmp` made the `mode` way.
fn try_mode(mode: Mode, dir: &Path) -> Result<(), NoPrivateTmp> {
    use std::os::unix::process::CommandExt;
    let t = PrivateTmp::prepare(mode, dir, &[]).map_err(|e| NoPrivateTmp(e.to_string()))?;
    let mut cmd = std::process::Command::new("true");
    cmd.stdin(std::process::Stdio::null());
    // SAFETY: `enter` makes only system calls.
    unsafe {
        cmd.pre_exec(move || t.enter());
    }
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(NoPrivateTmp(format!("the probe ended with {s}"))),
        Err(e) => Err(NoPrivateTmp(e.to_string())),
    }
}

pub use crate::contain::tmp_keeps::{Access, Keep};

/// One bind: `src` at `dst`, then made read-only with `remount` flags.
#[derive(Debug)]
struct Bind {
    src: CString,
    dst: CString,
    read_only: Option<libc::c_ulong>,
}

/// A command's path as the runner finds it (see the module docs).
#[derive(Debug, Default)]
pub struct TmpView {
    /// (the folder made private, the task's folder in its place).
    roots: Vec<(PathBuf, PathBuf)>,
    /// What is bound back: (its path, the runner's for what lies beneath
    /// it: the same path, or a mask's empty folder).
    kept: Vec<(PathBuf, PathBuf)>,
}

impl TmpView {
    /// `path` (absolute, as the command names it) as the runner finds it.
    pub fn runner_path(&self, path: &Path) -> PathBuf {
        // The deepest keep holding it decides (a store inside a mask).
        let deepest = self
            .kept
            .iter()
            .filter(|(k, _)| path.starts_with(k))
            .max_by_key(|(k, _)| k.components().count());
        if let Some((k, seen)) = deepest {
            return seen.join(path.strip_prefix(k).unwrap_or(path));
        }
        for (root, private) in &self.roots {
            if let Ok(rest) = path.strip_prefix(root) {
                return private.join(rest);
            }
        }
        path.to_path_buf()
    }
}

/// What a child does to itself to see a private `/tmp`: prepared in the
/// runner, applied with system calls alone.
#[derive(Debug)]
pub struct PrivateTmp {
    mode: Mode,
    /// `/proc/self/uid_map` and `gid_map` lines (user namespaces).
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    binds: Vec<Bind>,
    /// The runner's view of it, for the supervisor.
    pub view: Arc<TmpView>,
}

impl PrivateTmp {
    /// Makes, beneath `base` (the task's, removed with it), a folder for
    /// each of [`ROOTS`] there is, and the binds that put them in place
    /// with `keeps` bound back.
    pub fn prepare(mode: Mode, base: &Path, keeps: &[Keep]) -> io::Result<PrivateTmp> {
        let mut keeps: Vec<Keep> = keeps
            .iter()
            .filter_map(|k| {
                Some(Keep {
                    path: k.path.canonicalize().ok()?,
                    access: k.access,
                })
            })
            .collect();
        // Outer first: a folder bound back carries what lies in it, so a
        // nested keep needs a bind of its own only where it gets other
        // access than its outer one (a masked tree, the stores inside it,
        // a writable folder in a read-only one).
        keeps.sort_by_key(|k| (k.path.components().count(), k.access));
        // Each mask's empty folder, where the mount points of what is bound
        // back inside it are made.
        let mut masks: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut binds = Vec::new();
        let mut root_binds = Vec::new();
        let mut view = TmpView::default();
        for root in ROOTS {
            let root = Path::new(root);
            let Ok(real_root) = root.canonicalize() else {
                continue;
            };
            if !real_root.is_dir() {
                continue;
            }
            let private = base.join(root.strip_prefix("/").unwrap_or(root));
            std::fs::create_dir_all(&private)?;
            let mut bound: Vec<&Keep> = Vec::new();
            // The folder made private itself is never kept (a runner
            // started from `/tmp` would bring the machine's back).
            for k in keeps
                .iter()
                .filter(|k| k.path.starts_with(&real_root) && k.path != real_root)
            {
                let outer = bound.iter().rev().find(|b| k.path.starts_with(&b.path));
                let covered = outer.is_some_and(|o| {
                    o.access == k.access || (o.access == Access::Write && k.access == Access::Read)
                });
                // A mask where nothing bound back reaches the tree: it is
                // not there at all.
                if covered || (k.access == Access::Masked && outer.is_none()) {
                    continue;
                }
                let rel = k.path.strip_prefix(&real_root).unwrap_or(&k.path);
                let dst = private.join(rel);
                // The mount point: in the private folder, or in the mask
                // around it; inside anything else bound back it is there.
                let point = match outer {
                    None => Some(dst.clone()),
                    Some(o) if o.access == Access::Masked => {
                        masks.iter().find(|(m, _)| *m == o.path).map(|(_, empty)| {
                            empty.join(k.path.strip_prefix(&o.path).unwrap_or(&k.path))
                        })
                    }
                    Some(_) => None,
                };
                if let Some(point) = point {
                    make_mount_point(&point, k.path.is_dir())?;
                }
                let src = if k.access == Access::Masked {
                    // An empty folder for a folder, an empty file for a
                    // file: a mount takes the type of what it covers.
                    // Neither readable nor listable (commands hold no
                    // capability to override it); a folder can still be
                    // passed through to what is bound back inside it.
                    let empty = base.join(format!("mask-{}", masks.len()));
                    make_mount_point(&empty, k.path.is_dir())?;
                    let mode = if k.path.is_dir() { 0o111 } else { 0 };
                    std::fs::set_permissions(&empty, std::fs::Permissions::from_mode(mode))?;
                    masks.push((k.path.clone(), empty.clone()));
                    empty
                } else {
                    k.path.clone()
                };
                binds.push(Bind {
                    src: cstring(&src)?,
                    dst: cstring(&dst)?,
                    read_only: (k.access != Access::Write).then(|| locked_flags(&src)),
                });
                view.kept.push((k.path.clone(), src.clone()));
                bound.push(k);
            }
            // Put in place once every source beneath it is bound; the
            // root holding `base` last, or the others' sources are gone.
            root_binds.push((
                base.starts_with(&real_root),
                Bind {
                    src: cstring(&private)?,
                    dst: cstring(root)?,
                    read_only: None,
                },
            ));
            view.roots.push((root.to_path_buf(), private));
        }
        root_binds.sort_by_key(|(holds_base, _)| *holds_base);
        binds.extend(root_binds.into_iter().map(|(_, b)| b));
        // SAFETY: plain calls that cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Ok(PrivateTmp {
            mode,
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            binds,
            view: Arc::new(view),
        })
    }

    /// Puts the calling process in a mount namespace of its own with the
    /// private folders in place. Only system calls: safe between `fork`
    /// and `exec`, before capabilities are dropped.
    pub fn enter(&self) -> io::Result<()> {
        let flags = match self.mode {
            Mode::Root => libc::CLONE_NEWNS,
            Mode::User => libc::CLONE_NEWNS | libc::CLONE_NEWUSER,
        };
        // SAFETY: plain system calls on NUL-terminated strings that
        // outlive them.
        unsafe {
            check(libc::unshare(flags))?;
            if self.mode == Mode::User {
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &self.uid_map)?;
                write_proc(c"/proc/self/gid_map", &self.gid_map)?;
            }
            // Nothing made here reaches the machine's namespace.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for b in &self.binds {
                check(libc::mount(
                    b.src.as_ptr(),
                    b.dst.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                if let Some(locked) = b.read_only {
                    check(libc::mount(
                        std::ptr::null(),
                        b.dst.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | locked,
                        std::ptr::null(),
                    ))?;
                }
            }
        }
        Ok(())
    }
}

/// Makes `point`, a folder (`dir`) or an empty file, to mount on.
fn make_mount_point(point: &Path, dir: bool) -> io::Result<()> {
    if dir {
        return std::fs::create_dir_all(point);
    }
    if let Some(p) = point.parent() {
        std::fs::create_dir_all(p)?;
    }
    std::fs::write(point, b"")
}

/// The flags of the mount `path` is on that a remount in a user namespace
/// must keep (the kernel refuses to clear them there).
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = cstring(path) else { return 0 };
    // SAFETY: zero is a valid statvfs, filled by the call.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a statvfs to fill.
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st, _)| s.f_flag & st != 0)
        .fold(0, |m, (_, ms)| m | ms)
}

fn cstring(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `data` to a file of `/proc/self` (system calls only).
///
/// # Safety
/// `path` is NUL-terminated.
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: plain system calls on a valid path and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = io::Error::last_os_error();
        libc::close(fd);
        if n != data.len() as isize {
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
