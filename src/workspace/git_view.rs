//! git inside a task's copy: the same HEAD, branch, index, uncommitted and
//! untracked changes as the original checkout, and nothing the agent does
//! with git reaching the original repository.
//!
//! How: when the workspace lies inside a git repository, the copy mirrors
//! the repository's layout (the workspace's files at the same path below a
//! copy of the repository root) and gets a `.git` of its own at that root:
//!
//! - `objects/info/alternates` names the original's object store, so every
//!   commit is there without copying one object; objects the agent creates
//!   (a commit, a stash) are written into the copy's own store. The original
//!   store is only ever read.
//! - `HEAD`, the refs (`refs/`, `packed-refs`), the `index` (what is staged),
//!   `shallow` (CI checkouts are shallow), `info/exclude` and `config` are
//!   copied, so `git status`, `git diff`, `git log`, `git blame` and `git
//!   show` answer as in the original. Hooks are not copied; config keys
//!   that run programs or move the work tree (`core.hooksPath`,
//!   `core.fsmonitor`, `core.worktree`) and every credential (see
//!   [`super::git_config`]) are left out of the copy's config.
//! - When the workspace is a folder inside the repository, the index entries
//!   outside it are marked skip-worktree, so git does not report the files
//!   the copy leaves out as deleted (changes outside the folder show as
//!   clean). So are the files the copy leaves out because the policy
//!   denies reading them; where history holds such a path, the view's
//!   history is cut to one commit without them ([`super::history`]).
//!
//! - The ignore files of the folders between the repository's top and the
//!   workspace are copied to the same places, so that the copy ignores what
//!   the original does (a `node_modules/` in the top `.gitignore` of a
//!   monorepo), for the diff's walk and for the tools alike.
//! - Tracked files that an ignore rule matches (added with `git add -f`)
//!   are part of the checkout: [`TrackedIgnored`] lists them so that the
//!   copy and the diff hold them, where a walk that honours `.gitignore`
//!   would leave them out (and git in the copy would call them deleted).
//!
//! Measured against `git worktree add` in docs/src/performance-log.md. Without git
//! on the machine, or outside a repository, the copy has no `.git`, as
//! before.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::history::{History, Settle};

/// Where a workspace lies in its git repository.
#[derive(Debug, Clone)]
pub struct RepoInfo {
    /// The repository's top folder.
    top: PathBuf,
    /// The workspace relative to `top`, `/`-separated; empty at the top.
    pub prefix: String,
    /// The repository's git folder for this worktree (HEAD, index).
    git_dir: PathBuf,
    /// The folder shared by all worktrees (objects, refs, config).
    common_dir: PathBuf,
}

fn git(dir: &Path) -> Command {
    let mut c = crate::git::command(dir);
    c.stderr(Stdio::null());
    c
}

impl RepoInfo {
    /// The object store the copy's view names in its alternates.
    pub fn objects(&self) -> PathBuf {
        self.common_dir.join("objects")
    }

    /// The repository's top folder.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// Its folders, as the history's scan and cut read them.
    pub(super) fn dirs(&self) -> super::history::RepoDirs<'_> {
        super::history::RepoDirs {
            top: &self.top,
            common_dir: &self.common_dir,
            git_dir: &self.git_dir,
            prefix: &self.prefix,
        }
    }
}

