//! Progress of a run, told to whoever follows it. The run core only calls a
//! [`RunReporter`]; which one is chosen by the command line:
//! - [`PlainLines`]: one plain line per notable event on stderr, prefixed
//!   with the task's name, so CI logs read top to bottom;
//! - [`super::bars::Bars`]: a live line per running task in a terminal;
//! - [`super::events::JsonLines`]: every event as a JSON line on stdout
//!   (`--format json`), for programs that follow a run live.

use std::io::Write;

use super::transcript::Transcript;
use crate::engine::{CallStatus, Event, EventSink, ToolCallRecord};

/// Which child agent an event is of (issue 32).
#[derive(Debug, Clone)]
pub struct AgentOf {
    /// `reviewer#1`, `reviewer#1/fixer#1`.
    pub id: String,
    /// The agent that started it; None: the task's agent.
    pub parent: Option<String>,
    /// The parent's `task` call.
    pub call_id: String,
}

/// Receives what happens in a run. Called from several tasks at once.
pub trait RunReporter: Send + Sync {
    fn run_started(&self, _tasks: &[String], _jobs: usize) {}
    fn task_started(&self, _task: &str) {}
    fn event(&self, task: &str, event: &Event);
    /// An event of a child agent (by default: not told).
    fn agent_event(&self, _task: &str, _agent: &AgentOf, _event: &Event) {}
    fn task_finished(&self, _transcript: &Transcript) {}
    fn run_finished(&self, _passed: usize, _failed: usize) {}
}

/// One task's events, passed on to the run's reporter.
pub struct TaskEvents<'a> {
    pub task: &'a str,
    pub reporter: &'a dyn RunReporter,
}

impl EventSink for TaskEvents<'_> {
    fn emit(&self, event: &Event) {
        self.reporter.event(self.task, event);
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

/// Several reporters at once (JSON on stdout and lines on stderr).
pub struct Reporters(pub Vec<Box<dyn RunReporter>>);

impl RunReporter for Reporters {
    fn run_started(&self, tasks: &[String], jobs: usize) {
        self.0.iter().for_each(|r| r.run_started(tasks, jobs));
    }
    fn task_started(&self, task: &str) {
        self.0.iter().for_each(|r| r.task_started(task));
    }
    fn event(&self, task: &str, event: &Event) {
        self.0.iter().for_each(|r| r.event(task, event));
    }
    fn agent_event(&self, task: &str, agent: &AgentOf, event: &Event) {
        self.0
            .iter()
            .for_each(|r| r.agent_event(task, agent, event));
    }
    fn task_finished(&self, t: &Transcript) {
        self.0.iter().for_each(|r| r.task_finished(t));
    }
    fn run_finished(&self, passed: usize, failed: usize) {
        self.0.iter().for_each(|r| r.run_finished(passed, failed));
    }
}

/// How much [`PlainLines`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

/// Plain lines on stderr.
pub struct PlainLines {
    pub verbosity: Verbosity,
}

/// The line for a finished call: `bash ok: $ cargo test (120 ms)`.
pub fn call_line(record: &ToolCallRecord) -> String {
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

/// The line an event is worth, if any, at this verbosity.
pub fn event_line(event: &Event, verbose: bool) -> Option<String> {
    Some(match event {
        Event::AttemptStarted { attempt } if *attempt > 1 => {
            format!("attempt {attempt} (checks failed, retrying)")
        }
        Event::TurnStarted { turn } if verbose => format!("turn {turn}"),
        Event::ModelResponded {
            turn,
            tool_calls,
            text,
            ..
        } if verbose || *tool_calls == 0 => {
            let t: String = text.chars().take(100).collect();
            format!(
                "turn {turn}: {tool_calls} tool call(s) {}",
                t.replace('\n', " ")
            )
        }
        Event::ToolFinished { record } => call_line(record),
        Event::CheckFinished(c) => format!(
            "check {}: {} ({})",
            if c.passed { "passed" } else { "FAILED" },
            c.name,
            if c.timed_out {
                "timed out".to_string()
            } else {
                c.exit_code
                    .map_or("no exit code".into(), |n| format!("exit {n}"))
            }
        ),
        Event::ModelSwitched(s) => format!(
            "turn {}: {} failed ({}); going on with {}",
            s.turn,
            s.from,
            s.class.as_str(),
            s.to
        ),
        Event::Connection(c) if !c.allowed => format!(
            "{} connection refused: {}:{} ({})",
            c.via.as_str(),
            c.host,
            c.port,
            c.rule.as_deref().unwrap_or(&c.reason)
        ),
        Event::Canary(c) => format!(
            "canary {} {} {}",
            c.canary,
            if c.moved {
                "moved: refused in"
            } else {
                "read by the model:"
            },
            c.seen_in
        ),
        Event::Connection(c) if verbose => format!(
            "{} connection: {}:{} ({} bytes in, {} out)",
            c.via.as_str(),
            c.host,
            c.port,
            c.bytes_received,
            c.bytes_sent
        ),
        _ => return None,
    })
}

fn say(line: std::fmt::Arguments) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", crate::contain::redact(&line.to_string()));
}

impl RunReporter for PlainLines {
    fn run_started(&self, tasks: &[String], jobs: usize) {
        if self.verbosity != Verbosity::Quiet {
            say(format_args!(
                "runner: {} task(s), {} at a time",
                tasks.len(),
                jobs
            ));
        }
    }

    fn task_started(&self, task: &str) {
        if self.verbosity != Verbosity::Quiet {
            say(format_args!("[{task}] started"));
        }
    }

    fn event(&self, task: &str, event: &Event) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        if let Some(line) = event_line(event, self.verbosity == Verbosity::Verbose) {
            say(format_args!("[{task}] {line}"));
        }
    }

    fn agent_event(&self, task: &str, agent: &AgentOf, event: &Event) {
        if self.verbosity == Verbosity::Quiet {
            return;
        }
        if let Some(line) = event_line(event, self.verbosity == Verbosity::Verbose) {
            say(format_args!("[{task}/{}] {line}", agent.id));
        }
    }

    fn task_finished(&self, t: &Transcript) {
        let (task, outcome) = (&t.task, &t.outcome);
        if self.verbosity != Verbosity::Quiet {
            say(format_args!(
                "[{task}] {}: {}",
                outcome.status.as_str(),
                outcome.reason
            ));
        }
    }
}
