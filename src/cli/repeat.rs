//! `runner run --repeat N`: every task run N times, each attempt a task
//! run of its own (its own copy, `OUT/TASK/attempt-K/` for its outputs),
//! so that a task's pass rate, pass@k and flakiness can be known
//! (`report::repeats`) and two runs compared (`runner compare`). Attempt
//! K of a scripted task with `scripts:` plays script K, round the list.

use super::CliError;
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

/// `--repeat`'s value with the run's other options: at least 1, and not
/// with what takes one change per task (`--apply`, `--push`), goes on
/// from an earlier run (`--resume`) or runs fleets (`--repos`).
pub(super) fn check(
    n: u32,
    apply: bool,
    push: bool,
    resume: bool,
    repos: bool,
) -> Result<(), CliError> {
    let clash = [
        (
            apply,
            "--apply (which attempt's changes? best-of-N, --attempts, is to come)",
        ),
        (push, "--push"),
        (resume, "--resume"),
        (repos, "--repos"),
    ];
    if n == 0 {
        return Err(CliError::Invalid(
            "--repeat 0: give 1 or more attempts".into(),
        ));
    }
    match clash.iter().find(|(on, _)| *on) {
        Some((_, what)) => Err(CliError::Invalid(format!("--repeat cannot go with {what}"))),
        None => Ok(()),
    }
}
