//! What the vendors' batch APIs share: their HTTP calls (the provider's
//! transport and failure classes), waiting for a batch to end with a
//! backoff, and the failures a batch's requests end in.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::types::{Endpoint, Outcomes, Polled};
use crate::provider::failure::{Failure, classify, error_text};
use crate::provider::http::{read_json, send, source_chain};
use runner_output::ErrorClass;

/// The first wait between polls; it doubles up to [`MAX_WAIT`].
const FIRST_WAIT: Duration = Duration::from_millis(500);
const MAX_WAIT: Duration = Duration::from_secs(60);
/// Polls in a row that may fail (the vendor unreachable a while) before
/// the wait is given up.
const FAILED_POLLS: u32 = 8;
/// How long one call to a batch API may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// POSTs `body` as JSON to `url`; the answer's JSON.
pub(super) async fn post_json(ep: &Endpoint, url: &str, body: &Value) -> Result<Value, Failure> {
    let bytes = body.to_string().into_bytes();
    post_bytes(ep, url, "application/json", bytes).await
}

/// POSTs `bytes` of `content_type` to `url`; the answer's JSON.
pub(super) async fn post_bytes(
    ep: &Endpoint,
    url: &str,
    content_type: &str,
    bytes: Vec<u8>,
) -> Result<Value, Failure> {
    let deadline = Instant::now() + CALL_TIMEOUT;
    let req = ep
        .client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(bytes);
    read_json(send(req, url, &ep.headers, deadline).await?, deadline).await
}

/// GETs `url`; the answer's JSON.
pub(super) async fn get_json(ep: &Endpoint, url: &str) -> Result<Value, Failure> {
    let deadline = Instant::now() + CALL_TIMEOUT;
    read_json(
        send(ep.client.get(url), url, &ep.headers, deadline).await?,
        deadline,
    )
    .await
}

/// GETs `url`; the answer's text (a results file: JSON lines).
pub(super) async fn get_text(ep: &Endpoint, url: &str) -> Result<String, Failure> {
    let deadline = Instant::now() + CALL_TIMEOUT;
    let resp = send(ep.client.get(url), url, &ep.headers, deadline).await?;
    match tokio::time::timeout_at(deadline, resp.text()).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(Failure::transient(format!(
            "the results were cut: {}",
            source_chain(&e)
        ))),
        Err(_) => Err(Failure::transient("the request timed out")),
    }
}

/// The JSON lines of a results file, each parsed.
pub(super) fn json_lines(text: &str) -> Result<Vec<Value>, Failure> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).map_err(|e| {
                Failure::fatal(format!(
                    "a line of the batch results is not JSON ({e}): {}",
                    &l[..l.len().min(200)]
                ))
            })
        })
        .collect()
}

/// The answer a vendor said it could not give: a field missing in what
/// it sent (`what`).
pub(super) fn missing(ep: &Endpoint, what: &str, got: &Value) -> Failure {
    let text = got.to_string();
    Failure::of(
        ErrorClass::BadResponse,
        format!(
            "{} batch API: no {what} in its answer: {}",
            ep.vendor.as_str(),
            &text[..text.len().min(300)]
        ),
    )
}

/// Polls batch `id` with `poll` and a doubling wait until it ends,
/// within `timeout`; every request's outcome. The failures are never
/// retryable: the batch was submitted, and sending its requests again
/// would bill them twice (its id is kept for `--resume`).
pub(super) async fn until<F, Fut>(
    ep: &Endpoint,
    id: &str,
    timeout: Duration,
    mut poll: F,
) -> Result<(Outcomes, Option<&'static str>), Failure>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Polled, Failure>>,
{
    let deadline = Instant::now() + timeout;
    let mut wait = FIRST_WAIT;
    let mut failed = 0;
    loop {
        match poll().await {
            Ok(Polled::Ended(outcomes, rest)) => return Ok((outcomes, rest)),
            Ok(Polled::Running) => failed = 0,
            Err(f) => {
                failed += 1;
                if !f.retryable || failed >= FAILED_POLLS {
                    let why = format!("asking for it failed: {}", f.message);
                    return Err(kept(ep, id, &why));
                }
            }
        }
        if Instant::now() + wait > deadline {
            let why = format!(
                "it did not end within --batch-timeout ({})",
                crate::duration::show_duration(timeout)
            );
            return Err(kept(ep, id, &why));
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(MAX_WAIT);
    }
}

/// A batch whose outcome could not be had: said with its id, which the
/// transcript keeps for `--resume`.
fn kept(ep: &Endpoint, id: &str, why: &str) -> Failure {
    Failure {
        retryable: false,
        ..Failure::of(
            ErrorClass::Unavailable,
            format!(
                "{} batch {id}: {why}; its id is kept: `runner run --resume` collects it",
                ep.vendor.as_str()
            ),
        )
    }
}

/// A request of batch `id` the vendor answered with an error (`detail`,
/// its error object, and the HTTP status it names, if any).
pub(super) fn errored(
    ep: &Endpoint,
    id: &str,
    custom_id: &str,
    status: Option<u16>,
    detail: &Value,
) -> Failure {
    let text = detail.to_string();
    Failure::of(
        classify(status, &text),
        format!(
            "{} batch {id}: request {custom_id} errored: {}",
            ep.vendor.as_str(),
            error_text(&text)
        ),
    )
}

/// A request of batch `id` the vendor never ran: `kind` is `expired` or
/// `canceled`. Sent again, it would wait as long: not retried.
pub(super) fn not_run(ep: &Endpoint, id: &str, custom_id: &str, kind: &str) -> Failure {
    let why = match kind {
        "expired" => "expired before the vendor ran it",
        "canceled" => "was canceled",
        other => other,
    };
    Failure {
        retryable: false,
        ..Failure::of(
            ErrorClass::Unavailable,
            format!(
                "{} batch {id}: request {custom_id} {why}",
                ep.vendor.as_str()
            ),
        )
    }
}
