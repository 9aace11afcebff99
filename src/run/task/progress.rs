//! A task's progress: what `runner run --resume` restores and each run of
//! the task adds to (the conversation, the spending, the attempts, the
//! checks and violations so far). Passed `&mut` from phase to phase; the
//! earlier run's records themselves ([`Prior`]) stay apart, for the phases
//! that read them.

use crate::engine::Conversation;
use crate::provider::Usage;
use crate::report::{CheckRecord, Transcript};
use crate::task::Task;
use runner_output::Violation;

/// The earlier run of a resumed task: its transcript and its changes.
pub(super) struct Prior {
    pub transcript: Box<Transcript>,
    pub diff: String,
}

/// What the task has done so far.
pub(super) struct Progress {
    pub started_at: String,
    pub conversation: Conversation,
    /// The system prompt sent (a resumed task sends its recorded one: the
    /// same bytes, which the vendor's prompt cache matches on).
    pub system: String,
    pub usage: Usage,
    /// Attempts made (the next is this plus one).
    pub attempts: u32,
    pub checks: Vec<CheckRecord>,
    /// Changes to paths the policy denies editing, reverted.
    pub violations: Vec<Violation>,
    pub warnings: Vec<String>,
    /// The turn the agent goes on from (a resumed task's last); taken by
    /// the first attempt.
    pub start_turn: u32,
}

impl Progress {
    /// A task's progress before it starts: none, or the earlier run's.
    pub fn new(task: &Task, prior: Option<&Prior>) -> Self {
        let Some(Prior { transcript: t, .. }) = prior else {
            return Self {
                started_at: now_rfc3339(),
                conversation: Conversation::new(task.prompt.clone()),
                system: String::new(),
                // A priced model's cost starts at 0; an unknown price stays
                // null.
                usage: Usage {
                    cost_usd: task.pricing.map(|_| 0.0),
                    ..Usage::default()
                },
                attempts: 0,
                checks: Vec::new(),
                violations: Vec::new(),
                warnings: Vec::new(),
                start_turn: 0,
            };
        };
        Self {
            started_at: t.started_at.clone(),
            conversation: Conversation::resumed(crate::run::resume::conversation(t)),
            system: t.system_prompt.clone(),
            usage: t.usage,
            attempts: t.counts.attempts.saturating_sub(1),
            checks: t.checks.clone(),
            violations: t.violations.clone(),
            warnings: t.warnings.clone(),
            start_turn: t.turns.iter().map(|r| r.turn).max().unwrap_or(0),
        }
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
