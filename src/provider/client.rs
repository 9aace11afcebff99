//! The one HTTP provider, generic over a vendor's [`WireFormat`]: the
//! request/answer cycle (deadline, POST, streamed or whole answer, retries)
//! is the same for every vendor; only the JSON differs.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::time::Instant;

use super::batch::{BatchJoin, Seat};
use super::config::ProviderConfig;
use super::failure::Failure;
use super::governor::{Governor, Limits, Progress};
use super::http::{SseReader, post, read_json};
use super::learn::{Learned, Lesson};
use super::retry::{note_retry, note_wait, summary_line, with_retries};
use super::{EarlyCalls, ModelRequest, ModelTurn, Provider, ToolSpec, TurnFuture};

pub type StreamFuture<'a> = Pin<Box<dyn Future<Output = Result<ModelTurn, Failure>> + Send + 'a>>;

/// A vendor's API: how to ask, and how to read the answer.
pub trait WireFormat: Send + Sync + 'static {
    /// `openai`, `anthropic`, `gemini`.
    fn vendor(&self) -> &'static str;
    fn url(&self, cfg: &ProviderConfig) -> String;
    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)>;
    /// The tools as this vendor declares them (the `tools` of a request).
    fn declarations(&self, tools: &[ToolSpec]) -> Value;
    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest<'_>) -> Value;
    /// A whole (non-streamed) answer.
    fn parse(&self, raw: Value) -> Result<ModelTurn, Failure>;
    /// A streamed answer, handing each finished tool call to `early`.
    fn read_stream<'a>(&'a self, sse: SseReader, early: Option<&'a EarlyCalls>)
    -> StreamFuture<'a>;
    /// The change of shape that `failure` (the server's answer to `body`)
    /// asks for, when the task left that part to the runner.
    fn lesson(&self, _cfg: &ProviderConfig, _body: &Value, _failure: &Failure) -> Option<Lesson> {
        None
    }
}

/// A model behind an HTTP API.
pub struct HttpProvider<W: WireFormat> {
    wire: W,
    cfg: ProviderConfig,
    client: reqwest::Client,
    /// What this server refused, for the run.
    learned: std::sync::Arc<Learned>,
    /// The pace of the run's requests to this server and key.
    governor: std::sync::Arc<Governor>,
    /// The task's seat at its model's batcher (`runner run --batch`).
    seat: Option<std::sync::Arc<Seat>>,
}

impl<W: WireFormat> HttpProvider<W> {
    pub fn new(wire: W, cfg: ProviderConfig, client: reqwest::Client) -> Self {
        let learned = super::learn::for_server(&cfg);
        let governor = super::governor::for_server(
            &cfg.base_url,
            super::config::key_hash(cfg.api_key.as_ref()),
            &format!("{}:{}", wire.vendor(), cfg.model),
        );
        Self {
            wire,
            cfg,
            client,
            learned,
            governor,
            seat: None,
        }
    }

    /// Asks through the vendor's batch API ([`super::batch`]); its
    /// answers are whole (not streamed) and priced at the batch rate.
    pub fn batched(mut self, join: BatchJoin) -> Self {
        self.cfg.stream = false;
        self.cfg.learnable.stream = false;
        let url = self.wire.url(&self.cfg);
        let headers = self.wire.headers(&self.cfg);
        self.seat = Some(Seat::take(
            &self.cfg,
            self.client.clone(),
            &url,
            headers,
            join,
        ));
        self
    }

    /// Its seat at its model's batcher, when it asks in batches.
    pub fn seat(&self) -> Option<std::sync::Arc<Seat>> {
        self.seat.clone()
    }

    /// `body`'s answer from a batch.
    async fn ask_batch(
        &self,
        seat: &Seat,
        body: &Value,
        messages: usize,
    ) -> Result<ModelTurn, Failure> {
        let raw = seat.ask(body.clone(), messages).await?;
        let mut turn = self.wire.parse(raw)?;
        turn.service_tier = Some(super::tier::BATCH.to_string());
        Ok(turn)
    }

    /// One try of `body`, built with `cfg`. A refusal that teaches the
    /// runner a new shape is not retried as it was.
    async fn attempt(
        &self,
        cfg: &ProviderConfig,
        body: &Value,
        early: Option<&EarlyCalls>,
        (started, messages): (Instant, usize),
        progress: &Progress,
    ) -> Result<ModelTurn, Failure> {
        let result = match &self.seat {
            Some(seat) => self.ask_batch(seat, body, messages).await,
            None => self.send(cfg, body, early, progress).await,
        };
        let Err(mut f) = result else { return result };
        if let Some(n) = f.window
            && cfg.learnable.window
            && f.class == runner_output::ErrorClass::ContextOverflow
        {
            self.learned.learn_window(
                n,
                &self.name(),
                &format!("it refused a longer prompt: {}", summary_line(&f.message)),
            );
        }
        // A refused shape is never sent again: learned now, or by another
        // task of the run since this request was built.
        if let Some(lesson) = self.wire.lesson(cfg, body, &f) {
            self.learned.learn(lesson, &self.name(), &f.message);
            note_retry(runner_output::RetryRecord {
                // The first try of a shape, refused; the next is another.
                attempt: 1,
                error: format!(
                    "{} (sent again with {})",
                    summary_line(&f.message),
                    lesson.what()
                ),
                class: Some(runner_output::ErrorClass::RefusedRequest),
                at_ms: started.elapsed().as_millis() as u64,
                wait_ms: 0,
            });
            f.retryable = false;
        } else if cfg.stream
            && !cfg.learnable.stream
            && f.message.contains(super::http::CLOSED_EMPTY)
        {
            // Streaming was the task's choice: the same request would be
            // closed the same way, and the message says what to change.
            f.retryable = false;
        }
        Err(f)
    }

