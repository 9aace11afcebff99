//! Fleet runs (`runner run --repos FILE TASK...`): the same tasks in many
//! repositories, one report.
//!
//! ```text
//! repos.txt ─ repos::load ─► [Repo] ─ checkout (cache, --jobs at once) ─► a folder per repo
//!                                                        │
//!   TASK... ──────────── expand: every task in every repo ┴─► tasks `FOLDER/TASK` ─► run_tasks
//! ```
//!
//! - [`repos`]: the list, with `file:line` errors (exit 2, nothing run).
//! - [`checkout`]: each repository fetched shallowly into the cache and
//!   checked out at its ref, with git's own credentials.
//! - Expansion: each task runs with the repository's folder as its
//!   workspace (the run copies it, as always) under the name
//!   `FOLDER/TASK`, so its outputs land in `OUT/FOLDER/TASK/`, and its
//!   transcript records the repository (URL, ref, commit). A repository
//!   that cannot be fetched fails its tasks with git's words; the others
//!   go on.
//! - The run's reports group by repository: `junit.xml` has a suite per
//!   repository and `summary.md` a row per repository.
//! - `--max-failures N` ([`crate::run::FailureBreaker`]): once N
//!   repositories failed, no new one starts; the rest are skipped.
//! - [`push`]: `--push BRANCH`, a commit of each passing repository's
//!   changes pushed to its origin.

mod checkout;
mod push;
mod repos;

use std::path::Path;

use futures::StreamExt;

use crate::report::OutcomeStatus;
use crate::run::{TaskResult, unstarted};
use crate::task::Task;

pub use push::{AUTHOR, Push, check_author, push_all};
pub use repos::{Repo, default_cache, load};

/// A fleet's tasks: those to run, and those of the repositories that
/// could not be fetched (their results already).
pub struct Fleet {
    pub tasks: Vec<Task>,
    pub unfetched: Vec<TaskResult>,
}

/// Fetches every repository of `repos` into `cache` (`jobs` at once;
/// local paths read from `base`, the list's folder) and makes each task
/// of `tasks` a task of each.
pub async fn prepare(
    repos: &[Repo],
    (base, cache): (&Path, &Path),
    tasks: &[Task],
    jobs: usize,
) -> Fleet {
    let fetched: Vec<_> = futures::stream::iter(repos.iter().cloned())
        .map(|r| {
            let (base, cache) = (base.to_path_buf(), cache.to_path_buf());
            async move {
                let got = tokio::task::spawn_blocking({
                    let r = r.clone();
                    move || checkout::checkout(&r, &cache, &base)
                })
                .await;
                (r, got)
            }
        })
        .buffered(jobs.max(1))
        .collect()
        .await;
    let mut fleet = Fleet {
        tasks: Vec::new(),
        unfetched: Vec::new(),
    };
    for (repo, got) in fetched {
        let (dir, commit, failure) = match got {
            Ok(Ok(c)) => (c.dir, Some(c.commit), None),
            Ok(Err(e)) => (cache.join(&repo.folder), None, Some(e.to_string())),
            Err(e) => (cache.join(&repo.folder), None, Some(e.to_string())),
        };
        if let Some(why) = &failure {
            eprintln!("runner: {}: cannot fetch it: {why}", repo.spec());
        }
        for t in tasks {
            let mut task = t.clone();
            task.name = format!("{}/{}", repo.folder, t.name);
            task.workspace = dir.clone();
            task.repository = Some(runner_output::Repository {
                url: repo.url.clone(),
                git_ref: repo.git_ref.clone(),
                commit: commit.clone(),
                folder: repo.folder.clone(),
                pushed: None,
            });
            match &failure {
                Some(why) => fleet.unfetched.push(unstarted(
                    &task,
                    OutcomeStatus::Error,
                    format!("cannot fetch {}: {why}", repo.spec()),
                )),
                None => fleet.tasks.push(task),
            }
        }
    }
    fleet
}
