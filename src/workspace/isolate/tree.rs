//! The copy itself: the walk every tree scan uses (ignore files honoured,
//! `.git` skipped), the snapshot of a tree, and copying its entries.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use crate::workspace::snapshot::{Snapshot, SnapshotEntry};

/// Builds the walker every tree scan uses: hidden files included, `.gitignore`
/// honoured with or without a `.git` folder, `.git` itself skipped; with
/// `parents`, the ignore files of the folders above `root` too (up to the
/// repository's top: git's rules stop there).
pub(super) fn walker(root: &Path, excludes: &[PathBuf], parents: bool) -> WalkBuilder {
    let mut b = configured(root, parents);
    let excludes: Vec<PathBuf> = excludes.to_vec();
    b.filter_entry(move |e| {
        if e.file_name() == ".git" {
            return false;
        }
        !excludes.iter().any(|x| e.path() == x)
    });
    b
}

/// [`walker`] entering only the folders `dirs` names (relative to
/// `root`), on one thread: what an overlay view's diff walks.
pub(super) fn walker_within(
    root: &Path,
    parents: bool,
    dirs: std::collections::HashSet<String>,
) -> WalkBuilder {
    let mut b = configured(root, parents);
    let root = root.to_path_buf();
    b.threads(1).filter_entry(move |e| {
        if e.file_name() == ".git" {
            return false;
        }
        if !e.file_type().is_some_and(|t| t.is_dir()) {
            return true;
        }
        e.path()
            .strip_prefix(&root)
            .is_ok_and(|rel| rel.as_os_str().is_empty() || dirs.contains(&*rel.to_string_lossy()))
    });
    b
}

fn configured(root: &Path, parents: bool) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(false)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .ignore(true)
        .parents(parents)
        .require_git(false)
        .follow_links(false)
        .threads(
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .min(8),
        );
    b
}

/// A file's or link's record; `None` for a folder or a path that is gone.
pub(super) fn entry_of(path: &Path) -> Option<SnapshotEntry> {
    let meta = path.symlink_metadata().ok()?;
    // Only files and links are part of a change: a socket a command left
    // (a server's), a fifo or a device cannot be read or diffed, and the
    // copy never holds them (see `copy_entry`).
    if !meta.is_file() && !meta.file_type().is_symlink() {
        return None;
    }
    let link = if meta.file_type().is_symlink() {
        std::fs::read_link(path).ok()
    } else {
        None
    };
    Some(SnapshotEntry::from_metadata(&meta, link))
}

/// Lists the files of a tree as the runner sees them (see [`walker`]).
/// On `threads` threads (`None`: as many as the machine has, up to 8).
pub(super) fn walk_tree_on(
    root: &Path,
    excludes: &[PathBuf],
    parents: bool,
    threads: Option<usize>,
) -> std::io::Result<Snapshot> {
    let out = Mutex::new(BTreeMap::new());
    let root_owned = root.to_path_buf();
    let mut walk = walker(root, excludes, parents);
    if let Some(n) = threads {
        walk.threads(n);
    }
    walk.build_parallel().run(|| {
        let out = &out;
        let root = root_owned.clone();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(ft) = entry.file_type() else {
                return WalkState::Continue;
            };
            if ft.is_dir() {
                return WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                return WalkState::Continue;
            };
            let Some(record) = entry_of(entry.path()) else {
                return WalkState::Continue;
            };
            let rel = rel.to_string_lossy().into_owned();
            out.lock().unwrap().insert(rel, record);
            WalkState::Continue
        })
    });
    Ok(out.into_inner().unwrap())
}

