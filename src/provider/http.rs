//! The HTTP transport shared by the vendors' clients: one POST with a total
//! deadline, a JSON body read within it, and a server-sent-events reader
//! with an idle timeout. Each failure it meets is a [`Failure`] with its
//! class ([`super::failure`]); the retry loop around a request is
//! [`super::retry`]'s.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use super::failure::{Failure, classify, error_text};
use super::rate_headers::Limits;
use super::retry::retry_after;

/// Sends one POST of a JSON body (`body`: its bytes) and checks the
/// status. The body of a failed answer is read (within the deadline) for
/// the vendor's message.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: Vec<u8>,
    deadline: Instant,
) -> Result<reqwest::Response, Failure> {
    let req = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    send(req, url, headers, deadline).await
}

/// Sends `req` (to `url`, with `headers`) and checks the status, as
/// [`post`] does.
pub async fn send(
    mut req: reqwest::RequestBuilder,
    url: &str,
    headers: &[(&str, String)],
    deadline: Instant,
) -> Result<reqwest::Response, Failure> {
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let sent = tokio::time::timeout_at(deadline, req.send()).await;
    let resp = match sent {
        Err(_) => return Err(Failure::transient("the request timed out")),
        Ok(Err(e)) => {
            let what = if e.is_connect() {
                "cannot connect"
            } else if e.is_timeout() {
                "the request timed out"
            } else {
                "the request failed"
            };
            return Err(Failure::transient(format!(
                "{what} to {}: {}",
                strip_query(url),
                source_chain(&e)
            )));
        }
        Ok(Ok(r)) => r,
    };
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    let wait = retry_after(resp.headers());
    let limits = Limits::of(resp.headers());
    let text = tokio::time::timeout_at(deadline, resp.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    // Gemini says when in its body (`RetryInfo`), not in a header.
    let wait = wait.or_else(|| super::retry::retry_delay_in(&text));
    let message = format!("HTTP {}: {}", status.as_u16(), error_text(&text));
    let class = classify(Some(status.as_u16()), &text);
    Err(Failure {
        retry_after: wait,
        limits,
        window: super::failure::stated_window(&text),
        ..Failure::of(class, message)
    })
}

/// Reads a whole JSON body within the deadline.
pub async fn read_json(resp: reqwest::Response, deadline: Instant) -> Result<Value, Failure> {
    let bytes = match tokio::time::timeout_at(deadline, resp.bytes()).await {
        Err(_) => return Err(Failure::transient("the request timed out")),
        Ok(Err(e)) => {
            return Err(Failure::transient(format!(
                "the answer was cut: {}",
                source_chain(&e)
            )));
        }
        Ok(Ok(b)) => b,
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        Failure::fatal(format!(
            "the answer is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
        ))
    })
}

fn strip_query(url: &str) -> &str {
    url.split('?').next().unwrap_or(url)
}

/// An error and its causes, each said once.
pub(crate) fn source_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// What a stream closed before its first event is said to be: a server
/// that failed after answering 200 (the same again each time it is sent).
pub const CLOSED_EMPTY: &str = "closed the stream without sending anything";

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseEvent {
    /// `message` when the server named none.
    pub event: String,
    pub data: String,
}

/// An event, or why the stream broke (the connection, or bytes that are
/// not UTF-8), as eventsource-stream reports it.
type EventItem =
    Result<eventsource_stream::Event, eventsource_stream::EventStreamError<reqwest::Error>>;

/// Reads server-sent events with an idle timeout per event and the
/// request's deadline.
pub struct SseReader {
    inner: Pin<Box<dyn Stream<Item = EventItem> + Send>>,
    idle: Duration,
    deadline: Instant,
    /// Events read so far.
    pub count: usize,
}

impl SseReader {
    pub fn new(resp: reqwest::Response, idle: Duration, deadline: Instant) -> Self {
        let inner = resp.bytes_stream().eventsource();
        Self {
            inner: Box::pin(inner),
            idle,
            deadline,
            count: 0,
        }
    }

    /// The next event; `None` at the end of the stream. A silence longer
    /// than the idle timeout, a broken connection and a stream that ends
    /// before its first event are errors. A server that fails after it has
    /// answered 200 can only close the stream (llama-cpp-python's does so
    /// for a `tool_choice` it does not support), so the error says where to
    /// see why.
    pub async fn next(&mut self) -> Result<Option<SseEvent>, Failure> {
        let until = (Instant::now() + self.idle).min(self.deadline);
        match tokio::time::timeout_at(until, self.inner.next()).await {
            Err(_) if until == self.deadline => {
                Err(Failure::transient("the request timed out while streaming"))
            }
            Err(_) => Err(Failure::transient(format!(
                "the stream stalled: no data for {} s (idle timeout)",
                self.idle.as_secs_f64()
            ))),
            Ok(None) if self.count == 0 => Err(Failure::transient(format!(
                "the server answered 200 and {CLOSED_EMPTY}: \
                 it may have failed after it started to answer (its log, or the same task \
                 with `model_options: {{stream: false}}`, shows its error)",
            ))),
            Ok(None) => Ok(None),
            Ok(Some(Err(e))) => Err(Failure::transient(format!("the stream was cut: {e}"))),
            Ok(Some(Ok(ev))) => {
                self.count += 1;
                Ok(Some(SseEvent {
                    event: ev.event,
                    data: ev.data,
                }))
            }
        }
    }
}

/// Builds the HTTP client of a provider whose requests go to `base_url`.
///
/// A plain `http://` server (a local model server, a fake) gets a client
/// without the system's certificate store: loading it (some 300 files
/// under /etc/ssl/certs) was most of the time from process start to the
/// first request. Such a client refuses any `https://` address.
pub fn client(base_url: &str) -> Result<reqwest::Client, reqwest::Error> {
    let builder = crate::net::tls::client_builder()
        .user_agent(concat!("runner/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30));
    let plain = base_url
        .get(..7)
        .is_some_and(|s| s.eq_ignore_ascii_case("http://"));
    if plain {
        builder.tls_certs_only([]).build()
    } else {
        builder.build()
    }
}
