//! The temporary folders a run makes (workspace copies, task temp folders),
//! known so that a second SIGINT/SIGTERM, which exits at once, still removes
//! them: a cancelled CI job must not leave copies of the repository behind.
//! A folder is registered while it lives and removed from the list when its
//! owner drops it (and deletes it) in the normal way.
//!
//! A run killed with SIGKILL (an OOM kill, a CI job past its grace period)
//! removes nothing, so each folder also has an owner file beside it
//! (`runner-ws-XXXX.owner`) that the run holds a lock on (`flock`) while
//! the folder lives. The kernel drops the lock when the process ends,
//! however it ends. A later run ([`Sweeper`]) removes each folder whose
//! owner file it can lock: its run is gone. A live run, on this machine
//! or in another container sharing the folder, holds its lock, and its
//! folders are never touched. Only `runner-*` folders with an owner file,
//! owned by the same user, are looked at: nothing else in the temp folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// Paths a hurried exit must clean up, registered while they live: the
/// temporary folders here, the tasks' cgroups in `contain`'s Linux `pids`.
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

/// The overlay workspaces mounted now: a hurried exit takes them away
/// before removing their folders (removing through a mounted view would
/// walk the whole original).
static MOUNTS: LiveSet = LiveSet::new();

/// A mount registered for a hurried exit; dropping it forgets it (its
/// owner has taken it away).
#[derive(Debug)]
pub struct RegisteredMount(PathBuf);

/// Whether `path` is at or beneath a mount registered now (a view this
/// run made).
pub fn within_mount(path: &Path) -> bool {
    MOUNTS.paths().iter().any(|m| path.starts_with(m))
}

/// Registers the mount at `target` for a hurried exit.
pub fn register_mount(target: &Path) -> RegisteredMount {
    MOUNTS.insert(target);
    RegisteredMount(target.to_path_buf())
}

impl Drop for RegisteredMount {
    fn drop(&mut self) {
        MOUNTS.remove(&self.0);
    }
}

/// A registered folder; dropping it takes the folder off the list (its
/// owner removes the folder itself) and removes its owner file.
#[derive(Debug)]
pub struct Registered {
    dir: PathBuf,
    /// The owner file, locked while this lives; none where it could not
    /// be made (the folder is then left alone by later runs).
    owner: Option<std::fs::File>,
}

/// What an owner file's name adds to its folder's.
const OWNER: &str = ".owner";

/// The owner file of `dir`.
fn owner_file(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_os_string();
    name.push(OWNER);
    PathBuf::from(name)
}

/// Registers `dir` for removal on a hurried exit, and claims it for this
/// process (its owner file, locked).
pub fn register(dir: &Path) -> Registered {
    LIVE.insert(dir);
    Registered {
        dir: dir.to_path_buf(),
        owner: claim(dir),
    }
}

/// Makes `dir`'s owner file and locks it; it names this process, for a
/// person looking.
fn claim(dir: &Path) -> Option<std::fs::File> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(owner_file(dir))
        .ok()?;
    if !lock(&file) {
        return None;
    }
    let _ = writeln!(file, "runner pid {}", std::process::id());
    Some(file)
}

/// Takes `file`'s exclusive lock without waiting; whether it got it.
fn lock(file: &std::fs::File) -> bool {
    crate::sys::try_lock(file)
}

impl Drop for Registered {
    fn drop(&mut self) {
        LIVE.remove(&self.dir);
        if self.owner.take().is_some() {
            let _ = std::fs::remove_file(owner_file(&self.dir));
        }
    }
}

/// Removes, in the background, what runs that are gone left in `root`
/// (the temp folder); [`Sweeper::finish`] waits for it.
pub struct Sweeper(std::thread::JoinHandle<Swept>);

/// What a sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Swept {
    /// The folders removed (their runs are gone).
    pub removed: Vec<PathBuf>,
    /// Folders of runs still going, left alone.
    pub live: usize,
}

/// How old an owner file must be to be judged: a run creates it and locks
/// it a moment later, and must not lose the folder in between.
const SETTLED: Duration = Duration::from_secs(10);

/// How old a partial write (`.runner-tmp-*`) must be to be removed: an
/// atomic write's temporary file lives for the moment of one write.
const PARTIAL: Duration = Duration::from_secs(60);

impl Sweeper {
    /// Sweeps `root` (the temp folder), and the partial writes a killed
    /// run left in the output folder `out`.
    pub fn start(root: PathBuf, out: PathBuf) -> Self {
        Self(std::thread::spawn(move || {
            let mut swept = sweep(&root, SETTLED);
            swept.removed.extend(sweep_partial_writes(&out, PARTIAL));
            swept
        }))
    }

