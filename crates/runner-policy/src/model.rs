//! The policy file as written: the YAML model (also a task's inline
//! `policy:`), with spans for errors and a JSON Schema for editors.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::risk::Risk;

/// Most patterns one policy may hold (`rules:` allow and deny together;
/// `network:` entries likewise).
pub const MAX_RULES: usize = 20_000;

/// What a call that needs approval and matches no rule gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DefaultDecision {
    /// Allow it.
    Allow,
    /// Deny it (the default).
    #[default]
    Deny,
}

/// One entry of `rules:`: allow or deny patterns, with an optional reason.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleEntry {
    /// Patterns such as `Bash(cargo test:*)`, `Edit(src/**)`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow: Option<Vec<Spanned<String>>>,
    /// Patterns whose calls are denied, whatever else allows them.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny: Option<Vec<Spanned<String>>>,
    /// Told to the model when one of these patterns denies a call.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A check run when the policy loads: a failing example is a load error.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyTest {
    /// A signature-shaped call: `Bash(git status && rm -rf /)`, `Edit(src/a.rs)`.
    #[schemars(with = "String")]
    pub call: Spanned<String>,
    /// The decision the policy must give it.
    pub expect: DefaultDecision,
}

/// A policy file as written (also the inline `policy:` of a task).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The decision for calls that need approval and match no rule (default: deny).
    #[serde(default)]
    pub default: DefaultDecision,
    /// Allow and deny rules; any matching deny rule wins.
    #[serde(default)]
    #[schemars(with = "Vec<RuleEntry>")]
    pub rules: Vec<Spanned<RuleEntry>>,
    /// Risk overrides by tool name, or `mcp` for every MCP tool.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Risk>")]
    pub risk: BTreeMap<String, Spanned<Risk>>,
    /// Examples checked when the policy loads.
    #[serde(default)]
    pub tests: Vec<PolicyTest>,
    /// Commands run around the tool calls of every task under this policy.
    #[serde(default)]
    pub hooks: Option<crate::hooks::HooksFile>,
    /// Send the traces and metrics of every run under this policy over
    /// OpenTelemetry (OTLP).
    #[serde(default)]
    pub telemetry: Option<crate::telemetry::TelemetryFile>,
    /// Hosts commands, hooks and MCP servers may connect to, through the
    /// runner's proxy. Absent: the network is as the task's `sandbox:` says.
    #[serde(default)]
    pub network: Option<NetworkFile>,
    /// Variables whose values are redacted from every output of every
    /// task under this policy, whatever their names: `INTERNAL_API`, or a
    /// glob over names (`MYCO_*`). Values that look secret by their shape
    /// (a webhook URL, a URL's password, a token) are redacted without it.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub redact: Vec<Spanned<String>>,
    /// Decoy credentials for the commands of every task under this policy:
    /// `true` holds whatever a task says; `false` turns off the default
    /// (on when `CI=true`) for tasks that say nothing;
    /// `{fail_on_read: true}` fails a task whose model reads one.
    #[serde(default)]
    pub canaries: Option<crate::CanariesFile>,
}

/// `network:` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Hosts that may be reached: `crates.io`, `*.github.com`,
    /// `registry.npmjs.org:443`, `10.0.0.0/8`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// Hosts that may not, whatever allows them.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub deny: Vec<Spanned<String>>,
    /// The ports an `allow` entry without its own `:port` opens
    /// (default 80 and 443).
    #[serde(default)]
    #[schemars(with = "Option<Vec<u16>>")]
    pub ports: Option<Spanned<Vec<u16>>>,
    /// Told with every refusal of this layer.
    #[serde(default)]
    pub reason: Option<String>,
}
