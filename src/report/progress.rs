//! Progress on stderr: one plain line per notable event, prefixed with the
//! task's name, so CI logs read top to bottom.

use std::io::Write;

use crate::engine::{CallStatus, Event, EventSink};

/// Writes progress lines for one task.
pub struct ProgressLines {
    pub task: String,
    pub verbose: bool,
    pub quiet: bool,
}

impl EventSink for ProgressLines {
    fn emit(&self, event: &Event) {
        if self.quiet {
            return;
        }
        let line = match event {
            Event::AttemptStarted { attempt } if *attempt > 1 => {
                format!("attempt {attempt} (checks failed, retrying)")
            }
            Event::TurnStarted { turn } if self.verbose => format!("turn {turn}"),
            Event::ModelResponded {
                turn,
                tool_calls,
                text,
                ..
            } if self.verbose || *tool_calls == 0 => {
                let t: String = text.chars().take(100).collect();
                format!(
                    "turn {turn}: {tool_calls} tool call(s) {}",
                    t.replace('\n', " ")
                )
            }
            Event::ToolFinished { record } => {
                let mark = match record.status {
                    CallStatus::Ok => "ok",
                    CallStatus::Error => "error",
                    CallStatus::Denied => "DENIED",
                    CallStatus::Cancelled => "cancelled",
                };
                let mut l = format!(
                    "{} {mark}: {} ({} ms)",
                    record.tool, record.display, record.duration_ms
                );
                if record.status == CallStatus::Denied
                    && let Some(r) = record.decision.as_ref().and_then(|d| d.rule.clone())
                {
                    l.push_str(&format!(" [{r}]"));
                }
                l
            }
            _ => return,
        };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "[{}] {line}", self.task);
    }
}

/// Sends events to several sinks.
pub struct Fanout<'a>(pub Vec<&'a dyn EventSink>);

impl EventSink for Fanout<'_> {
    fn emit(&self, event: &Event) {
        for s in &self.0 {
            s.emit(event);
        }
    }
}
