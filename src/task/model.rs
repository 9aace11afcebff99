//! The task file as written.

pub use super::duration::DurationText;
use crate::provider::ScriptTurn;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

use super::params::ParamDecl;
use runner_policy::PolicyFile;

pub use runner_output::Mode;

/// `output_schema:` is a path (relative to the task file) or a schema.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OutputSchemaRef {
    Path(Spanned<String>),
    Inline(serde_json::Value),
}

/// `policy:` is a path (relative to the task file) or an inline policy.
#[derive(Debug, Clone, JsonSchema)]
#[serde(untagged)]
pub enum PolicyRef {
    Path(#[schemars(with = "String")] Spanned<String>),
    Inline(Box<PolicyFile>),
}

impl<'de> Deserialize<'de> for PolicyRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through `Spanned` so that a path keeps its location for errors.
        let s: Spanned<PolicyAny> = Spanned::deserialize(d)?;
        Ok(match s.value {
            PolicyAny::Path(p) => PolicyRef::Path(Spanned::new(p, s.referenced, s.defined)),
            PolicyAny::Inline(pf) => PolicyRef::Inline(pf),
        })
    }
}

/// `model:` as written: one model or a chain, located as a whole.
#[derive(Debug, Clone)]
pub struct ModelRef(pub Spanned<Vec<String>>);

/// `model:` before it gets its span back: a model or a list of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelAny {
    One(String),
    Chain(Vec<String>),
}

impl<'de> Deserialize<'de> for ModelRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s: Spanned<ModelAny> = Spanned::deserialize(d)?;
        let models = match s.value {
            ModelAny::One(m) => vec![m],
            ModelAny::Chain(ms) => ms,
        };
        Ok(ModelRef(Spanned::new(models, s.referenced, s.defined)))
    }
}

/// A string or a mapping, before the path gets its span back.
enum PolicyAny {
    Path(String),
    Inline(Box<PolicyFile>),
}

impl<'de> Deserialize<'de> for PolicyAny {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = PolicyAny;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a policy file path or an inline policy mapping")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<PolicyAny, E> {
                Ok(PolicyAny::Path(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<PolicyAny, A::Error> {
                let pf =
                    PolicyFile::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(PolicyAny::Inline(Box::new(pf)))
            }
        }
        d.deserialize_any(V)
    }
}

/// A check run after the agent stops.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckEntry {
    /// A bash script run in the task's workspace; exit 0 passes.
    #[schemars(with = "String")]
    pub run: Spanned<String>,
    /// Its name in the transcript and the JUnit report (default: the
    /// script's first line).
    #[serde(default)]
    pub name: Option<String>,
    /// How the script runs: `bash` (the default: `bash --noprofile --norc
    /// -eo pipefail`, as GitHub Actions runs a step), `sh` (`sh -e`), or a
    /// program given the script as a file (`python`, `perl {0}`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub shell: Option<Spanned<String>>,
    /// Default 5m.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<DurationText>>,
}

/// One `mcp_servers:` entry as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerFile {
    /// The program (looked up on PATH), for a server over stdio.
    #[serde(default)]
    pub command: Option<String>,
    /// A remote server's address (streamable HTTP), instead of `command`.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers for a remote server; `${VAR}` reads a variable of the
    /// runner's environment when the server starts (and redacts its value
    /// everywhere): `Authorization: "Bearer ${MCP_TOKEN}"`.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// The program's arguments (a server over stdio).
    #[serde(default)]
    pub args: Vec<String>,
    /// The server's environment, added to PATH, HOME and LANG.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Its working folder, relative to the task file (default: the task's
    /// workspace copy).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Fail the task when the server cannot start (default true).
    #[serde(default = "default_true")]
    pub required: bool,
    /// Register only these tools (default: all).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Limit of one call (default 60s).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<DurationText>>,
    /// Confines the server as commands are: `best-effort` (default),
    /// `required`, `off`, or `{mode, network, write}`. By default it writes
    /// only in the workspace copy and a temp folder of its own, and may use
    /// the network.
    #[serde(default)]
    #[schemars(with = "Option<SandboxFile>")]
    pub sandbox: Option<Spanned<SandboxFile>>,
}

fn default_true() -> bool {
    true
}

/// `env:` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvFile {
    /// Secret-looking variables (`*_TOKEN`, `*_KEY`, ...) to pass on anyway.
    #[serde(default)]
    pub pass: Vec<String>,
    /// Variables to set for commands and checks.
    #[serde(default)]
    pub set: std::collections::BTreeMap<String, String>,
}

pub use super::sandbox_file::{SandboxFile, SandboxModeFile};

