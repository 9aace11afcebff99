//! `runner run --resume OUT`: a run that did not finish goes on from
//! where it stopped. Each task's transcript in OUT decides: a task that
//! ended (passed, failed, conflict) is kept as it is; one that was
//! cancelled, timed out or lost its model (an `error` with a provider's
//! error class) goes on from its transcript; any other runs afresh.
//!
//! Going on means: a new copy of the original workspace with the task's
//! recorded changes (`changes.diff`) applied, the recorded conversation
//! (system prompt and messages as they were sent, so the vendor's prompt
//! cache still matches), the turns, attempts, tokens and cost spent so
//! far, and a result for each call of the last answer that never got one:
//! its outcome is unknown, and the model is told so. A run killed outright
//! (SIGKILL) wrote no transcript: its journal (`run::journal`) stands in
//! for it.

use std::path::Path;

use runner_output::{CallStatus, Message, Outcome, OutcomeStatus, Transcript};

/// What an earlier run left of a task: its transcript and its diff.
pub enum Previous {
    /// It ended: its outputs stand.
    Keep(Box<Transcript>, String),
    /// It did not finish: go on from here.
    Resume(Box<Transcript>, String),
    /// Nothing to go on from (or it never started).
    Fresh,
}

/// Whether a task that ended so can go on: cancelled, out of time, or
/// stopped by its model's provider for a reason that passes with time (a
/// rate limit, an overload, an outage, a quota). A refused key or request
/// would be refused again.
pub fn resumable(o: &Outcome) -> bool {
    use runner_output::ErrorClass::*;
    matches!(o.status, OutcomeStatus::Cancelled | OutcomeStatus::Timeout)
        || (o.status == OutcomeStatus::Error
            && matches!(
                o.error_class,
                Some(RateLimited | Overloaded | Unavailable | Quota)
            ))
}

/// What `out` holds of task `name`: a run killed outright left only its
/// journal (newer than any transcript), read as a task cut short at its
/// last durable turn (see `run::journal`).
pub fn previous(out: &Path, name: &str) -> Previous {
    let dir = out.join(name);
    if let Some((t, diff)) = super::journal::read(&dir) {
        return match (t.counts.turns, &t.pending_batch) {
            (0, None) => Previous::Fresh,
            _ => Previous::Resume(Box::new(t), diff),
        };
    }
    let Ok(bytes) = std::fs::read(dir.join("transcript.json")) else {
        return Previous::Fresh;
    };
    let Ok(t) = serde_json::from_slice::<Transcript>(&bytes) else {
        return Previous::Fresh;
    };
    let diff = std::fs::read_to_string(dir.join("changes.diff")).unwrap_or_default();
    match t.outcome.status {
        OutcomeStatus::Passed | OutcomeStatus::Failed | OutcomeStatus::Conflict => {
            Previous::Keep(Box::new(t), diff)
        }
        // A batch it was waiting on is collected, not paid for again.
        _ if resumable(&t.outcome) && (t.counts.turns > 0 || t.pending_batch.is_some()) => {
            Previous::Resume(Box::new(t), diff)
        }
        _ => Previous::Fresh,
    }
}

/// What the model is told when its last answer ended its work but the run
/// stopped before the task did (in its checks, say).
pub const ANSWER_AGAIN: &str = "The run was stopped after your last answer and has been resumed. If the task is done, give your final answer again; otherwise go on.";

/// The conversation to go on with: the recorded messages, and for each
/// call of the last answer without a result, one saying its outcome is
/// unknown (it may have run in part: its effects, if any, are in the
/// workspace). A conversation that ends with an answer without calls
/// gets a user message asking for it again (vendors take no request
/// that ends with the model's own turn).
pub fn conversation(t: &Transcript) -> Vec<Message> {
    let mut messages = with_unknown_outcomes(t);
    if let Some(Message::Assistant { tool_calls, .. }) = messages.last()
        && tool_calls.is_empty()
    {
        messages.push(Message::User {
            content: ANSWER_AGAIN.to_string(),
        });
    }
    messages
}

