//! transcript.json: everything a reviewer needs to trust a run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::{CallStatus, Event, EventSink, StartedCall, ToolCallRecord};
use crate::provider::{Message, Usage};

pub const TRANSCRIPT_VERSION: u32 = 1;

/// How a task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// The agent finished and every check passed.
    Passed,
    /// Out of turns or time, a check failed, or a denial with fail_on_denial.
    Failed,
    /// An infrastructure problem (provider, workspace, output).
    Error,
    /// The run was interrupted.
    Cancelled,
    /// The task passed, but `--apply` could not merge its changes into the
    /// original tree: another task or a person changed the same lines (a
    /// failure; its diff is kept).
    Conflict,
}

impl OutcomeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Passed => "passed",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Error => "error",
            OutcomeStatus::Cancelled => "cancelled",
            OutcomeStatus::Conflict => "conflict",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    pub status: OutcomeStatus,
    pub reason: String,
}

/// One model turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnRecord {
    pub attempt: u32,
    pub turn: u32,
    pub text: String,
    pub tool_calls: usize,
    pub usage: Usage,
    /// The provider's raw response.
    pub raw: Value,
}

/// One check run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckRecord {
    pub attempt: u32,
    pub name: String,
    pub command: String,
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub output: String,
    pub duration_ms: u64,
}

/// A changed file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChangedFile {
    pub path: String,
    pub change: String,
}

/// Counts that CI systems and the summary show.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub attempts: u32,
    pub turns: u32,
    pub tool_calls: u32,
    pub denied_calls: u32,
    pub failed_calls: u32,
}

/// The transcript of one task (`runner schema transcript`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Transcript {
    pub version: u32,
    pub task: String,
    pub task_file: String,
    pub model: String,
    pub workspace: String,
    pub mode: String,
    /// The task's parameters with the values used.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameters: std::collections::BTreeMap<String, String>,
    /// What confined the task's commands: `landlock (ABI 6): ...`, `off`,
    /// or why the sandbox was unavailable.
    #[serde(default)]
    pub sandbox: String,
    /// What confined each MCP server, by server name (as `sandbox`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub mcp_sandbox: std::collections::BTreeMap<String, String>,
    /// Things the run went on without: MCP servers skipped, tools left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub started_at: String,
    pub duration_ms: u64,
    /// The policy layers, in order (every layer must allow a call).
    pub policies: Vec<String>,
    pub system_prompt: String,
    pub messages: Vec<Message>,
    pub turns: Vec<TurnRecord>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub checks: Vec<CheckRecord>,
    pub usage: Usage,
    pub counts: Counts,
    pub changes: Vec<ChangedFile>,
    pub final_answer: String,
    pub outcome: Outcome,
}

#[derive(Default)]
struct Recorded {
    attempt: u32,
    turns: Vec<TurnRecord>,
    /// Finished calls, shared with the event that announced them.
    tool_calls: Vec<Arc<ToolCallRecord>>,
    /// Calls started and not finished, by turn and id: a turn can hold
    /// thousands, so finishing one must not scan them all.
    running: HashMap<u32, HashMap<String, Arc<StartedCall>>>,
}

/// The record of a call the run was cancelled under.
fn cancelled(c: &StartedCall) -> ToolCallRecord {
    c.ended(
        CallStatus::Cancelled,
        None,
        "the run was cancelled before the call finished".into(),
        format!("cancelled: {}", c.tool),
        serde_json::Value::Null,
        0,
    )
}

/// Builds the transcript's turns and calls from events.
#[derive(Default)]
pub struct TranscriptRecorder {
    inner: Mutex<Recorded>,
}

impl TranscriptRecorder {
    /// The turns and calls so far; calls still running (the run was
    /// cancelled under them) are recorded as `cancelled`.
    pub fn take(&self) -> (Vec<TurnRecord>, Vec<ToolCallRecord>) {
        let mut r = self.inner.lock().unwrap();
        let mut running: Vec<ToolCallRecord> = std::mem::take(&mut r.running)
            .into_values()
            .flat_map(|calls| calls.into_values())
            .map(|c| cancelled(&c))
            .collect();
        running.sort_by_key(|c| c.started_ms);
        let mut calls: Vec<ToolCallRecord> = std::mem::take(&mut r.tool_calls)
            .into_iter()
            .map(|c| Arc::try_unwrap(c).unwrap_or_else(|c| (*c).clone()))
            .collect();
        calls.extend(running);
        (std::mem::take(&mut r.turns), calls)
    }
}

impl EventSink for TranscriptRecorder {
    fn emit(&self, event: &Event) {
        let mut r = self.inner.lock().unwrap();
        match event {
            Event::AttemptStarted { attempt } => r.attempt = *attempt,
            Event::ModelResponded {
                turn,
                text,
                tool_calls,
                usage,
                raw,
            } => {
                let attempt = r.attempt;
                r.turns.push(TurnRecord {
                    attempt,
                    turn: *turn,
                    text: text.clone(),
                    tool_calls: *tool_calls,
                    usage: *usage,
                    raw: raw.clone(),
                });
            }
            Event::ToolStarted { call } => {
                r.running
                    .entry(call.turn)
                    .or_default()
                    .insert(call.id.clone(), Arc::clone(call));
            }
            Event::ToolFinished { record } => {
                if let Some(turn) = r.running.get_mut(&record.turn) {
                    turn.remove(&record.id);
                }
                r.tool_calls.push(Arc::clone(record));
            }
            Event::TurnStarted { .. } => {}
        }
    }
}

impl Counts {
    pub fn from(attempts: u32, turns: &[TurnRecord], calls: &[ToolCallRecord]) -> Self {
        Self {
            attempts,
            turns: turns.len() as u32,
            tool_calls: calls.len() as u32,
            denied_calls: calls
                .iter()
                .filter(|c| c.status == CallStatus::Denied)
                .count() as u32,
            failed_calls: calls
                .iter()
                .filter(|c| c.status == CallStatus::Error)
                .count() as u32,
        }
    }
}
