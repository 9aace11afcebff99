//! The vendors' batch APIs behind two calls: submit a batch, and wait
//! for it to end (each vendor's own file says how).

use serde_json::Value;

use super::BatchRef;
use super::poll::{not_run, until};
use super::types::{Answer, Endpoint, Outcomes, Polled};
use crate::provider::config::Vendor;
use crate::provider::failure::Failure;

/// Submits one batch of `(custom id, body)`; its id.
pub(super) async fn submit(ep: &Endpoint, items: &[(String, Value)]) -> Result<String, Failure> {
    match ep.vendor {
        Vendor::Anthropic => super::anthropic::submit(ep, items).await,
        Vendor::OpenAi => super::openai::submit(ep, items).await,
        Vendor::Gemini => super::gemini::submit(ep, items).await,
    }
}

/// Polls batch `id` until it ends, within `timeout` (see
/// [`until`]): every request's outcome.
pub(super) async fn until_ended(
    ep: &Endpoint,
    id: &str,
    timeout: std::time::Duration,
) -> Result<(Outcomes, Option<&'static str>), Failure> {
    until(ep, id, timeout, || poll(ep, id)).await
}

async fn poll(ep: &Endpoint, id: &str) -> Result<Polled, Failure> {
    match ep.vendor {
        Vendor::Anthropic => super::anthropic::poll(ep, id).await,
        Vendor::OpenAi => super::openai::poll(ep, id).await,
        Vendor::Gemini => super::gemini::poll(ep, id).await,
    }
}

/// `r`'s outcome among a batch's; one it does not name became `rest`.
pub(super) fn take(ep: &Endpoint, all: &mut Outcomes, rest: Option<&str>, r: &BatchRef) -> Answer {
    if let Some(answer) = all.remove(&r.custom_id) {
        return answer;
    }
    Err(match rest {
        Some(kind) => not_run(ep, &r.id, &r.custom_id, kind),
        None => Failure {
            retryable: false,
            ..Failure::of(
                runner_output::ErrorClass::BadResponse,
                format!(
                    "{} batch {} ended without an answer to request {}",
                    ep.vendor.as_str(),
                    r.id,
                    r.custom_id
                ),
            )
        },
    })
}
