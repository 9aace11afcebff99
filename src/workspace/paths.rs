//! Path safety: every path argument a model gives is resolved here.
//!
//! A path is accepted when, after `..` is resolved lexically *and* every
//! symlink along it is followed, it still lies inside the workspace root.
//! Doing both matters: `src/../../etc` escapes lexically, `src/link` escapes
//! only once the link is followed. The lexical, workspace-relative spelling is
//! kept too, because permission rules are written against what the model
//! asked for as well as what it would really touch.

use std::path::{Path, PathBuf};

pub use runner_policy::normalize_lexically;
use runner_policy::to_slash;

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("empty path")]
    Empty,
    #[error("path `{0}` is outside the workspace")]
    Outside(String),
    #[error(
        "path `{path}` resolves through a symlink to `{target}`, which is outside the workspace"
    )]
    SymlinkOutside { path: String, target: String },
    #[error("path `{0}` contains a NUL byte")]
    Nul(String),
}

/// A path argument resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Workspace-relative, `/`-separated, `..` resolved; `.` for the root.
    pub rel: String,
    /// The absolute path with symlinks followed (for existing prefixes).
    pub real: PathBuf,
    /// Workspace-relative form of `real` when following symlinks changed it.
    pub real_rel: Option<String>,
}

/// A workspace root. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// The root, opened once for [`Workspace::open_read`].
    root_fd: std::sync::Arc<super::open::RootFd>,
}

impl Workspace {
    /// Opens a workspace at `root`, which must exist and be a folder.
    pub fn new(root: impl AsRef<Path>) -> std::io::Result<Self> {
        let root = root.as_ref().canonicalize()?;
        if !root.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotADirectory,
                format!("{} is not a folder", root.display()),
            ));
        }
        Ok(Self {
            root,
            root_fd: Default::default(),
        })
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path argument, refusing anything that leaves the workspace.
    pub fn resolve(&self, input: &str) -> Result<ResolvedPath, PathError> {
        if input.is_empty() {
            return Err(PathError::Empty);
        }
        if input.contains('\0') {
            return Err(PathError::Nul(input.replace('\0', "\\0")));
        }
        let candidate = if Path::new(input).is_absolute() {
            PathBuf::from(input)
        } else {
            self.root.join(input)
        };
        let lexical = normalize_lexically(&candidate);
        let rel = match lexical.strip_prefix(&self.root) {
            Ok(r) => to_slash(r),
            Err(_) => return Err(PathError::Outside(input.to_string())),
        };
        let real = self.real_path(&lexical);
        let real_rel = match real.strip_prefix(&self.root) {
            Ok(r) => to_slash(r),
            Err(_) => {
                return Err(PathError::SymlinkOutside {
                    path: input.to_string(),
                    target: real.display().to_string(),
                });
            }
        };
        let real_rel = (real_rel != rel).then_some(real_rel);
        Ok(ResolvedPath {
            rel,
            real,
            real_rel,
        })
    }

    /// The spellings of a path for permission signatures (see
    /// [`runner_policy::SignaturePaths`]).
    pub fn signature_paths(&self, input: &str) -> Vec<String> {
        let candidate = if Path::new(input).is_absolute() {
            PathBuf::from(input)
        } else {
            self.root.join(input)
        };
        let lexical = normalize_lexically(&candidate);
        let real = self.real_path(&lexical);
        let spell = |p: &Path| match p.strip_prefix(&self.root) {
            Ok(r) => to_slash(r),
            Err(_) => p.display().to_string(),
        };
        let mut out = vec![spell(&lexical)];
        let real = spell(&real);
        if real != out[0] {
            out.push(real);
        }
        out
    }

    /// [`resolve_symlinks`] for a lexically normal path, with a fast path
    /// under the root: the root is canonical, so only the components below
    /// it are asked whether they are symlinks (one `readlink` each, where
    /// `canonicalize` asks every component from `/`). Any symlink, or
    /// anything unusual, takes the general path.
    fn real_path(&self, lexical: &Path) -> PathBuf {
        let hit = MEMO.with(|m| m.borrow().as_ref().and_then(|h| h.get(lexical).cloned()));
        if let Some(hit) = hit {
            return hit;
        }
        let real = self.real_path_uncached(lexical);
        MEMO.with(|m| {
            if let Some(h) = m.borrow_mut().as_mut() {
                h.insert(lexical.to_path_buf(), real.clone());
            }
        });
        real
    }

    fn real_path_uncached(&self, lexical: &Path) -> PathBuf {
        let Ok(below) = lexical.strip_prefix(&self.root) else {
            return resolve_symlinks(lexical);
        };
        let mut cur = self.root.clone();
        let mut comps = below.components();
        while let Some(c) = comps.next() {
            let std::path::Component::Normal(name) = c else {
                return resolve_symlinks(lexical);
            };
            cur.push(name);
            match std::fs::read_link(&cur) {
                // Exists and is not a symlink.
                Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {}
                // Nothing here: the rest does not exist either.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    cur.push(comps.as_path());
                    return normalize_lexically(&cur);
                }
                _ => return resolve_symlinks(lexical),
            }
        }
        cur
    }

    /// Opens a resolved path ([`ResolvedPath::real`]) for reading; a
    /// symlink that appeared on it since it was resolved is refused (see
    /// [`super::open`]).
    pub fn open_read(&self, real: &Path) -> std::io::Result<std::fs::File> {
        super::open::open_read_beneath(&self.root, &self.root_fd, real)
    }

    /// Writes a resolved path atomically (folders created as needed); a
    /// symlink that appeared on it since it was resolved is refused (see
    /// [`super::open`]).
    pub fn write_atomic(&self, real: &Path, bytes: &[u8]) -> std::io::Result<()> {
        super::open::write_beneath(&self.root, &self.root_fd, real, bytes)
    }

    /// The workspace-relative spelling of an absolute path under the root.
    pub fn relative(&self, abs: &Path) -> Option<String> {
        abs.strip_prefix(&self.root).ok().map(to_slash)
    }
}

