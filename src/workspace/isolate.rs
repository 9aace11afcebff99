//! Workspace isolation: each task works on its own copy of the user's tree.
//!
//! The copy holds the tracked and untracked files that `.gitignore` does not
//! exclude (the same walk ripgrep does), so build folders such as `target/` or
//! `node_modules/` are left out, and `.git` is never copied. Files are copied
//! with `std::fs::copy`, which on Linux uses `copy_file_range` and so shares
//! extents on file systems that can (btrfs, xfs). Hard links would be faster
//! but are unsafe: `echo >> file` in the copy would change the original.
//! The walk and the copy run in parallel on ignore's walker.
//!
//! When the workspace lies in a git repository, the copy mirrors the
//! repository's layout and gets a `.git` of its own that shows what the
//! original shows (see [`super::git_view`]). Then the walks also honour the
//! ignore files of the folders above the workspace up to the repository's
//! top (copied to the same places in the copy, so both sides ignore the
//! same files), and the tracked files an ignore rule matches are copied
//! and compared by name. A folder of the workspace that is a repository of
//! its own (a submodule, a nested clone) gets a view of its own too, so git
//! inside it answers for it, not for the repository around it.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};

use super::diff::{ChangeKind, FileChange, FileContent};
use super::git_view::{
    RepoInfo, TrackedIgnored, at_or_beneath, create_view, find_repo, mirror_parent_ignores,
};
use super::snapshot::{Snapshot, SnapshotEntry};

/// A task's private copy of a workspace; removed when dropped.
pub struct IsolatedWorkspace {
    original: PathBuf,
    dir: tempfile::TempDir,
    /// The copy of the workspace: `dir`, or the workspace's folder below it
    /// when it mirrors a repository.
    root: PathBuf,
    /// The repository the workspace lies in, when its git view was made.
    repo: Option<RepoInfo>,
    /// Removed on a hurried exit (a second signal) too.
    _registered: crate::cleanup::Registered,
    snapshot: Snapshot,
    /// Whether the walks honour parent folders' ignore files (the workspace
    /// lies in a repository).
    parents: bool,
    /// Tracked files that an ignore rule matches: in the copy and the
    /// snapshot, though a walk leaves them out.
    tracked_ignored: Vec<String>,
    /// Files and folders left out of the copy because the policy denies
    /// reading them (workspace-relative), and how many of them git tracks.
    hidden: Hidden,
    /// The object stores the copy's git views read (their alternates).
    object_stores: Vec<PathBuf>,
    /// What the copy's git configs left out because it holds a
    /// credential (`.git/config http.https://github.com/.extraheader: …`).
    credentials_removed: Vec<String>,
}

/// What the copy leaves out for the policy: absent while the agent works,
/// put back for the checks (see [`IsolatedWorkspace::reveal_hidden`]).
#[derive(Debug, Default)]
struct Hidden {
    paths: Vec<String>,
    /// Those git tracks (workspace-relative).
    tracked: Vec<String>,
    revealed: std::sync::atomic::AtomicBool,
}

/// Builds the walker every tree scan uses: hidden files included, `.gitignore`
/// honoured with or without a `.git` folder, `.git` itself skipped; with
/// `parents`, the ignore files of the folders above `root` too (up to the
/// repository's top: git's rules stop there).
fn walker(root: &Path, excludes: &[PathBuf], parents: bool) -> WalkBuilder {
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
    let excludes: Vec<PathBuf> = excludes.to_vec();
    b.filter_entry(move |e| {
        if e.file_name() == ".git" {
            return false;
        }
        !excludes.iter().any(|x| e.path() == x)
    });
    b
}

