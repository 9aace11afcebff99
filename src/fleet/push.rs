//! `--push BRANCH`: each repository of a fleet whose tasks all passed and
//! changed something gets one commit of their changes on BRANCH, on top of
//! the commit its tasks ran on, pushed to its origin with git's own
//! credentials (never from inside the agent's sandbox). A branch already
//! there (an earlier run's) is replaced only if it is still what this run
//! saw (`--force-with-lease`); a push the remote rejects fails that
//! repository with git's words, and the others go on. Each task's
//! transcript records the branch, the commit and the commit it is on, so
//! a workflow can open the pull requests (`gh pr create --head BRANCH`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

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
    Apply {
        task: String,
        source: Box<PushError>,
    },
    #[error("the push was rejected: {0}")]
    Rejected(Box<PushError>),
    #[error("git {what}: {words}")]
    Git { what: String, words: String },
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
    let first = group.first().ok_or(PushError::NoCommit)?;
    let dir = &first.workspace;
    let base = first
        .transcript
        .repository
        .as_ref()
        .and_then(|r| r.commit.clone())
        .ok_or(PushError::NoCommit)?;
    git(
        dir,
        &["checkout", "--quiet", "--force", "--detach", &base],
        None,
    )?;
    git(dir, &["clean", "--quiet", "-ffdx"], None)?;
    for r in group.iter().filter(|r| !r.diff.is_empty()) {
        git(
            dir,
            &["apply", "--index", "--whitespace=nowarn", "-"],
            Some(&r.diff),
        )
        .map_err(|e| PushError::Apply {
            task: r.transcript.task.clone(),
            source: Box::new(e),
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
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["commit", "--quiet", "--no-verify", "-m", &message])
        .envs([
            ("GIT_AUTHOR_NAME", name),
            ("GIT_AUTHOR_EMAIL", email),
            ("GIT_COMMITTER_NAME", name),
            ("GIT_COMMITTER_EMAIL", email),
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| spawn_failed("commit", &e))?;
    if !out.status.success() {
        return Err(PushError::Git {
            what: "commit".into(),
            words: words(&out.stderr),
        });
    }
    let commit = git(dir, &["rev-parse", "HEAD"], None)?;
    let target = format!("refs/heads/{}", push.branch);
    // The branch as the remote has it now: replaced only if unchanged.
    let seen = git(dir, &["ls-remote", "origin", &target], None)?;
    let seen = seen.split_whitespace().next().unwrap_or_default();
    let lease = format!("--force-with-lease={target}:{seen}");
    git(
        dir,
        &[
            "push",
            "--quiet",
            &lease,
            "origin",
            &format!("HEAD:{target}"),
        ],
        None,
    )
    .map_err(|e| PushError::Rejected(Box::new(e)))?;
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

/// Runs git in `dir` (with `input` on its stdin); its trimmed stdout, or
/// its words on stderr.
fn git(dir: &Path, args: &[&str], input: Option<&str>) -> Result<String, PushError> {
    let what = args.first().copied().unwrap_or_default();
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_failed(what, &e))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| spawn_failed(what, &e))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(PushError::Git {
            what: what.into(),
            words: words(&out.stderr),
        })
    }
}

fn spawn_failed(what: &str, e: &std::io::Error) -> PushError {
    PushError::Git {
        what: what.into(),
        words: format!("cannot run git: {e}"),
    }
}

/// git's message on one line.
fn words(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("; ")
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
