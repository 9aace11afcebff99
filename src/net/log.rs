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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::NetLog;

    /// Times count from the task's start: a connection 20 ms in is at 20,
    /// one before it at 0, and now is at least as far as the start is back.
    #[test]
    fn times_count_from_the_tasks_start() {
        let now = Instant::now();
        let epoch = (now.checked_sub(Duration::from_millis(50)))
            .expect("the monotonic clock has run for 50 ms");
        let log = NetLog::new(epoch);
        assert_eq!(log.ms_at(epoch + Duration::from_millis(20)), 20);
        assert_eq!(log.ms_at(epoch + Duration::from_millis(7)), 7);
        assert_eq!(
            log.ms_at(epoch.checked_sub(Duration::from_millis(5)).unwrap_or(epoch)),
            0
        );
        let n = log.now_ms();
        assert!(n >= 50, "{n}");
        assert!(n < 60_000, "{n}");
    }
}
