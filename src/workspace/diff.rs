//! Git-style unified diffs of a workspace's changes.
//!
//! The output applies with `git apply` and `patch -p1`: `diff --git` headers,
//! `/dev/null` for added and deleted files, `new file mode`/`deleted file
//! mode`/`old mode`/`new mode` lines, full `index` lines (blob ids, so that
//! `git apply --3way` can fall back on a merge), `\ No newline at end of
//! file`, symlinks as mode 120000 with their target as content, and binary
//! files as `GIT binary patch` literals. Paths carry a prefix: the
//! workspace's folder in its repository, so that the diff applies from the
//! repository root as `git diff` output does.

use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::blob::{NULL_ID, binary_literal, blob_id};

/// A file's bytes and mode (or a symlink's target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    pub bytes: Vec<u8>,
    pub mode: u32,
    pub symlink: Option<PathBuf>,
}

/// What happened to a file (the transcript's `changes[].change`).
pub use runner_output::ChangeKind;

/// One changed file, with its contents before and after.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
    pub old: Option<FileContent>,
    pub new: Option<FileContent>,
    /// The original changed while the task ran (by hand, say): `old` is
    /// what it holds now, not what the task started from, so applying the
    /// change would silently undo that change. `--apply` reports it as a
    /// conflict.
    pub base_moved: bool,
}

fn git_mode(c: &FileContent) -> &'static str {
    if c.symlink.is_some() {
        "120000"
    } else if c.mode & 0o111 != 0 {
        "100755"
    } else {
        "100644"
    }
}

fn as_text(c: Option<&FileContent>) -> Option<&str> {
    match c {
        None => Some(""),
        Some(c) => {
            let probe = &c.bytes[..c.bytes.len().min(8192)];
            if probe.contains(&0) {
                None
            } else {
                std::str::from_utf8(&c.bytes).ok()
            }
        }
    }
}

/// The blob id of one side, or the null id when it is missing.
fn side_id(c: Option<&FileContent>) -> String {
    c.map_or_else(|| NULL_ID.to_string(), |c| blob_id(&c.bytes))
}

/// Renders one file's change; empty when nothing differs. As a patch
/// (`Some(prefix)`, the path after `prefix`: `examples/shop/` or empty) it
/// carries `index` lines and binary contents; for a person or a model
/// (`None`) it leaves both out.
pub fn render_file_diff(change: &FileChange, patch: Option<&str>) -> String {
    let path = &format!("{}{}", patch.unwrap_or(""), change.path);
    let mut out = format!("diff --git a/{path} b/{path}\n");
    let index = match patch {
        Some(_) => format!(
            "index {}..{}",
            side_id(change.old.as_ref()),
            side_id(change.new.as_ref())
        ),
        None => String::new(),
    };
    // `index` with a newline, or nothing.
    let index_line = |mode: &str| match (index.is_empty(), mode.is_empty()) {
        (true, _) => String::new(),
        (false, true) => format!("{index}\n"),
        (false, false) => format!("{index} {mode}\n"),
    };
    let (a_name, b_name) = match change.kind {
        ChangeKind::Added => {
            out += &format!(
                "new file mode {}\n{}",
                git_mode(change.new.as_ref().unwrap()),
                index_line("")
            );
            ("/dev/null".to_string(), format!("b/{path}"))
        }
        ChangeKind::Deleted => {
            out += &format!(
                "deleted file mode {}\n{}",
                git_mode(change.old.as_ref().unwrap()),
                index_line("")
            );
            (format!("a/{path}"), "/dev/null".to_string())
        }
        ChangeKind::Modified => {
            let (o, n) = (change.old.as_ref().unwrap(), change.new.as_ref().unwrap());
            let (om, nm) = (git_mode(o), git_mode(n));
            if om != nm {
                out += &format!("old mode {om}\nnew mode {nm}\n");
                if o.bytes != n.bytes {
                    out += &index_line("");
                }
            } else {
                out += &index_line(om);
            }
            (format!("a/{path}"), format!("b/{path}"))
        }
    };
    let old_bytes = change
        .old
        .as_ref()
        .map(|c| c.bytes.as_slice())
        .unwrap_or(&[]);
    let new_bytes = change
        .new
        .as_ref()
        .map(|c| c.bytes.as_slice())
        .unwrap_or(&[]);
    if old_bytes == new_bytes {
        // A mode change, or an empty file added or deleted: headers only.
        return out;
    }
    match (as_text(change.old.as_ref()), as_text(change.new.as_ref())) {
        (Some(old), Some(new)) => {
            let diff = TextDiff::from_lines(old, new);
            let mut udiff = diff.unified_diff();
            udiff
                .context_radius(3)
                .missing_newline_hint(true)
                .header(&a_name, &b_name);
            out += &udiff.to_string();
        }
        _ if patch.is_none() => {
            out += &format!("Binary files {a_name} and {b_name} differ\n");
        }
        _ => {
            // Forward (the new content), then reverse (the old one).
            out += "GIT binary patch\n";
            out += &binary_literal(new_bytes);
            out += &binary_literal(old_bytes);
        }
    }
    out
}

/// Renders all changes, in order, as one patch; paths after `prefix`.
pub fn render_git_diff(changes: &[FileChange], prefix: &str) -> String {
    changes
        .iter()
        .map(|c| render_file_diff(c, Some(prefix)))
        .collect()
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
            mode: crate::sys::mode(&meta),
            symlink: None,
        })
    }
}
