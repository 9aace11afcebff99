//! The spans of child agents (issue 32): an `invoke_agent {profile}` span
//! beneath the `execute_tool task` span that started it, and its own
//! `chat` and `execute_tool` spans (and children) beneath that, with ids
//! derived from its span as a task's are from the task's.

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use runner_output::AgentRun;

use super::build::{
    Builder, SpanOptions, TaskPlace, at, int, kv, provider_and_model, redacted, strings,
};
use super::model_request::chat;
use super::tool_call::tool;
use crate::telemetry::ids::{agent_span, tool_span};

/// The spans of the children `calls` started, nested; `task_span` is the
/// span the calls' own spans derive from.
pub(super) fn of_calls(
    b: &Builder,
    calls: &[runner_output::ToolCallRecord],
    opts: SpanOptions,
) -> Vec<SpanData> {
    let mut out = Vec::new();
    for call in calls {
        let Some(child) = AgentRun::of(call) else {
            continue;
        };
        let call_span = tool_span(b.place.task_span, call.turn, &call.id);
        out.extend(child_spans(b, call_span, &child, opts));
    }
    out
}

fn child_spans(b: &Builder, call_span: SpanId, c: &AgentRun, opts: SpanOptions) -> Vec<SpanData> {
    let id = agent_span(call_span, &c.id);
    let place = TaskPlace {
        task_span: id,
        ..b.place.clone()
    };
    let cb = Builder {
        place: &place,
        scope: b.scope,
        start: b.start,
    };
    let (provider, model) = provider_and_model(&c.model);
    let mut a = vec![
        kv("gen_ai.operation.name", "invoke_agent"),
        kv("gen_ai.agent.name", c.profile.clone()),
        kv("gen_ai.agent.id", c.id.clone()),
        kv("gen_ai.provider.name", provider),
        kv("gen_ai.request.model", model.to_string()),
        kv("gen_ai.usage.input_tokens", int(c.usage.input_tokens)),
        kv("gen_ai.usage.output_tokens", int(c.usage.output_tokens)),
        kv("runner.agent.depth", i64::from(c.depth)),
        kv("runner.agent.isolation", c.isolation.clone()),
        kv("runner.outcome", c.outcome.status.as_str()),
        kv("runner.outcome.reason", redacted(&c.outcome.reason)),
        kv("runner.turns", i64::from(c.counts.turns)),
        kv("runner.tool_calls", i64::from(c.counts.tool_calls)),
        kv("runner.tool_calls.denied", i64::from(c.counts.denied_calls)),
        kv("runner.policies", strings(c.policies.iter().cloned())),
    ];
    if let Some(cost) = c.usage.cost_usd {
        a.push(kv("runner.cost_usd", cost));
    }
    let status = match c.outcome.status {
        runner_output::OutcomeStatus::Passed => Status::Ok,
        _ => Status::error(redacted(&c.outcome.reason)),
    };
    let mut out = vec![cb.span(
        id,
        call_span,
        SpanKind::Internal,
        format!("invoke_agent {}", c.profile),
        (
            at(b.start, c.started_ms),
            at(b.start, c.started_ms + c.duration_ms),
        ),
        a,
        Vec::new(),
        status,
    )];
    for turn in &c.turns {
        out.push(chat(&cb, turn, provider, model, opts));
    }
    for call in &c.tool_calls {
        out.push(tool(&cb, call, opts));
    }
    out.extend(of_calls(&cb, &c.tool_calls, opts));
    out
}
