//! A shadow policy's decisions (`runner run --shadow-policy`): every call
//! the run's policy decided is decided again under the candidate layers,
//! and the candidate's answer is recorded beside the enforced one, never
//! enforced. A change is a call whose two answers differ.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use runner_policy::{Decision, Verdict};

/// What the shadow policy would have decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShadowDecision {
    /// Allow or deny.
    pub decision: Verdict,
    /// The rule that would have decided; null for low risk or the default.
    pub rule: Option<String>,
    /// The candidate layer it is in.
    pub policy: Option<String>,
    /// The rule's line in that layer's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

impl ShadowDecision {
    /// The shadow side of `d`.
    pub fn of(d: &Decision) -> Self {
        Self {
            decision: d.verdict,
            rule: d.rule.clone(),
            policy: d.policy.clone(),
            line: d.line,
        }
    }
}

/// How the shadow policy would change a call's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ShadowChange {
    /// The run allowed it; the candidate would deny it.
    NewlyDenied,
    /// The run denied it; the candidate would allow it.
    NewlyAllowed,
}

impl ShadowChange {
    /// `newly-denied` or `newly-allowed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShadowChange::NewlyDenied => "newly-denied",
            ShadowChange::NewlyAllowed => "newly-allowed",
        }
    }
}

/// One side of a decision in words: `deny (deny Bash(rm:*), policies/ci.yaml:12)`.
pub fn describe_decision(
    verdict: Verdict,
    rule: Option<&str>,
    policy: Option<&str>,
    line: Option<u64>,
) -> String {
    let verdict = match verdict {
        Verdict::Allow => "allow",
        Verdict::Deny => "deny",
    };
    let at = match (policy, line) {
        (Some(p), Some(l)) => Some(format!("{p}:{l}")),
        (Some(p), None) => Some(p.to_string()),
        (None, _) => None,
    };
    match (rule, at) {
        (Some(r), Some(at)) => format!("{verdict} ({r}, {at})"),
        (None, Some(at)) => format!("{verdict} (low risk, {at})"),
        (Some(r), None) => format!("{verdict} ({r})"),
        (None, None) => verdict.to_string(),
    }
}