    async fn send(
        &self,
        cfg: &ProviderConfig,
        body: &Value,
        early: Option<&EarlyCalls>,
        progress: &Progress,
    ) -> Result<ModelTurn, Failure> {
        // Serialized here rather than by reqwest: its length is the
        // request's tokens for the rate governor (about four bytes of JSON
        // a token).
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Failure::fatal(format!("cannot serialize the request: {e}")))?;
        let ticket = self.governor.admit(bytes.len() as u64 / 4).await;
        note_wait(ticket.waited);
        let deadline = Instant::now() + cfg.request_timeout;
        let url = self.wire.url(cfg);
        let resp = match post(&self.client, &url, &self.wire.headers(cfg), bytes, deadline).await {
            Ok(r) => {
                self.governor.answered(Limits::of(r.headers()));
                // Once the first request is answered: its time to the
                // server is not shared with the question.
                self.ask_window();
                r
            }
            Err(mut f) => {
                if f.class == runner_output::ErrorClass::RateLimited {
                    f.free_retry = self.governor.refused(
                        &ticket,
                        progress,
                        &f.message,
                        f.retry_after,
                        f.limits,
                    );
                }
                return Err(f);
            }
        };
        if cfg.stream {
            let sse = SseReader::new(resp, cfg.idle_timeout, deadline);
            self.wire.read_stream(sse, early).await
        } else {
            self.wire.parse(read_json(resp, deadline).await?)
        }
    }
}

impl<W: WireFormat> Provider for HttpProvider<W> {
    fn name(&self) -> String {
        format!("{}:{}", self.wire.vendor(), self.cfg.model)
    }

    fn complete<'a>(&'a self, req: ModelRequest<'a>) -> TurnFuture<'a> {
        Box::pin(async move {
            let name = self.name();
            let started = Instant::now();
            // Built again in the new shape when a refusal taught one (each
            // lesson is learned once: at most one rebuild per lesson).
            let mut rebuilds = 0;
            loop {
                let generation = self.learned.generation();
                let cfg = self.learned.apply(&self.cfg);
                let body = self.wire.body(&cfg, &req);
                let progress = Progress::default();
                let result = with_retries(&cfg, &name, || {
                    let at = (started, req.messages.len());
                    self.attempt(&cfg, &body, req.early, at, &progress)
                })
                .await;
                match result {
                    Err(_) if self.learned.generation() != generation && rebuilds < 2 => {
                        rebuilds += 1;
                    }
                    r => return r,
                }
            }
        })
    }

    fn window(&self) -> Option<u64> {
        self.cfg
            .learnable
            .window
            .then(|| self.learned.window())
            .flatten()
    }

    fn adaptations(&self) -> Vec<String> {
        self.learned.notes()
    }
}

impl<W: WireFormat> HttpProvider<W> {
    /// Asks a local OpenAI-compatible server for the model's window
    /// ([`super::probe`]), once a run, while its first answer streams:
    /// where the task left the window to the runner.
    fn ask_window(&self) {
        use std::sync::atomic::Ordering;
        let worth = self.wire.vendor() == "openai"
            && self.cfg.learnable.window
            && super::probe::worth_asking(&self.cfg.base_url);
        if !worth || self.learned.probed.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (client, learned, name) = (self.client.clone(), self.learned.clone(), self.name());
        let (base, model) = (self.cfg.base_url.clone(), self.cfg.model.clone());
        let headers = self.wire.headers(&self.cfg);
        rt.spawn(async move {
            if let Some((n, whence)) = super::probe::window(&client, &base, &headers, &model).await
            {
                learned.learn_window(n, &name, &format!("as {whence} says"));
            }
        });
    }
}

/// Messages as `{"role": .., FIELD: [..]}` with same-role neighbours
/// merged and empty ones dropped (Anthropic and Gemini want roles to
/// alternate).
pub fn merge_roles(
    items: impl IntoIterator<Item = (&'static str, Vec<Value>)>,
    field: &str,
) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for (role, parts) in items {
        if parts.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((r, p)) if *r == role => p.extend(parts),
            _ => out.push((role, parts)),
        }
    }
    out.into_iter()
        .map(|(role, parts)| serde_json::json!({"role": role, field: parts}))
        .collect()
}
