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
//! Where the features plug in:
//! - `--resume`: [`earlier_run`] keeps a task that ended or hands its
//!   [`progress::Prior`] on; [`progress::Progress::new`] starts from its
//!   conversation and spending, `admit` tells a scripted model where its
//!   script stands, `prepare` applies its changes to the copy (and sends
//!   no first turn ahead), `finish` joins its records to this run's.
//! - The journal (a run killed outright): `work` begins it once `prepare`
//!   is done ([`journaled::begin`]: the earlier runs' records and the
//!   conversation as this run starts it); the agent loop appends each
//!   turn's end through it, `attempts` its attempts and failed checks; the
//!   run removes it once the transcript is written, and `--resume` reads
//!   it when no transcript was (`run::journal`).
//! - Fallback models: the provider `admit` makes (a chain), and the
//!   `server_adaptations` `run_task` reads off it at the end.
//! - Subagents: `attempts` gives the agent the power to start children
//!   and adds their spending to the task's.
//! - Telemetry: `run_task` runs the world's phases under the task's trace
//!   context; the spans are built from the transcript `finish` writes.
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
mod journaled;
pub(crate) mod links;
mod options;
mod prepare;
mod progress;
mod scene;
mod shared_cost;
mod violations;
mod workspace;

use crate::engine::EventSink;
use crate::provider::Provider;
use crate::provider::batch::Seat;
use crate::report::TranscriptRecorder;
use crate::report::progress::{Fanout, TaskEvents};
use crate::task::Task;

pub use options::{FailureBreaker, RunBudget, RunOptions, TaskResult, task_registry};
pub(crate) use shared_cost::group_of;
pub(crate) use violations::revert_denied_changes;
pub(crate) use workspace::{CopyPlan, Prepared};

use admit::admit;
use attempts::attempts;
use finish::{Worked, finish};
use prepare::{Unready, prepare};
use progress::{Prior, Progress};
use scene::Scene;
use violations::settle;

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
        Ok((provider, seat)) => {
            let work = work(
                &scene,
                (provider.as_ref(), seat.as_deref()),
                &mut progress,
                prior.as_ref(),
                (&sink, &recorder),
            );
            let mut worked = crate::telemetry::context::in_task(trace, work).await;
            // What was decided after the last batch of calls (checks, the
            // MCP servers' start), or before a task ended early.
            crate::engine::emit_connections(&scene.net_log, &sink);
            worked.server_adaptations = provider.adaptations();
            worked.pending_batch = seat.and_then(|s| s.pending());
            worked
        }
    };
    let result = finish(&scene, progress, worked, &recorder, prior);
    if let (Some(b), Some(repo)) = (&opts.fleet, &task.repository)
        && !result.passed()
    {
        b.failed(&repo.folder);
    }
    if let (Some(b), Some(cost)) = (&opts.budget, result.transcript.usage.cost_usd) {
        b.add(cost);
    }
    if let Some(m) = &scene.siblings {
        m.set(result.transcript.usage.cost_usd.unwrap_or(0.0));
    }
    opts.reporter.task_finished(&result.transcript);
    if let Some(t) = &opts.telemetry {
        t.task_finished(&result.transcript);
    }
    result
}

/// The result of a task that never started (its repository could not be
/// fetched, a fleet's failure budget was spent): its transcript says why.
pub fn unstarted(task: &Task, status: crate::report::OutcomeStatus, reason: String) -> TaskResult {
    let mut transcript = finish::blank(task);
    transcript.outcome = crate::report::Outcome {
        status,
        reason,
        error_class: None,
        tripwire: None,
    };
    TaskResult {
        transcript,
        diff: String::new(),
        changes: Vec::new(),
        workspace: task.workspace.clone(),
        kept: false,
        policy: None,
        diff_prefix: String::new(),
    }
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
                kept: true,
                // `--resume --apply` checks its diff again.
                policy: Some(scene::task_policy(task, opts)),
                diff_prefix: String::new(),
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
    (provider, seat): (&dyn Provider, Option<&Seat>),
    progress: &mut Progress,
    prior: Option<&Prior>,
    (sink, recorder): (&dyn EventSink, &TranscriptRecorder),
) -> Worked {
    let mut ready = match prepare(scene, provider, progress, prior, sink).await {
        Ok(ready) => ready,
        Err(Unready { outcome, setup }) => return Worked::early(outcome, setup),
    };
    let first = ready.first.take();
    let journal = journaled::begin(scene, &ready, progress, prior, recorder);
    if let (Some(j), Some(seat)) = (&journal, seat) {
        seat.tell(j.batch_sink());
    }
    let (outcome, answer) = attempts(
        scene,
        provider,
        &ready,
        first,
        progress,
        (sink, journal.as_ref()),
    )
    .await;
    if let Some(j) = &journal {
        crate::engine::TurnLog::settled(j).await;
    }
    drop(journal);
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
        pending_batch: None,
    }
}
