//! What git's history may show in the copy: nothing the policy denies
//! reading.
//!
//! The copy's git view reads the original's object store through its
//! alternates ([`super::git_view`]), so every object there is readable in
//! the copy: `git log -p`, `git show REV:.env`, `git cat-file
//! --batch-all-objects --batch`. A `.env` committed once and removed since
//! stays in every commit before. So before the view is used:
//!
//! 1. **Scan.** Every path any reachable commit (or reflog entry) holds is
//!    listed once, with what the index stages (`git rev-list --all
//!    --reflog --indexed-objects --objects`, started in the background
//!    while the copy is made, and kept for the run per repository and
//!    state of its refs and index). When none is denied to reading, the
//!    view keeps the whole history.
//! 2. **Cut.** Otherwise the view gets an object store of its own, without
//!    alternates, holding one commit: HEAD's tree without the denied paths
//!    (the index without them too), written and packed by the runner with
//!    git's own tools. The branch keeps its name; other refs are left out.
//!    `git log`, `git diff` and `git blame` work on that one commit. The
//!    diff and `--apply` compare files with the original, not commits, so
//!    they stay exact; the transcript records the real HEAD.
//! 3. **Exposed.** A view that can be neither scanned nor cut (a partial
//!    clone missing objects, git too old) keeps its alternates; the run
//!    says so, and reads of history are decided strictly.
//!
//! Objects no ref or reflog reaches (a dropped stash collected by nothing
//! yet) are not scanned: where the policy denies reading something, a
//! store holding them is only read through a cut view or on its own
//! (documented in docs/src/sandbox.md).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// Where a repository's git keeps what the scan and the cut read: a view
/// of `git_view::RepoInfo` (which names this module, not the other way).
#[derive(Debug, Clone, Copy)]
pub struct RepoDirs<'a> {
    /// The repository's top folder.
    pub top: &'a Path,
    /// The folder all worktrees share (objects, refs).
    pub common_dir: &'a Path,
    /// This worktree's git folder (HEAD, index).
    pub git_dir: &'a Path,
    /// The workspace relative to `top`, `/`-separated; empty at the top.
    pub prefix: &'a str,
}

impl RepoDirs<'_> {
    fn objects(&self) -> PathBuf {
        self.common_dir.join("objects")
    }

    fn top(&self) -> &Path {
        self.top
    }
}

/// What a view's history is settled with: the paths the policy denies
/// reading (workspace-relative) and the scan of the repository's history.
pub type Settle<'a> = (&'a (dyn Fn(&str) -> bool + Sync), HistoryScan);

/// What the copy's git view shows of history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum History {
    /// All of it: no reachable commit holds a path the policy denies.
    Kept,
    /// One commit, HEAD's tree without the denied paths; `why` says what
    /// made it so (some of the denied paths history held, or why history
    /// could not be listed), `head` is the real HEAD.
    Cut { head: String, why: String },
    /// All of it, though it may hold denied content: why.
    Exposed(String),
}

/// The paths (repository-relative) of every object reachable from a
/// repository's refs and reflogs, or why they could not be listed.
type Listing = Arc<Result<Vec<String>, ScanError>>;

/// Why a repository's history could not be listed: git's words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ScanError(String);

/// Listings already made in this run, by object store and refs' state.
static LISTINGS: Mutex<Option<HashMap<(PathBuf, String), Listing>>> = Mutex::new(None);

/// A scan of a repository's history, running or done.
pub struct HistoryScan {
    key: (PathBuf, String),
    state: Scan,
}

enum Scan {
    Done(Listing),
    /// git, and what the thread reading its output as it goes (a pipe left
    /// unread would stop it once full) sends when git is done.
    Running(Child, std::sync::mpsc::Receiver<Vec<String>>),
}

