//! `runner run --apply`: each passing task's changes merged into its
//! original workspace, one task after another. A task whose changes do
//! not merge becomes a failure (`conflict`), its outputs rewritten with
//! the reason; its diff stays in `changes.diff`.

use std::path::Path;

use super::outputs::{APPLIED, write_task_outputs};
use super::task::TaskResult;
use crate::report::{Outcome, OutcomeStatus};
use crate::workspace::{ApplyError, apply_changes};

/// Applies, for `--resume --apply`, the changes of the tasks it kept
/// (they ended in an earlier run) that passed with changes no run
/// applied: that run was killed before its `--apply`, or had none. Their
/// copies are gone, so their `changes.diff` is applied to the original
/// (`git apply`, all of it or nothing; paths from the repository's root,
/// as the diff writes them); a task whose diff no longer applies becomes
/// a `conflict`, its diff kept. False when one could not be applied.
/// Never applies a task twice: each applied task is marked.
pub fn apply_kept(results: &mut [TaskResult], out: &Path) -> bool {
    let mut all_applied = true;
    for r in results
        .iter_mut()
        .filter(|r| r.kept && r.passed() && !r.diff.trim().is_empty())
    {
        let dir = out.join(&r.transcript.task);
        if dir.join(APPLIED).exists() {
            continue;
        }
        let top = repo_top(&r.workspace);
        let checked = match refused_in_diff(r, &top) {
            Some(why) => Err(format!("refused: {why}")),
            None => crate::git::apply(&top, &[], &r.diff).map_err(|e| e.to_string()),
        };
        match checked {
            Ok(()) => {
                eprintln!(
                    "[{}] applied its changes from an earlier run ({}) to {}",
                    r.transcript.task,
                    dir.join("changes.diff").display(),
                    r.workspace.display()
                );
                mark_applied(out, r);
            }
            Err(why) => {
                eprintln!("error: [{}] --apply: {why}", r.transcript.task);
                r.transcript.outcome = Outcome {
                    status: OutcomeStatus::Conflict,
                    reason: format!(
                        "--apply: its changes from an earlier run no longer apply: {why} (its diff is in changes.diff)"
                    ),
                    error_class: None,
                    tripwire: None,
                };
                if let Err(e) = write_task_outputs(out, r) {
                    eprintln!("error: writing the outputs of {}: {e}", r.transcript.task);
                }
                all_applied = false;
            }
        }
    }
    all_applied
}

/// Where a diff's paths start: the root of `workspace`'s repository, or
/// `workspace` outside one.
fn repo_top(workspace: &Path) -> std::path::PathBuf {
    crate::git::run(workspace, &["rev-parse", "--show-toplevel"], None)
        .map_or_else(|_| workspace.to_path_buf(), std::path::PathBuf::from)
}

/// Marks `r` applied: what a later `--resume --apply` reads.
fn mark_applied(out: &Path, r: &TaskResult) {
    let marker = out.join(&r.transcript.task).join(APPLIED);
    if let Err(e) = crate::workspace::durable_write_str(&marker, &r.workspace.display().to_string())
    {
        eprintln!("error: writing {}: {e}", marker.display());
    }
}

/// The first change of `r` its policy denies writing (a path it denies
/// editing, a link that leads a denied name elsewhere or out of the
/// workspace; see `task::links`), as `` `PATH`: RULE (LAYER) ``: what
/// `--apply` and `--push` refuse, checking the changes again where they
/// write them. The edit backstop has taken such changes out already, so
/// this holds if anything let one through.
pub(crate) fn refused_change(r: &TaskResult) -> Option<String> {
    let policy = r.policy.as_ref()?;
    r.changes.iter().find_map(|c| {
        let link = (c.new.as_ref()).and_then(|n| n.symlink.as_deref());
        super::task::links::edit_refusal(policy, &r.workspace, &c.path, link)
            .map(|(rule, layer)| format!("`{}`: {rule} ({layer})", c.path))
    })
}

/// [`refused_change`] for a task kept from an earlier run, whose changes
/// are only its diff's text (paths from `top`, the repository's root):
/// each file and each symlink the diff makes, checked again.
fn refused_in_diff(r: &TaskResult, top: &Path) -> Option<String> {
    let policy = r.policy.as_ref()?;
    let prefix = r
        .workspace
        .canonicalize()
        .ok()
        .and_then(|w| {
            w.strip_prefix(top.canonicalize().ok()?)
                .ok()
                .map(Path::to_path_buf)
        })
        .map(|p| p.to_string_lossy().into_owned())
        .filter(|p| !p.is_empty())
        .map(|p| format!("{p}/"))
        .unwrap_or_default();
    for (path, link) in diff_files(&r.diff) {
        let Some(rel) = path.strip_prefix(&prefix) else {
            return Some(format!("`{path}`: outside the task's workspace"));
        };
        let link = link.map(std::path::PathBuf::from);
        if let Some((rule, layer)) =
            super::task::links::edit_refusal(policy, &r.workspace, rel, link.as_deref())
        {
            return Some(format!("`{rel}`: {rule} ({layer})"));
        }
    }
    None
}

/// The files a diff writes, with the target of each symlink it makes.
fn diff_files(diff: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    let mut link = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git a/") {
            let path = rest.rsplit_once(" b/").map_or(rest, |(_, b)| b);
            out.push((path.to_string(), None));
            link = false;
        } else if line.ends_with(" 120000")
            && (line.starts_with("new file mode")
                || line.starts_with("new mode")
                || line.starts_with("index "))
        {
            link = true;
        } else if link
            && let Some(target) = line.strip_prefix('+').filter(|t| !t.starts_with("++"))
            && let Some(last) = out.last_mut()
        {
            last.1 = Some(target.to_string());
            link = false;
        }
    }
    out
}

/// Applies the changes of every passing task; false when one could not be
/// applied.
pub fn apply_passed(results: &mut [TaskResult], out: &Path) -> bool {
    let mut all_applied = true;
    for r in results
        .iter_mut()
        .filter(|r| r.passed() && !r.changes.is_empty())
    {
        if let Some(why) = refused_change(r) {
            eprintln!("error: [{}] --apply refused: {why}", r.transcript.task);
            r.transcript.outcome = Outcome {
                status: OutcomeStatus::Failed,
                reason: format!(
                    "--apply refused: {why}; nothing of the task was applied (its diff is in changes.diff)"
                ),
                error_class: None,
                tripwire: None,
            };
            if let Err(e) = write_task_outputs(out, r) {
                eprintln!("error: writing the outputs of {}: {e}", r.transcript.task);
            }
            all_applied = false;
            continue;
        }
        match apply_changes(&r.workspace, &r.changes) {
            Ok(n) => {
                eprintln!(
                    "[{}] applied {n} change(s) to {}",
                    r.transcript.task,
                    r.workspace.display()
                );
                mark_applied(out, r);
            }
            Err(e) => {
                eprintln!("error: [{}] --apply: {e}", r.transcript.task);
                let status = match e {
                    ApplyError::Conflict { .. } => OutcomeStatus::Conflict,
                    ApplyError::Io { .. } => OutcomeStatus::Error,
                };
                r.transcript.outcome = Outcome {
                    status,
                    reason: format!("--apply: {e} (its diff is in changes.diff)"),
                    error_class: None,
                    tripwire: None,
                };
                if let Err(e) = write_task_outputs(out, r) {
                    eprintln!("error: writing the outputs of {}: {e}", r.transcript.task);
                }
                all_applied = false;
            }
        }
    }
    all_applied
}
