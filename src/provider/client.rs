//! The one HTTP provider, generic over a vendor's [`WireFormat`]: the
//! request/answer cycle (deadline, POST, streamed or whole answer, retries)
//! is the same for every vendor; only the JSON differs.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tokio::time::Instant;

use super::config::ProviderConfig;
use super::http::{Failure, SseReader, post, read_json, with_retries};
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
    /// What to add to the error when the server refused `body` with
    /// `message`, where the request's form may be the cause and an option
    /// changes it.
    fn refusal_hint(
        &self,
        _cfg: &ProviderConfig,
        _body: &Value,
        _message: &str,
    ) -> Option<&'static str> {
        None
    }
}

/// A model behind an HTTP API.
pub struct HttpProvider<W: WireFormat> {
    wire: W,
    cfg: ProviderConfig,
    client: reqwest::Client,
}

impl<W: WireFormat> HttpProvider<W> {
    pub fn new(wire: W, cfg: ProviderConfig, client: reqwest::Client) -> Self {
        Self { wire, cfg, client }
    }

    async fn attempt(
        &self,
        body: &Value,
        early: Option<&EarlyCalls>,
    ) -> Result<ModelTurn, Failure> {
        let deadline = Instant::now() + self.cfg.request_timeout;
        let url = self.wire.url(&self.cfg);
        let resp = post(
            &self.client,
            &url,
            &self.wire.headers(&self.cfg),
            body,
            deadline,
        )
        .await
        .map_err(|mut f| {
            if let Some(hint) = self.wire.refusal_hint(&self.cfg, body, &f.message) {
                f.message.push_str(hint);
            }
            f
        })?;
        if self.cfg.stream {
            let sse = SseReader::new(resp, self.cfg.idle_timeout, deadline);
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
            let body = self.wire.body(&self.cfg, &req);
            let name = self.name();
            with_retries(&self.cfg, &name, || self.attempt(&body, req.early)).await
        })
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
