//! Making room in a conversation that would no longer fit the model's
//! context window.
//!
//! Before each request the conversation's size is estimated
//! ([`Conversation::estimate`]). Past `compact_at` of the window, room is
//! made in two steps, each only when the one before was not enough:
//!
//! 1. The oldest tool results are replaced by a line saying where the full
//!    text is (the transcript keeps it). The latest turn's results are
//!    never touched: the model has not read them yet.
//! 2. The model is asked for a summary of the work so far, in a request of
//!    its own with no tools (the conversation rendered as text, so no
//!    vendor sees a tool result without its call), and the conversation
//!    continues from the task prompt, the summary and the latest turns.
//!
//! A cut is only ever made before an assistant message, so a tool call and
//! its result stay together: every vendor rejects a result whose call is
//! not in the message right before it. When the vendor still answers that
//! the prompt is too long, the agent compacts harder (every result out,
//! then a summary) and retries once.

use runner_output::{Compaction, CompactionMethod, Message, Usage};

use super::conversation::{Conversation, message_chars};
use crate::provider::{ModelRequest, Provider, ProviderError, RequestPurpose, ToolChoice};

/// The model's window and when to compact.
#[derive(Debug, Clone, Copy)]
pub struct ContextLimits {
    /// Tokens.
    pub window: u64,
    /// Share of the window that triggers a compaction.
    pub compact_at: f64,
}

impl ContextLimits {
    fn threshold(&self) -> u64 {
        (self.window as f64 * self.compact_at) as u64
    }

    /// What a compaction aims for: well under the threshold, so that the
    /// next turns fit without another one (and keep the cache warm).
    fn target(&self, hard: bool) -> u64 {
        let share = if hard { 0.45 } else { 0.65 };
        (self.window as f64 * self.compact_at * share) as u64
    }
}

/// Why room is being made (the transcript's own type).
pub(crate) use runner_output::CompactionTrigger as Trigger;

/// Results shorter than this are left alone.
const STUB_MIN_CHARS: usize = 240;

/// Characters of each tool result and argument list rendered for the
/// summary request.
const SUMMARY_EXCERPT_CHARS: usize = 400;

const SUMMARY_SYSTEM: &str = "You write the working notes of a coding agent whose conversation no longer fits its context window. The agent will continue from your notes alone.";

const SUMMARY_ASK: &str = "Summarise the work so far for the agent to continue from: what the task is, what has been done (files read, changed, commands run and their results), what was learned, and what remains. Be concrete (paths, names, numbers); answer with the summary only.";

/// Whether a provider's error says the request did not fit the window
/// (OpenAI, Anthropic, Gemini, and the servers that copy them).
pub(crate) fn is_context_overflow(e: &ProviderError) -> bool {
    e.class == runner_output::ErrorClass::ContextOverflow
}

/// Makes room when the next request would not fit (or the vendor said
/// so): the compactions made, in order.
pub(crate) async fn make_room(
    conv: &mut Conversation,
    limits: &ContextLimits,
    provider: &dyn Provider,
    turn: u32,
    trigger: Trigger,
) -> Result<Vec<Compaction>, ProviderError> {
    let hard = trigger == Trigger::ProviderError;
    let before = conv.estimate();
    if !hard && before <= limits.threshold() {
        return Ok(vec![]);
    }
    let target = limits.target(hard);
    let mut done = Vec::new();
    let record = |method, before: (u64, usize), conv: &mut Conversation, usage| Compaction {
        turn,
        method,
        trigger,
        tokens_before: before.0,
        tokens_after: conv.estimate(),
        messages_before: before.1,
        messages_after: conv.sent().len(),
        usage,
    };
    let start = (before, conv.sent().len());
    if stub_results(conv, target, hard) {
        done.push(record(
            CompactionMethod::StubbedResults,
            start,
            conv,
            Usage::default(),
        ));
    }
    let now = (conv.estimate(), conv.sent().len());
    if (hard || now.0 > target)
        && let Some(usage) = summarize(conv, limits, provider, target).await?
    {
        done.push(record(CompactionMethod::Summarized, now, conv, usage));
    }
    Ok(done)
}

/// Where the latest turn starts: its assistant message (everything from
/// there on is kept as it is).
fn latest_turn(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
        .unwrap_or(messages.len())
}

/// Step 1: the oldest results out, until the estimate is under `target`
/// (or all of them, when `all`). False when nothing could be stubbed.
fn stub_results(conv: &mut Conversation, target: u64, all: bool) -> bool {
    let mut messages = conv.sent().to_vec();
    let keep_from = latest_turn(&messages);
    let mut chars: usize = conv.fixed_chars + messages.iter().map(message_chars).sum::<usize>();
    let mut changed = false;
    for m in &mut messages[..keep_from] {
        if !all && conv.tokens(chars) <= target {
            break;
        }
        let Message::Tool {
            call_id,
            name,
            content,
            ..
        } = m
        else {
            continue;
        };
        if content.len() < STUB_MIN_CHARS {
            continue;
        }
        let stub = format!(
            "[the result of this `{name}` call ({} characters) was removed to keep the conversation inside the context window; its full text is in the run's transcript (call {call_id}); call the tool again if you need it]",
            content.len()
        );
        chars = chars - content.len() + stub.len();
        *content = stub;
        changed = true;
    }
    if changed {
        conv.replace_sent(messages);
    }
    changed
}

