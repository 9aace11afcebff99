//! The agent loop.
//!
//! One conversation: the model answers, its tool calls go through the
//! [`pipeline`] (arguments, paths, policy, execution), and the results go
//! back, until the model stops calling tools or `max_turns` is reached. The
//! calls of one turn are cut into [`batch`]es. Everything that happens is an
//! [`Event`]; the transcript and the progress display are both built from
//! them.

mod agent;
mod answer;
pub(crate) mod batch;
mod calls;
mod compact;
mod conversation;
mod early;
mod events;
mod first_turn;
mod hooks;
mod limits;
pub mod pipeline;
mod tripwires;
mod turn_log;

pub(crate) use agent::{AgentEnv, AgentStop, run_agent};
pub(crate) use answer::OutputSchema;
pub(crate) use calls::{ToolEnv, current_call_id, run_calls};
pub(crate) use compact::ContextLimits;
pub(crate) use conversation::Conversation;
pub(crate) use events::{
    CallStatus, Event, EventSink, NullSink, StartedCall, ToolCallRecord, emit_connections,
};
pub(crate) use first_turn::{FirstTurn, ask_first};
pub(crate) use hooks::TaskHooks;
pub(crate) use limits::AgentLimits;
pub use limits::Spending;
pub use tripwires::{Tripped, Tripwires};
pub(crate) use turn_log::TurnLog;
