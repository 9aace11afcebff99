//! Events of a task and the record of one tool call: the types are
//! `runner-output`'s (they are the `--format json` stream and the
//! transcript's calls); the sinks that receive them are here.

pub use runner_output::{CallStatus, Event, StartedCall, ToolCallRecord};

/// Receives a task's events.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event);
}

/// Discards events.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: &Event) {}
}