/// The permission engine spells signature paths the way path safety
/// resolves them: symlinks followed, within this workspace.
impl runner_policy::SignaturePaths for Workspace {
    fn root(&self) -> &Path {
        &self.root
    }

    fn signature_paths(&self, input: &str) -> Vec<String> {
        Workspace::signature_paths(self, input)
    }

    fn program_on_path(&self, path: &str) -> Option<String> {
        same_program_on_path(Path::new(path), std::env::var_os("PATH")?.as_os_str())
    }

    /// The `#!` line of a file inside the workspace (symlinks followed
    /// within it; one outside it is not read).
    fn interpreter_line(&self, path: &str) -> Option<Vec<String>> {
        use std::io::Read;
        let real = self.resolve(path).ok()?;
        let mut head = [0u8; 256];
        let mut f = self.open_read(&real.real).ok()?;
        let n = f.read(&mut head).ok()?;
        runner_policy::parse_interpreter_line(&head[..n])
    }
}

/// The base name of `path` when the first executable of that name in the
/// absolute folders of `search` (a PATH) is the same file (device and
/// inode, links followed).
fn same_program_on_path(path: &Path, search: &std::ffi::OsStr) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let target = std::fs::metadata(path).ok()?;
    let found = std::env::split_paths(search)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            (m.is_file() && crate::sys::is_executable(&m)).then_some(m)
        })?;
    crate::sys::same_file(&found, &target).then(|| name.to_string())
}

/// Most dangling links followed by hand before giving up (as the kernel's
/// ELOOP limit does).
const MAX_LINK_HOPS: u32 = 40;

/// Follows symlinks on the longest existing prefix of an absolute, lexically
/// normalised path and appends the part that does not exist yet.
fn resolve_symlinks(path: &Path) -> PathBuf {
    resolve_symlinks_within(path, MAX_LINK_HOPS)
}

thread_local! {
    /// Resolutions made while a [`ResolveMemo`] lives on this thread.
    static MEMO: std::cell::RefCell<Option<std::collections::HashMap<PathBuf, PathBuf>>> =
        const { std::cell::RefCell::new(None) };
}

/// While it lives, a path resolved twice on this thread is looked up once:
/// for the synchronous checks of one call (validation, then signatures),
/// which ask the same question microseconds apart. Execution resolves again
/// afresh, outside any memo.
pub struct ResolveMemo(());

impl ResolveMemo {
    pub fn start() -> Self {
        MEMO.with(|m| *m.borrow_mut() = Some(Default::default()));
        Self(())
    }
}

impl Drop for ResolveMemo {
    fn drop(&mut self) {
        MEMO.with(|m| *m.borrow_mut() = None);
    }
}