/// How long a task waits for the scan once its copy is made: past it, git
/// is stopped and the view is cut (whose cost grows with HEAD's tree, not
/// with history), so a history of millions of commits costs a task at
/// most this. 10,000 commits take about 100 ms.
pub const SCAN_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// What the refs of a repository are now: their files' sizes and times
/// (a commit, a fetch or a reset changes them).
fn refs_state(repo: &RepoDirs) -> String {
    let mut out = String::new();
    let mut stack: Vec<PathBuf> = ["HEAD", "packed-refs", "refs", "logs"]
        .iter()
        .map(|n| repo.common_dir.join(n))
        .chain(["HEAD", "logs", "index"].map(|n| repo.git_dir.join(n)))
        .collect();
    while let Some(p) = stack.pop() {
        let Ok(meta) = p.symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
            continue;
        }
        let time = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.push_str(&format!("{}:{}:{time};", p.display(), meta.len()));
    }
    out
}

impl HistoryScan {
    /// Starts listing `repo`'s history, unless this run already has.
    pub fn start(repo: &RepoDirs) -> Self {
        let key = (repo.objects(), refs_state(repo));
        let cached = LISTINGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|m| m.get(&key).cloned());
        let state = match cached {
            Some(l) => Scan::Done(l),
            None => match crate::git::command(repo.top())
                .env("GIT_NO_LAZY_FETCH", "1")
                .args([
                    "rev-list",
                    "--all",
                    "--reflog",
                    "--indexed-objects",
                    "--objects",
                    "--filter=object:type=blob",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
            {
                Ok(mut child) => {
                    let stdout = child.stdout.take().expect("piped");
                    let (tx, rx) = std::sync::mpsc::channel();
                    std::thread::spawn(move || {
                        let _ = tx.send(paths_of(stdout));
                    });
                    Scan::Running(child, rx)
                }
                Err(e) => Scan::Done(Arc::new(Err(ScanError(format!("cannot run git: {e}"))))),
            },
        };
        Self { key, state }
    }

    /// The listing, waiting for it at most `budget` if it is still being
    /// made (then git is stopped, and the listing is an error).
    pub fn finish(self, budget: std::time::Duration) -> Listing {
        let (mut child, paths) = match self.state {
            Scan::Done(l) => return l,
            Scan::Running(child, rx) => (child, rx.recv_timeout(budget)),
        };
        let listing = match paths {
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(ScanError(format!(
                    "listing it took longer than {} s",
                    budget.as_secs_f64()
                )))
            }
            Ok(paths) => match child.wait() {
                Ok(st) if st.success() => Ok(paths),
                Ok(st) => Err(ScanError(format!("git rev-list failed ({st})"))),
                Err(e) => Err(ScanError(e.to_string())),
            },
        };
        let listing = Arc::new(listing);
        LISTINGS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(self.key, Arc::clone(&listing));
        listing
    }
}

/// The paths `git rev-list --objects` prints (`SHA PATH` lines), once
/// each, sorted.
fn paths_of(stdout: std::process::ChildStdout) -> Vec<String> {
    use std::io::BufRead;
    let mut paths: Vec<String> = std::io::BufReader::new(stdout)
        .split(b'\n')
        .map_while(Result::ok)
        .filter_map(|l| {
            let at = l.iter().position(|b| *b == b' ')?;
            Some(String::from_utf8_lossy(&l[at + 1..]).into_owned())
        })
        .collect();
    paths.sort_unstable();
    paths.dedup();
    paths
}

/// Forgets the listings this run made (benchmarks time a first task).
#[doc(hidden)]
pub fn forget_listings() {
    *LISTINGS.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// A repository-relative path as the workspace names it, when it lies in
/// the workspace (`prefix`, empty at the top).
fn in_workspace<'a>(prefix: &str, path: &'a str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(path);
    }
    path.strip_prefix(prefix)?.strip_prefix('/')
}

