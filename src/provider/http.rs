//! The HTTP transport shared by the vendors' clients: one POST with a total
//! deadline, the retry loop (exponential backoff with jitter, `Retry-After`
//! honoured), and a server-sent-events reader with an idle timeout.
//!
//! Every failure gets a class ([`classify`], [`ErrorClass`]) from its
//! status and the vendor's words, and the class decides: rate limits,
//! overload and unavailability (429, 5xx, a connection error, a timeout, a
//! stream cut short before any of its tool calls was handed to the engine)
//! are retried; a spent quota, a refused key, a request the server refuses
//! and an unreadable answer fail at once, and never go out again as they
//! were.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use backon::BackoffBuilder;
use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use super::ProviderError;
use super::config::ProviderConfig;
use runner_output::ErrorClass;

/// One failed attempt.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub class: ErrorClass,
    /// Whether this attempt may be sent again: its class says so, unless a
    /// stream already handed out some of its calls.
    pub retryable: bool,
    /// What the server asked for (`Retry-After`, `retry-after-ms`).
    pub retry_after: Option<Duration>,
}

impl Failure {
    pub fn of(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            class,
            retryable: class.retryable(),
            retry_after: None,
        }
    }
    /// An answer that cannot be read.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self::of(ErrorClass::BadResponse, message)
    }
    /// A connection error, a timeout, a stream cut short.
    pub fn transient(message: impl Into<String>) -> Self {
        Self::of(ErrorClass::Unavailable, message)
    }
    /// An error the vendor sent in place of (or in the middle of) an
    /// answer (`error`: its JSON; `context`: "error in the answer" ...):
    /// its message, classed by its words and type.
    pub fn answered(context: &str, error: &Value) -> Self {
        let message = format!("{context}: {}", error_of(error));
        let class = classify(None, &format!("{message} {error}"));
        Self::of(class, message)
    }
}

/// Whether a vendor's words (lowercased) say the request did not fit the
/// model's context window (OpenAI, Anthropic, Gemini, and the servers that
/// copy them).
fn says_context_overflow(lowercase: &str) -> bool {
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceeds the maximum number of tokens",
        "context window",
    ]
    .iter()
    .any(|s| lowercase.contains(s))
}

/// The class of a failure from its HTTP status (none for an error inside
/// an answer or a stream) and the vendor's words.
pub fn classify(status: Option<u16>, text: &str) -> ErrorClass {
    let t = text.to_ascii_lowercase();
    let says = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if says_context_overflow(&t) {
        return ErrorClass::ContextOverflow;
    }
    if status == Some(402)
        || says(&[
            "insufficient_quota",
            "exceeded your current quota",
            "quota exceeded",
            "credit balance",
            "billing",
        ])
    {
        return ErrorClass::Quota;
    }
    if matches!(status, Some(401 | 403))
        || says(&[
            "invalid_api_key",
            "invalid api key",
            "authentication_error",
            "permission_error",
            "unauthenticated",
            "permission_denied",
        ])
    {
        return ErrorClass::Auth;
    }
    if status == Some(429) || says(&["rate_limit", "rate limit", "resource_exhausted"]) {
        return ErrorClass::RateLimited;
    }
    if status == Some(529) || says(&["overloaded"]) {
        return ErrorClass::Overloaded;
    }
    match status {
        Some(408 | 409) | Some(500..=599) => ErrorClass::Unavailable,
        Some(_) => ErrorClass::RefusedRequest,
        // An error inside an answer: a server's trouble unless its words
        // say the request was at fault.
        None if says(&[
            "invalid_request",
            "invalid_argument",
            "bad request",
            "not_found",
        ]) =>
        {
            ErrorClass::RefusedRequest
        }
        None => ErrorClass::Unavailable,
    }
}

/// Where [`with_retries`] notes the tries it sends again: set around one
/// model request by [`noting_retries`].
#[derive(Debug, Clone, Default)]
pub struct RetryLog(std::sync::Arc<std::sync::Mutex<Vec<runner_output::RetryRecord>>>);

