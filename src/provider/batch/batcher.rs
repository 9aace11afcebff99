//! The batches of one vendor, server, model and key: the requests the
//! run's tasks ask, sent as one batch when it is time, and each task's
//! answer handed back (see the module's doc).

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::BatchRef;
use super::types::{Answer, Endpoint};
use super::vendor::{submit, take, until_ended};
use crate::provider::failure::Failure;

/// How long the first request of a batch waits for the other tasks'.
pub const LINGER: Duration = Duration::from_secs(5);

/// How long after a task took its seat a batch waits for more tasks to
/// take theirs: the tasks of a run start together, a moment apart (more
/// on a loaded machine). Nothing next to a batch's own hours.
const QUIET: Duration = Duration::from_secs(1);

/// What became of a request sent in a batch.
pub(super) enum Reply {
    /// The batch ended (or was never made): this is the answer.
    Ended(Answer),
    /// The batch's outcome could not be had (out of time, the vendor
    /// unreachable): it is still the task's to collect.
    Unknown(Failure),
}

/// A request waiting to go in a batch.
struct Asked {
    custom_id: String,
    body: Value,
    messages: usize,
    submitted: oneshot::Sender<BatchRef>,
    answered: oneshot::Sender<Reply>,
}

#[derive(Default)]
struct State {
    /// Seats taken (tasks whose model this is).
    seats: usize,
    /// Requests asked and not yet answered (waiting to be sent, or on a
    /// batch), and seats collecting an earlier run's batch: counted off
    /// as the answers are handed out, before their tasks wake.
    waiting: usize,
    asked: Vec<Asked>,
    /// When the oldest of `asked` was asked.
    first: Option<Instant>,
    /// When the last seat was taken.
    joined: Option<Instant>,
    /// Whether a flusher task runs.
    flushing: bool,
    seq: u64,
}

/// The batches of one vendor, server, model and key.
pub struct Batcher {
    ep: Endpoint,
    timeout: Duration,
    state: Mutex<State>,
    wake: Notify,
}

/// A batch's requests share their endpoint (OpenAI's name one), model and
/// key: the endpoint's URL (server and path), the model, the key's hash.
type GroupKey = (String, String, u64);

static GROUPS: LazyLock<Mutex<HashMap<GroupKey, Arc<Batcher>>>> = LazyLock::new(Default::default);

