//! The agent tree's parts: what every agent of a task's tree shares
//! ([`Tree`]) and one agent's power to start children ([`Delegator`]).
//! Starting one is the parent module's (it runs the child, which gets a
//! delegator of its own).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::account::Account;
use crate::report::progress::RunReporter;
use crate::task::Task;
use crate::task::agents::Agents;
use crate::tools::{Registry, ToolContext};
use runner_policy::PolicySet;

/// What every agent of one task's tree shares.
pub struct Tree {
    pub task: Arc<Task>,
    pub agents: Arc<Agents>,
    pub reporter: Arc<dyn RunReporter>,
    /// The task's start (timestamps).
    pub epoch: Instant,
    pub max_parallel_calls: usize,
    /// The task's proxy, for an isolated child's commands.
    pub proxy_port: Option<u16>,
    /// Where large results are spilled.
    pub spill_dir: PathBuf,
    /// The original workspace, unreadable to commands when the policy
    /// denies reading some of it: an isolated child's commands too.
    pub hidden: Option<crate::contain::HiddenTree>,
    /// The task's tripwires: a child's denied calls count toward the
    /// task's `max_denials` and `fail_fast`, and a wire a child trips
    /// ends the task.
    pub tripwires: Option<Arc<crate::engine::Tripwires>>,
}

/// One agent's power to start children.
pub struct Delegator {
    pub tree: Arc<Tree>,
    /// This agent's id (None: the task's agent).
    pub id: Option<String>,
    /// 0 for the task's agent.
    pub depth: u32,
    /// The profiles it may start.
    pub allowed: Vec<String>,
    /// Its policy, tools and context: what its children narrow.
    pub policy: Arc<PolicySet>,
    pub registry: Registry,
    pub ctx_of: Arc<ToolContext>,
    pub hooks: runner_policy::Hooks,
    pub account: Arc<Account>,
    /// Children running at once, of this agent.
    pub running: tokio::sync::Semaphore,
    /// Per profile, how many it started (for ids).
    started: Mutex<HashMap<String, u32>>,
}

impl Delegator {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        tree: Arc<Tree>,
        id: Option<String>,
        depth: u32,
        allowed: Vec<String>,
        policy: Arc<PolicySet>,
        registry: Registry,
        ctx_of: Arc<ToolContext>,
        hooks: runner_policy::Hooks,
        account: Arc<Account>,
    ) -> Self {
        let parallel = tree.agents.parallel;
        Self {
            tree,
            id,
            depth,
            allowed,
            policy,
            registry,
            ctx_of,
            hooks,
            account,
            running: tokio::sync::Semaphore::new(parallel),
            started: Mutex::new(HashMap::new()),
        }
    }

    /// The next child's id: `profile#n`, beneath this agent's.
    pub(super) fn next_id(&self, profile: &str) -> String {
        let mut m = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(profile.to_string()).or_default();
        *n += 1;
        match &self.id {
            Some(me) => format!("{me}/{profile}#{n}"),
            None => format!("{profile}#{n}"),
        }
    }
}
