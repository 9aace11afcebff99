//! How paths are spelled in signatures.
//!
//! Rules match workspace-relative, `/`-separated paths with `.` and `..`
//! resolved (`src/../.env` is `.env`), and absolute paths for what lies
//! outside the workspace. A symlink gives a second spelling, its target, so
//! that an allow rule must match both and a deny rule either. Following
//! symlinks needs the disk and the workspace's own safety rules, so the
//! caller spells paths through [`SignaturePaths`]; [`LexicalPaths`] spells
//! them without touching the disk (policy self-tests, tools on paths that
//! do not exist).

use std::path::{Component, Path, PathBuf};

/// Spells paths for signatures, relative to a workspace root.
pub trait SignaturePaths {
    /// The workspace root (absolute). Glob operands are expanded under it.
    fn root(&self) -> &Path;

    /// The spellings of a path as asked (relative to the root, or absolute):
    /// the path with `..` resolved, workspace-relative or absolute when
    /// outside, then the symlinks' target when following them leads
    /// elsewhere. Never fails: a path that leaves the workspace still gets
    /// its signature, so the policy can name it.
    fn signature_paths(&self, input: &str) -> Vec<String>;

    /// The name under which PATH finds the program at the absolute `path`
    /// when it is that same file (`/usr/bin/rg` gives `rg`), so rules
    /// written for the name match; `None` otherwise, and by default (a
    /// policy alone reads no disk).
    fn program_on_path(&self, path: &str) -> Option<String> {
        let _ = path;
        None
    }
}

/// Spells paths lexically: no symlink is followed and the disk is not read.
#[derive(Debug, Clone)]
pub struct LexicalPaths {
    root: PathBuf,
}

impl LexicalPaths {
    /// Paths relative to `root`, taken as written (it need not exist).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

impl SignaturePaths for LexicalPaths {
    fn root(&self) -> &Path {
        &self.root
    }

    fn signature_paths(&self, input: &str) -> Vec<String> {
        let lexical = normalize_lexically(&self.root.join(input));
        vec![match lexical.strip_prefix(&self.root) {
            Ok(r) => to_slash(r),
            Err(_) => lexical.display().to_string(),
        }]
    }
}

/// Converts a relative path to a `/`-separated string, `.` for empty.
pub fn to_slash(p: &Path) -> String {
    let s = p
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    if s.is_empty() { ".".to_string() } else { s }
}

/// Resolves `.` and `..` without touching the file system. `..` above the
/// root stays at the root, as the kernel does.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for comp in path.components() {
        match comp {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                // `..` cancels a name, never another `..` of a relative path.
                let last_is_parent = out.components().next_back() == Some(Component::ParentDir);
                if last_is_parent || (!out.pop() && !path.is_absolute()) {
                    out.push("..");
                }
                if path.is_absolute() && out.as_os_str().is_empty() {
                    out.push("/");
                }
            }
            Component::Normal(c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_spelling() {
        let p = LexicalPaths::new("/ws");
        assert_eq!(p.signature_paths("src/../.env"), [".env"]);
        assert_eq!(p.signature_paths("."), ["."]);
        assert_eq!(p.signature_paths("../x"), ["/x"]);
        assert_eq!(p.signature_paths("/etc/passwd"), ["/etc/passwd"]);
        assert_eq!(
            normalize_lexically(Path::new("a/../../b")),
            PathBuf::from("../b")
        );
    }
}
