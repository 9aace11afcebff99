//! What a task's commands keep at its place where `/tmp` is their own
//! (Linux's `private_tmp`), and what they get of it.
//!
//! Much of what a task needs lives in the machine's `/tmp` (`TMPDIR` is
//! `/tmp` by default): the workspace copy and the task's temp folder, and
//! often the folder the runner runs in, with the task file and what it
//! names. Those are bound back into the private `/tmp` at their paths:
//! read-write where commands may write them, read-only otherwise. The
//! tree hidden from commands (the original workspace) is masked where a
//! folder bound back holds it: an empty folder in its place, with the
//! object stores the copy's git view reads bound back inside it.

use std::path::{Path, PathBuf};

use super::HiddenTree;

/// A path commands keep at its place in a private `/tmp`.
#[derive(Debug, Clone)]
pub struct Keep {
    pub path: PathBuf,
    pub access: Access,
}

/// What commands get of a [`Keep`], least first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Nothing: an empty read-only folder in its place.
    Masked,
    /// Bound read-only.
    Read,
    /// Bound read-write.
    Write,
}

/// The keeps of a task's commands: the folders they write; read-only, the
/// folders of their `PATH` (`vars`), and the runner's own folder and
/// program; the hidden tree and the trees the readable world leaves out
/// (`unreadable`) masked, with their exceptions (the object stores the
/// copy's git view reads, a home's toolchains) bound back inside. Landlock
/// keeps those trees from commands by their files, but a path through the
/// private `/tmp` (which commands may write) would grant them again: so
/// the mask. A folder inside the hidden tree is kept only as one of its
/// exceptions.
pub fn kept_in_tmp(
    writable: &[PathBuf],
    hidden: Option<&HiddenTree>,
    unreadable: &[HiddenTree],
    vars: &[(String, String)],
) -> Vec<Keep> {
    let canon = |p: &Path| p.canonicalize().ok();
    let hidden_root = hidden.and_then(|h| canon(&h.root));
    let outside = |p: &PathBuf| hidden_root.as_ref().is_none_or(|h| !p.starts_with(h));
    let keep = |path: PathBuf, access: Access| Keep { path, access };
    let mut keeps: Vec<Keep> = writable
        .iter()
        .filter_map(|p| canon(p))
        .filter(outside)
        .map(|p| keep(p, Access::Write))
        .collect();
    for tree in hidden.into_iter().chain(unreadable) {
        let Some(root) = canon(&tree.root) else {
            continue;
        };
        keeps.push(keep(root, Access::Masked));
        keeps.extend(
            tree.except
                .iter()
                .filter_map(|p| canon(p))
                .map(|p| keep(p, Access::Read)),
        );
    }
    let path = vars
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let mut read_only: Vec<PathBuf> = path
        .unwrap_or_default()
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    read_only.extend(std::env::current_dir().ok());
    read_only.extend(
        std::env::current_exe()
            .ok()
            .and_then(|e| Some(e.parent()?.to_path_buf())),
    );
    keeps.extend(
        read_only
            .iter()
            .filter_map(|p| canon(p))
            .filter(outside)
            .map(|p| keep(p, Access::Read)),
    );
    keeps
}
