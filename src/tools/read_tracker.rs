//! Read-before-write tracking: overwriting or editing a file needs a read
//! of it in the same task, and no change to it since.
//!
//! Overwriting or editing an existing file is allowed only after the task has
//! read it and while the file is still as it was read. This stops a model from
//! clobbering a file it never looked at, or one that a command changed since.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What we remember of a file when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    size: u64,
    mtime_ns: i128,
    ino: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    Some(stamp_of(&std::fs::metadata(path).ok()?))
}

fn stamp_of(m: &std::fs::Metadata) -> Stamp {
    Stamp {
        size: m.len(),
        mtime_ns: crate::sys::mtime_ns(m),
        ino: crate::sys::inode(m),
    }
}

/// Files read by a task, keyed by their real path.
#[derive(Debug, Default)]
pub struct ReadTracker {
    seen: Mutex<HashMap<PathBuf, Stamp>>,
}

impl ReadTracker {
    /// Records that `path` was read (or written) as it is now.
    pub fn record(&self, path: &Path) {
        if let Some(s) = stamp(path) {
            self.seen.lock().unwrap().insert(path.to_path_buf(), s);
        }
    }

    /// [`ReadTracker::record`] with metadata taken before the read (a
    /// change during the read then shows as a change since).
    pub fn record_with(&self, path: &Path, meta: &std::fs::Metadata) {
        self.seen
            .lock()
            .unwrap()
            .insert(path.to_path_buf(), stamp_of(meta));
    }

    /// Checks that an existing file may be overwritten; `shown` is how the
    /// path is named in the error.
    pub fn check_fresh(&self, path: &Path, shown: &str) -> Result<(), NotFresh> {
        let Some(now) = stamp(path) else {
            return Ok(());
        };
        match self.seen.lock().unwrap().get(path) {
            None => Err(NotFresh::NeverRead(shown.to_string())),
            Some(then) if *then != now => Err(NotFresh::Changed(shown.to_string())),
            Some(_) => Ok(()),
        }
    }
}

/// Why an existing file may not be overwritten yet (the path as shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFresh {
    #[error("{0} exists and has not been read in this task; read it with read_file first")]
    NeverRead(String),
    #[error(
        "{0} has changed since it was last read; read it again with read_file before changing it"
    )]
    Changed(String),
}
