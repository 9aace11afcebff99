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
//!
//! The walk and the copying of entries are [`tree`]'s; what the copy
//! leaves out for the policy, and puts back for the checks, is
//! [`hidden`]'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::diff::FileChange;
use super::git_view::{RepoInfo, TrackedIgnored, create_view, find_repo, mirror_parent_ignores};
use super::history::{History, HistoryScan, Settle};
use super::snapshot::Snapshot;

mod changes;
mod hidden;
mod layered;
mod layered_changes;
mod make;
mod tree;

pub use changes::Differ;
pub use make::WorkspaceView;

use hidden::{Hidden, Revealed};
use make::{Made, View};

/// A task's private copy of a workspace; removed when dropped.
pub struct IsolatedWorkspace {
    /// The overlay, when the copy is a view: taken away before `dir` goes
    /// (fields drop in order).
    _mounted: Option<crate::workspace::overlay::Mounted>,
    /// How many files and links the copy shows.
    files: usize,
    /// What the copy is: an overlay or a copy, and why not an overlay.
    view: WorkspaceView,
    dir: tempfile::TempDir,
    /// The repository the workspace lies in, when its git view was made.
    repo: Option<RepoInfo>,
    /// Removed on a hurried exit (a second signal) too.
    _registered: crate::cleanup::Registered,
    /// The original, the copy's workspace folder, the snapshot: what the
    /// changes are read from.
    differ: Arc<Differ>,
    /// Files and folders left out of the copy because the policy denies
    /// reading them (workspace-relative), and how many of them git tracks.
    hidden: Hidden,
    /// The object stores the copy's git views read (their alternates).
    object_stores: Vec<PathBuf>,
    /// What the copy's git configs left out because it holds a
    /// credential (`.git/config http.https://github.com/.extraheader: …`).
    credentials_removed: Vec<String>,
    /// What each git view (by folder, `""` or `sub/`) shows of history.
    histories: Vec<(String, History)>,
}

impl IsolatedWorkspace {
    /// Copies `original` into a fresh temporary folder, leaving out ignored
    /// files, `.git` and the given absolute paths (such as the output folder).
    pub fn create(original: &Path, excludes: &[PathBuf]) -> std::io::Result<Self> {
        Self::build(original, excludes, None)
    }

    /// [`IsolatedWorkspace::create`] as a copy, whatever the process
    /// makes (what the benchmarks compare an overlay with).
    pub fn create_copy(original: &Path, excludes: &[PathBuf]) -> std::io::Result<Self> {
        Self::build_as(original, excludes, None, View::Copy(None))
    }

    /// [`IsolatedWorkspace::create`], leaving out too the files and folders
    /// (workspace-relative, `/`-separated) for which `hide` is true: the
    /// ones the policy denies reading. git in the copy does not report
    /// them as deleted (skip-worktree).
    /// The git view's history holds none of them either (see
    /// [`super::history`]).
    pub fn create_hiding(
        original: &Path,
        excludes: &[PathBuf],
        hide: &(dyn Fn(&str) -> bool + Sync),
    ) -> std::io::Result<Self> {
        Self::build(original, excludes, Some(hide))
    }

    fn build(
        original: &Path,
        excludes: &[PathBuf],
        hiding: Option<&(dyn Fn(&str) -> bool + Sync)>,
    ) -> std::io::Result<Self> {
        use crate::workspace::overlay::{Choice, choice, overlay_failed, overlay_is_beneath};
        match choice() {
            Choice::Copy(why) => Self::build_as(original, excludes, hiding, View::Copy(why)),
            Choice::Refused(why) => Err(std::io::Error::other(format!(
                "no overlay workspace (--workspace-mode overlay): {why}"
            ))),
            Choice::Overlay { forced } => {
                match Self::build_as(original, excludes, hiding, View::Overlay) {
                    Ok(ws) => Ok(ws),
                    // A view of a view (an isolated child agent's copy of
                    // its parent's): the kernel stacks overlays two deep
                    // at most. Such a copy is copied, and says why; the
                    // run's other tasks keep their overlays.
                    Err(e) if overlay_is_beneath(original) => {
                        let why = format!("its original is a view this run mounted ({e})");
                        tracing::debug!("the workspace is a copy: {why}");
                        Self::build_as(original, excludes, hiding, View::Copy(Some(why)))
                    }
                    Err(e) if forced => Err(std::io::Error::new(
                        e.kind(),
                        format!("no overlay workspace (--workspace-mode overlay): {e}"),
                    )),
                    Err(e) => {
                        let why = overlay_failed(&e);
                        tracing::warn!("the workspace is a copy: {why}");
                        Self::build_as(original, excludes, hiding, View::Copy(Some(why)))
                    }
                }
            }
        }
    }

