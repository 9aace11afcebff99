//! A task's seat at its model's batcher: how its requests are asked, and
//! which batch it waits on, for its journal and transcript.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::BatchRef;
use super::batcher::{Batcher, Pending, Reply};
use super::types::{Answer, Endpoint};
use crate::provider::config::ProviderConfig;
use crate::provider::failure::Failure;

/// How `--batch` asks a task's model.
#[derive(Debug, Clone)]
pub struct BatchJoin {
    /// `--batch-timeout`: how long a batch may take.
    pub timeout: Duration,
    /// The batch an earlier run's request went in (`--resume`).
    pub resume: Option<BatchRef>,
}

/// Where the batch a task's request went in is told (its journal).
pub type BatchSink = Box<dyn Fn(&BatchRef) + Send + Sync>;

/// A task's seat at its model's batcher (see the module's doc).
pub struct Seat {
    batcher: Arc<Batcher>,
    /// An earlier run's batch, to collect rather than ask again.
    resume: Mutex<Option<BatchRef>>,
    /// The batch the task waits on now.
    pending: Mutex<Option<BatchRef>>,
    sink: Mutex<Option<BatchSink>>,
}

impl Seat {
    /// Takes a seat at the batcher of `cfg`'s model.
    pub(crate) fn take(
        cfg: &ProviderConfig,
        client: reqwest::Client,
        url: &str,
        headers: Vec<(&'static str, String)>,
        join: BatchJoin,
    ) -> Arc<Seat> {
        let ep = Endpoint {
            client,
            vendor: cfg.vendor,
            base_url: cfg.base_url.clone(),
            model: cfg.model.clone(),
            headers,
            path: path_of(url),
        };
        let key = crate::provider::config::key_hash(cfg.api_key.as_ref());
        let batcher = Batcher::for_group(ep, key, join.timeout);
        batcher.seat_taken();
        Arc::new(Seat {
            batcher,
            resume: Mutex::new(join.resume),
            pending: Mutex::new(None),
            sink: Mutex::new(None),
        })
    }

    /// Where each batch the task's requests go in is told from now on
    /// (and the one it waits on now, if any).
    pub fn tell(&self, sink: BatchSink) {
        if let Some(r) = lock(&self.pending).as_ref() {
            sink(r);
        }
        *lock(&self.sink) = Some(sink);
    }

    /// The batch the task is waiting on, if any (or the earlier run's,
    /// if the task never came to ask for it).
    pub fn pending(&self) -> Option<BatchRef> {
        lock(&self.pending)
            .clone()
            .or_else(|| lock(&self.resume).clone())
    }

    fn submitted(&self, r: BatchRef) {
        if let Some(sink) = lock(&self.sink).as_ref() {
            sink(&r);
        }
        *lock(&self.pending) = Some(r);
    }

    /// The answer to `body`, a request of a conversation of `messages`
    /// messages, from a batch: the earlier run's when it asked the same,
    /// or the next one.
    pub(crate) async fn ask(&self, body: Value, messages: usize) -> Answer {
        let earlier = {
            let mut resume = lock(&self.resume);
            match resume.take() {
                Some(r) if r.messages == messages => Some(r),
                // Another conversation: that batch's answer is not this.
                _ => None,
            }
        };
        if let Some(r) = earlier {
            tracing::warn!("collecting {} batch {} of the earlier run", r.vendor, r.id);
            *lock(&self.pending) = Some(r.clone());
            let _collecting = Collecting::new(&self.batcher);
            return self.answered(self.batcher.collect(&r).await);
        }
        let Pending {
            on_submit,
            on_answer,
        } = self.batcher.enqueue(body, messages);
        if let Ok(r) = on_submit.await {
            self.submitted(r);
        }
        let reply = on_answer.await.unwrap_or_else(|_| {
            Reply::Ended(Err(Failure::fatal("the batch of this request was dropped")))
        });
        self.answered(reply)
    }

    /// The answer of `reply`; the batch waited on is done with unless its
    /// outcome is unknown.
    fn answered(&self, reply: Reply) -> Answer {
        match reply {
            Reply::Ended(answer) => {
                *lock(&self.pending) = None;
                answer
            }
            Reply::Unknown(f) => Err(f),
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        self.batcher.seat_left();
    }
}

/// A seat collecting an earlier run's batch: it will ask nothing of the
/// next batch meanwhile, which need not wait for it.
struct Collecting<'a>(&'a Batcher);

impl<'a> Collecting<'a> {
    fn new(b: &'a Batcher) -> Self {
        b.collecting();
        Self(b)
    }
}

impl Drop for Collecting<'_> {
    fn drop(&mut self) {
        self.0.answered(1);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The path of `url` (`http://h:1/v1/chat/completions` →
/// `/v1/chat/completions`).
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("/", |i| &rest[i..]);
    path.split('?').next().unwrap_or(path).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_path_is_the_urls() {
        assert_eq!(
            path_of("http://127.0.0.1:9/v1/chat/completions"),
            "/v1/chat/completions"
        );
        assert_eq!(
            path_of("https://api.openai.com/v1/chat/completions?x=1"),
            "/v1/chat/completions"
        );
    }
}
