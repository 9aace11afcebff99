//! `runner merge --out DIR SHARD_OUT...`: joins the output folders of
//! several `--shard K/N` runs (CI matrix jobs) into one: every task folder is
//! copied, and junit.xml and summary.md are written for all of them, as if
//! one run had run every task. The exit code is that of the whole run.

use std::path::{Path, PathBuf};

use super::{CliError, CliResult, Exit};
use crate::report::{OutcomeStatus, Transcript};
use crate::run::write_run_reports;
use crate::workspace::durable_write;

/// One task folder of an output folder.
pub(crate) struct Found {
    pub(crate) transcript: Transcript,
    pub(crate) dir: PathBuf,
    /// The diff of a task read from its journal (a run killed outright
    /// wrote no changes.diff).
    pub(crate) journal_diff: Option<String>,
}

impl Found {
    /// Its changes.diff (empty when missing), or its journal's diff.
    pub(crate) fn diff(&self) -> String {
        match &self.journal_diff {
            Some(d) => d.clone(),
            None => std::fs::read_to_string(self.dir.join("changes.diff")).unwrap_or_default(),
        }
    }
}

/// Why an output folder cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShardError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not a runner transcript: {source}", path.display())]
    Transcript {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{}: not a runner output folder (no junit.xml, no task transcripts)", .0.display())]
    NotOutput(PathBuf),
}

impl From<ShardError> for CliError {
    fn from(e: ShardError) -> Self {
        CliError::Invalid(e.to_string())
    }
}

/// The task folders of an output folder (those with a transcript.json,
/// or a journal a run killed outright left), and of each repository's
/// folder in it for a fleet run's (`OUT/REPOSITORY/TASK`), and of each
/// repeated task's (`OUT/TASK/attempt-K`).
pub(crate) fn read_shard(dir: &Path) -> Result<Vec<Found>, ShardError> {
    let mut found = Vec::new();
    read_tasks(dir, true, &mut found)?;
    if found.is_empty() && !dir.join("junit.xml").is_file() {
        return Err(ShardError::NotOutput(dir.to_path_buf()));
    }
    Ok(found)
}

/// The task folders right inside `dir` into `found`; with `repositories`,
/// also those of each folder that is no task's (a fleet's repository).
fn read_tasks(dir: &Path, repositories: bool, found: &mut Vec<Found>) -> Result<(), ShardError> {
    let read = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ShardError::Read { path, source }
    };
    let entries = std::fs::read_dir(dir).map_err(read(dir))?;
    for entry in entries {
        let entry = entry.map_err(read(dir))?;
        // A task a run killed outright left: its journal stands for it
        // (cut short, resumable), and comes along to the merged folder.
        if let Some((transcript, diff)) = crate::run::read_journal(&entry.path()) {
            found.push(Found {
                transcript,
                dir: entry.path(),
                journal_diff: Some(diff),
            });
            continue;
        }
        let file = entry.path().join("transcript.json");
        if !file.is_file() {
            if repositories && entry.path().is_dir() {
                let mut inner = Vec::new();
                read_tasks(&entry.path(), false, &mut inner)?;
                // A fleet's repository folder, or a repeated task's
                // (`--repeat`, `--attempts`: `OUT/TASK/attempt-K`).
                found.extend(inner.into_iter().filter(|f| {
                    f.transcript.repository.is_some()
                        || crate::report::repeats::attempt_of(&f.transcript.task).is_some()
                }));
            }
            continue;
        }
        let bytes = std::fs::read(&file).map_err(read(&file))?;
        let transcript: Transcript =
            serde_json::from_slice(&bytes).map_err(|source| ShardError::Transcript {
                path: file.clone(),
                source,
            })?;
        found.push(Found {
            transcript,
            dir: entry.path(),
            journal_diff: None,
        });
    }
    Ok(())
}

pub fn merge(out: &Path, shards: &[PathBuf]) -> CliResult {
    let mut all: Vec<Found> = Vec::new();
    for dir in shards {
        all.extend(read_shard(dir)?);
    }
    all.sort_by(|a, b| a.transcript.task.cmp(&b.transcript.task));
    for pair in all.windows(2) {
        if pair[0].transcript.task == pair[1].transcript.task {
            return Err(CliError::Invalid(format!(
                "task `{}` is in both {} and {}",
                pair[0].transcript.task,
                pair[0].dir.display(),
                pair[1].dir.display()
            )));
        }
    }
    for f in &all {
        let dest = out.join(&f.transcript.task);
        if dest == f.dir {
            continue;
        }
        copy_files(&f.dir, &dest)
            .map_err(|e| CliError::Failed(format!("copying {}: {e}", f.dir.display())))?;
    }
    let diffs: Vec<String> = all.iter().map(Found::diff).collect();
    let tasks: Vec<(&Transcript, &str)> = all
        .iter()
        .zip(&diffs)
        .map(|(f, d)| (&f.transcript, d.as_str()))
        .collect();
    write_run_reports(out, &tasks)
        .map_err(|e| CliError::Failed(format!("writing {}: {e}", out.display())))?;
    let passed = all
        .iter()
        .filter(|f| f.transcript.outcome.status == OutcomeStatus::Passed)
        .count();
    println!("{passed} passed, {} failed", all.len() - passed);
    // As `runner run`: shards whose unfinished tasks were all cut short
    // merge into a run that `--resume` goes on with (75).
    Ok(Exit::of_run(all.iter().map(|f| &f.transcript.outcome)))
}

/// Copies one task folder, each file atomically: its outputs and its
/// folders (`tool-results/`, the results spilled to files, which the
/// transcript's calls point to). Symlinks are not followed.
fn copy_files(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_file() {
            durable_write(&to.join(entry.file_name()), &std::fs::read(entry.path())?)?;
        } else if kind.is_dir() {
            copy_files(&entry.path(), &to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
