//! A cheap record of a tree's files (size, mtime, mode, link target), taken
//! right after a workspace copy is made. After the run only the files whose
//! record changed are read again, so the diff of a large repository where the
//! agent touched three files reads three files.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// One file's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotEntry {
    pub size: u64,
    pub mtime_ns: i128,
    pub mode: u32,
    pub symlink: Option<PathBuf>,
}

impl SnapshotEntry {
    pub fn from_metadata(meta: &std::fs::Metadata, symlink: Option<PathBuf>) -> Self {
        Self {
            size: meta.len(),
            mtime_ns: meta.mtime() as i128 * 1_000_000_000 + meta.mtime_nsec() as i128,
            mode: meta.mode(),
            symlink,
        }
    }
}

/// Files by workspace-relative path.
pub type Snapshot = BTreeMap<String, SnapshotEntry>;
