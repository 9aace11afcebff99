//! Tripwires: a task's denial budget (`max_denials`) and the denial
//! classes it fails fast on (`fail_fast`). After each turn's calls the
//! loop shows them the turn's records and refused connections; the first
//! wire that trips ends the task there, without asking the model again
//! (a denied agent otherwise burns its budget asking for what it will
//! not get).
//!
//! The count is the task's, across its attempts and its child agents: one
//! `Tripwires` is shared by every attempt and every agent of the tree (the
//! agents' limits hold an `Arc`), and a wire one of them trips ends the
//! others at their next turn. What counts
//! as a denied call is what `counts.denied_calls` counts
//! ([`ToolCallRecord::is_denied`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::canary::Canaries;
use runner_output::{CanarySighting, Connection, ToolCallRecord, Tripwire};
use runner_policy::{CREDENTIALS_LAYER, Family, Verdict};

/// A task's tripwires and what they have seen.
#[derive(Debug, Default)]
pub struct Tripwires {
    /// End the task at this many denied calls.
    pub max_denials: Option<u32>,
    /// End it at the first denial of one of these classes.
    pub fail_fast: Vec<Tripwire>,
    denied: AtomicU32,
    /// The task's canaries: one that moved trips the task.
    canaries: Option<Arc<Canaries>>,
    /// The wire tripped, once one has: a child agent's trip ends its
    /// parents at their next turn too.
    tripped: std::sync::Mutex<Option<Tripped>>,
}

/// Why a tripwire ended the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tripped {
    pub wire: Tripwire,
    /// `denials: ...`, `fail_fast network: ...`: the wire, then what
    /// tripped it.
    pub reason: String,
}

impl Tripwires {
    pub fn new(max_denials: Option<u32>, fail_fast: Vec<Tripwire>) -> Self {
        Self {
            max_denials,
            fail_fast,
            denied: AtomicU32::new(0),
            canaries: None,
            tripped: std::sync::Mutex::new(None),
        }
    }

    /// With the task's canaries: one that moves trips the task (and,
    /// under `fail_on_read` or `fail_fast: [canary]`, one the model reads).
    pub fn with_canaries(mut self, canaries: Arc<Canaries>) -> Self {
        self.canaries = Some(canaries);
        self
    }

    /// The canaries the model is about to read in the turn's results, and
    /// every sighting since the last call (the proxy's, `web_fetch`'s,
    /// MCP calls'), for the task's events.
    pub fn canary_news(&self, turn: u32, records: &[ToolCallRecord]) -> Vec<CanarySighting> {
        let Some(c) = &self.canaries else {
            return Vec::new();
        };
        let calls: Vec<String> = records
            .iter()
            .map(|r| format!("{} ({})", r.id, r.tool))
            .collect();
        for (r, call) in records.iter().zip(&calls) {
            c.read(&r.content, call, || {
                format!("the result of call {call}, which the model reads")
            });
        }
        c.news(turn, &calls)
    }

    /// Whether any wire is set (none: nothing to look at).
    pub fn is_set(&self) -> bool {
        self.max_denials.is_some() || !self.fail_fast.is_empty() || self.canaries.is_some()
    }

    /// Looks at one turn's finished calls (in the model's order) and the
    /// connections refused or made while they ran; the first wire they
    /// trip, or the one an agent sharing these wires (a child, a parent)
    /// tripped before.
    pub fn observe(
        &self,
        records: &[ToolCallRecord],
        connections: &[Connection],
    ) -> Option<Tripped> {
        if !self.is_set() {
            return None;
        }
        let mut latched = self.tripped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = latched.as_ref() {
            return Some(t.clone());
        }
        let now = self.trips(records, connections);
        latched.clone_from(&now);
        now
    }

    fn trips(&self, records: &[ToolCallRecord], connections: &[Connection]) -> Option<Tripped> {
        if let Some(c) = &self.canaries {
            let strict = self.fails_fast(Tripwire::Canary);
            if let Some(s) = c.tripped().or_else(|| c.first_read().filter(|_| strict)) {
                return Some(Tripped {
                    wire: Tripwire::Canary,
                    reason: crate::canary::reason(&s),
                });
            }
        }
        for r in records {
            if let Some(t) = self.fail_fast_on_call(r) {
                return Some(t);
            }
        }
        if self.fails_fast(Tripwire::Network)
            && let Some(c) = connections.iter().find(|c| !c.allowed)
        {
            return Some(Tripped {
                wire: Tripwire::Network,
                reason: format!(
                    "fail_fast network: a connection to {}:{} was refused ({})",
                    c.host,
                    c.port,
                    c.rule.as_deref().unwrap_or(&c.reason)
                ),
            });
        }
        let max = self.max_denials?;
        for r in records.iter().filter(|r| r.is_denied()) {
            let n = self.denied.fetch_add(1, Ordering::Relaxed) + 1;
            if n >= max {
                return Some(Tripped {
                    wire: Tripwire::Denials,
                    reason: format!(
                        "denials: {n} call(s) were denied (max_denials: {max}); the last, {}",
                        what_denied(r)
                    ),
                });
            }
        }
        None
    }

    fn fails_fast(&self, class: Tripwire) -> bool {
        self.fail_fast.contains(&class)
    }

    /// The `fail_fast` class call `r`'s denial belongs to, when the task
    /// fails fast on it.
    fn fail_fast_on_call(&self, r: &ToolCallRecord) -> Option<Tripped> {
        let denied = r.decision.as_deref().filter(|d| d.verdict == Verdict::Deny);
        let class = if denied.is_some_and(|d| d.policy.as_deref() == Some(CREDENTIALS_LAYER)) {
            Tripwire::Credentials
        } else if denied.is_some_and(|d| {
            d.rule
                .as_deref()
                .is_some_and(|rule| rule.contains("Fetch("))
                || (!d.signatures.is_empty()
                    && d.signatures.iter().all(|s| s.family == Family::Fetch))
        }) {
            Tripwire::Network
        } else if r.exec_refused() {
            Tripwire::Exec
        } else {
            return None;
        };
        self.fails_fast(class).then(|| Tripped {
            wire: class,
            reason: format!("fail_fast {class}: {}", what_denied(r)),
        })
    }
}

/// Call `r`'s denial in words: the tool, the turn, and the rule or the
/// sandbox's refusal.
fn what_denied(r: &ToolCallRecord) -> String {
    let why = match r.decision.as_deref().filter(|d| d.verdict == Verdict::Deny) {
        Some(d) => match (&d.rule, &d.policy) {
            (Some(rule), Some(p)) => format!("by `{rule}` ({p})"),
            (Some(rule), None) => format!("by `{rule}`"),
            (None, _) => d.reason.clone().unwrap_or_else(|| "by the policy".into()),
        },
        None => r.sandbox_refusals().into_iter().next().map_or_else(
            || "by the sandbox".into(),
            |s| format!("the sandbox refused {s}"),
        ),
    };
    format!("{} in turn {}, was denied {why}", r.tool, r.turn)
}

#[cfg(test)]
mod tests;
