//! The backstop behind every edit deny rule.
//!
//! The analysis decides a call before it runs, from what its words show;
//! code it cannot see into (inline interpreter code an exact rule allowed,
//! an MCP server, a hook, a symlink made earlier) can still change a file
//! the policy denies editing. So after the agent stops, and before any
//! check runs or anything is compared, every change in the copy is
//! checked against the policy's deny rules (`Edit`, and `Read`: a path
//! denied to reading is denied to editing): a denied change is reverted in
//! the copy (the original's content, or the file removed), recorded as a
//! violation with its rule, and the task fails. Nothing the policy denies
//! can leave the copy: not in `changes.diff`, not through `--apply`, not
//! seen by a check.

use std::path::Path;

use runner_output::Violation;
use runner_policy::PolicySet;

use crate::workspace::{ChangeKind, FileChange, FileContent, IsolatedWorkspace};

/// Reverts the copy's changes to paths `policy` denies editing, adds a
/// violation for each to `found` (once per path), and returns the other
/// changes. A policy without a path deny rule costs nothing more than the
/// comparison.
pub(crate) fn revert_denied_changes(
    iso: &IsolatedWorkspace,
    policy: &PolicySet,
    found: &mut Vec<Violation>,
) -> std::io::Result<Vec<FileChange>> {
    let mut changes = iso.changes()?;
    if !policy.denies_paths() {
        return Ok(changes);
    }
    let mut failed = None;
    changes.retain(|change| {
        let Some((rule, layer)) = policy.edit_denied(&change.path) else {
            return true;
        };
        if let Err(e) = revert(iso.path(), change) {
            failed.get_or_insert(e);
        }
        if !found.iter().any(|v| v.path == change.path) {
            found.push(Violation {
                path: change.path.clone(),
                change: change.kind,
                rule,
                policy: layer,
            });
        }
        false
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(changes),
    }
}

/// Puts one path of the copy back as the original had it.
fn revert(root: &Path, change: &FileChange) -> std::io::Result<()> {
    let path = root.join(&change.path);
    if path.symlink_metadata().is_ok() {
        std::fs::remove_file(&path)?;
    }
    match (&change.kind, &change.old) {
        (ChangeKind::Added, _) | (_, None) => Ok(()),
        (_, Some(old)) => restore(&path, old),
    }
}

fn restore(path: &Path, old: &FileContent) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if let Some(target) = &old.symlink {
        return std::os::unix::fs::symlink(target, path);
    }
    std::fs::write(path, &old.bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(old.mode & 0o7777))
}
