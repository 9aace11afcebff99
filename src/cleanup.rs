//! The temporary folders a run makes (workspace copies, task temp folders),
//! known so that a second SIGINT/SIGTERM, which exits at once, still removes
//! them: a cancelled CI job must not leave copies of the repository behind.
//! A folder is registered while it lives and removed from the list when its
//! owner drops it (and deletes it) in the normal way.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Paths a hurried exit must clean up, registered while they live: the
/// temporary folders here, the tasks' cgroups in `contain::pids`.
pub struct LiveSet(Mutex<BTreeSet<PathBuf>>);

impl LiveSet {
    pub const fn new() -> Self {
        Self(Mutex::new(BTreeSet::new()))
    }

    fn set(&self) -> std::sync::MutexGuard<'_, BTreeSet<PathBuf>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn insert(&self, path: &Path) {
        self.set().insert(path.to_path_buf());
    }

    pub fn remove(&self, path: &Path) {
        self.set().remove(path);
    }

    /// The paths registered now.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.set().iter().cloned().collect()
    }
}

static LIVE: LiveSet = LiveSet::new();

/// A registered folder; dropping it takes the folder off the list (its
/// owner removes the folder itself).
#[derive(Debug)]
pub struct Registered(PathBuf);

/// Registers `dir` for removal on a hurried exit.
pub fn register(dir: &Path) -> Registered {
    LIVE.insert(dir);
    Registered(dir.to_path_buf())
}

impl Drop for Registered {
    fn drop(&mut self) {
        LIVE.remove(&self.0);
    }
}

/// Removes every registered folder, waiting at most `limit`; returns
/// whether all were removed in time.
pub fn remove_all(limit: Duration) -> bool {
    let dirs = LIVE.paths();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for d in dirs {
            let _ = std::fs::remove_dir_all(&d);
        }
        let _ = tx.send(());
    });
    rx.recv_timeout(limit).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_folders_are_removed_and_dropped_ones_forgotten() {
        let a = tempfile::tempdir().unwrap().keep();
        let b = tempfile::tempdir().unwrap().keep();
        let _ra = register(&a);
        let rb = register(&b);
        drop(rb);
        assert!(remove_all(Duration::from_secs(1)));
        assert!(!a.exists());
        assert!(b.exists());
        std::fs::remove_dir_all(&b).unwrap();
    }
}