/// Copies the tracked files an ignore rule matches (`paths`, relative to
/// `original`) that the walk left out, except those in `excludes`; returns
/// the ones copied, which the snapshot now holds.
pub(super) fn copy_tracked_ignored(
    paths: &[PathBuf],
    original: &Path,
    dest_root: &Path,
    excludes: &[PathBuf],
    snapshot: &mut Snapshot,
) -> std::io::Result<Vec<String>> {
    let mut copied = Vec::new();
    for rel in paths {
        let key = rel.to_string_lossy().into_owned();
        let src = original.join(rel);
        if snapshot.contains_key(&key)
            || rel.components().any(|c| c.as_os_str() == ".git")
            || excludes.iter().any(|x| src.starts_with(x))
        {
            continue;
        }
        match copy_entry(&src, &dest_root.join(rel)) {
            Ok(Some(record)) => {
                snapshot.insert(key.clone(), record);
                copied.push(key);
            }
            Ok(None) => {}
            // Tracked but deleted in the checkout, or its folder there
            // now a file: nothing to copy.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("copying {}: {e}", src.display()),
                ));
            }
        }
    }
    Ok(copied)
}

/// Copies one walked entry; returns its snapshot record for files and links.
pub(super) fn copy_entry(src: &Path, dest: &Path) -> std::io::Result<Option<SnapshotEntry>> {
    let meta = src.symlink_metadata()?;
    let ft = meta.file_type();
    if ft.is_dir() {
        std::fs::create_dir_all(dest)?;
        std::fs::set_permissions(dest, meta.permissions())?;
        return Ok(None);
    }
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let source = Some(crate::workspace::snapshot::size_and_mtime(&meta));
    if ft.is_symlink() {
        let target = std::fs::read_link(src)?;
        crate::sys::symlink(&target, dest)?;
        let m = dest.symlink_metadata()?;
        return Ok(Some(SnapshotEntry {
            source,
            ..SnapshotEntry::from_metadata(&m, Some(target))
        }));
    }
    if !ft.is_file() {
        // Sockets, fifos and devices are not copied.
        return Ok(None);
    }
    std::fs::copy(src, dest)?;
    let m = dest.symlink_metadata()?;
    Ok(Some(SnapshotEntry {
        source,
        ..SnapshotEntry::from_metadata(&m, None)
    }))
}

/// What a copy made.
pub(super) struct Copied {
    pub snapshot: Snapshot,
    /// What the policy denies reading, left out.
    pub hidden: Vec<String>,
    /// Folders holding a `.git` of their own.
    pub nested: Vec<PathBuf>,
}

/// Copies `original` into `dest_root` on the walk's threads, leaving out
/// what `hide` names.
pub(super) fn copy_into(
    original: &Path,
    dest_root: &Path,
    excludes: &[PathBuf],
    parents: bool,
    hide: &(dyn Fn(&str) -> bool + Sync),
) -> std::io::Result<Copied> {
    let snapshot = Mutex::new(BTreeMap::new());
    let nested = Mutex::new(Vec::new());
    let hidden = Mutex::new(Vec::new());
    let first_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    walker(original, excludes, parents)
        .build_parallel()
        .run(|| {
            let (snapshot, nested, hidden) = (&snapshot, &nested, &hidden);
            let first_error = &first_error;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let Ok(rel) = entry.path().strip_prefix(original) else {
                    return WalkState::Continue;
                };
                if rel.as_os_str().is_empty() {
                    return WalkState::Continue;
                }
                let key = rel.to_string_lossy();
                if hide(&key) {
                    hidden.lock().unwrap().push(key.into_owned());
                    return WalkState::Skip;
                }
                // The walk skips `.git`; a folder holding one is a
                // repository of its own.
                if entry.file_type().is_some_and(|t| t.is_dir())
                    && entry.path().join(".git").symlink_metadata().is_ok()
                {
                    nested.lock().unwrap().push(rel.to_path_buf());
                }
                match copy_entry(entry.path(), &dest_root.join(rel)) {
                    Ok(Some(rec)) => {
                        snapshot
                            .lock()
                            .unwrap()
                            .insert(rel.to_string_lossy().into_owned(), rec);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        let mut slot = first_error.lock().unwrap();
                        slot.get_or_insert(std::io::Error::new(
                            e.kind(),
                            format!("copying {}: {e}", entry.path().display()),
                        ));
                        return WalkState::Quit;
                    }
                }
                WalkState::Continue
            })
        });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    Ok(Copied {
        snapshot: snapshot.into_inner().unwrap(),
        hidden: hidden.into_inner().unwrap(),
        nested: nested.into_inner().unwrap(),
    })
}