impl RetryLog {
    /// The tries noted so far, taken.
    pub fn take(&self) -> Vec<runner_output::RetryRecord> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

tokio::task_local! {
    static RETRY_LOG: RetryLog;
}

/// Notes a try that failed and is sent again in another shape (see
/// [`super::learn`]) in the current request's log.
pub fn note_retry(record: runner_output::RetryRecord) {
    let _ = RETRY_LOG.try_with(|log| log.0.lock().unwrap_or_else(|e| e.into_inner()).push(record));
}

/// `request` with its retries noted in the returned log (whichever task
/// polls it).
pub fn noting_retries<F: Future>(request: F) -> (impl Future<Output = F::Output>, RetryLog) {
    let log = RetryLog::default();
    (RETRY_LOG.scope(log.clone(), request), log)
}

/// The longest wait a `Retry-After` may impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// Runs `attempt` until it succeeds, fails for good, or the retries are
/// spent. The error names the provider, the attempts and the last failure,
/// with the key (if it ever appears) masked.
pub async fn with_retries<T, F, Fut>(
    cfg: &ProviderConfig,
    provider: &str,
    mut attempt: F,
) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failure>>,
{
    let mut backoff = backon::ExponentialBuilder::default()
        .with_jitter()
        .with_min_delay(Duration::from_millis(500))
        .with_max_delay(Duration::from_secs(30))
        .with_max_times(cfg.max_retries as usize)
        .build();
    let mut tries = 0u32;
    let started = Instant::now();
    loop {
        tries += 1;
        let failure = match attempt().await {
            Ok(v) => return Ok(v),
            Err(f) => f,
        };
        let next = if failure.retryable {
            backoff.next()
        } else {
            None
        };
        let Some(delay) = next else {
            let mut message = failure.message;
            if failure.retryable && tries > 1 {
                message = format!("{message} (gave up after {tries} attempts)");
            }
            // A short dummy key (`OPENAI_API_KEY=x` for a local server) is
            // not masked: it would mangle the server's words.
            if let Some(key) = &cfg.api_key
                && key.expose().len() >= crate::contain::MIN_VALUE_LEN
            {
                message = message.replace(key.expose(), "***");
            }
            return Err(ProviderError {
                provider: provider.to_string(),
                message,
                class: failure.class,
                // Not retried for that reason only: a stream handed out
                // some of its calls before it failed.
                calls_started: failure.class.retryable() && !failure.retryable,
            });
        };
        let delay = failure
            .retry_after
            .map(|d| d.min(MAX_RETRY_AFTER))
            .unwrap_or(delay);
        let error = summary_line(&failure.message);
        tracing::warn!(
            "{provider}: {error} (attempt {tries}); retrying in {} ms",
            delay.as_millis()
        );
        let _ = RETRY_LOG.try_with(|log| {
            log.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(runner_output::RetryRecord {
                    attempt: tries,
                    error,
                    class: Some(failure.class),
                    at_ms: started.elapsed().as_millis() as u64,
                    wait_ms: delay.as_millis() as u64,
                })
        });
        tokio::time::sleep(delay).await;
    }
}

/// A failure as one line for a retry's record and warning, secrets
/// masked: its [`headline`].
pub fn summary_line(message: &str) -> String {
    crate::contain::redact(&headline(message)).into_owned()
}

/// A failure's first line, for a retry's one-line warning: a server's
/// error can be a page of validation errors and a traceback, which the
/// final error (and so the transcript) keeps whole.
fn headline(message: &str) -> String {
    const MAX: usize = 300;
    let mut lines = message.lines();
    let first = lines.next().unwrap_or_default();
    let mut out: String = first.chars().take(MAX).collect();
    if out.len() < first.len() {
        out.push_str(" …");
    }
    let more = lines.filter(|l| !l.trim().is_empty()).count();
    if more > 0 {
        out.push_str(&format!(" (+{more} more lines)"));
    }
    out
}

/// `Retry-After` (seconds, or an HTTP date) and OpenAI's `retry-after-ms`.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = text("retry-after")?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when =
        time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc2822).ok()?;
    let wait = when - time::OffsetDateTime::now_utc();
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The vendor's error text from an error body (`{"error": {"message": ...}}`
/// for all three), else the start of the body.
pub fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| error_message(&v))
        .unwrap_or_else(|| body.chars().take(500).collect())
}

