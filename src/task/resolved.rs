//! A task as it runs: what loading builds from a task file, with
//! defaults applied, paths resolved and the policy compiled.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::model::Mode;
use crate::contain::{EnvSettings, SandboxSettings};
use crate::mcp::McpServerSpec;
use crate::provider::models::Pricing;
use crate::provider::{ModelOptions, ModelSpec, ScriptTurn};
use runner_policy::Policy;

/// A check, resolved.
#[derive(Debug, Clone)]
pub struct TaskCheck {
    pub name: String,
    pub run: String,
    /// `shell:` as written (`sh`, `python`, `perl {0}`); none runs bash as
    /// CI does.
    pub shell: Option<String>,
    pub timeout: Duration,
}

/// A task ready to run: defaults applied, paths resolved, policy compiled.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// Where `name:` is written (line, column); (1, 1) when defaulted.
    pub name_at: (u64, u64),
    pub file: PathBuf,
    pub prompt: String,
    pub model: ModelSpec,
    /// Models to fall back to, in order.
    pub fallback: Vec<ModelSpec>,
    /// Which cell of a `--models` matrix this is.
    pub matrix: Option<runner_output::MatrixCell>,
    /// The task's own policy layer (the built-in default when it names none).
    pub policy: Policy,
    pub workspace: PathBuf,
    pub mode: Mode,
    pub tools: Option<Vec<String>>,
    pub max_turns: u32,
    pub timeout: Duration,
    pub checks: Vec<TaskCheck>,
    pub retries: u32,
    pub fail_on_denial: bool,
    /// `max_denials` and `fail_fast`.
    pub tripwires: super::tripwires::TaskTripwires,
    /// `shadow_policy:`: the candidate layers, decided beside the policy.
    pub shadow_policy: Vec<runner_policy::Policy>,
    /// `canaries:` as the task wrote it (decided with the run's policy
    /// layers: `crate::task::canaries`).
    pub canaries: Option<runner_policy::CanariesFile>,
    /// `batch:`: asked in vendor batches under `runner run --batch`.
    pub batch: bool,
    /// The repository it runs in, for a fleet run (`--repos`).
    pub repository: Option<runner_output::Repository>,
    /// Shared: every attempt plays it from the start.
    pub script: std::sync::Arc<[ScriptTurn]>,
    /// `scripts:`, one per attempt of `--repeat` (the first is `script`).
    pub scripts: Vec<std::sync::Arc<[ScriptTurn]>>,
    /// Declared parameters with their values (`files` not included).
    pub params: BTreeMap<String, String>,
    pub model_options: ModelOptions,
    pub env: EnvSettings,
    pub sandbox: SandboxSettings,
    pub mcp_servers: Vec<McpServerSpec>,
    /// 0: no limit.
    pub max_tokens_total: u64,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// Compact at this share of the window.
    pub compact_at: f64,
    /// The model's price (the task's own, else built in); `None`: unknown.
    pub pricing: Option<Pricing>,
    /// Stop after the turn that passes this many USD.
    pub max_cost: Option<f64>,
    /// The schema the final answer must be valid against.
    pub output_schema: Option<std::sync::Arc<crate::engine::OutputSchema>>,
    /// The task's own hooks (its policy layers' come on top).
    pub hooks: runner_policy::Hooks,
    /// `telemetry:`: where the run's traces and metrics go.
    pub telemetry: Option<runner_policy::Telemetry>,
    /// `agents:` and `agent_limits:`, when the task has profiles.
    pub agents: Option<std::sync::Arc<super::agents::Agents>>,
}
