//! The conversation loop.

use super::calls::{ToolEnv, run_calls};
use super::compact::{Trigger, is_context_overflow, make_room};
use super::conversation::Conversation;
use super::early::EarlyStarts;
use super::events::Event;
use super::first_turn::FirstTurn;
use super::limits::AgentLimits;
use crate::provider::retry::{RetryLog, noting_retries};
use crate::provider::{
    Message, ModelRequest, ModelTurn, Provider, ProviderError, RequestPurpose, ToolChoice,
    ToolSpec, Usage,
};

/// Why the loop stopped.
#[derive(Debug, Clone)]
pub enum AgentStop {
    /// The model answered without tool calls.
    Finished {
        text: String,
        /// The answer as JSON, when the task has an output schema.
        output: Option<serde_json::Value>,
    },
    /// Out of turns while the last answer broke the output schema: its
    /// first error.
    NoValidOutput(String),
    MaxTurns,
    TokenBudget,
    /// A `post_tool` hook failed: why.
    HookFailed(String),
    /// `max_cost` was passed; the cost so far.
    CostBudget(f64),
    /// The model's turn held neither text nor a tool call, and again when
    /// asked once more: no answer at all.
    EmptyAnswer,
    /// The vendor said the prompt is too long, and again after the
    /// conversation was made as small as it could be.
    ContextOverflow(Overflow),
    ProviderFailed(ProviderError),
    /// A tripwire (`max_denials`, a `fail_fast` class, a canary) ended the
    /// task after the turn's calls.
    Tripped(super::Tripped),
}

/// A prompt the model's window could not hold.
#[derive(Debug, Clone)]
pub struct Overflow {
    /// The vendor's last refusal.
    pub error: ProviderError,
    /// The window the runner compacted for (the server's, once it told).
    pub window: u64,
    /// Whether anything could be compacted.
    pub compacted: bool,
}

impl Overflow {
    /// Why the task stopped, naming the window the runner used.
    pub fn reason(&self) -> String {
        let after = if self.compacted {
            "even after compacting it"
        } else {
            "and nothing in it could be compacted"
        };
        format!(
            "the conversation does not fit the model's context window ({} tokens) {after}: {}",
            self.window, self.error
        )
    }
}

/// Shared inputs of the loop: the model and what its calls run against.
pub struct AgentEnv<'a> {
    pub provider: &'a dyn Provider,
    pub system: &'a str,
    pub tools: ToolEnv<'a>,
    /// Told at each turn's end (a task's journal); none for a child.
    pub turn_log: Option<&'a dyn super::TurnLog>,
}

