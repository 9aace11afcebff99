//! `--format json`: the run as a stream of JSON lines on stdout, one event a
//! line, flushed as it happens, so another program can follow a run live.
//!
//! The schema (`runner schema events`) is [`EventLine`]: when it happened,
//! the task it belongs to, and either a run-level event (`run_started`,
//! `task_started`, `task_finished`, `run_finished`) or one of the agent's
//! events (`turn_started`, `model_responded`, `tool_started`,
//! `tool_finished`, `attempt_started`, `connection` ...), a child agent's
//! with its `agent`, `parent` and `parent_call`. Fields are only ever
//! added.

use std::io::Write;
use std::time::Instant;

use super::progress::{AgentOf, RunReporter};
use super::transcript::Transcript;
use crate::engine::Event;

pub use runner_output::{AnyEvent, EVENTS_VERSION, EventLine, RunEvent};

/// Writes the stream to stdout.
pub struct JsonLines {
    start: Instant,
}

impl Default for JsonLines {
    fn default() -> Self {
        Self {
            start: Instant::now(),
        }
    }
}

impl JsonLines {
    fn write(&self, task: Option<&str>, event: AnyEvent) {
        self.write_line(EventLine {
            time_ms: self.start.elapsed().as_millis() as u64,
            task,
            agent: None,
            parent: None,
            parent_call: None,
            event,
        });
    }

    fn write_line(&self, line: EventLine) {
        if let Ok(json) = serde_json::to_string(&line) {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", crate::contain::redact(&json));
            let _ = out.flush();
        }
    }
}

impl RunReporter for JsonLines {
    fn run_started(&self, tasks: &[String], jobs: usize) {
        self.write(
            None,
            AnyEvent::Run(RunEvent::RunStarted {
                version: EVENTS_VERSION,
                tasks: tasks.to_vec(),
                jobs,
            }),
        );
    }
    fn task_started(&self, task: &str) {
        self.write(Some(task), AnyEvent::Run(RunEvent::TaskStarted {}));
    }
    fn event(&self, task: &str, event: &Event) {
        self.write(Some(task), AnyEvent::Agent(event));
    }
    fn agent_event(&self, task: &str, agent: &AgentOf, event: &Event) {
        self.write_line(EventLine {
            time_ms: self.start.elapsed().as_millis() as u64,
            task: Some(task),
            agent: Some(&agent.id),
            parent: agent.parent.as_deref(),
            parent_call: Some(&agent.call_id),
            event: AnyEvent::Agent(event),
        });
    }
    fn task_finished(&self, t: &Transcript) {
        self.write(
            Some(&t.task),
            AnyEvent::Run(RunEvent::TaskFinished {
                status: t.outcome.status,
                reason: t.outcome.reason.clone(),
                error_class: t.outcome.error_class,
                tripwire: t.outcome.tripwire,
                usage: t.usage,
                output: t.output.clone(),
            }),
        );
    }
    fn run_finished(&self, passed: usize, failed: usize) {
        self.write(
            None,
            AnyEvent::Run(RunEvent::RunFinished { passed, failed }),
        );
    }
}