/// Decides what the view at `root` shows of `repo`'s history, and cuts it
/// when it must. `denied` takes workspace-relative paths.
pub fn settle(
    repo: &RepoDirs,
    root: &Path,
    denied: &(dyn Fn(&str) -> bool + Sync),
    scan: HistoryScan,
    budget: std::time::Duration,
) -> History {
    let listing = scan.finish(budget);
    let why = match &*listing {
        Ok(paths) => {
            let found: Vec<&str> = (paths.iter())
                .filter_map(|p| in_workspace(repo.prefix, p))
                .filter(|p| denied(p))
                .take(5)
                .collect();
            if found.is_empty() {
                return History::Kept;
            }
            format!("history held {}", found.join(", "))
        }
        // Unknown: cut, which needs HEAD's objects only.
        Err(e) => format!("its history could not be listed: {e}"),
    };
    let is_denied = |p: &str| in_workspace(repo.prefix, p).is_some_and(denied);
    match cut(repo, root, &is_denied) {
        Ok(head) => History::Cut { head, why },
        Err(e) => History::Exposed(format!(
            "its history holds paths the policy denies reading and could not be cut: {e}"
        )),
    }
}

/// Runs `cmd` with `input` on its standard input; its standard output.
fn run(cmd: &mut Command, input: Option<&[u8]>, what: &str) -> std::io::Result<Vec<u8>> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    if let Some(input) = input {
        let mut stdin = child.stdin.take().expect("piped");
        // A git that stops reading early says why below.
        let _ = stdin.write_all(input);
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "git {what}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// The paths of `listing` (`-z` separated) for which `keep` is true, `-z`
/// separated again.
fn select(listing: &[u8], keep: impl Fn(&str) -> bool) -> Vec<u8> {
    let mut out = Vec::new();
    for p in listing.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        if keep(&String::from_utf8_lossy(p)) {
            out.extend_from_slice(p);
            out.push(0);
        }
    }
    out
}

