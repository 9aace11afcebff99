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

    /// The `#!` line of the file at `path` (relative to the root, or
    /// absolute) when it is one inside the workspace that can be read now:
    /// its interpreter, and the one argument the kernel passes after it.
    /// `None` otherwise, and by default (a policy alone reads no disk).
    fn interpreter_line(&self, path: &str) -> Option<Vec<String>> {
        let _ = path;
        None
    }
}

/// The words of a `#!` line as the kernel reads them from the start of a
/// file (`head`): the interpreter, and the rest of the line, trimmed, as one
/// argument. `None` when `head` has no `#!` line.
pub fn parse_interpreter_line(head: &[u8]) -> Option<Vec<String>> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    let line = line.trim_matches(|c| c == ' ' || c == '\t' || c == '\r');
    let (interp, arg) = match line.find([' ', '\t']) {
        Some(i) => (
            &line[..i],
            line[i..].trim_matches(|c| c == ' ' || c == '\t'),
        ),
        None => (line, ""),
    };
    if interp.is_empty() {
        return None;
    }
    let mut words = vec![interp.to_string()];
    if !arg.is_empty() {
        words.push(arg.to_string());
    }
    Some(words)
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

    #[test]
    fn an_interpreter_line_is_read_as_the_kernel_reads_it() {
        let line = |s: &str| parse_interpreter_line(s.as_bytes());
        let w = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            line("#!/usr/bin/git push\nrest"),
            w(&["/usr/bin/git", "push"])
        );
        // The rest of the line is one argument, spaces and all.
        assert_eq!(
            line("#! /usr/bin/env -S git push \r\n"),
            w(&["/usr/bin/env", "-S git push"])
        );
        assert_eq!(line("#!/bin/sh"), w(&["/bin/sh"]));
        assert_eq!(line("#!\n"), None);
        assert_eq!(line("echo hi"), None);
    }

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
