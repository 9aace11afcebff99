//! A finished task's transcript as spans, after the OpenTelemetry GenAI
//! semantic conventions: `invoke_agent {task}` with a `chat {model}` span
//! per model request, an `execute_tool {tool}` span per call (hooks as its
//! events) and a span per check beside them. The run's root span is
//! [`run_span`].
//!
//! One file per kind of span: `agent` (the task's), `model_request`
//! (`chat`), `tool_call` (`execute_tool`, and checks), `children` (child
//! agents beneath the call that started them); this file holds what they
//! share and puts a task's spans in order.
//!
//! Built from the transcript, not while the task runs: the agent loop
//! pays nothing for telemetry, and `runner export` sends the same spans
//! for a run that had it off.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{
    Event, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use runner_output::Transcript;

mod agent;
mod children;
mod model_request;
mod tool_call;

use agent::agent_span;
use model_request::chat;
use tool_call::{check_of, tool};

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

fn at(start: SystemTime, ms: u64) -> SystemTime {
    start + Duration::from_millis(ms)
}

fn kv(key: &'static str, value: impl Into<Value>) -> KeyValue {
    KeyValue::new(key, value)
}

fn strings(values: impl IntoIterator<Item = String>) -> Value {
    Value::Array(Array::String(
        values.into_iter().map(StringValue::from).collect(),
    ))
}

/// Text that leaves the machine: with the run's secrets masked.
fn redacted(s: &str) -> String {
    crate::contain::redact(s).into_owned()
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The conventions' message list holding one text part.
fn text_messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": redacted(text)}]}])
        .to_string()
}

struct Builder<'a> {
    place: &'a TaskPlace,
    scope: &'a InstrumentationScope,
    start: SystemTime,
}

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    fn span(
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

/// Every span of a task: its `invoke_agent` span first.
pub fn task_spans(
    t: &Transcript,
    place: &TaskPlace,
    scope: &InstrumentationScope,
    opts: SpanOptions,
) -> Vec<SpanData> {
    let b = Builder {
        place,
        scope,
        start: task_start(t),
    };
    let mut out = Vec::with_capacity(1 + t.turns.len() + t.tool_calls.len() + t.checks.len());
    out.push(agent_span(&b, t, opts));
    let (provider, model) = provider_and_model(&t.model);
    for turn in &t.turns {
        // The model that answered: a fallback's, once the task switched.
        let (provider, model) = turn
            .model
            .as_deref()
            .map_or((provider, model), provider_and_model);
        out.push(chat(&b, turn, provider, model, opts));
    }
    for call in &t.tool_calls {
        out.push(tool(&b, call, opts));
    }
    out.extend(children::of_calls(&b, &t.tool_calls, opts));
    for check in &t.checks {
        out.push(check_of(&b, check));
    }
    out
}

/// The run's root span: from its first task's start to the last one's
/// end, a child of the CI's span when it gave one.
#[allow(clippy::too_many_arguments)]
pub fn run_span(
    place: &TaskPlace,
    parent: Option<SpanId>,
    scope: &InstrumentationScope,
    (start, end): (SystemTime, SystemTime),
    tasks: usize,
    passed: usize,
) -> SpanData {
    let b = Builder {
        place,
        scope,
        start,
    };
    let mut span = b.span(
        place.run_span,
        parent.unwrap_or(SpanId::INVALID),
        SpanKind::Internal,
        "runner run".to_string(),
        (start, end),
        vec![
            kv("runner.tasks", tasks as i64),
            kv("runner.tasks.passed", passed as i64),
            kv("runner.tasks.failed", (tasks - passed.min(tasks)) as i64),
        ],
        Vec::new(),
        if passed == tasks {
            Status::Ok
        } else {
            Status::error(format!(
                "{} of {tasks} task(s) did not pass",
                tasks - passed
            ))
        },
    );
    span.parent_span_is_remote = parent.is_some();
    span
}

#[cfg(test)]
mod tests;
