//! A model request's span: `chat {model}`, with what was asked and
//! answered (when content is recorded), the tokens and the retries.

use std::time::Duration;

use opentelemetry::trace::{Event, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use runner_output::TurnRecord;
use serde_json::Value as Json;

use super::build::{Builder, SpanOptions, at, int, kv, strings, text_messages};
use crate::telemetry::ids::chat_span;

/// What the vendor's raw response says of itself: the model that
/// answered, the response id and why it stopped.
fn response_facts(raw: &Json) -> (Option<&str>, Option<&str>, Vec<String>) {
    let s = |p: &str| raw.pointer(p).and_then(Json::as_str);
    let model = s("/model").or_else(|| s("/modelVersion"));
    let id = s("/id").or_else(|| s("/responseId"));
    let mut reasons: Vec<String> = ["choices", "candidates"]
        .iter()
        .filter_map(|k| raw.get(k).and_then(Json::as_array))
        .flatten()
        .filter_map(|c| {
            c.get("finish_reason")
                .or_else(|| c.get("finishReason"))
                .and_then(Json::as_str)
        })
        .map(str::to_string)
        .collect();
    if let Some(r) = s("/stop_reason") {
        reasons.push(r.to_string());
    }
    (model, id, reasons)
}

/// A model request's `chat {model}` span (`provider` and `model`: the
/// ones that answered, a fallback's once the task switched).
pub(super) fn chat(
    b: &Builder,
    turn: &TurnRecord,
    provider: &str,
    model: &str,
    opts: SpanOptions,
) -> SpanData {
    let (response_model, id, reasons) = response_facts(&turn.raw);
    let mut a = vec![
        kv("gen_ai.operation.name", "chat"),
        kv("gen_ai.provider.name", provider.to_string()),
        kv("gen_ai.request.model", model.to_string()),
        kv(
            "gen_ai.response.model",
            response_model.unwrap_or(model).to_string(),
        ),
        kv("gen_ai.usage.input_tokens", int(turn.usage.input_tokens)),
        kv("gen_ai.usage.output_tokens", int(turn.usage.output_tokens)),
        kv(
            "gen_ai.usage.cache_read.input_tokens",
            int(turn.usage.cached_input_tokens),
        ),
        kv(
            "gen_ai.usage.cache_creation.input_tokens",
            int(turn.usage.cache_write_input_tokens),
        ),
        kv("runner.turn", i64::from(turn.turn)),
        kv("runner.attempt", i64::from(turn.attempt)),
        kv("runner.tool_calls", turn.tool_calls as i64),
    ];
    if !reasons.is_empty() {
        a.push(kv("gen_ai.response.finish_reasons", strings(reasons)));
    }
    if let Some(id) = id {
        a.push(kv("gen_ai.response.id", id.to_string()));
    }
    if let Some(cost) = turn.usage.cost_usd {
        a.push(kv("runner.cost_usd", cost));
    }
    if opts.content {
        a.push(kv(
            "gen_ai.output.messages",
            text_messages("assistant", &turn.text),
        ));
    }
    if !turn.retries.is_empty() {
        a.push(kv("runner.retries", turn.retries.len() as i64));
    }
    let start = at(b.start, turn.started_ms);
    // Each try that failed and was sent again, when it failed.
    let retries = turn
        .retries
        .iter()
        .map(|r| {
            Event::new(
                "runner.retry",
                at(start, r.at_ms),
                vec![
                    kv("runner.retry.attempt", i64::from(r.attempt)),
                    kv("runner.retry.error", r.error.clone()),
                    kv(
                        "error.type",
                        r.class.map_or("unknown", runner_output::ErrorClass::as_str),
                    ),
                    kv("runner.retry.wait_ms", int(r.wait_ms)),
                ],
                0,
            )
        })
        .collect();
    b.span(
        chat_span(b.place.task_span, turn.turn),
        b.place.task_span,
        SpanKind::Client,
        format!("chat {model}"),
        (start, start + Duration::from_millis(turn.duration_ms)),
        a,
        retries,
        Status::Unset,
    )
}
