//! Events of a task, and the record of one tool call.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::provider::Usage;
use crate::tools::ToolErrorKind;
use runner_policy::Decision;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    Ok,
    Error,
    Denied,
    /// The run was cancelled while the call ran.
    Cancelled,
}

/// Everything about one tool call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRecord {
    pub id: String,
    pub tool: String,
    pub turn: u32,
    /// The batch of its turn it ran in (calls of one batch run in parallel).
    pub batch: u32,
    pub arguments: Arc<Value>,
    /// The decision, with the signatures and the deciding rule; null when
    /// the call failed before the policy was asked (unknown tool, bad args).
    pub decision: Option<Arc<Decision>>,
    pub status: CallStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ToolErrorKind>,
    /// What the model received.
    pub content: String,
    pub display: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
    pub started_ms: u64,
    pub duration_ms: u64,
}

/// Something that happened in a task.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    AttemptStarted {
        attempt: u32,
    },
    TurnStarted {
        turn: u32,
    },
    ModelResponded {
        turn: u32,
        text: String,
        tool_calls: usize,
        usage: Usage,
        raw: Value,
    },
    ToolStarted {
        // Shared with the sinks that keep it (the transcript recorder keeps
        // it until the call finishes).
        #[serde(flatten)]
        call: Arc<StartedCall>,
    },
    ToolFinished {
        // Shared with the sinks that keep it, not copied for each.
        record: Arc<ToolCallRecord>,
    },
}

/// A tool call as it starts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StartedCall {
    pub turn: u32,
    pub batch: u32,
    pub id: String,
    pub tool: String,
    pub arguments: Arc<Value>,
    /// Null when the call is refused before the policy is asked.
    pub decision: Option<Arc<Decision>>,
    pub started_ms: u64,
}

impl StartedCall {
    /// The record of this call once it ended: what it started with, and
    /// how it ended.
    pub fn ended(
        &self,
        status: CallStatus,
        error_kind: Option<ToolErrorKind>,
        content: String,
        display: String,
        metadata: Value,
        duration_ms: u64,
    ) -> ToolCallRecord {
        ToolCallRecord {
            id: self.id.clone(),
            tool: self.tool.clone(),
            turn: self.turn,
            batch: self.batch,
            arguments: Arc::clone(&self.arguments),
            decision: self.decision.clone(),
            status,
            error_kind,
            content,
            display,
            metadata,
            started_ms: self.started_ms,
            duration_ms,
        }
    }
}

/// Receives a task's events.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event);
}

/// Discards events.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: &Event) {}
}
