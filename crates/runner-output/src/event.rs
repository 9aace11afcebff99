//! The events of a run: what `runner run --format json` prints, a JSON
//! line each (`runner schema events`).
//!
//! A line is an [`EventLine`]: when it happened, the task it belongs to
//! (and, for a child agent's event, the child, its parent and the call
//! that started it), and either a run-level event ([`RunEvent`]:
//! `run_started`, `task_started`, `task_finished`, `run_finished`) or one
//! of the agent's events ([`Event`]: `attempt_started`, `workspace_ready`,
//! `turn_started`, `model_responded`, `model_switched`, `tool_started`,
//! `context_compacted`, `connection`, `tool_finished`). Both carry their
//! kind in the `event` field.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::call::{StartedCall, ToolCallRecord};
use crate::message::{ErrorClass, RetryRecord, Usage};
use crate::transcript::OutcomeStatus;
use crate::transcript::{Compaction, ModelSwitch};

/// Version of the event stream's format (in `run_started`).
pub const EVENTS_VERSION: u32 = 1;

/// Something that happened in a task.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// An attempt began: the first, or another after failed checks.
    AttemptStarted {
        /// From 1.
        attempt: u32,
    },
    /// The task's copy of its workspace is made: no tool runs before.
    /// The first turn's request may have been sent before it.
    WorkspaceReady {
        /// The files in the copy.
        files: usize,
    },
    /// A request to the model is about to be sent.
    TurnStarted {
        /// From 1, across attempts.
        turn: u32,
    },
    /// The model answered.
    ModelResponded {
        /// The turn.
        turn: u32,
        /// Its text.
        text: String,
        /// How many tool calls it asked for.
        tool_calls: usize,
        /// Its token counts.
        usage: Usage,
        /// The provider's raw response.
        raw: Value,
        /// Tries of the request that failed and were sent again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        retries: Vec<RetryRecord>,
        /// Milliseconds the turn's requests waited for the run's rate
        /// governor (the server's rate limit, shared by the run's tasks).
        #[serde(default, skip_serializing_if = "crate::is_zero")]
        rate_limit_wait_ms: u64,
        /// The vendor's service tier that served it, where it said
        /// (`model_options.service_tier`); its price is that tier's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        service_tier: Option<String>,
        /// The model that answered, for a task with fallback models.
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// The model failed and the task goes on with the next model of its
    /// fallback chain (the turn's request is sent again to it).
    ModelSwitched(ModelSwitch),
    /// A tool call was decided and starts (or is refused at once).
    ToolStarted {
        /// The call. Shared with the sinks that keep it (the transcript
        /// recorder keeps it until the call finishes).
        #[serde(flatten)]
        call: Arc<StartedCall>,
    },
    /// The conversation was made smaller to stay inside the model's
    /// context window (the transcript keeps every original message).
    ContextCompacted(Compaction),
    /// The runner decided a connection (see [`crate::Connection`]).
    Connection(crate::network::Connection),
    /// A canary was seen: moving out (the task fails) or read by the
    /// model.
    Canary(crate::CanarySighting),
    /// A check ended (its record, as the transcript's `checks` keep it).
    CheckFinished(crate::transcript::CheckRecord),
    /// A tool call ended.
    ToolFinished {
        /// Its record. Shared with the sinks that keep it, not copied for
        /// each.
        record: Arc<ToolCallRecord>,
    },
}

/// One line of the stream.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EventLine<'a> {
    /// Milliseconds since the run started.
    pub time_ms: u64,
    /// The task the event belongs to; absent for run-level events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<&'a str>,
    /// For a child agent's event: its id (`reviewer#1`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<&'a str>,
    /// The id of the agent that started it (absent: the task's agent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<&'a str>,
    /// The parent's `task` call that started it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_call: Option<&'a str>,
    /// The event, its kind in `event`.
    #[serde(flatten)]
    pub event: AnyEvent<'a>,
}

/// A run-level event or an agent event; both carry their kind in `event`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum AnyEvent<'a> {
    /// What happens to the run as a whole.
    Run(RunEvent),
    /// What happens inside a task.
    Agent(&'a Event),
}

/// What happens to the run as a whole.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// The first line.
    RunStarted {
        /// [`EVENTS_VERSION`].
        version: u32,
        /// The tasks to run, in order.
        tasks: Vec<String>,
        /// How many run at once.
        jobs: usize,
    },
    /// A task began.
    TaskStarted {},
    /// A task ended.
    TaskFinished {
        /// Its outcome.
        status: OutcomeStatus,
        /// Why, in a sentence.
        reason: String,
        /// For an `error` the model provider caused: its class.
        #[serde(skip_serializing_if = "Option::is_none")]
        error_class: Option<ErrorClass>,
        /// For a task a tripwire ended: which one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tripwire: Option<crate::Tripwire>,
        /// Its tokens and cost (`cost_usd` null when the price is unknown).
        usage: Usage,
        /// Its valid answer, for a task with an `output_schema`.
        #[serde(skip_serializing_if = "Option::is_none")]
        output: Option<Value>,
    },
    /// The last line.
    RunFinished {
        /// Tasks that passed.
        passed: usize,
        /// Tasks that did not.
        failed: usize,
    },
}