/// The repository `workspace` lies in, if any (and if git is installed).
pub fn find_repo(workspace: &Path) -> Option<RepoInfo> {
    let out = git(workspace)
        .args([
            "rev-parse",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let top = PathBuf::from(lines.next()?).canonicalize().ok()?;
    let git_dir = PathBuf::from(lines.next()?);
    let common = PathBuf::from(lines.next()?);
    let common_dir = if common.is_absolute() {
        common
    } else {
        workspace.join(common)
    };
    let prefix = workspace
        .strip_prefix(&top)
        .ok()?
        .to_string_lossy()
        .into_owned();
    Some(RepoInfo {
        top,
        prefix,
        git_dir,
        common_dir: common_dir.canonicalize().ok()?,
    })
}

/// The tracked files of a workspace that an ignore rule matches, listed by
/// `git ls-files` in the background while the copy is made (its output
/// read as it comes, on a thread: a full pipe would stall git).
pub struct TrackedIgnored(Option<(std::process::Child, std::thread::JoinHandle<Vec<u8>>)>);

impl TrackedIgnored {
    /// Starts `git ls-files` in `workspace` (paths come relative to it).
    pub fn start(workspace: &Path) -> Self {
        Self::spawn(workspace, &["--ignored", "--exclude-standard"])
    }

    /// Lists every tracked file instead, for a caller that knows better
    /// which an ignore rule matches: `--ignored` stats every file, a
    /// quarter of a second for 100,000 (an overlay view knows from its
    /// whiteouts).
    pub fn start_every(workspace: &Path) -> Self {
        Self::spawn(workspace, &[])
    }

    fn spawn(workspace: &Path, extra: &[&str]) -> Self {
        let child = git(workspace)
            .args(["ls-files", "-z", "--cached"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn();
        let Ok(mut child) = child else {
            return Self(None);
        };
        let Some(mut out) = child.stdout.take() else {
            return Self(None);
        };
        let reader = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut out, &mut bytes);
            bytes
        });
        Self(Some((child, reader)))
    }

    /// The paths, relative to the workspace; none when git failed (the
    /// copy is then as it would be without them).
    pub fn finish(mut self) -> Vec<PathBuf> {
        let Some((mut child, reader)) = self.0.take() else {
            return Vec::new();
        };
        let bytes = reader.join().unwrap_or_default();
        match child.wait() {
            Ok(status) if status.success() => bytes
                .split(|b| *b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(crate::sys::os_from_bytes(p)))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A copy that failed before it asked for the list: git is stopped and
/// reaped, not left a zombie.
impl Drop for TrackedIgnored {
    fn drop(&mut self) {
        if let Some((mut child, reader)) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
        }
    }
}

/// Copies the ignore files (`.gitignore`, `.ignore`) of the folders above
/// the workspace, from the repository's top down, into `root` (the copy's
/// repository top) at the same places.
pub fn mirror_parent_ignores(repo: &RepoInfo, root: &Path) -> std::io::Result<()> {
    // "a/b" (the workspace) has "a" and "" above it; at the top, nothing.
    for rel in Path::new(&repo.prefix).ancestors().skip(1) {
        for name in [".gitignore", ".ignore"] {
            let from = repo.top.join(rel).join(name);
            if from.is_file() {
                std::fs::create_dir_all(root.join(rel))?;
                std::fs::copy(&from, root.join(rel).join(name))?;
            }
        }
    }
    Ok(())
}

/// What a view was made with.
#[derive(Debug)]
pub struct View {
    /// What the copy's config left out because it holds a credential, by
    /// key (see [`super::git_config`]).
    pub credentials_removed: Vec<String>,
    /// What the view shows of history.
    pub history: History,
}

/// Copies a file when it exists.
fn copy_if_present(from: &Path, to: &Path) -> std::io::Result<()> {
    match std::fs::copy(from, to) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Copies the files of a folder tree (refs), keeping its layout.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(from) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    std::fs::create_dir_all(to)?;
    for e in entries {
        let e = e?;
        let ft = e.file_type()?;
        if ft.is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        } else if ft.is_file() {
            std::fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// Makes `root/.git` (the copy's repository top) show what the original
/// shows; `index_shown`: an overlay view shows the original's index
/// there already. `root` holds the workspace's files at `repo.prefix`, without
/// `hidden` (workspace-relative paths the policy denies reading).
/// With `history` (what the policy denies reading, and the scan of the
/// repository's history), the view's history is settled too (see
/// [`super::history`]).
pub fn create_view(
    repo: &RepoInfo,
    root: &Path,
    hidden: &[String],
    history: Option<Settle<'_>>,
    index_shown: bool,
) -> std::io::Result<View> {
    let dot = root.join(".git");
    std::fs::create_dir_all(dot.join("objects/info"))?;
    std::fs::create_dir_all(dot.join("info"))?;
    std::fs::write(
        dot.join("objects/info/alternates"),
        format!("{}\n", repo.common_dir.join("objects").display()),
    )?;
    std::fs::copy(repo.git_dir.join("HEAD"), dot.join("HEAD"))?;
    copy_tree(&repo.common_dir.join("refs"), &dot.join("refs"))?;
    // A linked worktree keeps its own refs (bisect, worktree-local ones).
    if repo.git_dir != repo.common_dir {
        copy_tree(&repo.git_dir.join("refs"), &dot.join("refs"))?;
    }
    std::fs::create_dir_all(dot.join("refs/heads"))?;
    std::fs::create_dir_all(dot.join("refs/tags"))?;
    copy_if_present(
        &repo.common_dir.join("packed-refs"),
        &dot.join("packed-refs"),
    )?;
    copy_if_present(&repo.common_dir.join("shallow"), &dot.join("shallow"))?;
    // An overlay view may show the original's index as it is (git
    // replaces the file when it writes one: the original is never
    // written); a copy gets a copy.
    if !index_shown {
        copy_if_present(&repo.git_dir.join("index"), &dot.join("index"))?;
    }
    copy_if_present(
        &repo.common_dir.join("info/exclude"),
        &dot.join("info/exclude"),
    )?;
    // The config without hooks, another work tree or any credential (see
    // git_config); one that git cannot read fails the view.
    let credentials_removed = super::git_config::write_clean_config(
        &repo.common_dir.join("config"),
        &dot.join("config"),
        &repo.common_dir,
        &repo.top,
        &dot.join("info"),
    )?;
    let history = match history {
        Some((denied, scan)) => super::history::settle(
            &repo.dirs(),
            root,
            denied,
            scan,
            super::history::SCAN_BUDGET,
        ),
        None => History::Kept,
    };
    let view = View {
        credentials_removed,
        history,
    };
    if repo.prefix.is_empty() && hidden.is_empty() {
        return Ok(view);
    }
    let hidden: Vec<String> = hidden
        .iter()
        .map(|h| match repo.prefix.as_str() {
            "" => h.clone(),
            p => format!("{p}/{h}"),
        })
        .collect();
    skip_absent(root, &repo.prefix, &hidden)?;
    Ok(view)
}

/// Marks skip-worktree the index entries the copy does not hold: outside
/// `prefix` (the workspace's folder), or in `hidden` (paths from the
/// repository's top): git must not report those files as deleted.
fn skip_absent(root: &Path, prefix: &str, hidden: &[String]) -> std::io::Result<()> {
    let out = git(root).args(["ls-files", "-z"]).output()?;
    if !out.status.success() {
        return Err(std::io::Error::other("git ls-files failed in the copy"));
    }
    let inside = format!("{prefix}/");
    let mut absent: Vec<u8> = Vec::new();
    for path in out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let outside = !prefix.is_empty() && !path.starts_with(inside.as_bytes());
        if outside || at_or_beneath(hidden, path) {
            absent.extend_from_slice(path);
            absent.push(0);
        }
    }
    if absent.is_empty() {
        return Ok(());
    }
    let mut child = git(root)
        .args(["update-index", "--skip-worktree", "-z", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("piped");
        stdin.write_all(&absent)?;
    }
    if !child.wait()?.success() {
        return Err(std::io::Error::other(
            "git update-index --skip-worktree failed in the copy",
        ));
    }
    Ok(())
}

/// Whether `path` (`/`-separated) is one of `folders` or lies beneath one.
pub(super) fn at_or_beneath(folders: &[String], path: &[u8]) -> bool {
    folders.iter().any(|f| {
        path.strip_prefix(f.as_bytes())
            .is_some_and(|rest| rest.is_empty() || rest[0] == b'/')
    })
}
