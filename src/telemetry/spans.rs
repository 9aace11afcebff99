//! A finished task's transcript as spans, after the OpenTelemetry GenAI
//! semantic conventions: `invoke_agent {task}` with a `chat {model}` span
//! per model request, an `execute_tool {tool}` span per call (hooks as its
//! events) and a span per check beside them. The run's root span is
//! [`run_span`].
//!
//! One file per kind of span: `agent` (the task's), `model_request`
//! (`chat`), `tool_call` (`execute_tool`, and checks), `children` (child
//! agents beneath the call that started them), and `build` what they
//! share; this file puts a task's spans in order.
//!
//! Built from the transcript, not while the task runs: the agent loop
//! pays nothing for telemetry, and `runner export` sends the same spans
//! for a run that had it off.

use std::time::SystemTime;

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use runner_output::Transcript;

mod agent;
mod build;
mod children;
mod model_request;
mod tool_call;

use agent::agent_span;
use build::{Builder, kv};
pub use build::{SpanOptions, TaskPlace, provider_and_model, task_start};
use model_request::chat;
use tool_call::{check_of, tool};

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
