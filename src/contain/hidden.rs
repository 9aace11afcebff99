//! The original workspace, hidden from commands while a copy stands in for
//! it (each platform's sandbox enforces it where it can).

use std::path::{Path, PathBuf};

/// A folder commands may not read, except some paths beneath it: the
/// original workspace while a copy stands in for it, so that code the
/// analysis cannot see into still cannot read what the policy denies
/// reading (those files are left out of the copy; see
/// `workspace::isolate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HiddenTree {
    /// Absolute and canonical.
    pub root: PathBuf,
    /// Paths beneath `root` that stay readable (the git object stores the
    /// copy's git view reads through its alternates).
    pub except: Vec<PathBuf>,
}

impl HiddenTree {
    /// Whether hiding `root` would hide what every command needs: the
    /// file-system root, or a folder holding the home folder (toolchains
    /// live there). Such a tree is not hidden.
    pub fn is_hideable(root: &Path) -> bool {
        if root.parent().is_none() {
            return false;
        }
        match std::env::var_os("HOME") {
            Some(home) => !Path::new(&home).starts_with(root),
            None => true,
        }
    }
}
