//! The connections a task's proxy and `web_fetch` decided, kept until the
//! engine emits them as events (and the transcript records them).

use std::sync::Mutex;
use std::time::Instant;

use runner_output::Connection;

/// A task's connection decisions not yet emitted.
#[derive(Debug)]
pub struct NetLog {
    epoch: Instant,
    pending: Mutex<Vec<Connection>>,
}

impl NetLog {
    /// Times are counted from `epoch` (the task's start).
    pub fn new(epoch: Instant) -> Self {
        Self {
            epoch,
            pending: Mutex::new(Vec::new()),
        }
    }

    /// Milliseconds since the task started.
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Milliseconds from `at` to the task's start.
    pub fn ms_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    pub fn push(&self, c: Connection) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(c);
    }

    /// The decisions since the last call, oldest first.
    pub fn take(&self) -> Vec<Connection> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