    fn build_as(
        original: &Path,
        excludes: &[PathBuf],
        hiding: Option<&(dyn Fn(&str) -> bool + Sync)>,
        view: View,
    ) -> std::io::Result<Self> {
        let hide = hiding.unwrap_or(&|_| false);
        let original = original.canonicalize()?;
        let dir = tempfile::Builder::new().prefix("runner-ws-").tempdir()?;
        let registered = crate::cleanup::register(dir.path());
        let repo = find_repo(&original);
        let dest_root = match &repo {
            Some(r) if !r.prefix.is_empty() => dir.path().join(&r.prefix),
            _ => dir.path().to_path_buf(),
        };
        std::fs::create_dir_all(&dest_root)?;
        // Which tracked files an ignore rule matches: git says for a copy;
        // a view lists them all and looks beneath its whiteouts.
        let tracked = repo.as_ref().map(|_| match view {
            View::Copy(_) => TrackedIgnored::start(&original),
            View::Overlay => TrackedIgnored::start_every(&original),
        });
        // Listed while the copy is made: what history holds.
        let mut scan = repo
            .as_ref()
            .filter(|_| hiding.is_some())
            .map(|r| HistoryScan::start(&r.dirs()));
        if let Some(r) = &repo {
            mirror_parent_ignores(r, dir.path())?;
        }
        let parents = repo.is_some();
        let began = std::time::Instant::now();
        let tracked = tracked.map(|t| t.finish()).unwrap_or_default();
        let at = make::Places {
            original: &original,
            dest_root: &dest_root,
            excludes,
            parents,
            hide,
        };
        let made = match view {
            View::Copy(why) => make::copied(&at, tracked, why)?,
            View::Overlay => make::layered(&at, tracked, began)?,
        };
        let Made {
            files,
            snapshot,
            mut hidden,
            nested,
            tracked_ignored,
            mounted,
            view,
            index_shown,
        } = made;
        let (mounted, layers) = match mounted {
            Some((m, l)) => (Some(m), Some(l)),
            None => (None, None),
        };
        hidden.sort();
        let mut credentials_removed = Vec::new();
        let mut object_stores = Vec::new();
        let mut histories = Vec::new();
        let history = |scan: Option<HistoryScan>| Some((hiding?, scan?));
        tracing::debug!(
            "{}: files ready in {:?}",
            original.display(),
            began.elapsed()
        );
        let repo = repo.filter(|r| {
            match make_view(
                r,
                &original,
                dir.path(),
                &hidden,
                history(scan.take()),
                index_shown,
            ) {
                Some(view) => {
                    credentials_removed = (view.credentials_removed.iter())
                        .map(|c| format!(".git/config {c}"))
                        .collect();
                    if !matches!(view.history, History::Cut { .. }) {
                        object_stores.push(r.objects());
                    }
                    histories.push((String::new(), view.history));
                    true
                }
                None => false,
            }
        });
        // A folder of the workspace that is a repository of its own (a
        // submodule, a clone): without a view, git in the copy would take
        // it for a folder of the repository around it.
        for rel in nested {
            let folder = original.join(&rel);
            if let Some(r) = find_repo(&folder).filter(|r| r.prefix.is_empty()) {
                let inner = format!("{}/", rel.to_string_lossy());
                let beneath: Vec<String> = hidden
                    .iter()
                    .filter_map(|h| h.strip_prefix(&inner).map(str::to_string))
                    .collect();
                let inner_hide = |p: &str| hide(&format!("{inner}{p}"));
                let inner_history = hiding.is_some().then(|| {
                    (
                        &inner_hide as &(dyn Fn(&str) -> bool + Sync),
                        HistoryScan::start(&r.dirs()),
                    )
                });
                if let Some(view) = make_view(
                    &r,
                    &folder,
                    &dest_root.join(&rel),
                    &beneath,
                    inner_history,
                    false,
                ) {
                    credentials_removed.extend(
                        view.credentials_removed
                            .iter()
                            .map(|c| format!("{inner}.git/config {c}")),
                    );
                    if !matches!(view.history, History::Cut { .. }) {
                        object_stores.push(r.objects());
                    }
                    histories.push((inner, view.history));
                }
            }
        }
        tracing::debug!(
            "{}: git views ready in {:?}",
            original.display(),
            began.elapsed()
        );
        Ok(Self {
            _mounted: mounted,
            files,
            view,
            dir,
            repo,
            _registered: registered,
            differ: Arc::new(Differ {
                original,
                root: dest_root,
                snapshot,
                parents,
                tracked_ignored,
                planted: Default::default(),
                layers,
            }),
            hidden: Hidden::new(hidden),
            object_stores,
            credentials_removed,
            histories,
        })
    }

