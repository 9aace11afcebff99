//! How much a tool call may hurt.
//!
//! Each tool has a default risk (read tools low, writers medium, commands
//! high, MCP and unknown tools medium) that a policy's `risk:` may override
//! per tool. A low-risk call needs no allow rule; the others need one, or the
//! layer's default.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The risk of a tool call.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads only: allowed unless a deny rule matches.
    Low,
    /// Writes files: needs an allow rule or a default of allow.
    Medium,
    /// Runs commands: needs an allow rule or a default of allow.
    High,
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        })
    }
}
