//! What the file tools share: the signatures a path is decided by, a
//! text file read with its checks (regular, not binary, within size), the
//! error a path's I/O failure becomes, and a change as a diff.

use crate::tools::ToolContext;
use runner_policy::{Family, Signature};

/// `Family(path)` signatures for a path argument, with the symlink target's
/// spelling added when it differs (an allow must match both, a deny either).
pub(crate) fn path_signatures(ctx: &ToolContext, family: Family, path: &str) -> Vec<Signature> {
    ctx.workspace
        .signature_paths(path)
        .into_iter()
        .map(|p| Signature::new(family, p))
        .collect()
}

/// How much of a file's start is looked at to tell text from binary.
pub(crate) const BINARY_PROBE: usize = 8192;

/// Whether `bytes` look binary: a NUL byte in their first
/// [`BINARY_PROBE`] bytes, as git and grep tell.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PROBE)].contains(&0)
}

/// Reads a text file for editing, refusing binary files.
pub(crate) fn read_text(
    ws: &crate::workspace::Workspace,
    path: &std::path::Path,
    shown: &str,
) -> Result<String, crate::tools::ToolError> {
    use std::io::Read;
    let (mut file, meta) = regular_file(ws.open_read(path), shown)?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(e, shown))?;
    if looks_binary(&bytes) {
        return Err(crate::tools::ToolError::validation(format!(
            "{shown} is a binary file; it cannot be read or edited as text"
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        crate::tools::ToolError::validation(format!("{shown} is not valid UTF-8 text"))
    })
}

/// A file just opened, with its metadata (from the open descriptor, so
/// one path lookup serves both), refused unless it is a regular file.
pub(crate) fn regular_file(
    opened: std::io::Result<std::fs::File>,
    shown: &str,
) -> Result<(std::fs::File, std::fs::Metadata), crate::tools::ToolError> {
    let file = opened.map_err(|e| io_error(e, shown))?;
    let meta = file.metadata().map_err(|e| io_error(e, shown))?;
    if meta.is_dir() {
        return Err(io_error(std::io::ErrorKind::IsADirectory.into(), shown));
    }
    if !meta.is_file() {
        return Err(crate::tools::ToolError::validation(format!(
            "{shown} is not a regular file (a device, FIFO or socket)"
        )));
    }
    Ok((file, meta))
}

/// An I/O error as the model should read it.
pub(crate) fn io_error(e: std::io::Error, shown: &str) -> crate::tools::ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            crate::tools::ToolError::execution(format!("file not found: {shown}"))
        }
        // A refusal of our own says why (a symlink swapped in, say).
        std::io::ErrorKind::PermissionDenied if e.get_ref().is_some() => {
            crate::tools::ToolError::permission(format!("access to {shown} refused: {e}"))
        }
        std::io::ErrorKind::PermissionDenied => crate::tools::ToolError::permission(format!(
            "the file system refused access to {shown}"
        )),
        std::io::ErrorKind::IsADirectory => {
            crate::tools::ToolError::validation(format!("{shown} is a folder, not a file; use ls"))
        }
        _ => crate::tools::ToolError::execution(format!("{shown}: {e}")),
    }
}

/// A git-style diff of one file's text change, for metadata.
pub(crate) fn text_diff(path: &str, old: Option<&str>, new: &str) -> String {
    use crate::workspace::{ChangeKind, FileChange, FileContent, render_file_diff};
    let content = |s: &str| FileContent {
        bytes: s.as_bytes().to_vec(),
        mode: 0o100644,
        symlink: None,
    };
    render_file_diff(
        &FileChange {
            path: path.to_string(),
            kind: if old.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Added
            },
            old: old.map(content),
            new: Some(content(new)),
            base_moved: false,
        },
        None,
    )
}

/// Counts added and removed lines of a diff.
pub(crate) fn diff_stats(diff: &str) -> (usize, usize) {
    let mut add = 0;
    let mut del = 0;
    for l in diff.lines() {
        if l.starts_with('+') && !l.starts_with("+++") {
            add += 1;
        } else if l.starts_with('-') && !l.starts_with("---") {
            del += 1;
        }
    }
    (add, del)
}
