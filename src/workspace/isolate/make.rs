//! The two ways of making a task's copy: copying its files, or an
//! overlay view of them; either gives what the git views are made on.

use std::path::{Path, PathBuf};

use super::layered;
use super::tree::{copy_into, copy_tracked_ignored};
use crate::workspace::git_view::at_or_beneath;
use crate::workspace::snapshot::Snapshot;

/// What a task's copy of its workspace is, for its transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceView {
    /// An overlay of the original (copy-on-write).
    Overlay,
    /// A copy of the files; why not an overlay (`None`: not asked).
    Copy { why: Option<String> },
}

/// How the copy is made.
pub(super) enum View {
    Overlay,
    Copy(Option<String>),
}

/// What either way made, before the git views.
pub(super) struct Made {
    pub files: usize,
    pub snapshot: Snapshot,
    pub hidden: Vec<String>,
    pub nested: Vec<PathBuf>,
    pub tracked_ignored: Vec<String>,
    pub mounted: Option<(crate::workspace::overlay::Mounted, layered::LayerState)>,
    pub view: WorkspaceView,
    /// The view shows the original's git index where its own goes.
    pub index_shown: bool,
}

/// Where a copy is made from and to, and what it leaves out.
pub(super) struct Places<'a> {
    pub original: &'a Path,
    pub dest_root: &'a Path,
    pub excludes: &'a [PathBuf],
    /// Whether the walks honour the ignore files above.
    pub parents: bool,
    pub hide: &'a (dyn Fn(&str) -> bool + Sync),
}

/// The tracked files an ignore rule matches (`listed`) but those the
/// policy hides, which join `hidden`.
fn keep_tracked(at: &Places<'_>, listed: Vec<PathBuf>, hidden: &mut Vec<String>) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    for rel in listed {
        let key = rel.to_string_lossy().into_owned();
        if at_or_beneath(hidden, key.as_bytes()) {
            continue;
        }
        if (at.hide)(&key) {
            hidden.push(key);
            continue;
        }
        kept.push(rel);
    }
    kept
}

/// Copies the files; `tracked`: the tracked files an ignore rule matches.
pub(super) fn copied(
    at: &Places<'_>,
    tracked: Vec<PathBuf>,
    why: Option<String>,
) -> std::io::Result<Made> {
    let (original, dest_root, excludes) = (at.original, at.dest_root, at.excludes);
    let copied = copy_into(original, dest_root, excludes, at.parents, at.hide)?;
    let mut hidden = copied.hidden;
    let mut snapshot = copied.snapshot;
    let listed = keep_tracked(at, tracked, &mut hidden);
    let tracked_ignored =
        copy_tracked_ignored(&listed, original, dest_root, excludes, &mut snapshot)?;
    Ok(Made {
        files: snapshot.len(),
        snapshot,
        hidden,
        nested: copied.nested,
        tracked_ignored,
        mounted: None,
        view: WorkspaceView::Copy { why },
        index_shown: false,
    })
}

/// Mounts an overlay view; `tracked`: every tracked file.
pub(super) fn layered(
    at: &Places<'_>,
    tracked: Vec<PathBuf>,
    began: std::time::Instant,
) -> std::io::Result<Made> {
    let (original, excludes) = (at.original, at.excludes);
    let mut plan = layered::plan(original, excludes, at.parents, at.hide)?;
    tracing::debug!(
        "view of {}: walked {} files in {:?}, {} whiteouts",
        original.display(),
        plan.files,
        began.elapsed(),
        plan.whiteouts.len()
    );
    let beneath: Vec<PathBuf> = (tracked.into_iter())
        .filter(|p| layered::covered(&plan.whiteouts, &p.to_string_lossy()))
        .collect();
    let listed = keep_tracked(at, beneath, &mut plan.hidden);
    let tracked_ignored: Vec<String> = (listed.iter())
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.split('/').any(|c| c == ".git"))
        .filter(|p| !excludes.iter().any(|x| original.join(p).starts_with(x)))
        .collect();
    layered::punch_through(&mut plan.whiteouts, original, &tracked_ignored)?;
    let index_shown = layered::show_git_index(&mut plan.whiteouts, original)?;
    let (mounted, layers) = layered::mount_view(original, at.dest_root, &plan.whiteouts)?;
    Ok(Made {
        files: plan.files + tracked_ignored.len(),
        snapshot: Snapshot::new(),
        hidden: plan.hidden,
        nested: plan.nested,
        tracked_ignored,
        mounted: Some((mounted, layers)),
        view: WorkspaceView::Overlay,
        index_shown,
    })
}