impl Batcher {
    /// The run's batcher for `ep` and a key (its hash).
    pub(super) fn for_group(ep: Endpoint, key_hash: u64, timeout: Duration) -> Arc<Batcher> {
        let url = format!("{}{}", ep.base_url, ep.path);
        let id = (url, ep.model.clone(), key_hash);
        let mut all = GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(all.entry(id).or_insert_with(|| {
            Arc::new(Batcher {
                ep,
                timeout,
                state: Mutex::new(State::default()),
                wake: Notify::new(),
            })
        }))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A task took a seat: a batch waits for it a moment.
    pub(super) fn seat_taken(&self) {
        let mut s = self.state();
        s.seats += 1;
        s.joined = Some(Instant::now());
    }

    /// A task left (it ended): a batch no longer waits for it.
    pub(super) fn seat_left(&self) {
        self.state().seats -= 1;
        self.wake.notify_one();
    }

    /// A seat collects an earlier run's batch: it will ask nothing of the
    /// next batch meanwhile (until [`Batcher::answered`]).
    pub(super) fn collecting(&self) {
        self.state().waiting += 1;
        self.wake.notify_one();
    }

    /// Queues a request; starts the flusher if none runs.
    pub(super) fn enqueue(self: &Arc<Self>, body: Value, messages: usize) -> Pending {
        let (submitted, on_submit) = oneshot::channel();
        let (answered, on_answer) = oneshot::channel();
        let start = {
            let mut s = self.state();
            s.seq += 1;
            let custom_id = format!("runner-{}", s.seq);
            s.asked.push(Asked {
                custom_id,
                body,
                messages,
                submitted,
                answered,
            });
            s.waiting += 1;
            s.first.get_or_insert_with(Instant::now);
            !std::mem::replace(&mut s.flushing, true)
        };
        if start {
            tokio::spawn(Arc::clone(self).flusher());
        } else {
            self.wake.notify_one();
        }
        Pending {
            on_submit,
            on_answer,
        }
    }

    /// Sends what was asked as batches, each when it is time (see the
    /// module's doc); ends when nothing is left to send.
    async fn flusher(self: Arc<Self>) {
        loop {
            let due = {
                let mut s = self.state();
                // Tasks that stopped waiting (cancelled) ask nothing.
                let asked = s.asked.len();
                s.asked.retain(|a| !a.answered.is_closed());
                s.waiting -= asked - s.asked.len();
                if s.asked.is_empty() {
                    s.flushing = false;
                    s.first = None;
                    return;
                }
                let now = Instant::now();
                let lingered = s.first.map_or(now, |f| f + LINGER);
                // With every seat waiting, a moment after the last joined.
                let due = match s.waiting >= s.seats {
                    true => s.joined.map_or(now, |j| j + QUIET).min(lingered),
                    false => lingered,
                };
                if now >= due {
                    s.first = None;
                    Ok(std::mem::take(&mut s.asked))
                } else {
                    Err(due)
                }
            };
            match due {
                Ok(asked) => {
                    tokio::spawn(Arc::clone(&self).send(asked));
                }
                Err(until) => {
                    let _ = tokio::time::timeout_at(until, self.wake.notified()).await;
                }
            }
        }
    }

    /// Submits `asked` as one batch, waits for it, and answers each.
    async fn send(self: Arc<Self>, asked: Vec<Asked>) {
        let items: Vec<(String, Value)> = asked
            .iter()
            .map(|a| (a.custom_id.clone(), a.body.clone()))
            .collect();
        let id = match submit(&self.ep, &items).await {
            Ok(id) => id,
            Err(f) => {
                self.answered(asked.len());
                for a in asked {
                    let _ = a.answered.send(Reply::Ended(Err(f.clone())));
                }
                return;
            }
        };
        // Said on stderr whatever the log level: the run may wait hours.
        tracing::warn!(
            "{}:{}: batch {id} of {} request(s) submitted; waiting for it to end (at most {})",
            self.ep.vendor.as_str(),
            self.ep.model,
            asked.len(),
            crate::duration::show_duration(self.timeout)
        );
        let mut answers = Vec::with_capacity(asked.len());
        for a in asked {
            let r = BatchRef {
                vendor: self.ep.vendor.as_str().to_string(),
                id: id.clone(),
                custom_id: a.custom_id,
                messages: a.messages,
            };
            let _ = a.submitted.send(r.clone());
            answers.push((r, a.answered));
        }
        let mut ended = until_ended(&self.ep, &id, self.timeout).await;
        self.answered(answers.len());
        for (r, tx) in answers {
            let reply = match &mut ended {
                Ok((all, rest)) => Reply::Ended(take(&self.ep, all, *rest, &r)),
                Err(f) => Reply::Unknown(f.clone()),
            };
            let _ = tx.send(reply);
        }
    }

    /// `n` requests are answered: their tasks may ask again, and a batch
    /// waits for them.
    pub(super) fn answered(&self, n: usize) {
        self.state().waiting -= n;
    }

    /// The answer to `r`'s request from its batch, submitted by an earlier
    /// run.
    pub(super) async fn collect(&self, r: &BatchRef) -> Reply {
        match until_ended(&self.ep, &r.id, self.timeout).await {
            Ok((mut all, rest)) => Reply::Ended(take(&self.ep, &mut all, rest, r)),
            Err(f) => Reply::Unknown(f),
        }
    }
}

/// A queued request's two answers: its batch, then its result.
pub(super) struct Pending {
    pub on_submit: oneshot::Receiver<BatchRef>,
    pub on_answer: oneshot::Receiver<Reply>,
}
