//! Running one turn's tool calls: gated, batched, recorded.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;

use super::batch::partition;
use super::events::{Event, EventSink, ToolCallRecord};
use super::pipeline::{Gate, call_arguments, execute, gate, record};
use crate::policy::PolicySet;
use crate::tools::{Registry, ToolContext};

/// What tool calls run against: the tools, the policy, the workspace.
pub struct ToolEnv<'a> {
    pub registry: &'a Registry,
    pub policy: &'a PolicySet,
    pub ctx: Arc<ToolContext>,
    pub sink: &'a dyn EventSink,
    /// Start of the task, for call timestamps.
    pub epoch: Instant,
}

/// Runs one turn's calls in batches; records come back in the model's order.
pub async fn run_calls(
    env: &ToolEnv<'_>,
    calls: &[crate::provider::ToolCallRequest],
    turn: u32,
    max_parallel: usize,
) -> Vec<ToolCallRecord> {
    // Gate every call once to learn which may run in parallel. The first
    // batch runs on these gates; later batches are gated again right before
    // they run, so what an earlier batch changed (a new symlink, say) is seen.
    let mut first: Vec<Option<Gate>> = calls
        .iter()
        .map(|c| Some(gate(c, env.registry, env.policy, &env.ctx)))
        .collect();
    let safe: Vec<bool> = first
        .iter()
        .map(|g| match g {
            Some(Gate::Run(a)) => a.prepared.is_concurrency_safe(),
            _ => true,
        })
        .collect();
    let mut out: Vec<Option<ToolCallRecord>> = vec![None; calls.len()];
    for (b, batch) in partition(&safe).into_iter().enumerate() {
        let gates: Vec<(usize, Gate)> = batch
            .into_iter()
            .map(|i| {
                let g = match first[i].take() {
                    Some(g) if b == 0 => g,
                    _ => gate(&calls[i], env.registry, env.policy, &env.ctx),
                };
                (i, g)
            })
            .collect();
        let results = futures::stream::iter(gates)
            .map(|(i, gated)| {
                let req = &calls[i];
                async move {
                    let started = Instant::now();
                    env.sink.emit(&Event::ToolStarted {
                        turn,
                        batch: b as u32,
                        id: req.id.clone(),
                        tool: req.name.clone(),
                        arguments: call_arguments(req),
                        decision: match &gated {
                            Gate::Run(a) => Some(a.decision.clone()),
                            Gate::Refused { decision, .. } => decision.clone(),
                        },
                        started_ms: started.duration_since(env.epoch).as_millis() as u64,
                    });
                    let rec = match gated {
                        Gate::Refused { error, decision } => record(
                            req,
                            turn,
                            b as u32,
                            started,
                            env.epoch,
                            Err(error),
                            decision,
                        ),
                        Gate::Run(approved) => {
                            let (result, decision) =
                                execute(approved, req, env.registry, env.ctx.clone()).await;
                            record(
                                req,
                                turn,
                                b as u32,
                                started,
                                env.epoch,
                                result,
                                Some(decision),
                            )
                        }
                    };
                    (i, rec)
                }
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
