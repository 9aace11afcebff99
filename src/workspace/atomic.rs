//! Atomic file writes: a temporary file in the same folder, then a rename.
//!
//! A reader (or a crash, or Ctrl-C) never sees half a file. When the target
//! exists its permission bits are kept, so editing a script keeps it
//! executable.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically, creating parent folders.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, false)
}

/// [`atomic_write`], made durable before it returns: the data reach the
/// disk before the rename, and the folder's new entry after it, so a
/// machine that crashes keeps the old file or the new one, whole. For the
/// run's outputs and journal (the copy's own files need not outlive a
/// machine crash: the copy does not).
pub fn durable_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write(path, bytes, true)
}

/// [`durable_write`] for text.
pub fn durable_write_str(path: &Path, text: &str) -> std::io::Result<()> {
    write(path, text.as_bytes(), true)
}

fn write(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent)?;
    let existing_perms = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut tmp = tempfile::Builder::new()
        .prefix(".runner-tmp-")
        .tempfile_in(parent)?;
    tmp.write_all(bytes)?;
    tmp.flush()?;
    if let Some(perms) = existing_perms {
        tmp.as_file().set_permissions(perms)?;
    } else {
        // tempfile creates 0600; a new file gets the usual 0644 (less umask).
        let mode = 0o666 & !current_umask();
        crate::sys::set_file_mode(tmp.as_file(), mode)?;
    }
    if durable {
        tmp.as_file().sync_data()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    if durable {
        std::fs::File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// [`atomic_write`] for text.
pub fn atomic_write_str(path: &Path, text: &str) -> std::io::Result<()> {
    atomic_write(path, text.as_bytes())
}

fn current_umask() -> u32 {
    static UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // Read once, at the first write, before any worker threads write.
    *UMASK.get_or_init(crate::sys::umask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keeps_permissions_and_creates_parents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/run.sh");
        atomic_write(&p, b"one").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o755
        );
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(".runner-tmp-"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
