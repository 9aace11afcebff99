//! Cancelling a run: CI cancels a job with SIGTERM (GitHub Actions sends
//! SIGINT first), and the runner must then stop its tasks within seconds
//! and still leave complete outputs. A [`Cancel`] is shared by every task of
//! a run; the running agents and checks are dropped when it fires, which
//! kills their process groups, and each task records the outcome
//! `cancelled`. Tasks that had not started are recorded as cancelled too.

use std::sync::Arc;

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

#[cfg(test)]
mod tests {
    use super::*;

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
