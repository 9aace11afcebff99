//! What the agent loop tells its caller at each turn's end: the point
//! where every call the model asked for has its result, so the task could
//! go on from there (a run's journal, `run::journal`, keeps it).

use crate::provider::{Message, Usage};

/// Told at each durable point of a conversation.
pub trait TurnLog: Send + Sync {
    /// Turn `turn` (0 before the first) has ended: `log` is every message
    /// so far, `usage` the spending so far.
    fn turn_ended(&self, turn: u32, log: &[Message], usage: &Usage);
}
