//! `transcript.json`: everything a reviewer needs to trust a task's run
//! (`runner schema transcript`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{CallStatus, ToolCallRecord};
use crate::message::{ErrorClass, Message, RetryRecord, Usage};

/// Version of the transcript's format.
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
    /// The run's `--max-cost` was spent before the task could start.
    Skipped,
    /// The task's `timeout` ran out: the agent, a tool call, the gate, a
    /// hook or a check was stopped there (a failure).
    Timeout,
}

impl OutcomeStatus {
    /// The name used in the JSON (`passed`, `failed` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Passed => "passed",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Error => "error",
            OutcomeStatus::Cancelled => "cancelled",
            OutcomeStatus::Conflict => "conflict",
            OutcomeStatus::Skipped => "skipped",
            OutcomeStatus::Timeout => "timeout",
        }
    }
}

/// How a task ended, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outcome {
    /// The kind of ending.
    pub status: OutcomeStatus,
    /// Why, in a sentence.
    pub reason: String,
    /// For an `error` the model provider caused: its class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// For a task a tripwire ended (`max_denials`, a `fail_fast` class, a
    /// canary): which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tripwire: Option<crate::Tripwire>,
}

/// What a task may do: `edit` (all tools) or `plan` (read-only tools only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Every tool the task lists.
    #[default]
    Edit,
    /// Read-only tools only.
    Plan,
}

/// One model turn.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TurnRecord {
    /// The attempt it belongs to (from 1).
    pub attempt: u32,
    /// The turn (from 1, across attempts).
    pub turn: u32,
    /// The model's text.
    pub text: String,
    /// How many tool calls it asked for.
    pub tool_calls: usize,
    /// Its token counts.
    pub usage: Usage,
    /// The provider's raw response.
    pub raw: Value,
    /// Milliseconds from the task's start to the request (0 in older
    /// transcripts).
    #[serde(default)]
    pub started_ms: u64,
    /// From the request to the complete answer, retries included.
    #[serde(default)]
    pub duration_ms: u64,
    /// The turn's tries that failed before its answer: retried, sent
    /// again in another shape or after a compaction, or to the next model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retries: Vec<RetryRecord>,
    /// Milliseconds its requests waited for the run's rate governor (the
    /// server's rate limit, shared by the run's tasks), within
    /// `duration_ms`.
    #[serde(default, skip_serializing_if = "crate::is_zero")]
    pub rate_limit_wait_ms: u64,
    /// The vendor's service tier that served it, where it said
    /// (`model_options.service_tier`); its cost is at that tier's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    /// The model that answered (`PROVIDER:MODEL`), for a task with
    /// fallback models; absent: the task's `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// A switch to the next model of the task's fallback chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelSwitch {
    /// The turn whose request failed and went to `to` instead.
    pub turn: u32,
    /// The model that failed (`PROVIDER:MODEL`).
    pub from: String,
    /// The model the task goes on with, to its end.
    pub to: String,
    /// Why: the class of `from`'s last error.
    pub class: ErrorClass,
}

/// How the conversation was made smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionMethod {
    /// The oldest tool results were replaced by a line saying where the
    /// full text is.
    StubbedResults,
    /// The model summarised the work so far; the conversation continues
    /// from the task prompt, the summary and the latest turns.
    Summarized,
}

/// Why the conversation was compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The request's estimate passed `compact_at` of the window.
    Threshold,
    /// The vendor said the prompt was too long.
    ProviderError,
}

/// One compaction of the conversation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Compaction {
    /// The turn whose request needed the room.
    pub turn: u32,
    /// What was done.
    pub method: CompactionMethod,
    /// Why room was made.
    pub trigger: CompactionTrigger,
    /// The request's estimated size before, in tokens.
    pub tokens_before: u64,
    /// And after.
    pub tokens_after: u64,
    /// Messages sent before.
    pub messages_before: usize,
    /// And after.
    pub messages_after: usize,
    /// What the summary request cost (zero for stubbing).
    #[serde(default)]
    pub usage: Usage,
}

/// One check run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckRecord {
    /// The attempt it ran after.
    pub attempt: u32,
    /// The check's name.
    pub name: String,
    /// Its command.
    pub command: String,
    /// Whether it exited 0 in time.
    pub passed: bool,
    /// Its exit code; null when it was killed.
    pub exit_code: Option<i32>,
    /// Whether it ran out of time.
    pub timed_out: bool,
    /// stdout and stderr together (cut when long).
    pub output: String,
    /// How long it ran.
    pub duration_ms: u64,
    /// Milliseconds from the task's start to the check's (0 in older
    /// transcripts).
    #[serde(default)]
    pub started_ms: u64,
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A new file.
    Added,
    /// A file that is gone.
    Deleted,
    /// A file with other contents (or mode).
    Modified,
}