/// `limits:` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// CPU seconds a command may use.
    #[serde(default)]
    pub cpu_seconds: Option<u64>,
    /// Memory (address space) a command may use, in MiB.
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// Most processes and threads the task's commands may have at once
    /// (a fork bomb then fails to fork): a pids cgroup of the task's own
    /// where the machine lets the runner make one; else, for a user other
    /// than root, `RLIMIT_NPROC` at this many beyond the machine's count.
    /// Default: `RLIMIT_NPROC` at 1024 beyond the machine's count, for a
    /// user other than root; for root, whom it does not hold, a pids
    /// cgroup of 1024 where the commands can start inside it (cgroup v1),
    /// else none (a cgroup each command joins costs up to a few
    /// milliseconds a command). The transcript's `sandbox` says which
    /// bound holds.
    #[serde(default)]
    pub processes: Option<u64>,
}

/// `model_options:` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelOptionsFile {
    /// Sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Most tokens one answer may have (Anthropic: default 8192).
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// The endpoint, instead of `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL` or
    /// `GEMINI_BASE_URL`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub base_url: Option<Spanned<String>>,
    /// Stream answers (default true); false for servers that stream tool
    /// calls badly.
    #[serde(default)]
    pub stream: Option<bool>,
    /// Limit of one request (default 10m).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub request_timeout: Option<Spanned<DurationText>>,
    /// Longest silence inside a streamed answer (default 2m).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub idle_timeout: Option<Spanned<DurationText>>,
    /// Retries of a failed request: connection errors, timeouts, 408, 409,
    /// 429, 5xx (default 4).
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// The model's context window in tokens (default: known per model
    /// family; 128000 for others).
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub context_window: Option<Spanned<u64>>,
    /// Compact the conversation when a request would fill this share of
    /// the window (default 0.8).
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub compact_at: Option<Spanned<f64>>,
    /// USD per million tokens `{input, cached_input, output}`, instead of
    /// the built-in price (needed for local servers and new models).
    #[serde(default)]
    pub pricing: Option<crate::provider::models::Pricing>,
    /// The first turn: `auto` (default), `required` (some tool), `none`, or
    /// a tool's name; later turns are `auto`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub tool_choice: Option<Spanned<String>>,
    /// The `content` of an assistant message that only calls tools, in
    /// Chat Completions requests (`openai:`): `null` (default, as OpenAI
    /// documents it) or `""` (for servers that refuse null, such as
    /// llama-cpp-python's).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub content_with_tool_calls: Option<Spanned<String>>,
    /// How the vendor serves the requests, and at what price: OpenAI's
    /// `auto`, `default`, `flex` (half price, slower) or `priority`;
    /// Anthropic's `auto` or `standard_only`. Models of a vendor that does
    /// not define it are asked without it.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub service_tier: Option<Spanned<String>>,
    /// OpenAI's API for the model's turns: `chat` (Chat Completions, the
    /// default; OpenAI-compatible servers speak it) or `responses` (the
    /// Responses API). Other vendors have one.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub api: Option<Spanned<String>>,
}

fn yes() -> bool {
    true
}

