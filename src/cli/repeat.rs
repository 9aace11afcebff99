//! `runner run --repeat N`: every task run N times, each attempt a task
//! run of its own (its own copy, `OUT/TASK/attempt-K/` for its outputs),
//! so that a task's pass rate, pass@k and flakiness can be known
//! (`report::repeats`) and two runs compared (`runner compare`). Attempt
//! K of a scripted task with `scripts:` plays script K, round the list.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use super::CliError;
use super::run_args::RunArgs;
use crate::report::repeats::attempt_of;
use crate::run::{Keep, TaskResult};
use crate::task::Task;

/// The attempts of `tasks`, each `n` times (`name/attempt-K`).
pub(super) fn repeat(tasks: Vec<Task>, n: u32) -> Vec<Task> {
    tasks
        .into_iter()
        .flat_map(|t| {
            (1..=n).map(move |k| {
                let mut a = t.clone();
                a.name = format!("{}/attempt-{k}", t.name);
                if !t.scripts.is_empty() {
                    a.script = t.scripts[(k as usize - 1) % t.scripts.len()].clone();
                }
                a
            })
        })
        .collect()
}

/// The options that run each task more than once (`--repeat`,
/// `--attempts`, `--models`, `--params`) with the run's others: a count
/// of at least 1, and none of what takes one change per task (`--apply`,
/// `--push`; best-of-N keeps one, so it may apply), goes on from an
/// earlier run (`--resume`) or runs fleets (`--repos`).
pub(super) fn check(args: &RunArgs) -> Result<(), CliError> {
    for (flag, n) in [("--repeat", args.repeat), ("--attempts", args.attempts)] {
        if n == Some(0) {
            return Err(CliError::Invalid(format!(
                "{flag} 0: give 1 or more attempts"
            )));
        }
    }
    let many = [
        (
            "--repeat",
            args.repeat.is_some(),
            "which attempt's changes? --attempts keeps one",
        ),
        ("--attempts", args.attempts.is_some(), ""),
        (
            "--models",
            args.models.is_some(),
            "which variant's changes?",
        ),
        (
            "--params",
            !args.params_matrix.is_empty(),
            "which variant's changes?",
        ),
    ];
    for (flag, _, why_not_apply) in many.into_iter().filter(|(_, given, _)| *given) {
        let clashes = [
            (
                !why_not_apply.is_empty() && args.apply,
                format!("--apply ({why_not_apply})"),
            ),
            (
                !why_not_apply.is_empty() && args.push.is_some(),
                "--push".into(),
            ),
            (args.resume.is_some(), "--resume".into()),
            (args.repos.is_some(), "--repos".into()),
        ];
        if let Some((_, what)) = clashes.iter().find(|(on, _)| *on) {
            return Err(CliError::Invalid(format!("{flag} cannot go with {what}")));
        }
    }
    Ok(())
}

/// `--apply` under best-of-N: the kept attempts' changes alone.
pub(super) fn apply_kept_attempts(results: &mut Vec<TaskResult>, out: &Path, keep: Keep) -> bool {
    let chosen: HashSet<usize> = kept(results, keep).into_values().flatten().collect();
    type Numbered = Vec<(usize, TaskResult)>;
    let (mut taken, rest): (Numbered, Numbered) = std::mem::take(results)
        .into_iter()
        .enumerate()
        .partition(|(i, _)| chosen.contains(i));
    let (idx, mut only): (Vec<usize>, Vec<TaskResult>) = taken.drain(..).unzip();
    let ok = crate::run::apply_passed(&mut only, out);
    let mut all: Vec<(usize, TaskResult)> = idx.into_iter().zip(only).chain(rest).collect();
    all.sort_by_key(|(i, _)| *i);
    *results = all.into_iter().map(|(_, r)| r).collect();
    ok
}

/// Best-of-N's end: for each task, `OUT/TASK/kept` names the attempt
/// kept and `OUT/TASK/changes.diff` is its diff (neither when none
/// passed); a line each on stderr. How many tasks passed and failed.
pub(super) fn keep_and_say(results: &[TaskResult], out: &Path, keep: Keep) -> (usize, usize) {
    let (mut passed, mut failed) = (0, 0);
    for (task, chosen) in kept(results, keep) {
        let dir = out.join(&task);
        match chosen.filter(|&i| results[i].passed()) {
            Some(i) => {
                passed += 1;
                let name = &results[i].transcript.task;
                let attempt = name.rsplit('/').next().unwrap_or(name);
                let wrote = crate::workspace::durable_write(
                    &dir.join("kept"),
                    format!("{attempt}\n").as_bytes(),
                )
                .and_then(|_| {
                    crate::workspace::durable_write_str(
                        &dir.join("changes.diff"),
                        &crate::contain::redact(&results[i].diff),
                    )
                });
                if let Err(e) = wrote {
                    eprintln!("error: writing {}: {e}", dir.display());
                }
                eprintln!("runner: {task}: kept {attempt} (--keep {})", keep.as_str());
            }
            None => {
                failed += 1;
                let _ = std::fs::remove_file(dir.join("kept"));
                eprintln!("runner: {task}: no attempt passed");
            }
        }
    }
    (passed, failed)
}

/// For each task, the index in `results` of the attempt `keep` keeps,
/// or none when no attempt passed; by task name.
pub(super) fn kept(results: &[TaskResult], keep: Keep) -> BTreeMap<String, Option<usize>> {
    let mut by_task: BTreeMap<String, Vec<(u32, usize)>> = BTreeMap::new();
    for (i, r) in results.iter().enumerate() {
        if let Some((task, k)) = attempt_of(&r.transcript.task) {
            by_task.entry(task.to_string()).or_default().push((k, i));
        }
    }
    by_task
        .into_iter()
        .map(|(task, mut attempts)| {
            attempts.sort();
            let passing = attempts.iter().filter(|(_, i)| results[*i].passed());
            let chosen = match keep {
                Keep::FirstPass => passing.map(|(_, i)| *i).next(),
                Keep::Smallest => passing
                    .min_by_key(|(k, i)| (results[*i].diff.len(), *k))
                    .map(|(_, i)| *i),
                Keep::Cheapest => passing
                    .min_by(|(ka, a), (kb, b)| {
                        let cost = |i: usize| {
                            results[i]
                                .transcript
                                .usage
                                .cost_usd
                                .unwrap_or(f64::INFINITY)
                        };
                        cost(*a).total_cmp(&cost(*b)).then(ka.cmp(kb))
                    })
                    .map(|(_, i)| *i),
            };
            (task, chosen)
        })
        .collect()
}
