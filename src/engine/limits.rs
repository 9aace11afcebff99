//! What one agent run may spend: turns, tokens, money, parallel calls,
//! the context window; and what its answer must be.

use std::sync::Arc;

use super::answer::OutputSchema;
use super::compact::ContextLimits;
use crate::provider::ToolChoice;
use crate::provider::models::Pricing;

/// Limits of one agent run.
#[derive(Debug, Clone)]
pub struct AgentLimits {
    pub max_turns: u32,
    /// Most calls of one batch running at once.
    pub max_parallel: usize,
    /// Stop when this many tokens have been used in total (0: no limit).
    pub max_tokens_total: u64,
    /// The model's context window and when to compact.
    pub context: ContextLimits,
    /// The model's price; `None`: unknown (costs are null).
    pub pricing: Option<Pricing>,
    /// Stop once the task's cost passes this many USD.
    pub max_cost: Option<f64>,
    /// The schema the final answer must be valid against.
    pub output: Option<Arc<OutputSchema>>,
    /// Whether the first turn must call a tool.
    pub tool_choice: ToolChoice,
    /// For an agent that may start children (issue 32): where it tells
    /// its own spending and reads its children's, which count against its
    /// `max_turns` and `max_cost`. None for a task without agents.
    pub spending: Option<Arc<dyn Spending>>,
    /// The task's tripwires (its denial budget and `fail_fast` classes),
    /// shared by its attempts; none for a child or a task without them.
    pub tripwires: Option<Arc<super::Tripwires>>,
}

/// An agent's budget shared with the children it starts.
pub trait Spending: Send + Sync + std::fmt::Debug {
    /// The agent's own turns and cost so far.
    fn publish(&self, turns: u32, cost: Option<f64>);
    /// The turns and cost its children spent or hold.
    fn children(&self) -> (u32, f64);
}