/// A file's or link's record; `None` for a folder or a path that is gone.
fn entry_of(path: &Path) -> Option<SnapshotEntry> {
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
fn walk_tree(root: &Path, excludes: &[PathBuf], parents: bool) -> std::io::Result<Snapshot> {
    let out = Mutex::new(BTreeMap::new());
    let root_owned = root.to_path_buf();
    walker(root, excludes, parents).build_parallel().run(|| {
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

impl IsolatedWorkspace {
    /// Copies `original` into a fresh temporary folder, leaving out ignored
    /// files, `.git` and the given absolute paths (such as the output folder).
    pub fn create(original: &Path, excludes: &[PathBuf]) -> std::io::Result<Self> {
        Self::create_hiding(original, excludes, &|_| false)
    }

    /// [`IsolatedWorkspace::create`], leaving out too the files and folders
    /// (workspace-relative, `/`-separated) for which `hide` is true: the
    /// ones the policy denies reading. git in the copy does not report
    /// them as deleted (skip-worktree).
    pub fn create_hiding(
        original: &Path,
        excludes: &[PathBuf],
        hide: &(dyn Fn(&str) -> bool + Sync),
    ) -> std::io::Result<Self> {
        let original = original.canonicalize()?;
        let dir = tempfile::Builder::new().prefix("runner-ws-").tempdir()?;
        let registered = crate::cleanup::register(dir.path());
        let repo = find_repo(&original);
        let dest_root = match &repo {
            Some(r) if !r.prefix.is_empty() => dir.path().join(&r.prefix),
            _ => dir.path().to_path_buf(),
        };
        std::fs::create_dir_all(&dest_root)?;
        let tracked = repo.as_ref().map(|_| TrackedIgnored::start(&original));
        if let Some(r) = &repo {
            mirror_parent_ignores(r, dir.path())?;
        }
        let parents = repo.is_some();
        let snapshot = Mutex::new(BTreeMap::new());
        let nested = Mutex::new(Vec::new());
        let hidden = Mutex::new(Vec::new());
        let first_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
        walker(&original, excludes, parents)
            .build_parallel()
            .run(|| {
                let snapshot = &snapshot;
                let nested = &nested;
                let hidden = &hidden;
                let first_error = &first_error;
                let src_root = original.clone();
                let dest_root = dest_root.clone();
                Box::new(move |entry| {
                    let Ok(entry) = entry else {
                        return WalkState::Continue;
                    };
                    let Ok(rel) = entry.path().strip_prefix(&src_root) else {
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
                            if slot.is_none() {
                                *slot = Some(std::io::Error::new(
                                    e.kind(),
                                    format!("copying {}: {e}", entry.path().display()),
                                ));
                            }
                            return WalkState::Quit;
                        }
                    }
                    WalkState::Continue
                })
            });
        if let Some(e) = first_error.into_inner().unwrap() {
            return Err(e);
        }
        let mut snapshot = snapshot.into_inner().unwrap();
        let mut hidden = hidden.into_inner().unwrap();
        let tracked_ignored = match tracked {
            Some(t) => {
                let mut listed = t.finish();
                listed.retain(|rel| {
                    let key = rel.to_string_lossy();
                    if at_or_beneath(&hidden, key.as_bytes()) {
                        return false;
                    }
                    if hide(&key) {
                        hidden.push(key.into_owned());
                        return false;
                    }
                    true
                });
                copy_tracked_ignored(&listed, &original, &dest_root, excludes, &mut snapshot)?
            }
            None => Vec::new(),
        };
        hidden.sort();
        let mut tracked_hidden = Vec::new();
        let mut credentials_removed = Vec::new();
        let mut object_stores = Vec::new();
        let repo = repo.filter(|r| match make_view(r, &original, dir.path(), &hidden) {
            Some(view) => {
                tracked_hidden = view.tracked_hidden;
                credentials_removed = (view.credentials_removed.iter())
                    .map(|c| format!(".git/config {c}"))
                    .collect();
                object_stores.push(r.objects());
                true
            }
            None => false,
        });
        // A folder of the workspace that is a repository of its own (a
        // submodule, a clone): without a view, git in the copy would take
        // it for a folder of the repository around it.
        for rel in nested.into_inner().unwrap() {
            let folder = original.join(&rel);
            if let Some(r) = find_repo(&folder).filter(|r| r.prefix.is_empty()) {
                let inner = format!("{}/", rel.to_string_lossy());
                let beneath: Vec<String> = hidden
                    .iter()
                    .filter_map(|h| h.strip_prefix(&inner).map(str::to_string))
                    .collect();
                if let Some(view) = make_view(&r, &folder, &dest_root.join(&rel), &beneath) {
                    tracked_hidden
                        .extend(view.tracked_hidden.iter().map(|t| format!("{inner}{t}")));
                    credentials_removed.extend(
                        view.credentials_removed
                            .iter()
                            .map(|c| format!("{inner}.git/config {c}")),
                    );
                    object_stores.push(r.objects());
                }
            }
        }
        Ok(Self {
            original,
            dir,
            root: dest_root,
            repo,
            _registered: registered,
            snapshot,
            parents,
            tracked_ignored,
            hidden: Hidden {
                paths: hidden,
                tracked: tracked_hidden,
                revealed: Default::default(),
            },
            object_stores,
            credentials_removed,
        })
    }

    /// What the copy's git configs left out because it holds a credential,
    /// by key, never by value.
    pub fn credentials_removed(&self) -> &[String] {
        &self.credentials_removed
    }

    /// The files and folders left out for the policy (workspace-relative).
    pub fn hidden(&self) -> &[String] {
        &self.hidden.paths
    }

    /// The hidden files git tracks: those can still be read from the
    /// object store through the copy's git view.
    pub fn hidden_tracked(&self) -> &[String] {
        &self.hidden.tracked
    }

    /// The git object stores the copy's views read through their
    /// alternates: they must stay readable when the original is hidden.
    pub fn object_stores(&self) -> &[PathBuf] {
        &self.object_stores
    }

    /// Puts the hidden files back into the copy, as the original has them,
    /// until the guard is dropped (the checks see the workspace as it
    /// really is). Dropping it removes them again, whatever became of
    /// them, so nothing of them reaches the diff.
    pub fn reveal_hidden(&self) -> std::io::Result<Revealed<'_>> {
        use std::sync::atomic::Ordering;
        let guard = Revealed { iso: self };
        if self.hidden.paths.is_empty() || self.hidden.revealed.swap(true, Ordering::SeqCst) {
            return Ok(guard);
        }
        for rel in &self.hidden.paths {
            copy_hidden(&self.original.join(rel), &self.root.join(rel), self.parents)?;
        }
        Ok(guard)
    }

    fn hide_again(&self) {
        use std::sync::atomic::Ordering;
        if !self.hidden.revealed.swap(false, Ordering::SeqCst) {
            return;
        }
        for rel in &self.hidden.paths {
            let path = self.root.join(rel);
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

    /// The copy's workspace folder (where the agent works).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The copy's `.git`, when it has one: commands must be able to write
    /// there (a commit, a stash) under the sandbox.
    pub fn git_dir(&self) -> Option<PathBuf> {
        self.repo.as_ref().map(|_| self.dir.path().join(".git"))
    }

    /// What the diff's paths start with: the workspace's folder in its
    /// repository (`examples/shop/`), so it applies from the repository
    /// root; empty outside a repository or at its top.
    pub fn diff_prefix(&self) -> String {
        match &self.repo {
            Some(r) if !r.prefix.is_empty() => format!("{}/", r.prefix),
            _ => String::new(),
        }
    }

    /// The original tree.
    pub fn original(&self) -> &Path {
        &self.original
    }

    /// The files as they were right after the copy.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// Compares the copy with the original and returns every changed file,
    /// sorted by path. Only files whose size, mtime or mode changed are read.
    pub fn changes(&self) -> std::io::Result<Vec<FileChange>> {
        let mut now = walk_tree(self.path(), &[], self.parents)?;
        for rel in &self.tracked_ignored {
            if let Some(record) = entry_of(&self.path().join(rel)) {
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
                    .map_or(true, |m| super::snapshot::size_and_mtime(&m) != s)
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
                    let new = FileContent::read(&self.path().join(rel))?;
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
        for rel in now.keys() {
            if !self.snapshot.contains_key(rel) {
                changes.push(FileChange {
                    path: rel.clone(),
                    kind: ChangeKind::Added,
                    old: None,
                    new: Some(FileContent::read(&self.path().join(rel))?),
                    base_moved: false,
                });
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }
}

/// The guard of [`IsolatedWorkspace::reveal_hidden`].
pub struct Revealed<'a> {
    iso: &'a IsolatedWorkspace,
}

impl Drop for Revealed<'_> {
    fn drop(&mut self) {
        self.iso.hide_again();
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

/// Makes the git view of `repo` (the original `folder`) in `root`, its
/// copy, with `hidden` (relative to `folder`) marked skip-worktree; how
/// hidden files git tracks, or `None` when no view was made. A view
/// that cannot be made is left out with a warning: the copy still works,
/// as outside a repository.
fn make_view(
    repo: &RepoInfo,
    folder: &Path,
    root: &Path,
    hidden: &[String],
) -> Option<super::git_view::View> {
    match create_view(repo, root, hidden) {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!("no git view in the copy of {}: {e}", folder.display());
            let _ = std::fs::remove_dir_all(root.join(".git"));
            None
        }
    }
}

/// Copies the tracked files an ignore rule matches (`paths`, relative to
/// `original`) that the walk left out, except those in `excludes`; returns
/// the ones copied, which the snapshot now holds.
fn copy_tracked_ignored(
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
            // Tracked but deleted in the checkout: nothing to copy.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
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
fn copy_entry(src: &Path, dest: &Path) -> std::io::Result<Option<SnapshotEntry>> {
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
    let source = Some(super::snapshot::size_and_mtime(&meta));
    if ft.is_symlink() {
        let target = std::fs::read_link(src)?;
        std::os::unix::fs::symlink(&target, dest)?;
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

impl FileContent {
    /// Reads a file or a symlink (its target, not followed).
    pub fn read(path: &Path) -> std::io::Result<Self> {
        let meta = path.symlink_metadata()?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(path)?;
            return Ok(FileContent {
                bytes: target.as_os_str().as_encoded_bytes().to_vec(),
                mode: 0o120000,
                symlink: Some(target),
            });
        }
        Ok(FileContent {
            bytes: std::fs::read(path)?,
            mode: meta.mode(),
            symlink: None,
        })
    }
}
