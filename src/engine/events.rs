//! Events of a task and the record of one tool call: the types are
//! `runner-output`'s (they are the `--format json` stream and the
//! transcript's calls); the sinks that receive them are here.

pub use runner_output::{CallStatus, Event, StartedCall, ToolCallRecord};

/// Receives a task's events.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: &Event);
}

/// Emits the connections decided since the last time (the proxy's and
/// `web_fetch`'s; see `net::NetLog`).
pub fn emit_connections(log: &crate::net::NetLog, sink: &dyn EventSink) {
    for c in log.take() {
        sink.emit(&Event::Connection(c));
    }
}

/// Discards events.
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: &Event) {}
}