impl ChangeKind {
    /// The name used in the JSON (`added`, `deleted`, `modified`).
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Modified => "modified",
        }
    }
}

/// A changed file.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ChangedFile {
    /// Its path, relative to the workspace, with `/`.
    pub path: String,
    /// How it changed.
    pub change: ChangeKind,
}

/// A change the agent made to a path the policy denies editing, by
/// whatever means (inline code, an MCP server, a hook, a symlink): it was
/// reverted in the copy before any check ran, it is in neither
/// `changes.diff` nor `--apply`, and the task fails.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Violation {
    /// The path, relative to the workspace, with `/`.
    pub path: String,
    /// How the agent changed it.
    pub change: ChangeKind,
    /// The rule that denies editing it (`deny Edit(.github/**)`).
    pub rule: String,
    /// The policy layer that holds the rule.
    pub policy: String,
}

/// Counts that CI systems and the summary show.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    /// Attempts (1 + retries after failed checks).
    pub attempts: u32,
    /// Model turns.
    pub turns: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Calls denied.
    pub denied_calls: u32,
    /// Calls that failed.
    pub failed_calls: u32,
    /// Connections refused (`network:` or `Fetch` rules).
    #[serde(default, skip_serializing_if = "is_default")]
    pub denied_connections: u32,
    /// Calls the run allowed that the shadow policy would deny.
    #[serde(default, skip_serializing_if = "is_default")]
    pub shadow_newly_denied: u32,
    /// Calls the run denied that the shadow policy would allow.
    #[serde(default, skip_serializing_if = "is_default")]
    pub shadow_newly_allowed: u32,
}

impl Transcript {
    /// What the sandbox refused in this task, a line each with the turn of
    /// its call (see [`crate::ToolCallRecord::sandbox_refusals`]).
    pub fn sandbox_refusals(&self) -> Vec<(u32, String)> {
        self.tool_calls
            .iter()
            .flat_map(|c| c.sandbox_refusals().into_iter().map(move |r| (c.turn, r)))
            .collect()
    }
}

impl Counts {
    /// The counts of a task's turns and calls.
    pub fn from(attempts: u32, turns: &[TurnRecord], calls: &[ToolCallRecord]) -> Self {
        let with = |s| calls.iter().filter(|c| c.status == s).count() as u32;
        let changed = |k| {
            calls
                .iter()
                .filter(|c| c.shadow_change() == Some(k))
                .count() as u32
        };
        Self {
            attempts,
            turns: turns.len() as u32,
            tool_calls: calls.len() as u32,
            // A call the sandbox refused a program or a system call to is
            // a denial too.
            denied_calls: calls.iter().filter(|c| c.is_denied()).count() as u32,
            failed_calls: with(CallStatus::Error),
            denied_connections: 0,
            shadow_newly_denied: changed(crate::ShadowChange::NewlyDenied),
            shadow_newly_allowed: changed(crate::ShadowChange::NewlyAllowed),
        }
    }
}

/// A repository of a fleet run (`runner run --repos`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Repository {
    /// Its URL (or path) as listed.
    pub url: String,
    /// The ref listed (`@REF`); absent: the remote's default branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// The commit the task ran on; absent when it could not be fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its folder in the output folder.
    pub folder: String,
    /// The branch `--push` pushed with the repository's changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed: Option<PushedBranch>,
}

/// A branch `runner run --repos … --push BRANCH` pushed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PushedBranch {
    /// The branch, on the repository's origin.
    pub branch: String,
    /// Its commit: the tasks' changes.
    pub commit: String,
    /// The commit it is on (the one the tasks ran on): what a pull
    /// request compares it with.
    pub base: String,
}

/// A request sent in a vendor's batch (`runner run --batch`) whose answer
/// the task has not had yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PendingBatch {
    /// `openai`, `anthropic`, `gemini`.
    pub vendor: String,
    /// The vendor's batch id (`msgbatch_…`, `batch_…`, `batches/…`).
    pub id: String,
    /// The request's id in the batch.
    pub custom_id: String,
    /// How many messages the conversation had when it was asked: the
    /// request a resumed task builds from the same conversation is this
    /// one.
    pub messages: usize,
}

