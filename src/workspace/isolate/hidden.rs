//! What the copy leaves out for the policy: the files and folders a
//! `Read` deny rule names are absent while the agent works (no command can
//! read what is not there), and put back for the checks, which see the
//! workspace as it really is, then removed again before the diff.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::tree::{copy_entry, walker};

/// What the copy leaves out for the policy: absent while the agent works,
/// put back for the checks ([`Hidden::reveal`]).
#[derive(Debug, Default)]
pub(super) struct Hidden {
    paths: Vec<String>,
    revealed: AtomicBool,
}

impl Hidden {
    /// `paths` left out of the copy.
    pub(super) fn new(paths: Vec<String>) -> Self {
        Self {
            paths,
            revealed: AtomicBool::new(false),
        }
    }
}

impl Hidden {
    /// The files and folders left out (workspace-relative).
    pub(super) fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Puts the hidden files back into the copy at `root`, as the
    /// `original` has them, until the guard is dropped. Dropping it removes
    /// them again, whatever became of them, so nothing of them reaches the
    /// diff. `parents`: the walks honour the ignore files above.
    pub(super) fn reveal<'a>(
        &'a self,
        original: &Path,
        root: &'a Path,
        parents: bool,
    ) -> std::io::Result<Revealed<'a>> {
        let guard = Revealed { hidden: self, root };
        if self.paths.is_empty() || self.revealed.swap(true, Ordering::SeqCst) {
            return Ok(guard);
        }
        for rel in &self.paths {
            copy_hidden(&original.join(rel), &root.join(rel), parents)?;
        }
        Ok(guard)
    }

    fn hide_again(&self, root: &Path) {
        if !self.revealed.swap(false, Ordering::SeqCst) {
            return;
        }
        for rel in &self.paths {
            let path = root.join(rel);
            let gone = match path.symlink_metadata() {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
                Ok(_) => std::fs::remove_file(&path),
                Err(_) => Ok(()),
            };
            if let Err(e) = gone {
                tracing::warn!(
                    "could not remove {} from the copy again: {e}",
                    path.display()
                );
            }
        }
    }
}

/// The guard of a reveal: the hidden files are in the copy while it lives.
pub struct Revealed<'a> {
    hidden: &'a Hidden,
    root: &'a Path,
}

impl Drop for Revealed<'_> {
    fn drop(&mut self) {
        self.hidden.hide_again(self.root);
    }
}

/// Copies a hidden file, or a hidden folder as the copy would have held it
/// (ignored files left out).
fn copy_hidden(src: &Path, dest: &Path, parents: bool) -> std::io::Result<()> {
    if !src.symlink_metadata()?.is_dir() {
        copy_entry(src, dest)?;
        return Ok(());
    }
    let mut walk = walker(src, &[], parents);
    walk.threads(1);
    for entry in walk.build() {
        let entry = entry.map_err(std::io::Error::other)?;
        if let Ok(rel) = entry.path().strip_prefix(src) {
            copy_entry(entry.path(), &dest.join(rel))?;
        }
    }
    Ok(())
}
