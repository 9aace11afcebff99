//! `--apply`: a passing task's changes land in the original tree.
//!
//! Several tasks may change one file. Each change is merged three ways:
//! the file as the task started from it (the base), the file as it is now
//! in the tree (perhaps changed by a task applied before, or by hand), and
//! the task's version. Edits to different parts merge (`git merge-file`);
//! a file nobody else touched is simply written; a real conflict leaves the
//! whole task unapplied (every file is merged in memory before any is
//! written) and names the file. A symlinked folder on the way to a file
//! is never followed: the task is left unapplied and the folder named.

use std::path::Path;
use std::process::{Command, Stdio};

use super::atomic::atomic_write;
use super::diff::{FileChange, FileContent};

/// Why a task's changes could not be applied to the original tree.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{path}: {why}; the task's changes were not applied")]
    Conflict { path: String, why: String },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// What one file becomes: written with this content, or removed.
struct Planned<'a> {
    path: &'a str,
    content: Option<FileContent>,
}

/// Applies `changes` to `root`, merging each with what the file holds now.
/// Returns how many files were written or removed; nothing is written when
/// any file conflicts.
pub fn apply_changes(root: &Path, changes: &[FileChange]) -> Result<usize, ApplyError> {
    let mut plan = Vec::new();
    for c in changes {
        if let Some(link) = linked_folder(root, &c.path) {
            return Err(ApplyError::Conflict {
                path: c.path.clone(),
                why: format!(
                    "its folder `{link}` is a symlink in the tree, which --apply does not follow"
                ),
            });
        }
        let p = root.join(&c.path);
        let current = if p.symlink_metadata().is_ok() {
            Some(FileContent::read(&p).map_err(|source| ApplyError::Io {
                path: c.path.clone(),
                source,
            })?)
        } else {
            None
        };
        if current == c.new {
            continue; // Already there.
        }
        // What the task started from is gone: writing its version would
        // undo whatever changed the file meanwhile.
        if c.base_moved {
            return Err(ApplyError::Conflict {
                path: c.path.clone(),
                why: "it changed in the original while the task ran, so what the task started from is unknown".into(),
            });
        }
        let content = if current == c.old {
            c.new.clone()
        } else {
            Some(merge(c, current)?)
        };
        plan.push(Planned {
            path: &c.path,
            content,
        });
    }
    for p in &plan {
        write(root, p).map_err(|source| ApplyError::Io {
            path: p.path.to_string(),
            source,
        })?;
    }
    Ok(plan.len())
}

/// The first folder on the way to `rel` beneath `root` that is a symlink:
/// writing through it would write wherever it leads.
fn linked_folder(root: &Path, rel: &str) -> Option<String> {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    for (i, part) in parts[..parts.len().saturating_sub(1)].iter().enumerate() {
        at.push(part);
        match at.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return Some(parts[..=i].join("/")),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// The three-way merge of a file both the task and someone else changed.
fn merge(c: &FileChange, current: Option<FileContent>) -> Result<FileContent, ApplyError> {
    let conflict = |why: &str| ApplyError::Conflict {
        path: c.path.clone(),
        why: why.to_string(),
    };
    let (Some(base), Some(cur), Some(new)) = (&c.old, &current, &c.new) else {
        return Err(conflict(match (&c.old, &current) {
            (None, Some(_)) => "the task created it, and it was created since with other content",
            (Some(_), None) => "it was removed since the task started",
            _ => "the task removed it, and it was changed since",
        }));
    };
    if base.symlink.is_some() || cur.symlink.is_some() || new.symlink.is_some() {
        return Err(conflict("a symlink changed on both sides"));
    }
    let bytes =
        merge_file(&cur.bytes, &base.bytes, &new.bytes).map_err(|e| conflict(&e.to_string()))?;
    // A mode change on one side wins.
    let mode = if cur.mode != base.mode {
        cur.mode
    } else {
        new.mode
    };
    Ok(FileContent {
        bytes,
        mode,
        symlink: None,
    })
}

/// Why a file changed on both sides could not be merged.
#[derive(Debug, thiserror::Error)]
enum MergeError {
    #[error(
        "it changed since the task started, and its versions could not be written to merge them ({0})"
    )]
    Scratch(std::io::Error),
    #[error(
        "it changed since the task started, and git merge-file could not run to merge it ({0})"
    )]
    NoGit(std::io::Error),
    #[error("it changed since the task started and {0} edit(s) conflict with the task's")]
    Conflicts(i32),
    #[error("it changed since the task started and could not be merged")]
    Failed,
}

/// `git merge-file -p CURRENT BASE NEW`: the merged text, or why not.
fn merge_file(current: &[u8], base: &[u8], new: &[u8]) -> Result<Vec<u8>, MergeError> {
    let dir = tempfile::Builder::new()
        .prefix("runner-merge-")
        .tempdir()
        .map_err(MergeError::Scratch)?;
    // Owned while it lives: what a run killed here leaves, the next takes.
    let _owned = crate::cleanup::register(dir.path());
    let files = [("current", current), ("base", base), ("task", new)];
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).map_err(MergeError::Scratch)?;
    }
    let out = Command::new("git")
        .args(["merge-file", "-p", "--quiet", "current", "base", "task"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(MergeError::NoGit)?;
    match out.status.code() {
        Some(0) => Ok(out.stdout),
        Some(n) if n > 0 => Err(MergeError::Conflicts(n)),
        _ => Err(MergeError::Failed),
    }
}

fn write(root: &Path, p: &Planned) -> std::io::Result<()> {
    let path = root.join(p.path);
    let Some(new) = &p.content else {
        return std::fs::remove_file(&path);
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if let Some(target) = &new.symlink {
        let _ = std::fs::remove_file(&path);
        return crate::sys::symlink(target, &path);
    }
    if path
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        std::fs::remove_file(&path)?;
    }
    atomic_write(&path, &new.bytes)?;
    crate::sys::set_mode(&path, new.mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::ChangeKind;

    /// A symlinked folder on the way to a file is not written through
    /// (issue 72): the whole task stays unapplied, the folder named.
    #[cfg(unix)]
    #[test]
    fn a_symlinked_folder_on_the_way_is_never_followed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("ws");
        let elsewhere = d.path().join("elsewhere");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        crate::sys::symlink(&elsewhere, &root.join(".github")).unwrap();
        let added = |path: &str| FileChange {
            path: path.into(),
            kind: ChangeKind::Added,
            old: None,
            new: Some(FileContent {
                bytes: b"x\n".to_vec(),
                mode: 0o644,
                symlink: None,
            }),
            base_moved: false,
        };
        let e = apply_changes(&root, &[added("a.txt"), added(".github/workflows/x.yml")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`.github` is a symlink"), "{e}");
        assert!(
            !root.join("a.txt").exists(),
            "nothing of the task is applied"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // Without the link, the same change applies.
        std::fs::remove_file(root.join(".github")).unwrap();
        assert_eq!(
            apply_changes(&root, &[added(".github/workflows/x.yml")]).unwrap(),
            1
        );
    }
}
