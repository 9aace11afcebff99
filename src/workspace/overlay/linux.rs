//! Linux: the runner's own mount namespace, overlay mounts in it, and
//! reading an upper layer (whiteouts, opaque folders).

use std::ffi::CString;
use std::io;

use super::NoOverlay;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a path holding NUL"))
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// How many threads this process has (the namespace must be entered
/// while it has one: a thread's mount namespace is its own).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// Moves this process, still single-threaded, into a mount namespace of
/// its own whose mounts never reach the machine's (slave propagation:
/// the machine's later mounts still reach it). Root only: an unprivileged
/// runner would need a user namespace of its own, which changes what
/// every command sees of owners; left for later.
pub(super) fn enter_own_mount_namespace() -> Result<(), NoOverlay> {
    if crate::sys::euid() != 0 {
        return Err(NoOverlay(
            "the runner is not root (overlays need CAP_SYS_ADMIN)".into(),
        ));
    }
    if threads() != 1 {
        return Err(NoOverlay(
            "the runner had started threads before its namespace was made".into(),
        ));
    }
    // SAFETY: plain system calls on static strings.
    unsafe {
        check(libc::unshare(libc::CLONE_NEWNS))
            .map_err(|e| NoOverlay(format!("no mount namespace of the runner's own: {e}")))?;
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        ))
        .map_err(|e| NoOverlay(format!("could not keep the runner's mounts to itself: {e}")))?;
    }
    Ok(())
}

/// Whether a path can be written in overlay's options as it is (its
/// separators have no escape every kernel reads alike).
fn plain_option(path: &Path) -> bool {
    !path
        .as_os_str()
        .as_bytes()
        .iter()
        .any(|b| matches!(b, b',' | b':' | b'\\' | b'\n'))
}

/// Mounts an overlay at `target`: `lower` read-only beneath, `upper`
/// taking every write, `work` the overlay's scratch (same file system as
/// `upper`).
pub(super) fn mount_overlay(
    lower: &Path,
    upper: &Path,
    work: &Path,
    target: &Path,
) -> io::Result<()> {
    for p in [lower, upper, work] {
        if !plain_option(p) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} holds a `,` or `:`", p.display()),
            ));
        }
    }
    // No index: the same lower serves many overlays at once (`--jobs`).
    // No redirects and no metadata-only copies, whatever the kernel's
    // defaults: a folder renamed is copied up whole, and every change is
    // a file of the upper layer, as the diff reads it.
    let options = format!(
        "lowerdir={},upperdir={},workdir={},index=off,redirect_dir=off,metacopy=off",
        lower.display(),
        upper.display(),
        work.display()
    );
    let options = CString::new(options).map_err(io::Error::other)?;
    let target = cstring(target)?;
    // SAFETY: NUL-terminated strings that outlive the call.
    check(unsafe {
        libc::mount(
            c"overlay".as_ptr(),
            target.as_ptr(),
            c"overlay".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    })
}

/// Makes a whiteout at `path` in an upper layer (not mounted yet): the
/// entry of that name below is absent from the view.
pub(super) fn whiteout(path: &Path) -> io::Result<()> {
    let c = cstring(path)?;
    // SAFETY: a NUL-terminated path; device 0:0 is overlay's whiteout.
    check(unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR, 0) })
}

/// Whether `meta` is an overlay whiteout (a character device 0:0).
pub(super) fn is_whiteout(meta: &std::fs::Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// Whether the upper layer's folder `path` hides everything beneath it
/// in the lower one (made after the lower folder was removed).
pub(super) fn is_opaque(path: &Path) -> bool {
    let Ok(c) = cstring(path) else { return false };
    let mut value = [0u8; 4];
    // SAFETY: a NUL-terminated path and name, and a buffer of its length.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"trusted.overlay.opaque".as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    n == 1 && value[0] == b'y'
}
