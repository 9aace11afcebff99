//! Elsewhere than Linux: no overlay; workspaces are copies.

use std::io;

use super::NoOverlay;
use std::path::Path;

pub(super) fn enter_own_mount_namespace() -> Result<(), NoOverlay> {
    Err(NoOverlay("overlay workspaces need Linux".into()))
}

fn none() -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, "overlay workspaces need Linux")
}

pub(super) fn mount_overlay(
    _lower: &Path,
    _upper: &Path,
    _work: &Path,
    _target: &Path,
) -> io::Result<()> {
    Err(none())
}

pub(super) fn whiteout(_path: &Path) -> io::Result<()> {
    Err(none())
}

pub(super) fn is_whiteout(_meta: &std::fs::Metadata) -> bool {
    false
}

pub(super) fn is_opaque(_path: &Path) -> bool {
    false
}