fn with_unknown_outcomes(t: &Transcript) -> Vec<Message> {
    let mut messages = t.messages.clone();
    let last_answer = messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant { .. }));
    let Some(i) = last_answer else {
        return messages;
    };
    let Message::Assistant { tool_calls, .. } = &messages[i] else {
        return messages;
    };
    let answered: Vec<&str> = messages[i + 1..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let missing: Vec<Message> = tool_calls
        .iter()
        .filter(|c| !answered.contains(&c.id.as_str()))
        .map(|c| {
            let was = t
                .tool_calls
                .iter()
                .rev()
                .find(|r| r.id == c.id)
                .map(|r| r.status);
            let content = match was {
                Some(CallStatus::Cancelled) => format!(
                    "outcome unknown: the run was stopped while this call to {} ran, and it was resumed later. It may have run in part or in full: check the workspace before relying on it, and call it again if it is still needed.",
                    c.name
                ),
                _ => format!(
                    "outcome unknown: the run was stopped before this call to {} ran, and it was resumed later. Call it again if it is still needed.",
                    c.name
                ),
            };
            Message::Tool {
                call_id: c.id.clone(),
                name: c.name.clone(),
                content,
                is_error: true,
            }
        })
        .collect();
    messages.extend(missing);
    messages
}

/// Applies the recorded changes to a new copy (`copy`: the workspace's
/// folder in it): `git apply` takes the diff's binary patches, modes and
/// symlinks, and inside the copy's git view its paths from the
/// repository's root.
pub fn apply_changes(copy: &Path, diff: &str) -> std::io::Result<()> {
    if diff.trim().is_empty() {
        return Ok(());
    }
    crate::git::apply(copy, &[], diff).map_err(|e| {
        std::io::Error::other(format!("git apply of the recorded changes failed: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_without_a_result_are_told_their_outcome_is_unknown() {
        let t: Transcript = serde_json::from_value(serde_json::json!({
            "version": 1, "task": "t", "task_file": "t.yaml", "model": "scripted",
            "workspace": "/w", "mode": "edit", "started_at": "2026-11-24T10:00:00Z",
            "duration_ms": 1, "policies": [], "system_prompt": "s",
            "messages": [
                {"role": "user", "content": "go"},
                {"role": "assistant", "text": "", "tool_calls": [
                    {"id": "c1", "name": "bash", "arguments": {"command": "sleep 9"}},
                    {"id": "c2", "name": "write_file", "arguments": {"file_path": "b", "content": "x"}}
                ]}
            ],
            "turns": [], "checks": [],
            "tool_calls": [{"id": "c1", "tool": "bash", "turn": 1, "batch": 0,
                "arguments": {}, "decision": null, "status": "cancelled", "content": "",
                "display": "", "started_ms": 0, "duration_ms": 0}],
            "usage": {"input_tokens": 0, "output_tokens": 0},
            "counts": {"attempts": 1, "turns": 1, "tool_calls": 1, "denied_calls": 0, "failed_calls": 0},
            "changes": [], "final_answer": "",
            "outcome": {"status": "cancelled", "reason": "cancelled (SIGTERM)"}
        }))
        .unwrap();
        assert!(resumable(&t.outcome));
        let m = conversation(&t);
        assert_eq!(m.len(), 4);
        let Message::Tool {
            call_id, content, ..
        } = &m[2]
        else {
            panic!("{m:?}")
        };
        assert_eq!(call_id, "c1");
        assert!(content.contains("may have run"), "{content}");
        let Message::Tool { content, .. } = &m[3] else {
            panic!("{m:?}")
        };
        assert!(content.contains("before this call"), "{content}");
        // An answer without calls last: asked for again.
        let mut done = t.clone();
        done.messages.truncate(1);
        done.messages.push(Message::Assistant {
            text: "all done".into(),
            tool_calls: vec![],
            replay: None,
        });
        let m = conversation(&done);
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[2],
            Message::User {
                content: ANSWER_AGAIN.into()
            }
        );
    }
}
