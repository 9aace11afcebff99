//! One task from start to finish, as a short sequence of phases. Each
//! phase is a module with the state only it needs; what one hands to the
//! next is a value:
//!
//! ```text
//! run_task ── an earlier run that ended (--resume) ──────────────► TaskResult, kept
//!    │
//!    ▼  Scene (read by all), Progress (&mut through all), Option<Prior>
//! admit       ─► the provider            | NotAdmitted ─┐
//! prepare     ─► Ready (world, 1st turn) | Unready ─────┤
//! attempts    ─► Outcome, Answer                        │
//!   └ checks     per attempt: Judged (ended, or retry)  │
//! violations  ─► Outcome, changes (settle)              │
//! finish      ◄─ Worked ◄───────────────────────────────┘ ─► TaskResult
//! ```
//!
//! - [`Scene`]: what every phase reads and none changes: the task, the
//!   run's options, the task's clock, its output folder, its policy
//!   layers, its connection log and the agent's limits.
//! - [`progress::Progress`]: what `--resume` restores and this run adds to
//!   (the conversation, spending, attempts, checks, violations, warnings).
//! - Handoffs: [`prepare::Ready`] (the copy, its sandbox and backstops, the
//!   MCP servers, the proxy, the first turn if it was asked ahead, the
//!   [`prepare::Setup`] the transcript reports) → [`attempts::Answer`] and
//!   an outcome → the changes ([`violations::settle`]) → [`finish::Worked`].
//!
//! Invariants:
//! - [`run_task`] never fails: every problem is the outcome, and every task
//!   that was not kept gets a transcript from [`finish::finish`].
//! - Nothing the policy denies editing leaves the copy: it is put back
//!   before each attempt's checks and after the last attempt, however it
//!   ended (a timeout, a cancellation), before the changes are taken.
//! - The checks see the workspace as it really is: the files the policy
//!   hid from the agent are back until they end.
//! - A cancellation or timeout while the copy is made waits for the copy
//!   to end, and it is removed.

mod admit;
mod attempts;
mod checks;
mod finish;
mod options;
mod prepare;
mod progress;
mod violations;
mod workspace;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::engine::{AgentLimits, EventSink};
use crate::provider::Provider;
use crate::report::progress::{Fanout, TaskEvents};
use crate::report::{Outcome, OutcomeStatus, TranscriptRecorder};
use crate::task::Task;
use runner_policy::PolicySet;

pub use options::{RunBudget, RunOptions, TaskResult, task_registry};

use admit::admit;
use attempts::attempts;
use finish::{Worked, finish};
use prepare::{Unready, prepare};
use progress::{Prior, Progress};
use violations::settle;

/// What every phase of a task reads and none changes.
struct Scene<'t> {
    task: &'t Task,
    opts: &'t RunOptions,
    /// The task's start: its timeout and the transcript's times count
    /// from here.
    epoch: Instant,
    /// The task's output folder (its spilled results, MCP servers' logs).
    task_out: PathBuf,
    /// The task's policy and `--policy` layers, before the run's
    /// backstops are known (the prepared workspace's has them).
    policy: Arc<PolicySet>,
    /// The task's connection decisions (proxy, `web_fetch`, supervisor).
    net_log: Arc<crate::net::NetLog>,
    /// The agent's limits, from the task and the run.
    limits: AgentLimits,
}

impl<'t> Scene<'t> {
    fn new(task: &'t Task, opts: &'t RunOptions) -> Self {
        let mut layers = vec![task.policy.clone()];
        layers.extend(opts.extra_policies.iter().cloned());
        let epoch = Instant::now();
        Self {
            task,
            opts,
            epoch,
            task_out: opts.out_dir.join(&task.name),
            policy: Arc::new(PolicySet::new(layers)),
            net_log: Arc::new(crate::net::NetLog::new(epoch)),
            limits: attempts::limits(task, opts.max_parallel_calls),
        }
    }
}

