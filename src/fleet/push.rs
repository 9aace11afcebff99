//! `--push BRANCH`: each repository of a fleet whose tasks all passed and
//! changed something gets one commit of their changes on BRANCH, on top of
//! the commit its tasks ran on, pushed to its origin with git's own
//! credentials (never from inside the agent's sandbox). A branch already
//! there (an earlier run's) is replaced only if it is still what this run
//! saw (`--force-with-lease`); a push the remote rejects fails that
//! repository with git's words, and the others go on. Each task's
//! transcript records the branch, the commit and the commit it is on, so
//! a workflow can open the pull requests (`gh pr create --head BRANCH`).

use std::path::Path;

use crate::git::{self, GitError};
use crate::report::OutcomeStatus;
use crate::run::TaskResult;

/// What `--push` was asked to do.
#[derive(Debug, Clone)]
pub struct Push {
    pub branch: String,
    /// `Name <email>`.
    pub author: String,
    /// The commit's message; none: the tasks' names.
    pub message: Option<String>,
}

/// Why a repository's changes were not pushed.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    #[error("--author `{0}`: expected `Name <email>`")]
    Author(String),
    #[error("the repository's commit is not known")]
    NoCommit,
    #[error("the changes of {task} do not apply: {source}")]
    Apply { task: String, source: GitError },
    #[error("the changes of {task} are refused: {why}")]
    Refused { task: String, why: String },
    #[error("the push was rejected: {0}")]
    Rejected(GitError),
    #[error(transparent)]
    Git(#[from] GitError),
}

/// The default author of the commits.
pub const AUTHOR: &str = "runner <runner@localhost>";

/// Pushes the changes of each repository of `results` whose tasks all
/// passed and changed something; rewrites their outputs in `out` with
/// what became of it. Whether every push that was due went through.
pub fn push_all(results: &mut [TaskResult], push: &Push, out: &Path) -> bool {
    let mut folders: Vec<String> = Vec::new();
    for r in results.iter() {
        if let Some(repo) = &r.transcript.repository
            && !folders.contains(&repo.folder)
        {
            folders.push(repo.folder.clone());
        }
    }
    let mut all = true;
    for folder in folders {
        let of_repo = |r: &TaskResult| {
            r.transcript
                .repository
                .as_ref()
                .is_some_and(|x| x.folder == folder)
        };
        let group: Vec<&TaskResult> = results.iter().filter(|r| of_repo(r)).collect();
        let due = group.iter().all(|r| r.passed()) && group.iter().any(|r| !r.diff.is_empty());
        if !due {
            continue;
        }
        let outcome = commit_and_push(&group, push);
        for r in results.iter_mut().filter(|r| of_repo(r)) {
            match &outcome {
                Ok(pushed) => {
                    if let Some(repo) = r.transcript.repository.as_mut() {
                        repo.pushed = Some(pushed.clone());
                    }
                }
                Err(why) => {
                    r.transcript.outcome.status = OutcomeStatus::Failed;
                    r.transcript.outcome.reason = format!("--push {}: {why}", push.branch);
                }
            }
            if let Err(e) = crate::run::write_task_outputs(out, r) {
                eprintln!("error: writing {}: {e}", r.transcript.task);
            }
        }
        match outcome {
            Ok(p) => eprintln!("runner: {folder}: pushed {} ({})", p.branch, p.commit),
            Err(why) => {
                all = false;
                eprintln!("runner: {folder}: --push {}: {why}", push.branch);
            }
        }
    }
    all
}

/// One repository's tasks' changes as one commit on the commit they ran
/// on, pushed as `push.branch`.
fn commit_and_push(
    group: &[&TaskResult],
    push: &Push,
) -> Result<runner_output::PushedBranch, PushError> {
    // Checked again where they are written (see run::apply).
    for r in group {
        if let Some(why) = crate::run::refused_change(r) {
            return Err(PushError::Refused {
                task: r.transcript.task.clone(),
                why,
            });
        }
    }
    let first = group.first().ok_or(PushError::NoCommit)?;
    let dir = &first.workspace;
    let base = first
        .transcript
        .repository
        .as_ref()
        .and_then(|r| r.commit.clone())
        .ok_or(PushError::NoCommit)?;
    let git = |args: &[&str]| git::run(dir, args, None);
    git(&["checkout", "--quiet", "--force", "--detach", &base])?;
    git(&["clean", "--quiet", "-ffdx"])?;
    for r in group.iter().filter(|r| !r.diff.is_empty()) {
        git::apply(dir, &["--index"], &r.whole_diff()).map_err(|source| PushError::Apply {
            task: r.transcript.task.clone(),
            source,
        })?;
    }
    let names: Vec<&str> = group
        .iter()
        .map(|r| {
            let t = r.transcript.task.as_str();
            t.split_once('/').map_or(t, |(_, name)| name)
        })
        .collect();
    let message = push
        .message
        .clone()
        .unwrap_or_else(|| format!("runner: {}", names.join(", ")));
    let (name, email) = split_author(&push.author)?;
    let mut commit = git::command(dir);
    commit.envs([
        ("GIT_AUTHOR_NAME", name),
        ("GIT_AUTHOR_EMAIL", email),
        ("GIT_COMMITTER_NAME", name),
        ("GIT_COMMITTER_EMAIL", email),
    ]);
    git::run_in(
        commit,
        &["commit", "--quiet", "--no-verify", "-m", &message],
        None,
    )?;
    let commit = git(&["rev-parse", "HEAD"])?;
    let target = format!("refs/heads/{}", push.branch);
    // The branch as the remote has it now: replaced only if unchanged.
    let seen = git(&["ls-remote", "origin", &target])?;
    let seen = seen.split_whitespace().next().unwrap_or_default();
    let lease = format!("--force-with-lease={target}:{seen}");
    git(&[
        "push",
        "--quiet",
        &lease,
        "origin",
        &format!("HEAD:{target}"),
    ])
    .map_err(PushError::Rejected)?;
    Ok(runner_output::PushedBranch {
        branch: push.branch.clone(),
        commit,
        base,
    })
}

/// `Name <email>` split; an error naming the form otherwise.
fn split_author(author: &str) -> Result<(&str, &str), PushError> {
    let bad = || PushError::Author(author.to_string());
    let (name, rest) = author.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    let name = name.trim();
    if name.is_empty() || email.trim().is_empty() {
        return Err(bad());
    }
    Ok((name, email.trim()))
}

/// Checks `--author` before anything runs.
pub fn check_author(author: &str) -> Result<(), PushError> {
    split_author(author).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authors_are_name_and_email() {
        assert_eq!(
            split_author("Bot Person <bot@example.com>").unwrap(),
            ("Bot Person", "bot@example.com")
        );
        assert!(split_author("bot@example.com").is_err());
        assert!(split_author("<bot@example.com>").is_err());
        assert!(check_author(AUTHOR).is_ok());
    }
}
