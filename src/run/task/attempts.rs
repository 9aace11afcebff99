//! The third phase: the agent, attempt after attempt. Each attempt runs the
//! agent until it stops; when it finished and the task has checks, the
//! checks phase judges its work ([`super::checks::judge`]), and a failed
//! check's output goes back to the model for the next attempt, until the
//! checks pass, the retries are spent, or the task's time is.
//!
//! The agent's world is set up here: its hooks (the task's, then every
//! policy layer's) and, for a task with `agents:`, the power to start
//! children, whose spending is the task's.

use std::sync::Arc;

use serde_json::Value;

use super::checks::{Judged, judge};
use super::prepare::Ready;
use super::progress::Progress;
use super::scene::Scene;
use super::scene::{cancelled, timed_out};
use crate::engine::TurnLog;
use crate::engine::{AgentEnv, AgentLimits, AgentStop, Event, EventSink, FirstTurn, TaskHooks};
use crate::engine::{ToolEnv, run_agent};
use crate::provider::Provider;
use crate::report::{Outcome, OutcomeStatus};
use crate::run::agents::account::Account;
use crate::run::journal::TaskJournal;
use crate::task::Task;
use crate::workspace::IsolatedWorkspace;
use runner_policy::PolicySet;

/// The agent's last answer.
#[derive(Default)]
pub(super) struct Answer {
    pub text: String,
    /// The answer valid against the output schema.
    pub output: Option<Value>,
}