    /// What the copy's git configs left out because it holds a credential,
    /// by key, never by value.
    pub fn credentials_removed(&self) -> &[String] {
        &self.credentials_removed
    }

    /// The files and folders left out for the policy (workspace-relative).
    pub fn hidden(&self) -> &[String] {
        self.hidden.paths()
    }

    /// Puts the hidden files back into the copy, as the original has them,
    /// until the guard is dropped (the checks see the workspace as it
    /// really is). Dropping it removes them again, whatever became of
    /// them, so nothing of them reaches the diff.
    pub fn reveal_hidden(&self) -> std::io::Result<Revealed<'_>> {
        let d = &self.differ;
        self.hidden.reveal(&d.original, &d.root, d.parents)
    }

    /// Why some git view of the copy may show what the policy denies
    /// reading through its history (`sub/: …` for a nested repository's).
    pub fn history_exposed(&self) -> Option<String> {
        self.histories.iter().find_map(|(folder, h)| match h {
            History::Exposed(why) if folder.is_empty() => Some(why.clone()),
            History::Exposed(why) => Some(format!("{folder}: {why}")),
            _ => None,
        })
    }

    /// The views whose history was cut: their folder, the real HEAD and
    /// some of the denied paths history held.
    pub fn history_cut(&self) -> Vec<(&str, &str, &str)> {
        (self.histories.iter())
            .filter_map(|(folder, h)| match h {
                History::Cut { head, why } => Some((folder.as_str(), head.as_str(), why.as_str())),
                _ => None,
            })
            .collect()
    }

    /// What commands must not read of the original: the workspace, or the
    /// whole repository when its view's history was cut (its object store
    /// then lies there unread by the view).
    pub fn hidden_root(&self) -> &Path {
        match (&self.repo, self.histories.first()) {
            (Some(r), Some((f, History::Cut { .. }))) if f.is_empty() => r.top(),
            _ => self.original(),
        }
    }

    /// The git object stores the copy's views read through their
    /// alternates: they must stay readable when the original is hidden.
    pub fn object_stores(&self) -> &[PathBuf] {
        &self.object_stores
    }

    /// The copy's workspace folder (where the agent works).
    pub fn path(&self) -> &Path {
        &self.differ.root
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
        &self.differ.original
    }

    /// The files as they were right after the copy (empty for a view:
    /// its changes are its upper layer).
    pub fn snapshot(&self) -> &Snapshot {
        &self.differ.snapshot
    }

    /// How many files and links the copy shows.
    pub fn files(&self) -> usize {
        self.files
    }

    /// What the transcript says of the copy.
    pub fn record(&self) -> runner_output::WorkspaceCopy {
        let (mode, why) = match &self.view {
            WorkspaceView::Overlay => (runner_output::CopyMode::Overlay, None),
            WorkspaceView::Copy { why } => (runner_output::CopyMode::Copy, why.clone()),
        };
        runner_output::WorkspaceCopy {
            mode,
            why,
            files: self.files,
        }
    }

    /// Compares the copy with the original and returns every changed file,
    /// sorted by path. Only files whose size, mtime or mode changed are read.
    pub fn changes(&self) -> std::io::Result<Vec<FileChange>> {
        self.differ.changes()
    }

    /// Writes `text` at `rel` in the copy (its folders made), a file the
    /// runner plants (a decoy) and no change of the task's: the diff
    /// leaves it out. `rel` must be a path of the workspace where no file
    /// is (checked when the task was loaded).
    pub fn plant(&self, rel: &str, text: &[u8]) -> std::io::Result<()> {
        let path = self.differ.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text)?;
        self.differ
            .planted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(rel.to_string());
        Ok(())
    }

    /// What compares the copy with the original, apart from the copy's
    /// life: a task's journal diffs the copy on a thread of its own.
    pub fn differ(&self) -> Arc<Differ> {
        Arc::clone(&self.differ)
    }
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
    history: Option<Settle<'_>>,
    index_shown: bool,
) -> Option<super::git_view::View> {
    match create_view(repo, root, hidden, history, index_shown) {
        Ok(n) => Some(n),
        Err(e) => {
            tracing::warn!("no git view in the copy of {}: {e}", folder.display());
            let _ = std::fs::remove_dir_all(root.join(".git"));
            None
        }
    }
}