fn resolve_symlinks_within(path: &Path, hops_left: u32) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canon) => {
                let mut out = canon;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return normalize_lexically(&out);
            }
            Err(_) => {
                // A dangling symlink: follow its target by hand so that a link
                // to a not-yet-existing file outside is still caught.
                // A loop (`a -> b -> a`) also fails to canonicalize: stop
                // after MAX_LINK_HOPS and report the path as written; it
                // cannot be opened anyway.
                if hops_left > 0
                    && let Ok(target) = std::fs::read_link(&existing)
                {
                    let base = existing.parent().unwrap_or(Path::new("/"));
                    let joined = normalize_lexically(&base.join(target));
                    let mut out = resolve_symlinks_within(&joined, hops_left - 1);
                    for part in rest.iter().rev() {
                        out.push(part);
                    }
                    return normalize_lexically(&out);
                }
                match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => return path.to_path_buf(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memo_answers_only_while_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        std::fs::create_dir_all(root.join("real")).unwrap();
        let memo = ResolveMemo::start();
        assert_eq!(ws.resolve("x/f").unwrap().real_rel, None);
        // Changed under the memo: the memo keeps its first answer...
        std::os::unix::fs::symlink(root.join("real"), root.join("x")).unwrap();
        assert_eq!(ws.resolve("x/f").unwrap().real_rel, None);
        drop(memo);
        // ...and without it the change is seen.
        assert_eq!(
            ws.resolve("x/f").unwrap().real_rel.as_deref(),
            Some("real/f")
        );
    }

    #[test]
    fn the_fast_path_agrees_with_canonicalize() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f.txt"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        std::os::unix::fs::symlink("missing-target", root.join("dangling")).unwrap();
        for p in [
            "a",
            "a/b/f.txt",
            "a/b/new.txt",
            "new/deeper/x",
            "link/b/f.txt",
            "link/new",
            "out/hosts",
            "dangling",
            "dangling/x",
            "a/b/f.txt/x",
            ".",
        ] {
            let lexical = normalize_lexically(&root.join(p));
            assert_eq!(ws.real_path(&lexical), resolve_symlinks(&lexical), "{p}");
        }
    }

    #[test]
    fn lexical_normalisation() {
        assert_eq!(
            normalize_lexically(Path::new("/a/b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/../..")), PathBuf::from("/"));
        assert_eq!(
            normalize_lexically(Path::new("a/./b")),
            PathBuf::from("a/b")
        );
    }

    #[test]
    fn resolve_inside_and_outside() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        assert_eq!(ws.resolve("src/../a.txt").unwrap().rel, "a.txt");
        assert_eq!(ws.resolve(".").unwrap().rel, ".");
        assert!(matches!(ws.resolve("../x"), Err(PathError::Outside(_))));
        assert!(matches!(
            ws.resolve("/etc/passwd"),
            Err(PathError::Outside(_))
        ));
        let abs = ws.root().join("src/new.rs");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap().rel, "src/new.rs");
        std::os::unix::fs::symlink("/etc", dir.path().join("etc")).unwrap();
        assert!(matches!(
            ws.resolve("etc/passwd"),
            Err(PathError::SymlinkOutside { .. })
        ));
        std::os::unix::fs::symlink("../../nowhere", dir.path().join("src/dangling")).unwrap();
        assert!(matches!(
            ws.resolve("src/dangling"),
            Err(PathError::SymlinkOutside { .. })
        ));
        // A symlink loop resolves (to itself) instead of recursing forever.
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        assert_eq!(ws.resolve("loop-a/x").unwrap().rel, "loop-a/x");
        std::os::unix::fs::symlink("../a.txt", dir.path().join("src/inner")).unwrap();
        let r = ws.resolve("src/inner").unwrap();
        assert_eq!(r.rel, "src/inner");
        assert_eq!(r.real_rel.as_deref(), Some("a.txt"));
    }
}

#[cfg(test)]
mod program_path_tests {
    use super::same_program_on_path;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_absolute_program_is_its_name_only_when_path_finds_the_same_file() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        let other = dir.path().join("other");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        for d in [&bin, &other] {
            std::fs::write(d.join("tool"), "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(d.join("tool"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        std::os::unix::fs::symlink(bin.join("tool"), other.join("alias")).unwrap();
        let search = std::env::join_paths([&bin]).unwrap();
        assert_eq!(
            same_program_on_path(&bin.join("tool"), &search).as_deref(),
            Some("tool")
        );
        // Another file of the same name is another program.
        assert_eq!(same_program_on_path(&other.join("tool"), &search), None);
        // Not on PATH at all.
        assert_eq!(same_program_on_path(&bin.join("nothing"), &search), None);
        // A relative PATH entry is never searched.
        let relative = std::env::join_paths([std::path::Path::new("bin")]).unwrap();
        assert_eq!(same_program_on_path(&bin.join("tool"), &relative), None);
    }
}
