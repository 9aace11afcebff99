//! Canaries in a transcript: the decoy credentials a task's commands were
//! given (by name, place and hash, never by value) and where one was seen.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task's canaries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CanaryRecord {
    /// The decoys planted.
    pub planted: Vec<PlantedCanary>,
    /// Where one was seen, in order (at most 100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen: Vec<CanarySighting>,
}

/// One decoy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PlantedCanary {
    /// Its name (`AWS_SECRET_ACCESS_KEY`, `~/.netrc password`).
    pub name: String,
    /// The SHA-256 of its value, in hex: a credential found elsewhere can
    /// be told to be this decoy.
    pub sha256: String,
}

/// A canary seen: moving toward the outside (the task fails), or read by
/// the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CanarySighting {
    /// The canary's name.
    pub canary: String,
    /// Where it was seen: `a proxied request to host:443 (its body)`,
    /// `web_fetch https://...`, `the MCP call t__send`, `the diff
    /// (notes.txt)`, `the result of call c3 (turn 2)`.
    pub seen_in: String,
    /// True when it was on its way out (refused, and the task failed);
    /// false when the model read it.
    pub moved: bool,
    /// Milliseconds since the task started.
    pub time_ms: u64,
    /// The turn whose calls it was seen in; absent for the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// The calls that moved it, or whose result held it: `c3 (bash)`. For
    /// a request through the proxy, the calls of its turn (any of them
    /// could have sent it; with one call a turn, that one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<String>,
}
