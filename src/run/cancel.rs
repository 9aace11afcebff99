//! Cancelling a run: CI cancels a job with SIGTERM (GitHub Actions sends
//! SIGINT first), and the runner must then stop its tasks within seconds
//! and still leave complete outputs. A [`Cancel`] is shared by every task of
//! a run; the running agents and checks are dropped when it fires, which
//! kills their process groups, and each task records the outcome
//! `cancelled`. Tasks that had not started are recorded as cancelled too.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::sync::watch;

/// A one-way switch with the reason it was thrown.
#[derive(Clone)]
pub struct Cancel {
    tx: Arc<watch::Sender<Option<String>>>,
    rx: watch::Receiver<Option<String>>,
}

impl Default for Cancel {
    fn default() -> Self {
        let (tx, rx) = watch::channel(None);
        Self {
            tx: Arc::new(tx),
            rx,
        }
    }
}

impl Cancel {
    /// Throws the switch; the first reason is kept.
    pub fn cancel(&self, reason: impl Into<String>) {
        let reason = reason.into();
        self.tx.send_if_modified(|v| {
            if v.is_none() {
                *v = Some(reason);
                true
            } else {
                false
            }
        });
    }

    /// The reason, once cancelled.
    pub fn reason(&self) -> Option<String> {
        self.rx.borrow().clone()
    }

    /// Resolves when the run is cancelled, with the reason.
    pub async fn cancelled(&self) -> String {
        let mut rx = self.rx.clone();
        let reason = rx
            .wait_for(Option::is_some)
            .await
            .map(|v| v.clone().unwrap_or_default());
        match reason {
            Ok(r) => r,
            // The sender lives as long as any Cancel: never reached.
            Err(_) => std::future::pending().await,
        }
    }
}

/// The process's exit code, once decided (-1: not yet).
static EXIT_CODE: AtomicI32 = AtomicI32::new(-1);

/// Decides the process's exit code once: the first caller's `code` wins,
/// and every caller gets the winner. The run's end and a second signal
/// both go through here, so whichever comes first decides, and a second
/// signal that was reported is never contradicted by the run's own code.
pub fn decide_exit(code: i32) -> i32 {
    match EXIT_CODE.compare_exchange(-1, code, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => code,
        Err(decided) => decided,
    }
}

/// The first SIGINT or SIGTERM cancels the run (tasks stop, outputs are
/// written, outcome `cancelled`); a second one kills every command's
/// process group, removes the temporary copies and folders (waiting a
/// second at most) and exits at once with 130 (SIGINT) or 143 (SIGTERM).
pub fn watch_signals(cancel: Cancel) {
    let Some(mut signals) = crate::sys::StopSignals::listen() else {
        eprintln!("warning: cannot listen for SIGINT/SIGTERM; a cancelled run writes no outputs");
        return;
    };
    tokio::spawn(async move {
        let mut seen = 0;
        loop {
            let name = signals.next().await;
            seen += 1;
            if seen == 1 {
                eprintln!(
                    "runner: {name}: cancelling the running tasks and writing their outputs (send it again to exit at once)"
                );
                cancel.cancel(name);
            } else {
                let code = if name == "SIGINT" { 130 } else { 143 };
                // Decided first, so that a run ending meanwhile exits with
                // it too; if the run decided its code before this signal
                // came, the run is already on its way out with it.
                if decide_exit(code) != code {
                    continue;
                }
                eprintln!("runner: {name} again: exiting now");
                crate::process::kill_all_groups();
                crate::contain::remove_leftovers();
                if !crate::cleanup::remove_all(std::time::Duration::from_secs(1)) {
                    eprintln!("runner: some temporary folders could not be removed in time");
                }
                std::process::exit(code);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_decided_once() {
        // The process-wide decision: the first code stays.
        assert_eq!(decide_exit(143), 143);
        assert_eq!(decide_exit(75), 143);
        assert_eq!(decide_exit(130), 143);
    }

    #[tokio::test]
    async fn wakes_waiters_and_keeps_the_first_reason() {
        let c = Cancel::default();
        assert!(c.reason().is_none());
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.cancelled().await }
        });
        c.cancel("SIGTERM");
        c.cancel("SIGINT");
        assert_eq!(waiter.await.unwrap(), "SIGTERM");
        assert_eq!(c.cancelled().await, "SIGTERM");
    }
}
