//! Opening and writing a checked path where there are no descriptor-relative
//! calls (Windows): the path, resolved and checked, is opened by name. A
//! folder swapped for a link between the check and the open is not refused
//! here, as `open.rs` refuses it on Unix.

use std::fs::File;
use std::path::Path;

/// Nothing to hold open here.
#[derive(Debug, Default)]
pub struct RootFd;

/// Opens `real` (checked, under `root`) for reading.
pub fn open_read_beneath(_root: &Path, _root_fd: &RootFd, real: &Path) -> std::io::Result<File> {
    File::open(real)
}

/// Writes `bytes` to `real` (checked, under `root`) atomically.
pub fn write_beneath(
    _root: &Path,
    _root_fd: &RootFd,
    real: &Path,
    bytes: &[u8],
) -> std::io::Result<()> {
    super::atomic_write(real, bytes)
}
