//! Running one turn's tool calls: gated, batched, recorded.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;

use super::batch::partition;
use super::events::{CallStatus, Event, EventSink, StartedCall, ToolCallRecord};
use super::hooks::{CallView, TaskHooks};
use super::pipeline::{Gate, call_arguments, execute, gate, record};
use crate::provider::ToolCallRequest;
use crate::tools::{Registry, ToolContext, ToolError};
use runner_policy::{PolicySet, Verdict};

/// What tool calls run against: the tools, the policy, the workspace.
pub struct ToolEnv<'a> {
    pub registry: &'a Registry,
    pub policy: &'a PolicySet,
    pub ctx: Arc<ToolContext>,
    pub sink: &'a dyn EventSink,
    /// Start of the task, for call timestamps.
    pub epoch: Instant,
    /// The task's hooks and its policy layers'.
    pub hooks: &'a TaskHooks,
    /// The shadow policy, deciding every call again without enforcing
    /// (`--shadow-policy`); none for most runs.
    pub shadow: Option<&'a PolicySet>,
}

tokio::task_local! {
    /// The id of the call running (what a child agent names as its parent
    /// call).
    static CALL_ID: Arc<str>;
}

/// The id of the tool call this code runs under, if any.
pub fn current_call_id() -> Option<Arc<str>> {
    CALL_ID.try_with(Arc::clone).ok()
}

/// Runs one gated call: announces it, executes it when approved, records
/// it. Its hooks and commands run under its span when the run is traced.
pub async fn run_one(
    env: &ToolEnv<'_>,
    req: &ToolCallRequest,
    gated: Gate,
    turn: u32,
    batch: u32,
) -> ToolCallRecord {
    let run =
        crate::telemetry::context::in_tool(turn, &req.id, run_gated(env, req, gated, turn, batch));
    // Only an agent that may start children needs to know its call.
    if env.ctx.delegate.is_none() {
        return run.await;
    }
    CALL_ID.scope(Arc::from(req.id.as_str()), run).await
}

async fn run_gated(
    env: &ToolEnv<'_>,
    req: &ToolCallRequest,
    gated: Gate,
    turn: u32,
    batch: u32,
) -> ToolCallRecord {
    let started = Instant::now();
    let arguments = Arc::new(call_arguments(req));
    let mut hook_runs = Vec::new();
    // Announced before any pre_tool hook runs, so that a run cancelled or
    // timed out while a hook runs still records the call (as cancelled).
    let call = Arc::new(StartedCall {
        turn,
        batch,
        id: req.id.clone(),
        tool: req.name.clone(),
        arguments: Arc::clone(&arguments),
        decision: match &gated {
            Gate::Run(a) => Some(Arc::clone(&a.decision)),
            Gate::Refused { decision, .. } => decision.clone(),
        },
        started_ms: started.duration_since(env.epoch).as_millis() as u64,
    });
    env.sink.emit(&Event::ToolStarted {
        call: Arc::clone(&call),
    });
    // A pre_tool hook can deny what the policy allowed, never the reverse;
    // its denial is the call's recorded decision.
    let mut hook_decision = None;
    let gated = match gated {
        Gate::Run(approved) if env.hooks.has_pre() => {
            let view = CallView {
                tool: &req.name,
                args: &arguments,
                decision: &approved.decision,
            };
            let (runs, denial) = env.hooks.pre_tool(&env.ctx, &view).await;
            hook_runs = runs;
            match denial {
                None => Gate::Run(approved),
                Some((hook, reason)) => {
                    let mut d = (*approved.decision).clone();
                    d.verdict = Verdict::Deny;
                    d.rule = Some(format!("pre_tool hook `{}`", hook.run));
                    d.reason = Some(reason.clone());
                    d.policy = Some(hook.source.clone());
                    let d = Arc::new(d);
                    hook_decision = Some(Arc::clone(&d));
                    Gate::Refused {
                        error: ToolError::permission(reason),
                        decision: Some(d),
                    }
                }
            }
        }
        g => g,
    };
    let result = match gated {
        Gate::Refused { error, .. } => Err(error),
        Gate::Run(approved) => execute(approved, req, env.registry, env.ctx.clone()).await,
    };
    let mut rec = record(&call, started, result);
    if let Some(d) = hook_decision {
        rec.decision = Some(d);
        rec.status = CallStatus::Denied;
        rec.display = format!("denied: {}", req.name);
    }
    if env.hooks.has_post()
        && matches!(rec.status, CallStatus::Ok | CallStatus::Error)
        && let Some(decision) = rec.decision.clone()
    {
        let view = CallView {
            tool: &req.name,
            args: &arguments,
            decision: &decision,
        };
        let status = rec.status.as_str();
        let (runs, added) = env
            .hooks
            .post_tool(&env.ctx, &view, status, &rec.content)
            .await;
        hook_runs.extend(runs);
        for a in added {
            rec.content.push_str("\n\n");
            rec.content.push_str(&a);
        }
    }
    rec.hooks = hook_runs;
    rec
}

/// Runs one turn's calls in batches; records come back in the model's order.
/// `finished[i]` holds the record of a call that already ran while the model
/// was streaming (see [`super::early`]); such calls are a prefix of the
/// first batch and are not run again.
pub async fn run_calls(
    env: &ToolEnv<'_>,
    calls: &[ToolCallRequest],
    turn: u32,
    max_parallel: usize,
    mut finished: Vec<Option<ToolCallRecord>>,
) -> Vec<ToolCallRecord> {
    finished.resize(calls.len(), None);
    // Gate every call once to learn which may run in parallel. The first
    // batch runs on these gates; later batches are gated again right before
    // they run, so what an earlier batch changed (a new symlink, say) is seen.
    let mut first: Vec<Option<Gate>> = calls
        .iter()
        .zip(&finished)
        .map(|(c, done)| {
            done.is_none()
                .then(|| gate(c, env.registry, env.policy, &env.ctx))
        })
        .collect();
    let safe: Vec<bool> = first
        .iter()
        .map(|g| match g {
            Some(Gate::Run(a)) => a.prepared.is_concurrency_safe(),
            _ => true,
        })
        .collect();
    let mut out = finished;
    for (b, batch) in partition(&safe).into_iter().enumerate() {
        let gates: Vec<(usize, Gate)> = batch
            .into_iter()
            .filter(|&i| out[i].is_none())
            .map(|i| {
                let g = match first[i].take() {
                    Some(g) if b == 0 => g,
                    _ => gate(&calls[i], env.registry, env.policy, &env.ctx),
                };
                (i, g)
            })
            .collect();
        let results =
            futures::stream::iter(gates)
                .map(|(i, gated)| async move {
                    (i, run_one(env, &calls[i], gated, turn, b as u32).await)
                })
                .buffered(max_parallel.max(1))
                .collect::<Vec<_>>()
                .await;
        for (i, rec) in results {
            out[i] = Some(rec);
        }
    }
    out.into_iter()
        .map(|r| r.expect("every call recorded"))
        .collect()
}
