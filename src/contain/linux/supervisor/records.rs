//! Where a spawn's refusals are kept: the execs the wall refused, and the
//! calls the filters refused with nothing to decide (each with the command
//! that made it, counted).

use std::sync::Mutex;

use crate::contain::{ExecRefusal, RefusedCall};

/// Where a spawn's refusals are kept.
#[derive(Clone, Copy)]
pub(super) struct Records<'a> {
    pub execs: &'a Mutex<Vec<ExecRefusal>>,
    pub calls: &'a Mutex<Vec<RefusedCall>>,
}

/// Most distinct refused calls kept for one spawn (each with its count).
const MOST_REFUSED_CALLS: usize = 50;

impl Records<'_> {
    /// Counts the refusal of `call` made by thread `tid`.
    pub fn call(&self, call: String, tid: u32) {
        let command = command_line(tid);
        tracing::debug!("sandbox: refused {call} by `{command}`");
        let mut list = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        let room = list.len() < MOST_REFUSED_CALLS;
        match list
            .iter_mut()
            .find(|r| r.call == call && r.command == command)
        {
            Some(r) => r.count = r.count.saturating_add(1),
            None if room => list.push(RefusedCall {
                call,
                command,
                count: 1,
            }),
            None => {}
        }
    }
}

/// The command line of thread `tid`'s process (its first 200 characters),
/// for a record.
fn command_line(tid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{tid}/cmdline")).unwrap_or_default();
    let text: String = String::from_utf8_lossy(&raw)
        .split('\0')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let mut cut: String = text.chars().take(200).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}