/// Runs the attempts until one ends the task, or the run is cancelled
/// (dropping the agent kills what it runs). `first`: the first turn's
/// answer, when it was asked for while the workspace was prepared (its
/// attempt announced then).
pub(super) async fn attempts(
    scene: &Scene<'_>,
    provider: &dyn Provider,
    ready: &Ready<'_>,
    first: Option<FirstTurn<'_>>,
    progress: &mut Progress,
    (sink, journal): (&dyn EventSink, Option<&TaskJournal<'_>>),
) -> (Outcome, Answer) {
    let task = scene.task;
    let policy = ready.setup.policy.clone();
    let mut all_hooks = task.hooks.clone();
    for layer in policy.layers() {
        all_hooks.extend(&layer.hooks);
    }
    let hooks = TaskHooks::new(&task.name, all_hooks.clone());
    let system = progress.system.clone();
    let mut limits = scene.limits.clone();
    let p = &ready.workspace;
    // Children: the task's agent may start them (`agents:`).
    let (ctx, account) = match &task.agents {
        None => (p.ctx.clone(), None),
        Some(agents) => {
            let account = Arc::new(Account::new(
                task.max_turns,
                task.max_cost,
                scene.epoch + task.timeout,
            ));
            limits.spending = Some(account.clone());
            let tree = Arc::new(crate::run::agents::Tree {
                task: Arc::new(task.clone()),
                agents: agents.clone(),
                reporter: scene.opts.reporter.clone(),
                epoch: scene.epoch,
                max_parallel_calls: scene.opts.max_parallel_calls,
                proxy_port: ready.proxy.as_ref().map(crate::net::Proxy::port),
                spill_dir: scene.task_out.join("tool-results"),
                hidden: p.hidden.clone(),
                tripwires: limits.tripwires.clone(),
            });
            let root = crate::run::agents::Delegator::new(
                tree,
                None,
                0,
                agents.profiles.keys().cloned().collect(),
                policy.clone(),
                ready.registry.clone(),
                p.ctx.clone(),
                all_hooks,
                account.clone(),
            );
            let ctx = Arc::new(p.ctx.with_delegate(Arc::new(root)));
            (ctx, Some(account))
        }
    };
    // A task run more than once spends its max_cost with its other runs.
    if let Some(m) = &scene.siblings {
        limits.spending = Some(m.spending(limits.spending.take()));
    }
    // The candidate policy, with the walls the run holds.
    let candidate = match scene.opts.shadow_policies.as_slice() {
        [] => &task.shadow_policy,
        run => run,
    };
    let shadow = (!candidate.is_empty()).then(|| {
        runner_policy::PolicySet::new(candidate.to_vec()).with_backstops(policy.backstops())
    });
    let env = AgentEnv {
        provider,
        system: &system,
        tools: ToolEnv {
            registry: &ready.registry,
            policy: &policy,
            ctx,
            sink,
            epoch: scene.epoch,
            hooks: &hooks,
            shadow: shadow.as_ref(),
        },
        turn_log: journal.map(|j| j as &dyn TurnLog),
    };
    let mut answer = Answer::default();
    let cancel = scene.opts.cancel.clone();
    let outcome = tokio::select! {
        o = each_attempt(scene, &env, (&p.iso, journal), &policy, &limits, first, progress, &mut answer) => o,
        why = cancel.cancelled() => cancelled(&why),
    };
    // The children's tokens and cost are the task's.
    if let Some(a) = &account {
        a.add_children_to(&mut progress.usage);
    }
    (outcome, answer)
}

#[allow(clippy::too_many_arguments)]
async fn each_attempt(
    scene: &Scene<'_>,
    env: &AgentEnv<'_>,
    (iso, journal): (&IsolatedWorkspace, Option<&TaskJournal<'_>>),
    policy: &PolicySet,
    limits: &AgentLimits,
    mut first: Option<FirstTurn<'_>>,
    progress: &mut Progress,
    answer: &mut Answer,
) -> Outcome {
    let task = scene.task;
    loop {
        progress.attempts += 1;
        let attempt = progress.attempts;
        if let Some(j) = journal {
            j.attempt(attempt);
        }
        let answered = first.take();
        if answered.is_none() {
            env.tools.sink.emit(&Event::AttemptStarted { attempt });
        }
        let remaining = task.timeout.saturating_sub(scene.epoch.elapsed());
        let agent = run_agent(
            env,
            &mut progress.conversation,
            limits,
            &mut progress.usage,
            answered,
            std::mem::take(&mut progress.start_turn),
        );
        let Ok(stop) = tokio::time::timeout(remaining, agent).await else {
            return timed_out(task);
        };
        match stopped(task, stop) {
            Ok(finished) => *answer = finished,
            Err(outcome) => return outcome,
        }
        if task.checks.is_empty() {
            return Outcome {
                status: OutcomeStatus::Passed,
                reason: "the agent finished".into(),
                error_class: None,
                tripwire: None,
            };
        }
        match judge(
            scene,
            iso,
            policy,
            &env.tools.ctx,
            progress,
            attempt,
            env.tools.sink,
        )
        .await
        {
            Judged::Ended(outcome) => return outcome,
            Judged::Retry => {
                if let Some(j) = journal {
                    j.checks(&progress.checks);
                }
            }
        }
        if scene.epoch.elapsed() >= task.timeout {
            return timed_out(task);
        }
    }
}

/// The agent's answer when it finished (the checks come next), else the
/// outcome it stopped the task with.
fn stopped(task: &Task, stop: AgentStop) -> Result<Answer, Outcome> {
    let tripwire = match &stop {
        AgentStop::Tripped(t) => Some(t.wire),
        _ => None,
    };
    let error_class = match &stop {
        AgentStop::ProviderFailed(e) => Some(e.class),
        AgentStop::ContextOverflow(o) => Some(o.error.class),
        _ => None,
    };
    let (status, reason) = match stop {
        AgentStop::Finished { text, output } => return Ok(Answer { text, output }),
        AgentStop::NoValidOutput(first) => (
            OutcomeStatus::Failed,
            format!("ran out of turns without an answer valid against output_schema: {first}"),
        ),
        AgentStop::MaxTurns => (
            OutcomeStatus::Failed,
            format!("ran out of turns (max_turns: {})", task.max_turns),
        ),
        AgentStop::TokenBudget => (
            OutcomeStatus::Failed,
            "the token budget (max_tokens_total) is spent".into(),
        ),
        AgentStop::HookFailed(why) => (OutcomeStatus::Failed, why),
        AgentStop::EmptyAnswer => (
            OutcomeStatus::Failed,
            "empty answer: the model's turn held neither text nor a tool call, twice".into(),
        ),
        AgentStop::CostBudget(cost) => (
            OutcomeStatus::Failed,
            format!(
                "the cost budget is spent: ${cost:.4} passed max_cost ${}{}",
                task.max_cost.unwrap_or_default(),
                if super::shared_cost::group_of(task).is_some() {
                    " (the task's runs together)"
                } else {
                    ""
                }
            ),
        ),
        AgentStop::ContextOverflow(o) => (OutcomeStatus::Failed, o.reason()),
        AgentStop::ProviderFailed(e) => (
            OutcomeStatus::Error,
            format!("the model provider failed: {e}"),
        ),
        AgentStop::Tripped(t) => (OutcomeStatus::Failed, t.reason),
    };
    Err(Outcome {
        status,
        reason,
        error_class,
        tripwire,
    })
}
