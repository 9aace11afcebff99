//! Git-style unified diffs of a workspace's changes.
//!
//! The output applies with `git apply` and `patch -p1`: `diff --git` headers,
//! `/dev/null` for added and deleted files, `new file mode`/`deleted file
//! mode`/`old mode`/`new mode` lines, `\ No newline at end of file`, and
//! symlinks as mode 120000 with their target as content. Binary files are
//! marked `Binary files ... differ` (such a hunk carries no content).

use std::path::PathBuf;

use similar::TextDiff;

/// A file's bytes and mode (or a symlink's target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    pub bytes: Vec<u8>,
    pub mode: u32,
    pub symlink: Option<PathBuf>,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Deleted,
    Modified,
}

/// One changed file, with its contents before and after.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: String,
    pub kind: ChangeKind,
    pub old: Option<FileContent>,
    pub new: Option<FileContent>,
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

/// Renders one file's change; empty when nothing differs.
pub fn render_file_diff(change: &FileChange) -> String {
    let path = &change.path;
    let mut out = format!("diff --git a/{path} b/{path}\n");
    let (a_name, b_name) = match change.kind {
        ChangeKind::Added => {
            out += &format!("new file mode {}\n", git_mode(change.new.as_ref().unwrap()));
            ("/dev/null".to_string(), format!("b/{path}"))
        }
        ChangeKind::Deleted => {
            out += &format!(
                "deleted file mode {}\n",
                git_mode(change.old.as_ref().unwrap())
            );
            (format!("a/{path}"), "/dev/null".to_string())
        }
        ChangeKind::Modified => {
            let (o, n) = (change.old.as_ref().unwrap(), change.new.as_ref().unwrap());
            let (om, nm) = (git_mode(o), git_mode(n));
            if om != nm {
                out += &format!("old mode {om}\nnew mode {nm}\n");
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
        _ => {
            out += &format!("Binary files {a_name} and {b_name} differ\n");
        }
    }
    out
}

/// Renders all changes, in order, as one patch.
pub fn render_git_diff(changes: &[FileChange]) -> String {
    changes.iter().map(render_file_diff).collect()
}