/// Gives the view at `root` a store of its own holding one commit, HEAD's
/// tree without the `denied` paths (repository-relative), and removes
/// those from its index. The real HEAD.
fn cut(repo: &RepoDirs, root: &Path, denied: &dyn Fn(&str) -> bool) -> std::io::Result<String> {
    let dot = root.join(".git");
    let objects = dot.join("objects");
    let index = dot.join("runner-cut-index");
    // Reads the original's objects, writes the copy's.
    let git = |dir: &Path| {
        let mut c = crate::git::command(dir);
        c.env("GIT_OBJECT_DIRECTORY", &objects)
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", repo.objects())
            .env("GIT_NO_LAZY_FETCH", "1");
        c
    };
    let with_index = || {
        let mut c = git(repo.top());
        c.env("GIT_INDEX_FILE", &index);
        c
    };
    let head = run(
        git(repo.top()).args(["show", "-s", "--format=%H %ct", "HEAD"]),
        None,
        "show HEAD",
    )?;
    let head = String::from_utf8_lossy(&head).trim().to_string();
    let (sha, time) = head
        .split_once(' ')
        .ok_or_else(|| std::io::Error::other("HEAD has no commit"))?;
    run(with_index().args(["read-tree", "HEAD"]), None, "read-tree")?;
    let listed = run(with_index().args(["ls-files", "-z"]), None, "ls-files")?;
    let remove = select(&listed, denied);
    run(
        with_index().args(["update-index", "--force-remove", "-z", "--stdin"]),
        Some(&remove),
        "update-index",
    )?;
    let tree = run(with_index().arg("write-tree"), None, "write-tree")?;
    let tree = String::from_utf8_lossy(&tree).trim().to_string();
    let _ = std::fs::remove_file(&index);
    let mut c = git(repo.top());
    c.args(["commit-tree", &tree, "-m"])
        .arg(format!(
            "HEAD's tree without the paths the policy denies reading\n\nThe runner cut this copy's history to this one commit: earlier commits hold\npaths the task's policy denies reading. The real HEAD is {sha}.\n"
        ))
        .env("GIT_AUTHOR_NAME", "runner")
        .env("GIT_AUTHOR_EMAIL", "runner@localhost")
        .env("GIT_AUTHOR_DATE", format!("{time} +0000"))
        .env("GIT_COMMITTER_NAME", "runner")
        .env("GIT_COMMITTER_EMAIL", "runner@localhost")
        .env("GIT_COMMITTER_DATE", format!("{time} +0000"));
    let commit = run(&mut c, None, "commit-tree")?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    // The copy's index without the denied paths; what it stages is kept.
    let listed = index_listing(root)?;
    run(
        crate::git::command(root).args(["update-index", "--force-remove", "-z", "--stdin"]),
        Some(&select(&listed, denied)),
        "update-index in the copy",
    )?;
    let staged = run(
        crate::git::command(root).args(["ls-files", "-s", "-z"]),
        None,
        "ls-files -s",
    )?;
    // The objects: the commit's, and the blobs the index stages.
    let mut wanted = run(
        git(repo.top()).args(["rev-list", "--objects", &commit]),
        None,
        "rev-list",
    )?;
    for entry in staged.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        // `MODE SHA STAGE\tPATH`
        if let Some(sha) = entry.split(|b| *b == b' ').nth(1) {
            wanted.extend_from_slice(sha);
            wanted.push(b'\n');
        }
    }
    let pack = objects.join("pack/pack");
    std::fs::create_dir_all(objects.join("pack"))?;
    run(
        git(repo.top()).args(["pack-objects", "-q"]).arg(&pack),
        Some(&wanted),
        "pack-objects",
    )?;
    // Only the new commit is reachable: one branch, named as HEAD names it.
    std::fs::remove_file(objects.join("info/alternates"))?;
    let _ = std::fs::remove_dir_all(dot.join("refs"));
    for f in ["packed-refs", "shallow"] {
        let _ = std::fs::remove_file(dot.join(f));
    }
    std::fs::create_dir_all(dot.join("refs/heads"))?;
    std::fs::create_dir_all(dot.join("refs/tags"))?;
    let head_file = std::fs::read_to_string(dot.join("HEAD"))?;
    match head_file.trim().strip_prefix("ref: ") {
        Some(r) if r.starts_with("refs/") && !r.contains("..") => {
            let path = dot.join(r);
            std::fs::create_dir_all(path.parent().expect("under refs"))?;
            std::fs::write(path, format!("{commit}\n"))?;
        }
        _ => std::fs::write(dot.join("HEAD"), format!("{commit}\n"))?,
    }
    Ok(sha.to_string())
}

/// The copy's index paths, `-z` separated.
fn index_listing(root: &Path) -> std::io::Result<Vec<u8>> {
    run(
        crate::git::command(root).args(["ls-files", "-z"]),
        None,
        "ls-files in the copy",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scan past its budget is stopped, and its view is cut: the worst
    /// case (millions of commits) costs a task the budget, not the
    /// history's size. Within the budget, a history without a denied
    /// path keeps its view whole.
    #[test]
    fn a_scan_past_its_budget_is_stopped_and_the_view_cut() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&top)
                .status()
                .unwrap();
            assert!(ok.success(), "{args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(top.join("a.txt"), "a\n").unwrap();
        git(&["add", "."]);
        git(&["commit", "-qm", "a"]);
        let dot = top.join(".git");
        let repo = RepoDirs {
            top: &top,
            common_dir: &dot,
            git_dir: &dot,
            prefix: "",
        };
        let listing = HistoryScan::start(&repo).finish(std::time::Duration::ZERO);
        let e = listing.as_ref().as_ref().unwrap_err().to_string();
        assert!(e.contains("longer than 0 s"), "{e}");
        // Kept for the run: a later task does not scan again.
        assert!(matches!(HistoryScan::start(&repo).state, Scan::Done(_)));
        forget_listings();
        let listing = HistoryScan::start(&repo).finish(SCAN_BUDGET);
        assert_eq!(
            listing.as_ref().as_ref().unwrap(),
            &vec!["a.txt".to_string()]
        );
    }
}
