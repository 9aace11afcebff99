//! Child agents (issue 32): what the `task` tool starts.
//!
//! A [`Delegator`] belongs to one agent of a task's tree (the task's own,
//! or a child that may start children) and holds what its children are
//! made from: the task, its profiles, the agent's policy and tools, its
//! budget ([`account::Account`]). Authority and budget can only shrink
//! down the tree: a child's policy is its parent's layers plus its
//! profile's, its tools a subset of its parent's, its turns, cost and time
//! a reserved share of what its parent has left.

pub mod account;
mod child;
mod ending;
mod workspace;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::report::progress::{AgentOf, RunReporter};
use crate::task::Task;
use crate::task::agents::Agents;
use crate::tools::{Delegate, Registry, ToolContext, ToolError, ToolOutput};
use account::Account;
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
    fn next_id(&self, profile: &str) -> String {
        let mut m = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(profile.to_string()).or_default();
        *n += 1;
        match &self.id {
            Some(me) => format!("{me}/{profile}#{n}"),
            None => format!("{profile}#{n}"),
        }
    }

    async fn start(&self, profile: &str, prompt: &str) -> Result<ToolOutput, ToolError> {
        if !self.allowed.iter().any(|a| a == profile) {
            return Err(ToolError::permission(format!(
                "this agent may not start `{profile}` (its profile's agents: does not name it)"
            )));
        }
        if self.depth + 1 > self.tree.agents.depth {
            return Err(ToolError::permission(format!(
                "children may nest {} deep (agent_limits.depth); `{profile}` would be deeper",
                self.tree.agents.depth
            )));
        }
        let Some(p) = self.tree.agents.profiles.get(profile) else {
            return Err(ToolError::validation(format!("no profile `{profile}`")));
        };
        let _slot = self
            .running
            .acquire()
            .await
            .map_err(|_| ToolError::execution("the task is ending"))?;
        let hold = self
            .account
            .reserve(p.max_turns, p.max_cost, self.tree.agents.parallel)
            .map_err(|e| ToolError::execution(e.to_string()))?;
        let at = AgentOf {
            id: self.next_id(profile),
            parent: self.id.clone(),
            call_id: crate::engine::current_call_id()
                .map(|c| c.to_string())
                .unwrap_or_default(),
        };
        let ran = child::run(self, p, prompt, &at, hold).await;
        self.account.settle(hold, ran.turns, &ran.usage);
        ran.result
    }
}

impl Delegate for Delegator {
    fn delegate<'a>(
        &'a self,
        agent: &'a str,
        prompt: &'a str,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>,
    > {
        Box::pin(self.start(agent, prompt))
    }
}
