//! A child agent's run (issue 32), recorded under the `task` call that
//! started it: the call's `metadata.agent`. Its calls may hold children of
//! their own, so a transcript is a tree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolCallRecord;
use crate::message::{Message, Usage};
use crate::transcript::{Counts, Outcome, TurnRecord};

/// What was set aside for a child when it started; what it did not spend
/// went back to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Reserved {
    /// Turns it could take.
    pub turns: u32,
    /// USD it could spend (null: no cost limit).
    pub cost_usd: Option<f64>,
    /// Time it had.
    pub timeout_ms: u64,
}

/// One child's run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentRun {
    /// Its id in the tree: `reviewer#1`, `reviewer#1/fixer#2`.
    pub id: String,
    /// The profile it ran.
    pub profile: String,
    /// The id of the agent that started it; absent for the task's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// How deep it is (the task's children: 1).
    pub depth: u32,
    /// `PROVIDER:MODEL` or `scripted`.
    pub model: String,
    /// `shared` or `copy`.
    pub isolation: String,
    /// Its policy layers, in order (the task's, then the profile's).
    pub policies: Vec<String>,
    /// Its share of the parent's budget.
    pub reserved: Reserved,
    /// Milliseconds from the task's start.
    pub started_ms: u64,
    /// How long it ran.
    pub duration_ms: u64,
    /// The system prompt it got.
    pub system_prompt: String,
    /// Its conversation.
    pub messages: Vec<Message>,
    /// Its turns.
    pub turns: Vec<TurnRecord>,
    /// Its calls (a `task` call among them holds a child of its own).
    pub tool_calls: Vec<ToolCallRecord>,
    /// Its tokens and cost, its own children's included.
    pub usage: Usage,
    /// Its counts.
    pub counts: Counts,
    /// How it ended.
    pub outcome: Outcome,
    /// Its last answer.
    pub final_answer: String,
    /// Its answer as JSON, valid against the profile's `output_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// For `isolation: copy`: how its changes came back (merged, or the
    /// conflict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<String>,
}

impl AgentRun {
    /// The child recorded in a `task` call's metadata, if any.
    pub fn of(call: &ToolCallRecord) -> Option<AgentRun> {
        call.metadata
            .get("agent")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}
