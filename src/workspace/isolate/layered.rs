//! The view of a workspace as an overlay (see [`crate::workspace::overlay`]):
//! the walk a copy makes, without copying, to find what the view must
//! hide, and the mount.
//!
//! The view holds what a copy would: the walk yields what a copy copies,
//! so every other entry of a folder it lists (ignored, `.git`, the output
//! folder, what the policy denies reading) is hidden by a whiteout at its
//! top. Tracked files an ignore rule matches are part of the checkout:
//! the whiteouts above them are pushed down to their siblings.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::WalkState;

use super::tree::walker;
use crate::workspace::overlay::{Layers, Mounted};

/// What the view of a workspace hides, and what the walk found.
pub(super) struct Plan {
    /// Workspace-relative paths hidden by whiteouts.
    pub whiteouts: BTreeSet<String>,
    /// The files and folders the policy denies reading (among the
    /// whiteouts).
    pub hidden: Vec<String>,
    /// Folders holding a `.git` of their own.
    pub nested: Vec<PathBuf>,
    /// How many files and links the view shows.
    pub files: usize,
}

/// Walks `original` as a copy would, listing each folder it enters.
pub(super) fn plan(
    original: &Path,
    excludes: &[PathBuf],
    parents: bool,
    hide: &(dyn Fn(&str) -> bool + Sync),
) -> std::io::Result<Plan> {
    let found = Mutex::new(Found::default());
    let mut builder = Builder {
        original,
        hide,
        into: &found,
    };
    walker(original, excludes, parents)
        .build_parallel()
        .visit(&mut builder);
    let found = found.into_inner().unwrap();
    if let Some(e) = found.error {
        return Err(e);
    }
    // Every entry of a listed folder that the walk did not yield is
    // hidden: mark the yielded ones in their folder's sorted names.
    let mut folders: HashMap<&str, Vec<(&str, bool)>> = (found.listed.iter())
        .map(|(dir, names)| {
            let mut v: Vec<(&str, bool)> = names.iter().map(|n| (n.as_str(), false)).collect();
            v.sort_unstable();
            (dir.as_str(), v)
        })
        .collect();
    for rel in &found.shown {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        if let Some(names) = folders.get_mut(dir)
            && let Ok(i) = names.binary_search_by(|(n, _)| n.cmp(&name))
        {
            names[i].1 = true;
        }
    }
    let whiteouts = (folders.iter())
        .flat_map(|(dir, names)| {
            (names.iter())
                .filter(|(_, shown)| !shown)
                .map(|(name, _)| join(dir, name))
        })
        .collect();
    Ok(Plan {
        whiteouts,
        hidden: found.hidden,
        nested: found.nested,
        files: found.files,
    })
}

/// What the walk found: each thread's share, put together as it ends.
#[derive(Default)]
struct Found {
    /// What was yielded (workspace-relative, the top left out).
    shown: Vec<String>,
    /// Each folder entered, with the names in it.
    listed: Vec<(String, Vec<String>)>,
    hidden: Vec<String>,
    nested: Vec<PathBuf>,
    files: usize,
    error: Option<std::io::Error>,
}

impl Found {
    fn absorb(&mut self, other: &mut Found) {
        self.shown.append(&mut other.shown);
        self.listed.append(&mut other.listed);
        self.hidden.append(&mut other.hidden);
        self.nested.append(&mut other.nested);
        self.files += other.files;
        if self.error.is_none() {
            self.error = other.error.take();
        }
    }
}

struct Builder<'a> {
    original: &'a Path,
    hide: &'a (dyn Fn(&str) -> bool + Sync),
    into: &'a Mutex<Found>,
}

impl<'s> ignore::ParallelVisitorBuilder<'s> for Builder<'s> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 's> {
        Box::new(Visitor {
            original: self.original,
            hide: self.hide,
            into: self.into,
            found: Found::default(),
        })
    }
}

/// One walking thread: what it finds stays its own until it ends.
struct Visitor<'a> {
    original: &'a Path,
    hide: &'a (dyn Fn(&str) -> bool + Sync),
    into: &'a Mutex<Found>,
    found: Found,
}

