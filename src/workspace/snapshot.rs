//! A cheap record of a tree's files (size, mtime, mode, link target), taken
//! right after a workspace copy is made. After the run only the files whose
//! record changed are read again, so the diff of a large repository where the
//! agent touched three files reads three files.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One file's record.
#[derive(Debug, Clone, Eq)]
pub struct SnapshotEntry {
    pub size: u64,
    pub mtime_ns: i128,
    pub mode: u32,
    pub symlink: Option<PathBuf>,
    /// The original's size and mtime when it was copied: whether the
    /// original changed while the task ran. Not part of equality, which
    /// compares the copy with itself.
    pub source: Option<(u64, i128)>,
}

impl PartialEq for SnapshotEntry {
    fn eq(&self, o: &Self) -> bool {
        (self.size, self.mtime_ns, self.mode, &self.symlink)
            == (o.size, o.mtime_ns, o.mode, &o.symlink)
    }
}

/// A file's size and mtime in nanoseconds.
pub fn size_and_mtime(meta: &std::fs::Metadata) -> (u64, i128) {
    (meta.len(), crate::sys::mtime_ns(meta))
}

impl SnapshotEntry {
    pub fn from_metadata(meta: &std::fs::Metadata, symlink: Option<PathBuf>) -> Self {
        let (size, mtime_ns) = size_and_mtime(meta);
        Self {
            size,
            mtime_ns,
            mode: crate::sys::mode(meta),
            symlink,
            source: None,
        }
    }
}

/// Files by workspace-relative path.
pub type Snapshot = BTreeMap<String, SnapshotEntry>;
