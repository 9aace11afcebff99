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
            // Best-of-N: a passing attempt spares its task's later ones.
            if let Some(b) = opts.best_of.as_ref().filter(|_| r.passed()) {
                b.passed(&r.transcript.task);
            }
            // Written (and flushed to the disk) on a blocking thread: the
            // other tasks' turns go on meanwhile.
            let out = opts.out_dir.clone();
            let written = tokio::task::spawn_blocking(move || {
                // A kept task's outputs stand as the earlier run wrote them
                // (and applied them, or not).
                let written = if r.kept {
                    Ok(())
                } else {
                    write_task_outputs(&out, &r)
                };
                // The transcript stands for the task now: a journal (one a
                // kill left beside a kept task's included) goes.
                if written.is_ok() {
                    super::journal::remove(&out.join(&r.transcript.task));
                }
                (r, written)
            })
            .await;
            let r = match written {
                Ok((r, Ok(()))) => r,
                Ok((r, Err(e))) => {
                    eprintln!("error: writing outputs of {}: {e}", t.name);
                    r
                }
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            };
            (i, r)
        })
        .buffer_unordered(jobs.max(1))
        .collect()
        .await;
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
