//! What the agent loop tells its caller at each turn's end: the point
//! where every call the model asked for has its result, so the task could
//! go on from there (a run's journal, `run::journal`, keeps it).

use std::future::Future;
use std::pin::Pin;

use crate::provider::{Message, Usage};

/// Told at each durable point of a conversation.
pub trait TurnLog: Send + Sync {
    /// Turn `turn` (0 before the first) has ended: `log` is every message
    /// so far, `usage` the spending so far. Returns at once: what takes
    /// time (reading the copy's changes) goes on while the model is asked
    /// the next turn, until [`TurnLog::settled`].
    fn turn_ended(&self, turn: u32, log: &[Message], usage: &Usage);

    /// Waits for what the last [`TurnLog::turn_ended`] left going: before
    /// calls that may change the workspace run, and before the next turn
    /// ends.
    fn settled(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}
