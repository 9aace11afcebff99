//! The conversation loop.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;

use super::batch::partition;
use super::events::{Event, EventSink, ToolCallRecord};
use super::pipeline::{Gate, execute, gate, record};
use crate::policy::PolicySet;
use crate::provider::{Message, ModelRequest, Provider, ProviderError, Usage};
use crate::tools::{Registry, ToolContext};

/// Limits of one agent run.
#[derive(Debug, Clone)]
pub struct AgentLimits {
    pub max_turns: u32,
    /// Most calls of one batch running at once.
    pub max_parallel: usize,
    /// Stop when this many tokens have been used in total (0: no limit).
    pub max_tokens_total: u64,
}

/// Why the loop stopped.
#[derive(Debug, Clone)]
pub enum AgentStop {
    /// The model answered without tool calls.
    Finished {
        text: String,
    },
    MaxTurns,
    TokenBudget,
    ProviderFailed(ProviderError),
}

/// Shared inputs of the loop.
pub struct AgentEnv<'a> {
    pub provider: &'a dyn Provider,
    pub registry: &'a Registry,
    pub policy: &'a PolicySet,
    pub ctx: Arc<ToolContext>,
    pub system: &'a str,
    pub sink: &'a dyn EventSink,
    /// Start of the task, for call timestamps.
    pub epoch: Instant,
}

/// Runs turns until the model stops. `usage` accumulates across calls.
pub async fn run_agent(
    env: &AgentEnv<'_>,
    messages: &mut Vec<Message>,
    limits: &AgentLimits,
    usage: &mut Usage,
) -> AgentStop {
    let mut turn: u32 = 0;
    loop {
        if turn >= limits.max_turns {
            return AgentStop::MaxTurns;
        }
        if limits.max_tokens_total > 0 && usage.total() >= limits.max_tokens_total {
            return AgentStop::TokenBudget;
        }
        turn += 1;
        env.sink.emit(&Event::TurnStarted { turn });
        let reply = env
            .provider
            .complete(ModelRequest {
                system: env.system,
                messages,
                tools: env.registry,
            })
            .await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) => return AgentStop::ProviderFailed(e),
        };
        usage.add(reply.usage);
        env.sink.emit(&Event::ModelResponded {
            turn,
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.len(),
            usage: reply.usage,
            raw: reply.raw.clone(),
        });
        messages.push(Message::Assistant {
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.clone(),
        });
        if reply.tool_calls.is_empty() {
            return AgentStop::Finished { text: reply.text };
        }
        let records = run_calls(env, &reply.tool_calls, turn, limits.max_parallel).await;
        for r in records {
            messages.push(Message::Tool {
                call_id: r.id.clone(),
                name: r.tool.clone(),
                content: r.content.clone(),
                is_error: r.status != super::CallStatus::Ok,
            });
            env.sink.emit(&Event::ToolFinished {
                record: Box::new(r),
            });
        }
    }
}

/// Runs one turn's calls in batches; records come back in the model's order.
pub async fn run_calls(
    env: &AgentEnv<'_>,
    calls: &[crate::provider::ToolCallRequest],
    turn: u32,
    max_parallel: usize,
) -> Vec<ToolCallRecord> {
    // Classify with a first look at each call; the real gate runs again
    // right before its batch, so a file changed by an earlier batch (a new
    // symlink, say) is seen.
    let safe: Vec<bool> = calls
        .iter()
        .map(|c| match gate(c, env.registry, env.policy, &env.ctx) {
            Gate::Run(a) => a.prepared.is_concurrency_safe(),
            Gate::Refused { .. } => true,
        })
        .collect();
    let mut out: Vec<Option<ToolCallRecord>> = vec![None; calls.len()];
    for (b, batch) in partition(&safe).into_iter().enumerate() {
        let results = futures::stream::iter(batch)
            .map(|i| {
                let req = &calls[i];
                async move {
                    let started = Instant::now();
                    env.sink.emit(&Event::ToolStarted {
                        turn,
                        id: req.id.clone(),
                        tool: req.name.clone(),
                    });
                    let rec = match gate(req, env.registry, env.policy, &env.ctx) {
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
