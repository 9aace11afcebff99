//! Running a run's tasks: `--jobs` at once, each task's outputs written as
//! soon as it ends (so a crash later loses nothing finished), the results
//! in the order the tasks were given.

use futures::StreamExt;

use super::outputs::write_task_outputs;
use super::task::{RunOptions, TaskResult, run_task};
use crate::task::Task;

/// Runs `tasks`, at most `jobs` at once; the results in `tasks`' order.
pub async fn run_tasks(tasks: &[Task], opts: &RunOptions, jobs: usize) -> Vec<TaskResult> {
    let mut results: Vec<(usize, TaskResult)> = futures::stream::iter(tasks.iter().enumerate())
        .map(|(i, t)| async move {
            let r = run_task(t, opts).await;
            if r.kept {
                // Its outputs stand as the earlier run wrote them (and
                // applied them, or not); a journal a kill left beside
                // them goes.
                super::journal::remove(&opts.out_dir.join(&t.name));
                return (i, r);
            }
            match write_task_outputs(&opts.out_dir, &r) {
                // The transcript stands for the task now.
                Ok(()) => super::journal::remove(&opts.out_dir.join(&t.name)),
                Err(e) => eprintln!("error: writing outputs of {}: {e}", t.name),
            }
            (i, r)
        })
        .buffer_unordered(jobs.max(1))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
