//! The view of a workspace as an overlay (see [`crate::workspace::overlay`]):
//! the walk a copy makes, without copying, to find what the view must
//! hide, and the mount.
//!
//! The view holds what a copy would: the walk yields what a copy copies,
//! so every other entry of a folder it lists (ignored, `.git`, the output
//! folder, what the policy denies reading) is hidden by a whiteout at its
//! top. Tracked files an ignore rule matches are part of the checkout:
//! the whiteouts above them are pushed down to their siblings.

use std::collections::{BTreeSet, HashSet};
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
    let shown = Mutex::new(HashSet::new());
    let listed: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());
    let hidden = Mutex::new(Vec::new());
    let nested = Mutex::new(Vec::new());
    let first_error: Mutex<Option<std::io::Error>> = Mutex::new(None);
    walker(original, excludes, parents)
        .build_parallel()
        .run(|| {
            let (shown, listed, hidden, nested) = (&shown, &listed, &hidden, &nested);
            let first_error = &first_error;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let Ok(rel) = entry.path().strip_prefix(original) else {
                    return WalkState::Continue;
                };
                let key = rel.to_string_lossy().into_owned();
                if !key.is_empty() && hide(&key) {
                    hidden.lock().unwrap().push(key);
                    return WalkState::Skip;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir {
                    if !key.is_empty() && entry.path().join(".git").symlink_metadata().is_ok() {
                        nested.lock().unwrap().push(rel.to_path_buf());
                    }
                    match names_in(entry.path()) {
                        Ok(names) => listed.lock().unwrap().push((key.clone(), names)),
                        Err(e) => {
                            let mut slot = first_error.lock().unwrap();
                            slot.get_or_insert(std::io::Error::new(
                                e.kind(),
                                format!("listing {}: {e}", entry.path().display()),
                            ));
                            return WalkState::Quit;
                        }
                    }
                }
                if !key.is_empty() {
                    shown.lock().unwrap().insert((key, is_dir));
                }
                WalkState::Continue
            })
        });
    if let Some(e) = first_error.into_inner().unwrap() {
        return Err(e);
    }
    let shown = shown.into_inner().unwrap();
    let files = shown.iter().filter(|(_, dir)| !dir).count();
    let shown: HashSet<String> = shown.into_iter().map(|(k, _)| k).collect();
    let mut whiteouts = BTreeSet::new();
    for (dir, names) in listed.into_inner().unwrap() {
        for name in names {
            let child = join(&dir, &name);
            if !shown.contains(&child) {
                whiteouts.insert(child);
            }
        }
    }
    Ok(Plan {
        whiteouts,
        hidden: hidden.into_inner().unwrap(),
        nested: nested.into_inner().unwrap(),
        files,
    })
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
        let mut end = rel.len();
        loop {
            if self.whiteouts.contains(&rel[..end]) {
                return true;
            }
            match rel[..end].rfind('/') {
                Some(i) => end = i,
                None => return false,
            }
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