/// Runs turns until the model stops. `usage` accumulates across calls.
/// `first`: the answer to the first turn's request, when it was asked for
/// before the workspace was ready (see [`super::first_turn`]).
pub async fn run_agent(
    env: &AgentEnv<'_>,
    conv: &mut Conversation,
    limits: &AgentLimits,
    usage: &mut Usage,
    mut first: Option<FirstTurn<'_>>,
    start_turn: u32,
) -> AgentStop {
    // A resumed task goes on from its last turn; its turns count.
    let mut turn: u32 = start_turn;
    // The first error of the last answer the output schema refused.
    let mut refused: Option<String> = None;
    // An empty turn is asked once more before it ends the work.
    let mut asked_again = false;
    // The same declarations every turn: a stable request prefix.
    let tools = env.tools.registry.specs();
    conv.fix_prefix(env.system, &tools);
    loop {
        // Every call of the last turn has its result: a point to go on from.
        turn_ended(env, turn, conv, usage).await;
        // What children spent (or hold) counts as the agent's own.
        let (child_turns, child_cost) = match &limits.spending {
            Some(s) => {
                s.publish(turn, usage.cost_usd);
                s.children()
            }
            None => (0, 0.0),
        };
        if turn + child_turns >= limits.max_turns {
            return match refused {
                Some(e) => AgentStop::NoValidOutput(e),
                None => AgentStop::MaxTurns,
            };
        }
        if limits.max_tokens_total > 0 && usage.total() >= limits.max_tokens_total {
            return AgentStop::TokenBudget;
        }
        if let (Some(max), Some(cost)) = (limits.max_cost, usage.cost_usd)
            && cost + child_cost > max
        {
            return AgentStop::CostBudget(cost + child_cost);
        }
        turn += 1;
        // The first turn's request announced itself when it was sent.
        let answered = first.take();
        if answered.is_none() {
            env.tools.sink.emit(&Event::TurnStarted { turn });
        }
        let reply = match next_turn(
            env,
            conv,
            usage,
            TurnOf {
                limits,
                tools: &tools,
                turn,
            },
            answered,
        )
        .await
        {
            Ok(r) => r,
            Err(stop) => return stop,
        };
        // A script's end (or its empty turn) is its author's answer.
        let scripted = env.provider.name() == "scripted";
        if reply.tool_calls.is_empty() && reply.text.trim().is_empty() && !scripted {
            // Neither text nor a tool call is no answer (a local server's
            // streamed turn can come back so): ask once more, at the cost
            // of a turn, then stop.
            if asked_again {
                return AgentStop::EmptyAnswer;
            }
            asked_again = true;
            continue;
        }
        let finished_text = reply.tool_calls.is_empty().then(|| reply.text.clone());
        let early = reply.early;
        conv.push(Message::Assistant {
            text: reply.text,
            tool_calls: reply.tool_calls,
            replay: reply.replay,
        });
        // The calls are read from the message just pushed (not copied).
        let Some(Message::Assistant { tool_calls, .. }) = conv.log().last() else {
            unreachable!("the assistant message was just pushed");
        };
        let finished = early.finish(tool_calls).await;
        if let Some(text) = finished_text {
            // The answer that ends the work is a point to go on from too
            // (the checks come next).
            turn_ended(env, turn, conv, usage).await;
            let Some(schema) = &limits.output else {
                return AgentStop::Finished { text, output: None };
            };
            match schema.check(&text) {
                Ok(v) => {
                    return AgentStop::Finished {
                        text,
                        output: Some(v),
                    };
                }
                // Back to the model, at the cost of a turn.
                Err(errors) => {
                    refused = errors.first().cloned();
                    conv.push(Message::User {
                        content: schema.feedback(&errors),
                    });
                    continue;
                }
            }
        }
        // The last turn's changes are read before calls that may write run
        // (the calls started early only read).
        if let Some(log) = env.turn_log {
            log.settled().await;
        }
        let mut records =
            run_calls(&env.tools, tool_calls, turn, limits.max_parallel, finished).await;
        if let Some(shadow) = env.tools.shadow {
            for r in &mut records {
                super::pipeline::decide_shadow(shadow, env.tools.registry, r);
            }
        }
        let connections = env
            .tools
            .ctx
            .net_log
            .as_ref()
            .map(|log| log.take())
            .unwrap_or_default();
        let tripped = limits.tripwires.as_ref().and_then(|w| {
            for s in w.canary_news(turn, &records) {
                env.tools.sink.emit(&Event::Canary(s));
            }
            w.observe(&records, &connections)
        });
        for c in connections {
            env.tools.sink.emit(&Event::Connection(c));
        }
        for r in records {
            conv.push(Message::Tool {
                call_id: r.id.clone(),
                name: r.tool.clone(),
                content: r.content.clone(),
                is_error: r.status != super::CallStatus::Ok,
            });
            env.tools.sink.emit(&Event::ToolFinished {
                record: std::sync::Arc::new(r),
            });
        }
        if let Some(why) = env.tools.hooks.failure() {
            return AgentStop::HookFailed(why);
        }
        // The model is not asked again: the turn's results are recorded,
        // and the task ends on the wire.
        if let Some(t) = tripped {
            return AgentStop::Tripped(t);
        }
    }
}

