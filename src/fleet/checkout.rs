//! Each repository of a fleet, shallowly fetched into the cache
//! (`--repos-cache`) and checked out at its ref: the first run clones, a
//! later one fetches into the same folder. Git runs with its own
//! credentials (helpers, the ssh agent) and never prompts; nothing of the
//! agent's sandbox is involved.
//!
//! One path for every kind of ref: `git fetch --depth 1 origin REF` takes
//! a branch, a tag or a commit, and the checkout is `FETCH_HEAD`, detached
//! and cleaned, so a cached folder never keeps an earlier run's files.

use std::path::{Path, PathBuf};

use super::repos::Repo;
use crate::git::{self, GitError};

/// A repository checked out at its ref.
#[derive(Debug, Clone)]
pub struct Checkout {
    /// Its folder in the cache: the workspace of its tasks.
    pub dir: PathBuf,
    /// The commit checked out.
    pub commit: String,
}

/// Why a repository could not be checked out: git's own words.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    #[error("cannot make {}: {source}", .dir.display())]
    Folder {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Git(#[from] GitError),
}

/// `repo` at its ref in `cache` (its URL's local paths read from `base`,
/// the list's folder).
pub fn checkout(repo: &Repo, cache: &Path, base: &Path) -> Result<Checkout, CheckoutError> {
    let dir = cache.join(&repo.folder);
    let url = remote_of(&repo.url, base);
    let git = |args: &[&str]| git::run(&dir, args, None);
    if dir.join(".git").is_dir() {
        git(&["remote", "set-url", "origin", &url])?;
    } else {
        std::fs::create_dir_all(&dir).map_err(|source| CheckoutError::Folder {
            dir: dir.clone(),
            source,
        })?;
        git(&["init", "--quiet"])?;
        git(&["remote", "add", "origin", &url])?;
    }
    let wanted = repo.git_ref.as_deref().unwrap_or("HEAD");
    git(&[
        "fetch",
        "--quiet",
        "--depth",
        "1",
        "--no-tags",
        "origin",
        wanted,
    ])?;
    git(&["checkout", "--quiet", "--force", "--detach", "FETCH_HEAD"])?;
    git(&["clean", "--quiet", "-ffdx"])?;
    let commit = git(&["rev-parse", "HEAD"])?;
    Ok(Checkout { dir, commit })
}

/// The remote git is given: a URL as it is; a local path made absolute
/// from `base`.
fn remote_of(url: &str, base: &Path) -> String {
    let is_url = url.contains("://") || url.split_once(':').is_some_and(|(h, _)| h.contains('@'));
    if is_url || Path::new(url).is_absolute() {
        url.to_string()
    } else {
        // Absolute: git runs in the clone's folder.
        let path = base.join(url);
        std::path::absolute(&path)
            .unwrap_or(path)
            .display()
            .to_string()
    }
}
