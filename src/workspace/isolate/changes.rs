//! The changes of a copy against its original: what the task leaves,
//! read at its end and (by its journal) at each turn's end, on a thread of
//! its own while the model thinks: so apart from the copy's life, behind
//! an `Arc`.

use std::path::PathBuf;

use super::super::diff::{ChangeKind, FileChange, FileContent};
use super::super::snapshot::{Snapshot, SnapshotEntry, size_and_mtime};
use super::tree::{entry_of, walk_tree_on};

/// What the changes are read from.
#[derive(Debug)]
pub struct Differ {
    pub(super) original: PathBuf,
    /// The copy of the workspace: the copy's folder, or the workspace's
    /// folder below it when it mirrors a repository.
    pub(super) root: PathBuf,
    /// The files as they were right after the copy.
    pub(super) snapshot: Snapshot,
    /// Whether the walks honour parent folders' ignore files (the workspace
    /// lies in a repository).
    pub(super) parents: bool,
    /// Tracked files that an ignore rule matches: in the copy and the
    /// snapshot, though a walk leaves them out.
    pub(super) tracked_ignored: Vec<String>,
    /// Files the runner planted in the copy (a decoy credentials file):
    /// never a change, whatever becomes of them.
    pub(super) planted: std::sync::Mutex<Vec<String>>,
    /// For a view (an overlay): its upper layer, where the changes are.
    pub(super) layers: Option<super::layered::LayerState>,
}

impl Differ {
    /// Compares the copy with the original and returns every changed file,
    /// sorted by path. Only files whose size, mtime or mode changed are read.
    pub fn changes(&self) -> std::io::Result<Vec<FileChange>> {
        self.changes_on(None)
    }

    /// [`Differ::changes`] on one thread: what a task's journal reads
    /// while the model is asked the next turn, leaving the other
    /// processors to the run.
    pub fn changes_aside(&self) -> std::io::Result<Vec<FileChange>> {
        self.changes_on(Some(1))
    }

    fn changes_on(&self, threads: Option<usize>) -> std::io::Result<Vec<FileChange>> {
        if let Some(layers) = &self.layers {
            return self.layered_changes(layers);
        }
        let mut now = walk_tree_on(&self.root, &[], self.parents, threads)?;
        for rel in &self.tracked_ignored {
            if let Some(record) = entry_of(&self.root.join(rel)) {
                now.insert(rel.clone(), record);
            }
        }
        let mut changes = Vec::new();
        // The original read now is the task's base only if it did not
        // change while the task ran (by hand, say).
        let moved = |rel: &str, before: &SnapshotEntry| {
            before.source.is_some_and(|s| {
                self.original
                    .join(rel)
                    .symlink_metadata()
                    .map_or(true, |m| size_and_mtime(&m) != s)
            })
        };
        for (rel, before) in &self.snapshot {
            match now.get(rel) {
                None => changes.push(FileChange {
                    path: rel.clone(),
                    kind: ChangeKind::Deleted,
                    old: Some(FileContent::read(&self.original.join(rel))?),
                    new: None,
                    base_moved: moved(rel, before),
                }),
                Some(after) if after != before => {
                    let old = FileContent::read(&self.original.join(rel))?;
                    let new = FileContent::read(&self.root.join(rel))?;
                    if old != new {
                        changes.push(FileChange {
                            path: rel.clone(),
                            kind: ChangeKind::Modified,
                            old: Some(old),
                            new: Some(new),
                            base_moved: moved(rel, before),
                        });
                    }
                }
                Some(_) => {}
            }
        }
        let planted = self.planted.lock().unwrap_or_else(|e| e.into_inner());
        for rel in now.keys().filter(|r| !planted.contains(r)) {
            if !self.snapshot.contains_key(rel) {
                changes.push(FileChange {
                    path: rel.clone(),
                    kind: ChangeKind::Added,
                    old: None,
                    new: Some(FileContent::read(&self.root.join(rel))?),
                    base_moved: false,
                });
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }
}
