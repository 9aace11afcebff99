//! The changes of an overlay view: what its upper layer holds, against
//! the original beneath. O(changes): the upper layer holds only what the
//! task wrote or removed, and the walk that applies the ignore files
//! enters only the folders on the way to a written file.

use std::collections::{BTreeSet, HashSet};
use std::io::ErrorKind;
use std::path::Path;
use std::time::SystemTime;

use super::super::diff::{ChangeKind, FileChange, FileContent};
use super::changes::Differ;
use super::layered::LayerState;
use super::tree::walker_within;
use crate::workspace::overlay::scan_upper;

impl Differ {
    /// The changes of a view whose writes land in `layers`.
    pub(super) fn layered_changes(&self, layers: &LayerState) -> std::io::Result<Vec<FileChange>> {
        let scan = scan_upper(&layers.upper)?;
        let planted = self.planted.lock().unwrap_or_else(|e| e.into_inner());
        let written: BTreeSet<String> = (scan.files.into_iter())
            .filter(|r| !planted.contains(r))
            .collect();
        // As a copy's walk: a file an ignore rule matches is no change
        // (a build's output), but for tracked ones.
        let mut shown = shown_by_walk(&self.root, &written, self.parents);
        shown.extend(
            (self.tracked_ignored.iter())
                .filter(|r| written.contains(*r))
                .cloned(),
        );
        let mut changes = Vec::new();
        for rel in &shown {
            let old = lower_content(&self.original, rel, layers)?;
            let new = FileContent::read(&self.root.join(rel))?;
            if old.as_ref() == Some(&new) {
                continue;
            }
            changes.push(FileChange {
                path: rel.clone(),
                kind: match old {
                    Some(_) => ChangeKind::Modified,
                    None => ChangeKind::Added,
                },
                base_moved: old.is_some() && moved_since(&self.original.join(rel), layers.started),
                old,
                new: Some(new),
            });
        }
        // What went from below: whatever a whiteout or an opaque folder
        // hides, a folder below that a file replaced, a file below that
        // a folder replaced.
        let is_dir_below =
            |rel: &str| (self.original.join(rel).symlink_metadata()).is_ok_and(|m| m.is_dir());
        let replaced = (written.iter()).filter(|r| is_dir_below(r)).chain(
            scan.dirs
                .iter()
                .filter(|r| (self.original.join(r).symlink_metadata()).is_ok_and(|m| !m.is_dir())),
        );
        let mut gone = BTreeSet::new();
        for top in scan.removed.iter().chain(&scan.opaque).chain(replaced) {
            if !layers.hidden_from_start(top) {
                lower_files(&self.original, top, layers, &mut gone)?;
            }
        }
        for rel in gone {
            if planted.contains(&rel) || shown.contains(&rel) {
                continue;
            }
            // Written again (and ignored now): not gone.
            if (self.root.join(&rel).symlink_metadata()).is_ok_and(|m| !m.is_dir()) {
                continue;
            }
            let path = self.original.join(&rel);
            changes.push(FileChange {
                kind: ChangeKind::Deleted,
                old: Some(FileContent::read(&path)?),
                new: None,
                base_moved: moved_since(&path, layers.started),
                path: rel,
            });
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }
}

/// The written files that a walk of the view honouring the ignore files
/// would list; it enters only the folders above one.
fn shown_by_walk(root: &Path, written: &BTreeSet<String>, parents: bool) -> BTreeSet<String> {
    let mut dirs = HashSet::new();
    for rel in written {
        let mut at = rel.as_str();
        while let Some(i) = at.rfind('/') {
            at = &at[..i];
            if !dirs.insert(at.to_string()) {
                break;
            }
        }
    }
    let mut shown = BTreeSet::new();
    for entry in walker_within(root, parents, dirs).build().flatten() {
        if let Ok(rel) = entry.path().strip_prefix(root) {
            let rel = rel.to_string_lossy();
            if written.contains(rel.as_ref()) {
                shown.insert(rel.into_owned());
            }
        }
    }
    shown
}

/// The original's file or link at `rel` as the view showed it at the
/// start; `None` where it showed none.
fn lower_content(
    original: &Path,
    rel: &str,
    layers: &LayerState,
) -> std::io::Result<Option<FileContent>> {
    if layers.hidden_from_start(rel) {
        return Ok(None);
    }
    match original.join(rel).symlink_metadata() {
        Ok(m) if m.is_file() || m.file_type().is_symlink() => {
            FileContent::read(&original.join(rel)).map(Some)
        }
        Ok(_) => Ok(None),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The original's files and links at or beneath `top` that the view
/// showed at the start.
fn lower_files(
    original: &Path,
    top: &str,
    layers: &LayerState,
    out: &mut BTreeSet<String>,
) -> std::io::Result<()> {
    let mut stack = vec![top.to_string()];
    while let Some(rel) = stack.pop() {
        let meta = match original.join(&rel).symlink_metadata() {
            Ok(m) => m,
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
                continue;
            }
            Err(e) => return Err(e),
        };
        if meta.is_file() || meta.file_type().is_symlink() {
            out.insert(rel);
        } else if meta.is_dir() {
            for entry in std::fs::read_dir(original.join(&rel))? {
                let name = entry?.file_name();
                let child = format!("{rel}/{}", name.to_string_lossy());
                if name != ".git" && !layers.hidden_from_start(&child) {
                    stack.push(child);
                }
            }
        }
    }
    Ok(())
}

/// Whether the original's `path` changed after `since` (its change time:
/// `touch` cannot set it back).
fn moved_since(path: &Path, since: SystemTime) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = path.symlink_metadata() else {
            return true;
        };
        let Ok(start) = since.duration_since(SystemTime::UNIX_EPOCH) else {
            return false;
        };
        let ctime = m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128;
        ctime >= start.as_nanos() as i128
    }
    #[cfg(not(unix))]
    {
        let _ = (path, since);
        false
    }
}