/// The message of an error object, or of a body holding one under
/// `error` (the same shape for all three vendors); else its JSON.
pub fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error").unwrap_or(v);
    e.get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())
        .map(str::to_string)
}

/// [`error_message`], falling back to the JSON text.
pub fn error_of(v: &Value) -> String {
    error_message(v).unwrap_or_else(|| v.to_string())
}

/// Sends one POST and checks the status. The body of a failed answer is
/// read (within the deadline) for the vendor's message.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    deadline: Instant,
) -> Result<reqwest::Response, Failure> {
    let mut req = client.post(url).json(body);
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
    let text = tokio::time::timeout_at(deadline, resp.text())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let message = format!("HTTP {}: {}", status.as_u16(), error_text(&text));
    let class = classify(Some(status.as_u16()), &text);
    Err(Failure {
        retry_after: wait,
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
            Ok(None) if self.count == 0 => Err(Failure::transient(
                "the server answered 200 and closed the stream without sending anything: \
                 it may have failed after it started to answer (its log, or the same task \
                 with `model_options: {stream: false}`, shows its error)",
            )),
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
    let builder = reqwest::Client::builder()
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

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    #[test]
    fn a_retry_warning_is_one_line() {
        assert_eq!(headline("HTTP 503: busy"), "HTTP 503: busy");
        let long = format!(
            "HTTP 500: 7 validation errors:\n  a\n\n  b\n{}",
            "x".repeat(10)
        );
        assert_eq!(
            headline(&long),
            "HTTP 500: 7 validation errors: (+3 more lines)"
        );
        let wide = "é".repeat(400);
        let h = headline(&wide);
        assert_eq!(h.chars().count(), 302);
        assert!(h.ends_with(" …"));
    }

    #[test]
    fn retry_after_in_seconds_milliseconds_and_dates() {
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(classify(Some(s), "").retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!classify(Some(s), "").retryable(), "{s}");
        }
    }

    #[test]
    fn failures_are_classed_by_status_and_words() {
        use ErrorClass::*;
        let cases: &[(Option<u16>, &str, ErrorClass)] = &[
            (
                Some(429),
                r#"{"error":{"type":"rate_limit_error"}}"#,
                RateLimited,
            ),
            (
                Some(429),
                r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#,
                Quota,
            ),
            (
                Some(429),
                r#"{"error":{"status":"RESOURCE_EXHAUSTED"}}"#,
                RateLimited,
            ),
            (Some(402), "", Quota),
            (
                Some(400),
                r#"{"error":{"message":"Your credit balance is too low"}}"#,
                Quota,
            ),
            (Some(401), "", Auth),
            (Some(403), r#"{"error":{"type":"permission_error"}}"#, Auth),
            (Some(400), r#"{"error":{"status":"UNAUTHENTICATED"}}"#, Auth),
            (
                Some(529),
                r#"{"error":{"type":"overloaded_error"}}"#,
                Overloaded,
            ),
            (Some(503), "The model is overloaded", Overloaded),
            (Some(503), "", Unavailable),
            (Some(500), "", Unavailable),
            (Some(504), "", Unavailable),
            (
                Some(400),
                "This model's maximum context length is 8192 tokens",
                ContextOverflow,
            ),
            (
                Some(400),
                "prompt is too long: 250000 tokens > 200000 maximum",
                ContextOverflow,
            ),
            (
                Some(400),
                "'content' is required when tool_calls is empty",
                RefusedRequest,
            ),
            (Some(422), "", RefusedRequest),
            (None, "overloaded_error: Overloaded", Overloaded),
            (None, "server_error: boom", Unavailable),
            (None, "invalid_request_error: bad", RefusedRequest),
        ];
        for (status, text, class) in cases {
            assert_eq!(classify(*status, text), *class, "{status:?} {text}");
        }
    }

    #[test]
    fn error_text_finds_the_vendor_message() {
        assert_eq!(
            error_text(r#"{"error":{"message":"Rate limit","type":"x"}}"#),
            "Rate limit"
        );
        assert_eq!(
            error_text(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_text("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
    }
}
