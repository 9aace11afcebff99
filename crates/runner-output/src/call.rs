//! The record of one tool call.

use std::sync::Arc;

use runner_policy::{Decision, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallStatus {
    /// The tool ran and succeeded.
    Ok,
    /// The tool failed, or its arguments were wrong.
    Error,
    /// The policy (or the workspace boundary) refused the call.
    Denied,
    /// The run was cancelled while the call ran.
    Cancelled,
}

impl CallStatus {
    /// As the JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Denied => "denied",
            CallStatus::Cancelled => "cancelled",
        }
    }
}

/// The kind of a tool error: what went wrong decides what the model is
/// told, and only infrastructure failures end a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The arguments do not fit the schema or make no sense.
    Validation,
    /// The tool ran and failed.
    Execution,
    /// A path left the workspace, or a rule denied the call.
    Permission,
    /// The call ran out of time.
    Timeout,
}

impl ToolErrorKind {
    /// The name used in the JSON (`validation`, `execution` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::Validation => "validation",
            ToolErrorKind::Execution => "execution",
            ToolErrorKind::Permission => "permission",
            ToolErrorKind::Timeout => "timeout",
        }
    }
}

/// Everything about one tool call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRecord {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The model turn that asked for it (from 1).
    pub turn: u32,
    /// The batch of its turn it ran in (calls of one batch run in parallel).
    pub batch: u32,
    /// Its arguments as the model gave them.
    pub arguments: Arc<Value>,
    /// The decision, with the signatures and the deciding rule; null when
    /// the call failed before the policy was asked (unknown tool, bad args).
    pub decision: Option<Arc<Decision>>,
    /// How it ended.
    pub status: CallStatus,
    /// What kind of error, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ToolErrorKind>,
    /// What the model received.
    pub content: String,
    /// One line for people.
    pub display: String,
    /// What the tool reports besides its content (a command's exit code,
    /// a spilled result's path ...).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
    /// Milliseconds from the task's start to the call's start.
    pub started_ms: u64,
    /// How long it ran.
    pub duration_ms: u64,
    /// The hooks that ran around it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<HookRun>,
    /// What the shadow policy (`--shadow-policy`, `shadow_policy:`) would
    /// have decided, not enforced; absent without one, or for a call
    /// refused before any policy was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shadow: Option<crate::ShadowDecision>,
}

impl ToolCallRecord {
    /// How the shadow policy would change this call's decision; none when
    /// it agrees or did not decide it.
    pub fn shadow_change(&self) -> Option<crate::ShadowChange> {
        let (run, shadow) = (self.decision.as_deref()?, self.shadow.as_ref()?);
        match (run.verdict, shadow.decision) {
            (Verdict::Allow, Verdict::Deny) => Some(crate::ShadowChange::NewlyDenied),
            (Verdict::Deny, Verdict::Allow) => Some(crate::ShadowChange::NewlyAllowed),
            _ => None,
        }
    }

    /// A changed call in one line: the tool and its signatures, then the
    /// run's decision and the shadow's (`bash Bash(git commit -m x): allow
    /// (...) → deny (...)`); none when unchanged.
    pub fn shadow_line(&self) -> Option<String> {
        self.shadow_change()?;
        let (run, shadow) = (self.decision.as_deref()?, self.shadow.as_ref()?);
        let sigs: Vec<String> = run.signatures.iter().map(ToString::to_string).collect();
        Some(format!(
            "turn {}, {} {}: {} → {}",
            self.turn,
            self.tool,
            sigs.join(" "),
            crate::describe_decision(
                run.verdict,
                run.rule.as_deref(),
                run.policy.as_deref(),
                run.line
            ),
            crate::describe_decision(
                shadow.decision,
                shadow.rule.as_deref(),
                shadow.policy.as_deref(),
                shadow.line
            ),
        ))
    }

    /// Whether the call counts as denied: the policy or a hook refused
    /// it, or the sandbox refused it a program or a system call.
    pub fn is_denied(&self) -> bool {
        self.status == CallStatus::Denied || self.exec_refused() || self.has_list("refused_calls")
    }

    /// Whether the exec wall refused the call a program.
    pub fn exec_refused(&self) -> bool {
        self.has_list("sandbox_refusals")
    }

    fn has_list(&self, key: &str) -> bool {
        self.metadata
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    }

    /// What the sandbox refused while the call ran, a line each: the execs
    /// (metadata `sandbox_refusals`: the argv and the rule) and the system
    /// calls refused with nothing to decide (`refused_calls`: the call,
    /// the command, how often). Empty for most calls.
    pub fn sandbox_refusals(&self) -> Vec<String> {
        let list = |key: &str| {
            self.metadata
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let mut out: Vec<String> = list("sandbox_refusals")
            .iter()
            .map(|r| {
                let argv: Vec<String> = r
                    .get("argv")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                let ended = if r.get("ended") == Some(&Value::Bool(true)) {
                    " (ended where the kernel ran it)"
                } else {
                    ""
                };
                format!("exec `{}` by `{}`{ended}", argv.join(" "), text(r, "rule"))
            })
            .collect();
        out.extend(list("refused_calls").iter().map(|r| {
            let count = r.get("count").and_then(Value::as_u64).unwrap_or(1);
            let times = if count > 1 {
                format!(" ({count} times)")
            } else {
                String::new()
            };
            format!("{} by `{}`{times}", text(r, "call"), text(r, "command"))
        }));
        out
    }
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HookKind {
    /// After the policy allowed the call, before it runs.
    PreTool,
    /// After the call ran.
    PostTool,
}

/// What a hook's run did to its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HookEffect {
    /// `pre_tool` exited 0: the call runs.
    Allowed,
    /// `pre_tool` exited 2: the call is denied with its stderr.
    Denied,
    /// `pre_tool` failed (another exit, a timeout, a signal): the call is
    /// denied (fail closed).
    FailedClosed,
    /// `post_tool` exited 0 or 2: its output was added to the result.
    Added,
    /// `post_tool` failed: the task fails.
    FailedTask,
}

/// One run of a hook.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HookRun {
    /// `pre_tool` or `post_tool`.
    pub kind: HookKind,
    /// Its command.
    pub run: String,
    /// The task or policy file it came from.
    pub source: String,
    /// Its exit code; null when it was killed or did not start.
    pub exit_code: Option<i32>,
    /// Whether it ran out of time.
    pub timed_out: bool,
    /// How long it ran.
    pub duration_ms: u64,
    /// What it printed (cut when long).
    pub stdout: String,
    /// What it printed on stderr (cut when long).
    pub stderr: String,
    /// What it did to the call.
    pub effect: HookEffect,
}

/// A tool call as it starts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StartedCall {
    /// The model turn that asked for it.
    pub turn: u32,
    /// The batch of its turn it runs in.
    pub batch: u32,
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// Its arguments as the model gave them.
    pub arguments: Arc<Value>,
    /// Null when the call is refused before the policy is asked.
    pub decision: Option<Arc<Decision>>,
    /// Milliseconds from the task's start.
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
            hooks: Vec::new(),
            shadow: None,
        }
    }
}