/// A task file. Unknown fields are errors.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// Default: the file's stem. Unique within a run.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// What the agent is asked to do.
    #[schemars(with = "String")]
    pub prompt: Spanned<String>,
    /// `scripted`, `openai:MODEL`, `anthropic:MODEL` or `gemini:MODEL`;
    /// or a list, the first model and the ones to fall back to in order.
    #[serde(default)]
    #[schemars(with = "Option<ModelAny>")]
    pub model: Option<ModelRef>,
    /// Models to fall back to, in order, when the model fails for good
    /// (its quota, its key, an outage that outlasts the retries).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub fallback: Option<Spanned<Vec<String>>>,
    /// A policy file path (relative to this file) or an inline policy.
    #[serde(default)]
    pub policy: Option<PolicyRef>,
    /// The workspace folder, relative to this file (default: the current directory).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub workspace: Option<Spanned<String>>,
    /// `edit` (the default: every tool) or `plan` (read-only tools only).
    #[serde(default)]
    pub mode: Mode,
    /// The tools the agent may use (default: all).
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub tools: Option<Vec<Spanned<String>>>,
    /// Default 20.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub max_turns: Option<Spanned<u32>>,
    /// Default 10m.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<DurationText>>,
    /// Scripts run in the workspace after the agent stops; the task
    /// passes when each exits 0.
    #[serde(default)]
    pub checks: Vec<CheckEntry>,
    /// Times to re-run the agent with the failed checks' output (default 0).
    #[serde(default)]
    pub retries: u32,
    /// Fail the task when any call was denied (default false).
    #[serde(default)]
    pub fail_on_denial: bool,
    /// End the task at once after this many denied calls (outcome reason
    /// `denials`); the model is not asked again.
    #[serde(default)]
    #[schemars(with = "Option<u32>")]
    pub max_denials: Option<Spanned<u32>>,
    /// End the task at the first denial of these classes: `credentials`
    /// (the built-in credentials layer), `network` (a connection or a
    /// `Fetch` refused), `exec` (the exec wall refused a program a deny
    /// rule names), `canary` (a canary moved).
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub fail_fast: Vec<Spanned<String>>,
    /// Candidate policy files (a path or a list, relative to this file)
    /// that decide every call too, without being enforced: the transcript
    /// records each call's shadow decision and the summary lists the calls
    /// it would change. `runner run --shadow-policy` takes precedence.
    #[serde(default)]
    pub shadow_policy: Option<super::shadow::ShadowPolicyRef>,
    /// Decoy credentials for the task's commands (variables and a home of
    /// their own); one on its way out fails the task at once. Default: on
    /// when `CI=true`; `false` turns them off, `{fail_on_read: true}`
    /// fails the task when the model reads one too.
    #[serde(default)]
    pub canaries: Option<runner_policy::CanariesFile>,
    /// Under `runner run --batch`, whether this task's model is asked
    /// through the vendor's batch API (default true); `false` keeps it
    /// interactive.
    #[serde(default = "yes")]
    pub batch: bool,
    /// The model's turns, for `model: scripted`.
    #[serde(default)]
    pub script: Option<Vec<ScriptTurn>>,
    /// Scripts chosen by attempt number under `runner run --repeat N`
    /// (attempt K plays script K, round the list): a scripted model that
    /// varies on purpose. In place of `script:`.
    #[serde(default)]
    pub scripts: Option<Vec<Vec<ScriptTurn>>>,
    /// Options for an HTTP model (ignored by `scripted`).
    #[serde(default)]
    pub model_options: Option<ModelOptionsFile>,
    /// The environment of commands and checks.
    #[serde(default)]
    pub env: Option<EnvFile>,
    /// Variables whose values are redacted from every output, whatever
    /// their names: `INTERNAL_API`, or a glob over names (`MYCO_*`).
    /// Values that look secret by their shape (a webhook URL, a URL's
    /// password, a token) are redacted without it.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub redact: Vec<Spanned<String>>,
    /// MCP servers whose tools the agent gets, by name.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, McpServerFile>")]
    pub mcp_servers: std::collections::BTreeMap<String, Spanned<McpServerFile>>,
    /// Where commands and checks may write, and whether they may use the
    /// network: `best-effort` (default), `required`, `off`, or
    /// `{mode, network, write}`.
    #[serde(default)]
    #[schemars(with = "Option<SandboxFile>")]
    pub sandbox: Option<Spanned<SandboxFile>>,
    /// Per-command limits.
    #[serde(default)]
    pub limits: Option<LimitsFile>,
    /// Stop, failed, once the task has used this many tokens (input and
    /// output, all turns and attempts). Default: no limit.
    #[serde(default)]
    #[schemars(with = "Option<u64>")]
    pub max_tokens_total: Option<Spanned<u64>>,
    /// Stop, failed, after the turn that makes the task's cost pass this
    /// many US dollars (needs a known price: built in, or
    /// `model_options.pricing`). Default: no limit.
    #[serde(default)]
    #[schemars(with = "Option<f64>")]
    pub max_cost: Option<Spanned<f64>>,
    /// The final answer must be JSON valid against this JSON Schema
    /// (Draft 2020-12): inline, or the path of a `.json` or `.yaml` file
    /// relative to the task file. It lands in `OUT/<task>/output.json`.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub output_schema: Option<OutputSchemaRef>,
    /// Commands run around tool calls: `pre_tool` (may deny an allowed
    /// call; fails closed) and `post_tool` (adds to the result).
    #[serde(default)]
    pub hooks: Option<runner_policy::HooksFile>,
    /// Send the run's traces and metrics over OpenTelemetry (OTLP).
    #[serde(default)]
    pub telemetry: Option<runner_policy::TelemetryFile>,
    /// Profiles of children the agent may start with the `task` tool:
    /// inline, or the path of a YAML file of them (shared by tasks).
    #[serde(default)]
    pub agents: Option<super::agents_file::AgentsRef>,
    /// How many children run at once and how deep they may nest.
    #[serde(default)]
    pub agent_limits: Option<super::agents_file::AgentLimitsFile>,
    /// Values for `{{name}}` in the prompt and checks: a default, or
    /// `{default, description}`; without a default, `--param` must set it.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, ParamDecl>")]
    pub parameters: std::collections::BTreeMap<String, Spanned<ParamDecl>>,
}
