//! What every phase of a task reads and none changes ([`Scene`]), and the
//! outcomes more than one phase ends a task with.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::options::RunOptions;
use crate::engine::AgentLimits;
use crate::report::{Outcome, OutcomeStatus};
use crate::task::Task;
use runner_policy::PolicySet;

/// What every phase of a task reads and none changes.
pub(super) struct Scene<'t> {
    pub task: &'t Task,
    pub opts: &'t RunOptions,
    /// The task's start: its timeout and the transcript's times count
    /// from here.
    pub epoch: Instant,
    /// The task's output folder (its spilled results, MCP servers' logs).
    pub task_out: PathBuf,
    /// The task's policy and `--policy` layers, before the run's
    /// backstops are known (the prepared workspace's has them).
    pub policy: Arc<PolicySet>,
    /// The task's connection decisions (proxy, `web_fetch`, supervisor).
    pub net_log: Arc<crate::net::NetLog>,
    /// The agent's limits, from the task and the run.
    pub limits: AgentLimits,
    /// The task's decoy credentials (`canaries:`), fresh for this run.
    pub canaries: Option<Arc<crate::canary::Canaries>>,
    /// This run's place among its task's runs, whose `max_cost` they
    /// spend together (a task run more than once, with a budget).
    pub siblings: Option<Arc<super::shared_cost::Member>>,
}

impl<'t> Scene<'t> {
    pub fn new(task: &'t Task, opts: &'t RunOptions) -> Self {
        let epoch = Instant::now();
        let policy = task_policy(task, opts);
        let canaries = crate::task::canaries(task.canaries.as_ref(), policy.layers()).map(|c| {
            let mut decoys = crate::canary::Canaries::new(c.fail_on_read, c.file, epoch);
            decoys.inspect_https = c.inspect_https;
            // The model must read a decoy as a thief would: not redacted.
            for d in decoys.list() {
                crate::contain::add_decoy(&d.value);
            }
            Arc::new(decoys)
        });
        Self {
            task,
            opts,
            epoch,
            task_out: opts.out_dir.join(&task.name),
            policy,
            net_log: Arc::new(crate::net::NetLog::new(epoch)),
            limits: limits(task, opts.max_parallel_calls, canaries.as_ref()),
            canaries,
            siblings: opts.task_costs.join(task).map(Arc::new),
        }
    }
}

/// The task's policy and the run's `--policy` layers, before the run's
/// backstops are known.
pub(super) fn task_policy(task: &Task, opts: &RunOptions) -> Arc<PolicySet> {
    let mut layers = vec![task.policy.clone()];
    layers.extend(opts.extra_policies.iter().cloned());
    Arc::new(PolicySet::new(layers))
}

/// The agent's limits, from the task and the run.
fn limits(
    task: &Task,
    max_parallel_calls: usize,
    canaries: Option<&Arc<crate::canary::Canaries>>,
) -> AgentLimits {
    AgentLimits {
        max_turns: task.max_turns,
        max_parallel: max_parallel_calls,
        max_tokens_total: task.max_tokens_total,
        context: crate::engine::ContextLimits {
            window: task.context_window,
            compact_at: task.compact_at,
        },
        pricing: task.pricing,
        max_cost: task.max_cost,
        output: task.output_schema.clone(),
        tool_choice: task.model_options.tool_choice.clone(),
        spending: None,
        tripwires: task.tripwires.armed(canaries),
    }
}

pub(super) fn timed_out(task: &Task) -> Outcome {
    Outcome {
        status: OutcomeStatus::Timeout,
        reason: format!(
            "timed out after {}",
            crate::task::show_duration(task.timeout)
        ),
        error_class: None,
        tripwire: None,
    }
}

pub(super) fn cancelled(why: &str) -> Outcome {
    Outcome {
        status: OutcomeStatus::Cancelled,
        reason: format!("cancelled ({why})"),
        error_class: None,
        tripwire: None,
    }
}