/// The transcript of one task.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Transcript {
    /// [`TRANSCRIPT_VERSION`].
    pub version: u32,
    /// The task's name.
    pub task: String,
    /// The task file.
    pub task_file: String,
    /// `PROVIDER:MODEL` or `scripted`.
    pub model: String,
    /// The original workspace (the agent worked in a copy).
    pub workspace: String,
    /// How the agent's copy was made: an overlay or a copy, and why not
    /// an overlay (absent in older transcripts, and when the task failed
    /// before its copy was made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_copy: Option<crate::WorkspaceCopy>,
    /// `edit` or `plan`.
    pub mode: Mode,
    /// The task's place in the run's trace, when the run exported
    /// telemetry (`runner export` makes one up for a transcript without).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceIds>,
    /// For a run under several models (`--models`): the task and the
    /// variant this run is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<crate::MatrixCell>,
    /// The task's parameters with the values used.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, String>,
    /// What confined the task's commands: `landlock (ABI 6): ...`, `off`,
    /// or why the sandbox was unavailable.
    #[serde(default)]
    pub sandbox: String,
    /// What confined each MCP server, by server name (as `sandbox`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp_sandbox: BTreeMap<String, String>,
    /// What the agent's copy left out because it holds a credential, one
    /// line each, by key or path and never by value: entries of the copy's
    /// git configuration (`.git/config http.https://github.com/.extraheader:
    /// …`, a remote URL's user information) and the files the built-in
    /// credentials layer hid (`.npmrc: …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credentials_removed: Vec<String>,
    /// The walls the run held behind the policy's deny rules, which the
    /// decisions counted on (absent: none, as in older transcripts).
    #[serde(default, skip_serializing_if = "is_default")]
    pub backstops: runner_policy::Backstops,
    /// The decoy credentials the task's commands were given (`canaries:`)
    /// and where one was seen; absent when it had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canaries: Option<crate::CanaryRecord>,
    /// What the runner changed in its requests because the model's server
    /// refused their shape (`"content": ""` beside tool calls, answers not
    /// streamed), one line each; kept for the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_adaptations: Vec<String>,
    /// The repository the task ran in, for a fleet run (`--repos`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<Repository>,
    /// The vendor batch the task was waiting on when it ended (cancelled,
    /// out of time; `runner run --batch`): `--resume` collects its answer
    /// instead of asking again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_batch: Option<PendingBatch>,
    /// Things the run went on without: MCP servers skipped, tools left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How many times the task was resumed (`runner run --resume`): its
    /// turns, calls and cost are the earlier runs' and this one's.
    #[serde(default, skip_serializing_if = "is_default")]
    pub resumes: u32,
    /// When the task started (RFC 3339, UTC).
    pub started_at: String,
    /// How long it ran.
    pub duration_ms: u64,
    /// The policy layers, in order (every layer must allow a call).
    pub policies: Vec<String>,
    /// The system prompt sent.
    pub system_prompt: String,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// Every model turn.
    pub turns: Vec<TurnRecord>,
    /// Every tool call, in the order they finished.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Every check run.
    pub checks: Vec<CheckRecord>,
    /// Every switch to a fallback model, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub model_switches: Vec<ModelSwitch>,
    /// Every time the conversation was compacted to fit the context window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compactions: Vec<Compaction>,
    /// Token counts of the whole task.
    pub usage: Usage,
    /// Counts of turns and calls.
    pub counts: Counts,
    /// Every connection the runner decided, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<crate::network::Connection>,
    /// The files the task changed.
    pub changes: Vec<ChangedFile>,
    /// Set when `changes.diff` was cut to `--max-diff-bytes`: what it left
    /// out (`--apply` applies the whole change all the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_cut: Option<crate::DiffCut>,
    /// Changes to paths the policy denies editing, dropped (see
    /// [`Violation`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// The model's last answer.
    pub final_answer: String,
    /// The answer as JSON valid against the task's `output_schema`; also
    /// `OUT/<task>/output.json`. Absent without a schema or a valid answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// How it ended.
    pub outcome: Outcome,
}

/// A task's place in the run's OpenTelemetry trace (W3C hex ids). The
/// spans of its turns, calls and checks have ids derived from `span_id`,
/// so `runner export` sends the same spans the run did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TraceIds {
    /// The run's trace (the CI's, from `TRACEPARENT`, when it set one).
    pub trace_id: String,
    /// The task's `invoke_agent` span.
    pub span_id: String,
    /// The run's root span, the task span's parent.
    pub run_span_id: String,
    /// The span the run's root span continues (from `TRACEPARENT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_parent_span_id: Option<String>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
