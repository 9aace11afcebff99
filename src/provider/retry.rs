//! The retry loop around one model request: exponential backoff with
//! jitter, `Retry-After` honoured (up to a bound), and the tries sent again
//! noted for the transcript. Whether a failure is retried is its class's
//! ([`super::failure`]).

use std::future::Future;
use std::time::Duration;

use backon::BackoffBuilder;
use tokio::time::Instant;

use super::ProviderError;
use super::config::ProviderConfig;
use super::failure::Failure;

/// Where [`with_retries`] notes the tries it sends again, and the client
/// the time its tries waited for the run's rate governor: set around one
/// model request by [`noting_retries`].
#[derive(Debug, Clone, Default)]
pub struct RetryLog(std::sync::Arc<Noted>);

#[derive(Debug, Default)]
pub struct Noted {
    tries: std::sync::Mutex<Vec<runner_output::RetryRecord>>,
    /// Milliseconds waited for the rate governor.
    waited_ms: std::sync::atomic::AtomicU64,
}

impl RetryLog {
    /// The tries noted so far, taken.
    pub fn take(&self) -> Vec<runner_output::RetryRecord> {
        std::mem::take(&mut *self.0.tries.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The milliseconds waited for the rate governor so far, taken.
    pub fn take_waited_ms(&self) -> u64 {
        self.0
            .waited_ms
            .swap(0, std::sync::atomic::Ordering::Relaxed)
    }
}

tokio::task_local! {
    static RETRY_LOG: RetryLog;
}

/// Notes a try that failed and is sent again in another shape (see
/// [`super::learn`]) in the current request's log.
pub fn note_retry(record: runner_output::RetryRecord) {
    let _ = RETRY_LOG.try_with(|log| {
        log.0
            .tries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record)
    });
}

/// Notes a try's wait for the rate governor in the current request's log.
pub fn note_wait(waited: Duration) {
    if waited.is_zero() {
        return;
    }
    let _ = RETRY_LOG.try_with(|log| {
        log.0.waited_ms.fetch_add(
            waited.as_millis() as u64,
            std::sync::atomic::Ordering::Relaxed,
        )
    });
}

/// `request` with its retries noted in the returned log (whichever task
/// polls it).
pub fn noting_retries<F: Future>(request: F) -> (impl Future<Output = F::Output>, RetryLog) {
    let log = RetryLog::default();
    (RETRY_LOG.scope(log.clone(), request), log)
}

/// The longest wait a `Retry-After` may impose.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// Rate-limit refusals of one request sent again without spending a
/// retry, while its server admits other requests (see
/// [`super::governor`]); past them each spends one.
const MAX_FREE_RETRIES: u32 = 100;

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
    let mut free = 0u32;
    let started = Instant::now();
    loop {
        tries += 1;
        let failure = match attempt().await {
            Ok(v) => return Ok(v),
            Err(f) => f,
        };
        // The rate governor paces a free retry: no wait of its own here.
        let paced = failure.retryable && failure.free_retry && free < MAX_FREE_RETRIES;
        let next = if paced {
            free += 1;
            Some(Duration::ZERO)
        } else if failure.retryable {
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
                calls_started: failure.calls_started,
            });
        };
        let delay = match failure.retry_after {
            _ if paced => Duration::ZERO,
            Some(d) => d.min(MAX_RETRY_AFTER),
            None => delay,
        };
        let error = summary_line(&failure.message);
        if failure.class == runner_output::ErrorClass::RateLimited {
            // The rate governor says how long the server's requests wait,
            // once for all of them.
            tracing::debug!("{provider}: {error} (attempt {tries}); sent again at the run's pace");
        } else {
            tracing::warn!(
                "{provider}: {error} (attempt {tries}); retrying in {} ms",
                delay.as_millis()
            );
        }
        let _ =
            RETRY_LOG.try_with(|log| {
                log.0.tries.lock().unwrap_or_else(|e| e.into_inner()).push(
                    runner_output::RetryRecord {
                        attempt: tries,
                        error,
                        class: Some(failure.class),
                        at_ms: started.elapsed().as_millis() as u64,
                        wait_ms: delay.as_millis() as u64,
                    },
                )
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

/// Gemini's `RetryInfo` in an error body: `{"error": {"details": [{"@type":
/// "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1s"}]}}`.
pub fn retry_delay_in(body: &str) -> Option<Duration> {
    if !body.contains("retryDelay") {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let delay = v["error"]["details"].as_array()?.iter().find(|d| {
        d["@type"]
            .as_str()
            .is_some_and(|t| t.ends_with("RetryInfo"))
    })?["retryDelay"]
        .as_str()?;
    super::rate_headers::until(delay)
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
    fn gemini_says_when_in_its_body() {
        let body = r#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}}"#;
        assert_eq!(retry_delay_in(body), Some(Duration::from_millis(1500)));
        assert_eq!(retry_delay_in(r#"{"error": {"code": 429}}"#), None);
        assert_eq!(retry_delay_in("retryDelay: soon"), None);
        let odd = r#"{"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "-1s"}]}}"#;
        assert_eq!(retry_delay_in(odd), None);
    }
}
