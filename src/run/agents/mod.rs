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
mod delegator;
mod ending;
mod workspace;

use crate::report::progress::AgentOf;
use crate::tools::{Delegate, ToolError, ToolOutput};
pub use delegator::{Delegator, Tree};

impl Delegator {
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
