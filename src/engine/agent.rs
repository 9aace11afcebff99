//! The conversation loop.

use super::calls::{ToolEnv, run_calls};
use super::early::EarlyStarts;
use super::events::Event;
use crate::provider::{Message, ModelRequest, Provider, ProviderError, Usage};

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

/// Shared inputs of the loop: the model and what its calls run against.
pub struct AgentEnv<'a> {
    pub provider: &'a dyn Provider,
    pub system: &'a str,
    pub tools: ToolEnv<'a>,
}

/// Runs turns until the model stops. `usage` accumulates across calls.
pub async fn run_agent(
    env: &AgentEnv<'_>,
    messages: &mut Vec<Message>,
    limits: &AgentLimits,
    usage: &mut Usage,
) -> AgentStop {
    let mut turn: u32 = 0;
    // The same declarations every turn: a stable request prefix.
    let tools = env.tools.registry.specs();
    loop {
        if turn >= limits.max_turns {
            return AgentStop::MaxTurns;
        }
        if limits.max_tokens_total > 0 && usage.total() >= limits.max_tokens_total {
            return AgentStop::TokenBudget;
        }
        turn += 1;
        env.tools.sink.emit(&Event::TurnStarted { turn });
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let mut early = EarlyStarts::new(&env.tools, turn, limits.max_parallel);
        let request = env.provider.complete(ModelRequest {
            system: env.system,
            messages,
            tools: &tools,
            early: Some(&tx),
        });
        let reply = early.while_streaming(request, rx).await;
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                for r in early.abandon().await {
                    env.tools.sink.emit(&Event::ToolFinished {
                        record: std::sync::Arc::new(r),
                    });
                }
                return AgentStop::ProviderFailed(e);
            }
        };
        usage.add(reply.usage);
        env.tools.sink.emit(&Event::ModelResponded {
            turn,
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.len(),
            usage: reply.usage,
            raw: reply.raw.clone(),
        });
        let finished_text = reply.tool_calls.is_empty().then(|| reply.text.clone());
        messages.push(Message::Assistant {
            text: reply.text,
            tool_calls: reply.tool_calls,
            replay: reply.replay,
        });
        // The calls are read from the message just pushed (not copied).
        let Some(Message::Assistant { tool_calls, .. }) = messages.last() else {
            unreachable!("the assistant message was just pushed");
        };
        let finished = early.finish(tool_calls).await;
        if let Some(text) = finished_text {
            return AgentStop::Finished { text };
        }
        let records = run_calls(&env.tools, tool_calls, turn, limits.max_parallel, finished).await;
        for r in records {
            messages.push(Message::Tool {
                call_id: r.id.clone(),
                name: r.tool.clone(),
                content: r.content.clone(),
                is_error: r.status != super::CallStatus::Ok,
            });
            env.tools.sink.emit(&Event::ToolFinished {
                record: std::sync::Arc::new(r),
            });
        }
    }
}