/// Tells the turn log (a task's journal) that turn `turn` ended, once
/// what it left going from the turn before is done (its lines in order).
async fn turn_ended(env: &AgentEnv<'_>, turn: u32, conv: &Conversation, usage: &Usage) {
    if let Some(log) = env.turn_log {
        log.settled().await;
        log.turn_ended(turn, conv.log(), usage);
    }
}

/// A model's answer and the calls it let start early.
struct Reply<'e, 'a> {
    text: String,
    tool_calls: Vec<crate::provider::ToolCallRequest>,
    replay: Option<serde_json::Value>,
    early: EarlyStarts<'e, 'a>,
}

/// Makes room in the conversation when needed, asks the model (unless
/// `answered` holds its answer already), prices and records its answer. A
/// prompt the vendor finds too long is compacted harder and sent once
/// more.
async fn next_turn<'e, 'a>(
    env: &'e AgentEnv<'a>,
    conv: &mut Conversation,
    usage: &mut Usage,
    this: TurnOf<'_>,
    mut answered: Option<FirstTurn<'_>>,
) -> Result<Reply<'e, 'a>, AgentStop> {
    let TurnOf {
        limits,
        tools: _,
        turn,
    } = this;
    let mut trigger = Trigger::Threshold;
    // The turn's failed tries, across the requests it took (a prompt too
    // long, a model that failed before the chain moved on).
    let mut failed_tries: Vec<runner_output::RetryRecord> = Vec::new();
    // Its requests' waits for the run's rate governor.
    let mut rate_limit_wait_ms = 0;
    let started = std::time::Instant::now();
    loop {
        let mut early = EarlyStarts::new(&env.tools, turn, limits.max_parallel);
        let (answer, retries, compacted) = match answered.take() {
            Some(first) => {
                let (answer, calls, retries) = first.into_parts();
                (early.while_streaming(answer, calls).await, retries, false)
            }
            None => ask(env, conv, usage, this, trigger, &mut early).await?,
        };
        let reply: ModelTurn = match answer {
            Ok(r) => r,
            Err(e) => {
                for r in early.abandon().await {
                    env.tools.sink.emit(&Event::ToolFinished {
                        record: std::sync::Arc::new(r),
                    });
                }
                // The request's own retries, and its last try, which the
                // turn goes on from (or ends with).
                failed_tries.extend(retries.take());
                rate_limit_wait_ms += retries.take_waited_ms();
                failed_tries.push(runner_output::RetryRecord {
                    attempt: failed_tries.len() as u32 + 1,
                    error: crate::provider::retry::summary_line(&e.message),
                    class: Some(e.class),
                    at_ms: started.elapsed().as_millis() as u64,
                    wait_ms: 0,
                });
                if !is_context_overflow(&e) {
                    // A chain's next model takes the turn over (room is
                    // made for its window first), unless calls of the
                    // failed answer already started.
                    let from = env.provider.name();
                    if !e.calls_started
                        && let Some(next) = env.provider.fall_back()
                    {
                        env.tools
                            .sink
                            .emit(&Event::ModelSwitched(runner_output::ModelSwitch {
                                turn,
                                from,
                                to: next.name,
                                class: e.class,
                            }));
                        trigger = Trigger::Threshold;
                        continue;
                    }
                    return Err(AgentStop::ProviderFailed(e));
                }
                if trigger == Trigger::ProviderError {
                    return Err(AgentStop::ContextOverflow(Overflow {
                        error: e,
                        window: context_now(env, limits).window,
                        compacted,
                    }));
                }
                trigger = Trigger::ProviderError;
                continue;
            }
        };
        let mut u = reply.usage;
        price(env, limits, &mut u, reply.service_tier.as_deref());
        usage.add(u);
        conv.calibrate(u.input_tokens);
        env.tools.sink.emit(&Event::ModelResponded {
            turn,
            text: reply.text.clone(),
            tool_calls: reply.tool_calls.len(),
            usage: u,
            raw: reply.raw,
            retries: {
                failed_tries.extend(retries.take());
                for (i, r) in failed_tries.iter_mut().enumerate() {
                    r.attempt = i as u32 + 1;
                }
                failed_tries
            },
            rate_limit_wait_ms: rate_limit_wait_ms + retries.take_waited_ms(),
            service_tier: reply.service_tier.clone(),
            model: env.provider.active().map(|m| m.name),
        });
        return Ok(Reply {
            text: reply.text,
            tool_calls: reply.tool_calls,
            replay: reply.replay,
            early,
        });
    }
}

