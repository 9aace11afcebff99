//! How a child ended: its outcome from why its loop stopped, and its
//! changes merged back when it worked in a copy of its own.

use std::time::Duration;

use super::account::Hold;
use crate::engine::AgentStop;
use crate::report::{Outcome, OutcomeStatus};
use crate::task::agents::AgentProfile;
use crate::workspace::{IsolatedWorkspace, apply_changes};

/// How an isolated child's changes came back.
#[derive(Debug, thiserror::Error)]
pub enum Merge {
    #[error("not merged: the child did not finish")]
    NotFinished,
    #[error("no changes")]
    Nothing,
    #[error("{0} change(s) merged")]
    Merged(usize),
    /// Nothing was written (all or nothing).
    #[error("conflict: {0}")]
    Conflict(crate::workspace::ApplyError),
    #[error("its changes could not be read: {0}")]
    Unreadable(std::io::Error),
}

impl Merge {
    /// Whether changes of a finished child stayed out of its parent's
    /// workspace.
    pub fn failed(&self) -> bool {
        matches!(self, Merge::Conflict(_) | Merge::Unreadable(_))
    }
}

/// The child's changes into its parent's workspace (three ways where the
/// parent changed a file meanwhile; all or nothing).
pub fn merge_back(iso: &IsolatedWorkspace, parent_root: &std::path::Path) -> Merge {
    match iso.changes() {
        Err(e) => Merge::Unreadable(e),
        Ok(changes) if changes.is_empty() => Merge::Nothing,
        Ok(changes) => match apply_changes(parent_root, &changes) {
            Ok(n) => Merge::Merged(n),
            Err(e) => Merge::Conflict(e),
        },
    }
}

pub fn outcome_of(
    stop: Result<AgentStop, tokio::time::error::Elapsed>,
    p: &AgentProfile,
    hold: Hold,
    timeout: Duration,
) -> (Outcome, String, Option<serde_json::Value>) {
    let failed = |reason: String| Outcome {
        status: OutcomeStatus::Failed,
        reason,
        error_class: None,
        tripwire: None,
    };
    let Ok(stop) = stop else {
        return (
            Outcome {
                status: OutcomeStatus::Timeout,
                reason: format!("timed out after {} s", timeout.as_secs()),
                error_class: None,
                tripwire: None,
            },
            String::new(),
            None,
        );
    };
    match stop {
        AgentStop::Finished { text, output } => (
            Outcome {
                status: OutcomeStatus::Passed,
                reason: "the child finished".into(),
                error_class: None,
                tripwire: None,
            },
            text,
            output,
        ),
        AgentStop::NoValidOutput(e) => (
            failed(format!(
                "ran out of turns without an answer valid against the profile's output_schema: {e}"
            )),
            String::new(),
            None,
        ),
        AgentStop::EmptyAnswer => (
            failed("empty answer: its turn held neither text nor a tool call, twice".into()),
            String::new(),
            None,
        ),
        AgentStop::MaxTurns => (
            failed(format!(
                "used the {} turn(s) reserved for it{}",
                hold.turns,
                p.max_turns
                    .map_or(String::new(), |m| format!(" (max_turns {m})"))
            )),
            String::new(),
            None,
        ),
        AgentStop::CostBudget(c) => (
            failed(format!(
                "spent ${c:.4}, past the ${:.4} reserved for it",
                hold.cost.unwrap_or_default()
            )),
            String::new(),
            None,
        ),
        AgentStop::TokenBudget => (
            failed("the token budget is spent".into()),
            String::new(),
            None,
        ),
        AgentStop::HookFailed(why) => (failed(why), String::new(), None),
        AgentStop::Tripped(t) => (failed(t.reason), String::new(), None),
        AgentStop::ContextOverflow(o) => (failed(o.reason()), String::new(), None),
        AgentStop::ProviderFailed(e) => (
            Outcome {
                status: OutcomeStatus::Error,
                reason: format!("its model provider failed: {e}"),
                error_class: Some(e.class),
                tripwire: None,
            },
            String::new(),
            None,
        ),
    }
}
