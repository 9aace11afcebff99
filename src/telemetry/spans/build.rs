//! What every kind of span is built with: where a task's spans hang in
//! the trace, what a task records of content, and the [`Builder`] that
//! makes one span; the small conversions the kinds share.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use runner_output::Transcript;

/// Where a task's spans hang in the trace.
#[derive(Debug, Clone)]
pub struct TaskPlace {
    pub trace_id: TraceId,
    pub task_span: SpanId,
    pub run_span: SpanId,
    pub sampled: bool,
    pub trace_state: TraceState,
}

/// What spans may carry besides their attributes.
#[derive(Debug, Clone, Copy)]
pub struct SpanOptions {
    /// Prompts, answers, arguments and results (redacted).
    pub content: bool,
}

/// The vendor as the conventions name it, and the model, of a
/// transcript's `model` (`openai:gpt-4.1`, `scripted`).
pub fn provider_and_model(model: &str) -> (&'static str, &str) {
    match model.split_once(':') {
        Some(("openai", m)) => ("openai", m),
        Some(("anthropic", m)) => ("anthropic", m),
        Some(("gemini", m)) => ("gcp.gemini", m),
        _ => ("runner.scripted", model),
    }
}

/// When the task started (its transcript's `started_at`).
pub fn task_start(t: &Transcript) -> SystemTime {
    time::OffsetDateTime::parse(
        &t.started_at,
        &time::format_description::well_known::Rfc3339,
    )
    .map(SystemTime::from)
    .unwrap_or_else(|_| SystemTime::now() - Duration::from_millis(t.duration_ms))
}

pub(super) fn at(start: SystemTime, ms: u64) -> SystemTime {
    start + Duration::from_millis(ms)
}

pub(super) fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

pub(super) fn strings(values: impl IntoIterator<Item = String>) -> Value {
    Value::Array(Array::String(
        values.into_iter().map(StringValue::from).collect(),
    ))
}

/// Text that leaves the machine: with the run's secrets masked.
pub(super) fn redacted(s: &str) -> String {
    crate::contain::redact(s).into_owned()
}

pub(super) fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The conventions' message list holding one text part.
pub(super) fn text_messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": redacted(text)}]}])
        .to_string()
}

pub(super) struct Builder<'a> {
    pub place: &'a TaskPlace,
    pub scope: &'a InstrumentationScope,
    pub start: SystemTime,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn span(
        &self,
        id: SpanId,
        parent: SpanId,
        kind: SpanKind,
        name: String,
        (start, end): (SystemTime, SystemTime),
        attributes: Vec<KeyValue>,
        events: Vec<Event>,
        status: Status,
    ) -> SpanData {
        let flags = if self.place.sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        SpanData {
            span_context: SpanContext::new(
                self.place.trace_id,
                id,
                flags,
                false,
                self.place.trace_state.clone(),
            ),
            parent_span_id: parent,
            parent_span_is_remote: false,
            span_kind: kind,
            name: Cow::Owned(name),
            start_time: start,
            end_time: end.max(start),
            attributes,
            dropped_attributes_count: 0,
            events: {
                let mut e = SpanEvents::default();
                e.events = events;
                e
            },
            links: SpanLinks::default(),
            status,
            instrumentation_scope: self.scope.clone(),
        }
    }
}