    /// Waits at most `limit` for the sweep; what it did, if it finished.
    /// (Unfinished, it goes on with the next run: the owner file is
    /// removed last.)
    pub fn finish(self, limit: Duration) -> Option<Swept> {
        let deadline = std::time::Instant::now() + limit;
        while !self.0.is_finished() {
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.0.join().ok()
    }
}

/// Removes the folders in `root` whose owner file, older than `settled`,
/// no process holds a lock on. Never follows a link, never touches
/// another user's files.
pub fn sweep(root: &Path, settled: Duration) -> Swept {
    let mut swept = Swept::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return swept;
    };
    let me = crate::sys::euid();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(dir_name) = name
            .to_str()
            .filter(|n| n.starts_with("runner-"))
            .and_then(|n| n.strip_suffix(OWNER))
        else {
            continue;
        };
        let owner = e.path();
        if !old_file_of(&owner, me, settled) {
            continue;
        }
        let Ok(file) = std::fs::OpenOptions::new().write(true).open(&owner) else {
            continue;
        };
        if !lock(&file) {
            swept.live += 1;
            continue;
        }
        let dir = root.join(dir_name);
        let is_ours = std::fs::symlink_metadata(&dir)
            .map(|m| m.is_dir() && crate::sys::owner(&m) == me)
            .unwrap_or(false);
        if is_ours {
            if std::fs::remove_dir_all(&dir).is_err() {
                continue;
            }
            swept.removed.push(dir);
        }
        let _ = std::fs::remove_file(&owner);
    }
    swept
}

/// Whether `path` is a regular file (not a link) of user `me`, unchanged
/// for `older` at least: the only files a sweep may judge.
fn old_file_of(path: &Path, me: u32, older: Duration) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| {
        meta.is_file()
            && crate::sys::owner(&meta) == me
            && meta
                .modified()
                .ok()
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age >= older)
    })
}

/// Removes the temporary files of atomic writes (`.runner-tmp-*`, see
/// [`crate::workspace::atomic_write`]) older than `older`, in `out` and in
/// its folders one level down (the tasks'): a run killed in the middle of
/// writing a transcript or a report leaves one. Regular files of this user
/// only; nothing else is touched.
fn sweep_partial_writes(out: &Path, older: Duration) -> Vec<PathBuf> {
    let me = crate::sys::euid();
    let mut removed = Vec::new();
    let mut dirs = vec![out.to_path_buf()];
    if let Ok(entries) = std::fs::read_dir(out) {
        dirs.extend(
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if !e.file_name().to_string_lossy().starts_with(".runner-tmp-") {
                continue;
            }
            if old_file_of(&e.path(), me, older) && std::fs::remove_file(e.path()).is_ok() {
                removed.push(e.path());
            }
        }
    }
    removed
}

/// Removes every registered folder, waiting at most `limit`; returns
/// whether all were removed in time.
pub fn remove_all(limit: Duration) -> bool {
    let dirs = LIVE.paths();
    let mounts = MOUNTS.paths();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for m in mounts {
            let _ = crate::sys::unmount_detached(&m);
        }
        for d in dirs {
            let _ = std::fs::remove_dir_all(&d);
            let _ = std::fs::remove_file(owner_file(&d));
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
        assert!(owner_file(&a).exists() && owner_file(&b).exists());
        drop(rb);
        // A dropped registration's owner file goes with it.
        assert!(!owner_file(&b).exists());
        assert!(remove_all(Duration::from_secs(1)));
        assert!(!a.exists() && !owner_file(&a).exists());
        assert!(b.exists());
        std::fs::remove_dir_all(&b).unwrap();
    }

    #[test]
    fn a_sweep_takes_only_unlocked_settled_runner_folders_and_follows_no_link() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), "x").unwrap();
        let dead = r.join("runner-ws-dead");
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("f"), "x").unwrap();
        std::fs::write(owner_file(&dead), "").unwrap();
        // Held by a live owner (this process, through its own open file).
        let live = r.join("runner-tmp-live");
        std::fs::create_dir(&live).unwrap();
        // (Claimed, not registered: another test's `remove_all` removes
        // every registered folder.)
        let held = claim(&live).unwrap();
        // A link named like a folder of ours, with an owner file.
        let link = r.join("runner-ws-link");
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        std::fs::write(owner_file(&link), "").unwrap();
        // No owner file; and an owner file of something not ours.
        std::fs::create_dir(r.join("runner-ws-bare")).unwrap();
        std::fs::create_dir(r.join("other")).unwrap();
        std::fs::write(r.join("other.owner"), "").unwrap();

        // Too fresh to judge: nothing moves.
        let swept = sweep(r, Duration::from_secs(3600));
        assert_eq!(swept, Swept::default());
        assert!(dead.exists());

        let swept = sweep(r, Duration::ZERO);
        assert_eq!(swept.removed, vec![dead.clone()]);
        assert_eq!(swept.live, 1);
        assert!(!dead.exists() && !owner_file(&dead).exists());
        assert!(live.exists() && owner_file(&live).exists());
        // The link's owner file goes; the link and what it names stay.
        assert!(!owner_file(&link).exists());
        assert!(link.exists() && outside.path().join("keep").exists());
        assert!(r.join("runner-ws-bare").exists());
        assert!(r.join("other").exists() && r.join("other.owner").exists());
        // Once its owner lets go, the next sweep takes it. (A command
        // another test forks at that moment shares the lock until it
        // execs: the sweep may see it held a little longer.)
        drop(held);
        let mut removed = Vec::new();
        for _ in 0..100 {
            removed = sweep(r, Duration::ZERO).removed;
            if !removed.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(removed, vec![live.clone()]);
        assert!(!live.exists() && !owner_file(&live).exists());
    }
}
