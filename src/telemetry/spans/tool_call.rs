//! A tool call's span (`execute_tool {tool}`, its hooks as events) and a
//! check's span beside it.

use std::time::{Duration, SystemTime};

use opentelemetry::trace::{Event, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use runner_output::{CallStatus, CheckRecord, HookKind, HookRun, ToolCallRecord, Verdict};
use serde_json::Value as Json;

use super::build::{Builder, SpanOptions, at, int, kv, redacted, strings};
use crate::telemetry::ids::{check_span, tool_span};

/// A tool call's `execute_tool {tool}` span, its hooks as events.
pub(super) fn tool(b: &Builder, call: &ToolCallRecord, opts: SpanOptions) -> SpanData {
    let outcome = call.status.as_str();
    let mut a = vec![
        kv("gen_ai.operation.name", "execute_tool"),
        kv("gen_ai.tool.name", call.tool.clone()),
        kv("gen_ai.tool.call.id", call.id.clone()),
        kv(
            "gen_ai.tool.type",
            if call.tool.contains("__") {
                "extension"
            } else {
                "function"
            },
        ),
        kv("runner.tool.outcome", outcome),
        kv("runner.tool.duration_ms", int(call.duration_ms)),
        kv("runner.turn", i64::from(call.turn)),
        kv("runner.batch", i64::from(call.batch)),
    ];
    match &call.decision {
        Some(d) => {
            a.push(kv(
                "runner.policy.decision",
                match d.verdict {
                    Verdict::Allow => "allow",
                    Verdict::Deny => "deny",
                },
            ));
            if let Some(rule) = &d.rule {
                a.push(kv("runner.policy.rule", rule.clone()));
            }
            if let Some(layer) = &d.policy {
                a.push(kv("runner.policy.layer", layer.clone()));
            }
            if let Some(line) = d.line {
                a.push(kv("runner.policy.line", int(line)));
            }
            if let Some(reason) = &d.reason {
                a.push(kv("runner.policy.reason", redacted(reason)));
            }
            a.push(kv(
                "runner.policy.signatures",
                strings(d.signatures.iter().map(|s| redacted(&s.to_string()))),
            ));
        }
        None => a.push(kv("runner.policy.decision", "not_asked")),
    }
    if let Some(k) = call.error_kind {
        a.push(kv("error.type", k.as_str()));
    }
    if let Some(code) = call.metadata.get("exit_code").and_then(Json::as_i64) {
        a.push(kv("runner.tool.exit_code", code));
    }
    if opts.content {
        a.push(kv(
            "gen_ai.tool.call.arguments",
            redacted(&call.arguments.to_string()),
        ));
        a.push(kv("gen_ai.tool.call.result", redacted(&call.content)));
    }
    let start = at(b.start, call.started_ms);
    let end = start + Duration::from_millis(call.duration_ms);
    let events = call
        .hooks
        .iter()
        .map(|h| hook_event(h, start, end))
        .collect();
    let status = match call.status {
        CallStatus::Error => Status::error(call.display.clone()),
        _ => Status::Unset,
    };
    b.span(
        tool_span(b.place.task_span, call.turn, &call.id),
        b.place.task_span,
        SpanKind::Internal,
        format!("execute_tool {}", call.tool),
        (start, end),
        a,
        events,
        status,
    )
}

/// A hook's run, as an event of its call's span: `pre_tool` at the call's
/// start, `post_tool` at its end.
fn hook_event(h: &HookRun, start: SystemTime, end: SystemTime) -> Event {
    let (kind, when) = match h.kind {
        HookKind::PreTool => ("pre_tool", start),
        HookKind::PostTool => ("post_tool", end),
    };
    let mut a = vec![
        kv("runner.hook.kind", kind),
        kv("runner.hook.command", redacted(&h.run)),
        kv("runner.hook.source", h.source.clone()),
        kv("runner.hook.effect", format!("{:?}", h.effect)),
        kv("runner.hook.duration_ms", int(h.duration_ms)),
        kv("runner.hook.timed_out", h.timed_out),
    ];
    if let Some(code) = h.exit_code {
        a.push(kv("runner.hook.exit_code", i64::from(code)));
    }
    Event::new("runner.hook", when, a, 0)
}

/// A check's span, beside the task's tool calls.
pub(super) fn check_of(b: &Builder, c: &CheckRecord) -> SpanData {
    let mut a = vec![
        kv("runner.check.name", c.name.clone()),
        kv("runner.check.command", redacted(&c.command)),
        kv("runner.check.passed", c.passed),
        kv("runner.check.timed_out", c.timed_out),
        kv("runner.attempt", i64::from(c.attempt)),
    ];
    if let Some(code) = c.exit_code {
        a.push(kv("runner.check.exit_code", i64::from(code)));
    }
    let start = at(b.start, c.started_ms);
    b.span(
        check_span(b.place.task_span, c.attempt, &c.name),
        b.place.task_span,
        SpanKind::Internal,
        format!("check {}", c.name),
        (start, start + Duration::from_millis(c.duration_ms)),
        a,
        Vec::new(),
        if c.passed {
            Status::Ok
        } else {
            Status::error(format!("check `{}` failed", c.name))
        },
    )
}