/// Step 2: a summary of everything before the latest turns, from the
/// model; the conversation goes on from prompt + summary + latest turns.
/// `None` when there is nothing before the latest turn to summarise.
async fn summarize(
    conv: &mut Conversation,
    limits: &ContextLimits,
    provider: &dyn Provider,
    target: u64,
) -> Result<Option<Usage>, ProviderError> {
    let messages = conv.sent().to_vec();
    let prompt = conv.log()[0].clone();
    // Keep the latest turns that fit in a quarter of the target, cut
    // before an assistant message; at least the latest turn.
    let mut cut = latest_turn(&messages);
    let budget = target / 4;
    let mut tail_chars: usize = messages[cut..].iter().map(message_chars).sum();
    while let Some(prev) = messages[..cut]
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }))
        .filter(|&p| p > 0)
    {
        let more: usize = messages[prev..cut].iter().map(message_chars).sum();
        if conv.tokens(tail_chars + more) > budget {
            break;
        }
        tail_chars += more;
        cut = prev;
    }
    if cut <= 1 {
        return Ok(None);
    }
    let head = &messages[1..cut];
    // The summary request must fit too: the latest part of the rendered
    // conversation, up to half the window.
    let max_chars = (limits.window as f64 / 2.0 / conv.ratio().max(1e-6)) as usize;
    let text = render_for_summary(&prompt, head, max_chars);
    let ask = [Message::User { content: text }];
    let request = ModelRequest {
        system: SUMMARY_SYSTEM,
        messages: &ask,
        tools: &[],
        early: None,
        purpose: RequestPurpose::Summary,
        tool_choice: &ToolChoice::Auto,
        output_schema: None,
    };
    let (summary, usage) = match provider.complete(request).await {
        Ok(t) => (t.text, t.usage),
        // The summary request itself was too long: go on without the
        // older turns rather than fail.
        Err(e) if is_context_overflow(&e) => (
            "(the earlier turns could not be summarised within the context window and were dropped; the full record is in the run's transcript)".to_string(),
            Usage::default(),
        ),
        Err(e) => return Err(e),
    };
    let mut next = vec![
        prompt,
        Message::User {
            content: format!(
                "[The conversation so far was compacted to fit the context window; the full record is in the run's transcript. Summary of the work so far:]\n{summary}"
            ),
        },
    ];
    next.extend_from_slice(&messages[cut..]);
    conv.replace_sent(next);
    Ok(Some(usage))
}

/// The conversation as text for the summary request: the task, then each
/// message with long texts cut; the oldest lines go first when it would
/// pass `max_chars`.
fn render_for_summary(prompt: &Message, head: &[Message], max_chars: usize) -> String {
    let cut = |s: &str| -> String {
        if s.len() <= SUMMARY_EXCERPT_CHARS {
            s.to_string()
        } else {
            let mut end = SUMMARY_EXCERPT_CHARS;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            format!("{} [... {} more characters]", &s[..end], s.len() - end)
        }
    };
    let Message::User { content: task } = prompt else {
        unreachable!("a conversation starts with the task's prompt");
    };
    let mut lines: Vec<String> = Vec::new();
    for m in head {
        match m {
            Message::User { content } => lines.push(format!("USER: {}", cut(content))),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    lines.push(format!("AGENT: {}", cut(text)));
                }
                for c in tool_calls {
                    let args = c
                        .arguments
                        .as_ref()
                        .map_or_else(String::new, |a| a.to_string());
                    lines.push(format!("AGENT CALLED {} {}", c.name, cut(&args)));
                }
            }
            Message::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let kind = if *is_error { "ERROR FROM" } else { "RESULT OF" };
                lines.push(format!("{kind} {name}: {}", cut(content)));
            }
        }
    }
    let header = format!("THE TASK:\n{}\n\nTHE WORK SO FAR:\n", cut(task));
    let mut total = header.len() + SUMMARY_ASK.len() + 2;
    let mut first = lines.len();
    while first > 0 && total + lines[first - 1].len() < max_chars {
        first -= 1;
        total += lines[first].len() + 1;
    }
    let omitted = if first > 0 {
        format!("[{first} older lines omitted]\n")
    } else {
        String::new()
    };
    format!(
        "{header}{omitted}{}\n\n{SUMMARY_ASK}",
        lines[first..].join("\n")
    )
}