/// Sets what a request's tokens cost at the price of the model that
/// answered (a fallback's own, once a chain moved on).
fn price(env: &AgentEnv, limits: &AgentLimits, u: &mut Usage, served: Option<&str>) {
    let standard = match env.provider.active() {
        Some(m) => m.pricing,
        None => limits.pricing,
    };
    let Some(served) = served else {
        u.cost_usd = standard.map(|p| p.cost(u));
        return;
    };
    // At the price of the tier that served it (`model_options.service_tier`).
    let name = env.provider.name();
    let model = name.split_once(':').map_or(name.as_str(), |(_, m)| m);
    let own = standard != crate::provider::models::pricing(model);
    u.cost_usd = standard
        .and_then(|p| crate::provider::tier::price(p, model, served, own))
        .map(|p| p.cost(u));
}

/// What a turn asks with: the limits, the declarations, its number.
#[derive(Clone, Copy)]
struct TurnOf<'x> {
    limits: &'x AgentLimits,
    tools: &'x [ToolSpec],
    turn: u32,
}

/// The window of the model answering now (a chain may have moved on), or
/// the one its server told (where the task left it to the runner), and
/// when to compact.
fn context_now(env: &AgentEnv, limits: &AgentLimits) -> super::compact::ContextLimits {
    let mut context = match env.provider.active() {
        Some(m) => super::compact::ContextLimits {
            window: m.window,
            ..limits.context
        },
        None => limits.context,
    };
    if let Some(told) = env.provider.window() {
        context.window = told;
    }
    context
}

/// Makes room in the conversation when needed and asks the model, starting
/// the calls of its answer that qualify while it streams; whether it
/// compacted.
async fn ask<'e, 'a>(
    env: &'e AgentEnv<'a>,
    conv: &mut Conversation,
    usage: &mut Usage,
    this: TurnOf<'_>,
    trigger: Trigger,
    early: &mut EarlyStarts<'e, 'a>,
) -> Result<(Result<ModelTurn, ProviderError>, RetryLog, bool), AgentStop> {
    let TurnOf {
        limits,
        tools,
        turn,
    } = this;
    let context = context_now(env, limits);
    let compactions = make_room(conv, &context, env.provider, turn, trigger)
        .await
        .map_err(AgentStop::ProviderFailed)?;
    let compacted = !compactions.is_empty();
    for mut c in compactions {
        price(env, limits, &mut c.usage, None);
        usage.add(c.usage);
        env.tools.sink.emit(&Event::ContextCompacted(c));
    }
    conv.sending();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let (request, retries) = noting_retries(env.provider.complete(ModelRequest {
        system: env.system,
        messages: conv.sent(),
        tools,
        early: Some(&tx),
        purpose: RequestPurpose::Turn,
        // Forcing a tool holds for the task's first turn only: an agent
        // that must call a tool every turn never finishes.
        tool_choice: if conv.log().len() == 1 {
            &limits.tool_choice
        } else {
            &ToolChoice::Auto
        },
        output_schema: limits.output.as_deref().map(|o| &o.schema),
    }));
    Ok((early.while_streaming(request, rx).await, retries, compacted))
}