impl ignore::ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        let Ok(rel) = entry.path().strip_prefix(self.original) else {
            return WalkState::Continue;
        };
        let key = rel.to_string_lossy().into_owned();
        if !key.is_empty() && (self.hide)(&key) {
            self.found.hidden.push(key);
            return WalkState::Skip;
        }
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            if !key.is_empty() && entry.path().join(".git").symlink_metadata().is_ok() {
                self.found.nested.push(rel.to_path_buf());
            }
            match names_in(entry.path()) {
                Ok(names) => self.found.listed.push((key.clone(), names)),
                Err(e) => {
                    self.found.error.get_or_insert(std::io::Error::new(
                        e.kind(),
                        format!("listing {}: {e}", entry.path().display()),
                    ));
                    return WalkState::Quit;
                }
            }
        } else {
            self.found.files += 1;
        }
        if !key.is_empty() {
            self.found.shown.push(key);
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut into = self.into.lock().unwrap_or_else(|e| e.into_inner());
        into.absorb(&mut self.found);
    }
}

fn join(dir: &str, name: &str) -> String {
    match dir {
        "" => name.to_string(),
        d => format!("{d}/{name}"),
    }
}

/// The names in a folder.
fn names_in(dir: &Path) -> std::io::Result<Vec<String>> {
    std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect()
}

/// Shows the tracked files an ignore rule matches (`tracked`, relative to
/// `original`): each whiteout above one is replaced by whiteouts of its
/// folder's other entries, down to the file.
pub(super) fn punch_through(
    whiteouts: &mut BTreeSet<String>,
    original: &Path,
    tracked: &[String],
) -> std::io::Result<()> {
    for file in tracked {
        let parts: Vec<&str> = file.split('/').collect();
        for depth in 1..=parts.len() {
            let at = parts[..depth].join("/");
            if !whiteouts.remove(&at) || depth == parts.len() {
                continue;
            }
            for name in names_in(&original.join(&at))? {
                if name != parts[depth] {
                    whiteouts.insert(join(&at, &name));
                }
            }
            // The next part is punched through at the next step.
            whiteouts.insert(join(&at, parts[depth]));
        }
    }
    Ok(())
}

/// Shows the original's git index (and a split index's shared part) in
/// the view's `.git`, whose every other entry is hidden for the view's
/// own: the index is the one large file of a view (8 MB for 100,000
/// files), and git replaces it when it writes one, so a view that only
/// reads it never copies it. Only for a repository's top whose `.git` is
/// a folder (not a linked worktree's file); whether it did.
pub(super) fn show_git_index(
    whiteouts: &mut BTreeSet<String>,
    original: &Path,
) -> std::io::Result<bool> {
    let dot = original.join(".git");
    if !whiteouts.contains(".git") || !dot.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Ok(false);
    }
    let names = names_in(&dot)?;
    if !names.iter().any(|n| n == "index") {
        return Ok(false);
    }
    whiteouts.remove(".git");
    for name in names {
        if name != "index" && !name.starts_with("sharedindex.") {
            whiteouts.insert(format!(".git/{name}"));
        }
    }
    Ok(true)
}

/// What a view's changes are read from.
#[derive(Debug)]
pub(crate) struct LayerState {
    /// Where every write of the task lands.
    pub upper: PathBuf,
    /// What the view hid from the start: never a deletion.
    pub whiteouts: BTreeSet<String>,
    /// When the view was made: an original file changed since moved
    /// under the task.
    pub started: SystemTime,
}

impl LayerState {
    /// Whether `rel` was hidden from the view from the start: it or a
    /// folder above it was a whiteout.
    pub fn hidden_from_start(&self, rel: &str) -> bool {
        covered(&self.whiteouts, rel)
    }
}

/// Whether `rel` or a folder above it is one of `whiteouts`.
pub(super) fn covered(whiteouts: &BTreeSet<String>, rel: &str) -> bool {
    let mut end = rel.len();
    loop {
        if whiteouts.contains(&rel[..end]) {
            return true;
        }
        match rel[..end].rfind('/') {
            Some(i) => end = i,
            None => return false,
        }
    }
}

/// Makes the view of `original` at `target`, hiding `whiteouts`.
pub(super) fn mount_view(
    original: &Path,
    target: &Path,
    whiteouts: &BTreeSet<String>,
) -> std::io::Result<(Mounted, LayerState)> {
    let started = SystemTime::now();
    let layers = Layers::new()?;
    for rel in whiteouts {
        layers.hide(original, rel)?;
    }
    let upper = layers.upper();
    let mounted = layers.mount(original, target)?;
    Ok((
        mounted,
        LayerState {
            upper,
            whiteouts: whiteouts.clone(),
            started,
        },
    ))
}