/// Runs one task. Never fails: problems become the outcome.
pub async fn run_task(task: &Task, opts: &RunOptions) -> TaskResult {
    opts.reporter.task_started(&task.name);
    let prior = match earlier_run(task, opts) {
        Ok(prior) => prior,
        Err(kept) => return *kept,
    };
    let scene = Scene::new(task, opts);
    let mut progress = Progress::new(task, prior.as_ref());
    let recorder = TranscriptRecorder::new(scene.epoch);
    let events = TaskEvents {
        task: &task.name,
        reporter: opts.reporter.as_ref(),
    };
    let sink = Fanout(vec![&recorder, &events]);
    let trace = opts.telemetry.as_ref().map(|t| t.task_context(&task.name));
    let worked = match admit(&scene, prior.as_ref()) {
        Err(e) => Worked::early(e.into(), None),
        Ok(provider) => {
            let work = work(
                &scene,
                provider.as_ref(),
                &mut progress,
                prior.as_ref(),
                &sink,
            );
            let mut worked = crate::telemetry::context::in_task(trace, work).await;
            // What was decided after the last batch of calls (checks, the
            // MCP servers' start), or before a task ended early.
            crate::engine::emit_connections(&scene.net_log, &sink);
            worked.server_adaptations = provider.adaptations();
            worked
        }
    };
    let result = finish(&scene, progress, worked, &recorder, prior);
    if let (Some(b), Some(cost)) = (&opts.budget, result.transcript.usage.cost_usd) {
        b.add(cost);
    }
    opts.reporter.task_finished(&result.transcript);
    if let Some(t) = &opts.telemetry {
        t.task_finished(&result.transcript);
    }
    result
}

/// With `--resume`: the earlier run to go on from, if any; `Err` with its
/// result when it ended (its outputs stand).
fn earlier_run(task: &Task, opts: &RunOptions) -> Result<Option<Prior>, Box<TaskResult>> {
    use crate::run::resume::{Previous, previous};
    if !opts.resume {
        return Ok(None);
    }
    match previous(&opts.out_dir, &task.name) {
        Previous::Keep(transcript, diff) => {
            opts.reporter.task_finished(&transcript);
            Err(Box::new(TaskResult {
                transcript: *transcript,
                diff,
                // Applied (or not) by the run that made them.
                changes: Vec::new(),
                workspace: task.workspace.clone(),
            }))
        }
        Previous::Resume(transcript, diff) => Ok(Some(Prior { transcript, diff })),
        Previous::Fresh => Ok(None),
    }
}

/// The phases that hold the task's world: prepare, attempts (with their
/// checks), then, once the world is closed, violations.
async fn work(
    scene: &Scene<'_>,
    provider: &dyn Provider,
    progress: &mut Progress,
    prior: Option<&Prior>,
    sink: &dyn EventSink,
) -> Worked {
    let mut ready = match prepare(scene, provider, progress, prior, sink).await {
        Ok(ready) => ready,
        Err(Unready { outcome, setup }) => return Worked::early(outcome, setup),
    };
    let first = ready.first.take();
    let (outcome, answer) = attempts(scene, provider, &ready, first, progress, sink).await;
    let (workspace, setup, mcp_sandbox) = ready.close().await;
    let (outcome, changes) = settle(
        &workspace.iso,
        &setup.policy,
        &mut progress.violations,
        outcome,
    );
    Worked {
        outcome,
        answer,
        setup: Some(setup),
        changes,
        mcp_sandbox,
        server_adaptations: Vec::new(),
    }
}

fn timed_out(task: &Task) -> Outcome {
    Outcome {
        status: OutcomeStatus::Timeout,
        reason: format!("timed out after {}", humanize(task.timeout)),
        error_class: None,
    }
}

fn cancelled(why: &str) -> Outcome {
    Outcome {
        status: OutcomeStatus::Cancelled,
        reason: format!("cancelled ({why})"),
        error_class: None,
    }
}

fn humanize(d: std::time::Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else if s > 0 {
        format!("{s}s")
    } else {
        format!("{}ms", d.as_millis())
    }
}
