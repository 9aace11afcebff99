//! A task's `max_cost` over all its runs (issue 75 item 5): the attempts
//! of `--repeat` and `--attempts` and the variants of `--models` and
//! `--params` are tasks of their own, but a task's budget is the task's,
//! so they spend one `max_cost` together.
//!
//! Each run of a task joins its task's group (by task file and name, the
//! attempt and variant left out) and holds a slot there. Every turn it
//! publishes its cost to the slot (the agent loop's [`Spending`]) and
//! counts what the other slots hold as its own, as a parent counts its
//! children: a run stops after the turn that passes the budget, whichever
//! run spent it. A run that would start after its task's budget is spent
//! is skipped. Runs at once each see the others' costs as of their last
//! turns, so the task can pass its budget by a turn per run running.
//!
//! A task run once never joins (nothing to share): the check is off the
//! common path.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::engine::Spending;
use crate::task::Task;

/// The groups of the run's tasks that run more than once.
#[derive(Debug, Default)]
pub struct TaskCosts {
    groups: Mutex<HashMap<(PathBuf, String), Arc<Group>>>,
}

/// The costs of one task's runs, a slot each.
#[derive(Debug, Default)]
struct Group {
    costs: Mutex<Vec<f64>>,
}

/// One run's place in its task's group.
#[derive(Debug)]
pub(super) struct Member {
    group: Arc<Group>,
    slot: usize,
    /// The task's budget (USD).
    pub max: f64,
}

/// The task a run is one of several runs of: its name without the
/// variant and the attempt; `None` for a task run once.
fn base_name(task: &Task) -> Option<&str> {
    let stripped = crate::report::repeats::attempt_of(&task.name).map(|(n, _)| n);
    match (&task.matrix, stripped) {
        (Some(cell), _) => Some(cell.task.as_str()),
        (None, Some(n)) => Some(n),
        (None, None) => None,
    }
}

/// The group `task` spends its `max_cost` with: its file and its name
/// without the attempt and the variant; `None` for a task run once.
pub(crate) fn group_of(task: &Task) -> Option<(PathBuf, String)> {
    base_name(task).map(|b| (task.file.clone(), b.to_string()))
}

impl TaskCosts {
    /// `task`'s place in its group, when it has a budget and is one of
    /// several runs of one task.
    pub(super) fn join(&self, task: &Task) -> Option<Member> {
        let max = task.max_cost?;
        let key = group_of(task)?;
        let group = self
            .groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key)
            .or_default()
            .clone();
        let slot = {
            let mut costs = group.costs.lock().unwrap_or_else(|e| e.into_inner());
            costs.push(0.0);
            costs.len() - 1
        };
        Some(Member { group, slot, max })
    }
}

impl Member {
    /// What the task's other runs have spent.
    pub fn others(&self) -> f64 {
        let costs = self.group.costs.lock().unwrap_or_else(|e| e.into_inner());
        costs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.slot)
            .map(|(_, c)| c)
            .sum()
    }

    /// This run's cost so far (or in all, at its end).
    pub fn set(&self, cost: f64) {
        let mut costs = self.group.costs.lock().unwrap_or_else(|e| e.into_inner());
        costs[self.slot] = cost;
    }

    /// The agent's spending: `inner`'s (its children, when it has
    /// agents) and the task's other runs'.
    pub fn spending(self: &Arc<Self>, inner: Option<Arc<dyn Spending>>) -> Arc<dyn Spending> {
        Arc::new(Shared {
            member: self.clone(),
            inner,
        })
    }
}

#[derive(Debug)]
struct Shared {
    member: Arc<Member>,
    inner: Option<Arc<dyn Spending>>,
}

impl Spending for Shared {
    fn publish(&self, turns: u32, cost: Option<f64>) {
        if let Some(i) = &self.inner {
            i.publish(turns, cost);
        }
        // The children's share is published by the parent's account;
        // this slot holds the agent's own cost and its children's.
        let children = self.inner.as_ref().map_or(0.0, |i| i.children().1);
        self.member.set(cost.unwrap_or(0.0) + children);
    }

    fn children(&self) -> (u32, f64) {
        let (turns, cost) = self.inner.as_ref().map_or((0, 0.0), |i| i.children());
        (turns, cost + self.member.others())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_one_task_count_each_others_costs() {
        let group = Arc::new(Group::default());
        let member = |slot| {
            group.costs.lock().unwrap().push(0.0);
            Arc::new(Member {
                group: group.clone(),
                slot,
                max: 1.0,
            })
        };
        let (a, b) = (member(0), member(1));
        let (sa, sb) = (a.spending(None), b.spending(None));
        sa.publish(1, Some(0.3));
        sb.publish(1, Some(0.5));
        assert_eq!(sa.children(), (0, 0.5));
        assert_eq!(sb.children(), (0, 0.3));
        // A run's final cost replaces what it published.
        b.set(0.6);
        assert!((a.others() - 0.6).abs() < 1e-9);
        assert!((b.others() - 0.3).abs() < 1e-9);
    }
}
