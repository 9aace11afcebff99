//! A finished task's transcript as spans, after the OpenTelemetry GenAI
//! semantic conventions: `invoke_agent {task}` with a `chat {model}` span
//! per model request, an `execute_tool {tool}` span per call (hooks as its
//! events) and a span per check beside them. The run's root span is
//! [`run_span`].
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
use runner_output::{
    CallStatus, CheckRecord, HookKind, HookRun, Message, ToolCallRecord, Transcript, TurnRecord,
    Verdict,
};
use serde_json::Value as Json;

mod children;

use super::ids::{chat_span, check_span, tool_span};

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

fn agent_span(b: &Builder, t: &Transcript, opts: SpanOptions) -> SpanData {
    let (provider, model) = provider_and_model(&t.model);
    let mut a = vec![
        kv("gen_ai.operation.name", "invoke_agent"),
        kv("gen_ai.agent.name", t.task.clone()),
        kv("gen_ai.provider.name", provider),
        kv("gen_ai.request.model", model.to_string()),
        kv("gen_ai.usage.input_tokens", int(t.usage.input_tokens)),
        kv("gen_ai.usage.output_tokens", int(t.usage.output_tokens)),
        kv(
            "gen_ai.usage.cache_read.input_tokens",
            int(t.usage.cached_input_tokens),
        ),
        kv("runner.task.file", t.task_file.clone()),
        kv("runner.task.mode", format!("{:?}", t.mode).to_lowercase()),
        kv("runner.outcome", t.outcome.status.as_str()),
        kv("runner.outcome.reason", redacted(&t.outcome.reason)),
        kv("runner.attempts", i64::from(t.counts.attempts)),
        kv("runner.turns", i64::from(t.counts.turns)),
        kv("runner.tool_calls", i64::from(t.counts.tool_calls)),
        kv("runner.tool_calls.denied", i64::from(t.counts.denied_calls)),
        kv("runner.tool_calls.failed", i64::from(t.counts.failed_calls)),
        kv("runner.changes", t.changes.len() as i64),
        kv("runner.violations", t.violations.len() as i64),
        kv("runner.policies", strings(t.policies.iter().cloned())),
        kv("runner.sandbox", t.sandbox.clone()),
    ];
    if let Some(cost) = t.usage.cost_usd {
        a.push(kv("runner.cost_usd", cost));
    }
    if let Some(class) = t.outcome.error_class {
        a.push(kv("error.type", class.as_str()));
    }
    if opts.content {
        a.push(kv("gen_ai.system_instructions", redacted(&t.system_prompt)));
        if let Some(Message::User { content }) = t.messages.first() {
            a.push(kv("gen_ai.input.messages", text_messages("user", content)));
        }
        a.push(kv(
            "gen_ai.output.messages",
            text_messages("assistant", &t.final_answer),
        ));
    }
    // Switches to fallback models, at the turn that failed over.
    let turn_start = |turn: u32| {
        t.turns
            .iter()
            .find(|r| r.turn == turn)
            .map_or(b.start, |r| at(b.start, r.started_ms))
    };
    let switches = t.model_switches.iter().map(|s| {
        Event::new(
            "runner.model_switch",
            turn_start(s.turn),
            vec![
                kv("runner.turn", i64::from(s.turn)),
                kv("runner.model_switch.from", s.from.clone()),
                kv("runner.model_switch.to", s.to.clone()),
                kv("error.type", s.class.as_str()),
            ],
            0,
        )
    });
    // Compactions as events, at the request that needed the room.
    let events = t
        .compactions
        .iter()
        .map(|c| {
            let when = t
                .turns
                .iter()
                .find(|r| r.turn == c.turn)
                .map_or(b.start, |r| at(b.start, r.started_ms));
            Event::new(
                "runner.compaction",
                when,
                vec![
                    kv("runner.turn", i64::from(c.turn)),
                    kv("runner.compaction.method", format!("{:?}", c.method)),
                    kv("runner.compaction.trigger", format!("{:?}", c.trigger)),
                    kv("runner.compaction.tokens_before", int(c.tokens_before)),
                    kv("runner.compaction.tokens_after", int(c.tokens_after)),
                ],
                0,
            )
        })
        .chain(switches)
        .collect();
    let status = match t.outcome.status {
        runner_output::OutcomeStatus::Passed => Status::Ok,
        _ => Status::error(redacted(&t.outcome.reason)),
    };
    b.span(
        b.place.task_span,
        b.place.run_span,
        SpanKind::Internal,
        format!("invoke_agent {}", t.task),
        (b.start, at(b.start, t.duration_ms)),
        a,
        events,
        status,
    )
}

/// The conventions' message list holding one text part.
fn text_messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": redacted(text)}]}])
        .to_string()
}

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

fn chat(
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

fn tool(b: &Builder, call: &ToolCallRecord, opts: SpanOptions) -> SpanData {
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

fn check_of(b: &Builder, c: &CheckRecord) -> SpanData {
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
mod tests {
    use super::*;

    fn transcript() -> Transcript {
        serde_json::from_value(serde_json::json!({
            "version": 1, "task": "t", "task_file": "t.yaml", "model": "anthropic:claude-x",
            "workspace": "/w", "mode": "edit", "started_at": "2026-11-24T10:00:00Z",
            "duration_ms": 5000, "policies": ["p.yaml"], "system_prompt": "be brief",
            "messages": [{"role": "user", "content": "the secret plan"}],
            "turns": [
                {"attempt": 1, "turn": 1, "text": "thinking aloud", "tool_calls": 1,
                 "usage": {"input_tokens": 10, "output_tokens": 2},
                 "raw": {"id": "msg_1", "model": "claude-x-2026", "stop_reason": "tool_use"},
                 "started_ms": 100, "duration_ms": 900,
                 "retries": [{"attempt": 1, "error": "HTTP 529", "at_ms": 50, "wait_ms": 500}]},
                {"attempt": 1, "turn": 2, "text": "done", "tool_calls": 0,
                 "usage": {"input_tokens": 20, "output_tokens": 3}, "raw": {},
                 "started_ms": 2000, "duration_ms": 1000}
            ],
            "tool_calls": [{
                "id": "c1", "tool": "bash", "turn": 1, "batch": 0, "arguments": {"command": "make"},
                "decision": null, "status": "error", "error_kind": "execution",
                "content": "the build output", "display": "bash failed: execution",
                "metadata": {"exit_code": 2}, "started_ms": 1000, "duration_ms": 500,
                "hooks": [{"kind": "post_tool", "run": "notify", "source": "t.yaml",
                           "exit_code": 0, "timed_out": false, "duration_ms": 5,
                           "stdout": "", "stderr": "", "effect": "added"}]
            }],
            "checks": [{"attempt": 1, "name": "tests", "command": "make test", "passed": false,
                        "exit_code": 1, "timed_out": false, "output": "", "duration_ms": 700,
                        "started_ms": 4000}],
            "compactions": [{"turn": 2, "method": "stubbed_results", "trigger": "threshold",
                             "tokens_before": 100, "tokens_after": 50,
                             "messages_before": 9, "messages_after": 5}],
            "usage": {"input_tokens": 30, "output_tokens": 5},
            "counts": {"attempts": 1, "turns": 2, "tool_calls": 1, "denied_calls": 0, "failed_calls": 1},
            "changes": [], "final_answer": "done",
            "outcome": {"status": "failed", "reason": "check `tests` failed"}
        }))
        .unwrap()
    }

    fn place() -> TaskPlace {
        TaskPlace {
            trace_id: TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            task_span: SpanId::from_hex("00f067aa0ba902b7").unwrap(),
            run_span: SpanId::from_hex("1111111111111111").unwrap(),
            sampled: true,
            trace_state: TraceState::default(),
        }
    }

    fn attr<'a>(s: &'a SpanData, key: &str) -> Option<&'a Value> {
        s.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    /// A child's run under its `task` call becomes an `invoke_agent`
    /// span beneath that call's span, with its own spans beneath it; ids
    /// never collide with the parent's, though the child's call ids do.
    #[test]
    fn a_child_agent_is_a_subtree_beneath_its_call() {
        let mut t = transcript();
        let child = serde_json::json!({
            "id": "worker#1", "profile": "worker", "depth": 1, "model": "scripted",
            "isolation": "shared", "policies": ["p.yaml"],
            "reserved": {"turns": 5, "cost_usd": null, "timeout_ms": 1000},
            "started_ms": 1100, "duration_ms": 300, "system_prompt": "", "messages": [],
            "turns": [{"attempt": 0, "turn": 1, "text": "", "tool_calls": 1,
                       "usage": {"input_tokens": 1, "output_tokens": 1}, "raw": {},
                       "started_ms": 1110, "duration_ms": 10}],
            "tool_calls": [{
                "id": "c1", "tool": "bash", "turn": 1, "batch": 0, "arguments": {},
                "decision": null, "status": "ok", "content": "", "display": "",
                "started_ms": 1120, "duration_ms": 50
            }],
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "counts": {"attempts": 1, "turns": 1, "tool_calls": 1, "denied_calls": 0, "failed_calls": 0},
            "outcome": {"status": "passed", "reason": "the child finished"}, "final_answer": "ok"
        });
        let mut call = t.tool_calls[0].clone();
        call.tool = "task".into();
        call.id = "c2".into();
        call.metadata = serde_json::json!({"agent": child});
        t.tool_calls.push(call);
        let scope = InstrumentationScope::builder("runner").build();
        let spans = task_spans(&t, &place(), &scope, SpanOptions { content: false });
        let by = |name: &str| {
            spans
                .iter()
                .filter(move |s| s.name == name)
                .collect::<Vec<_>>()
        };
        let task_call = by("execute_tool task")[0];
        let agent = by("invoke_agent worker")[0];
        assert_eq!(agent.parent_span_id, task_call.span_context.span_id());
        assert_eq!(
            attr(agent, "gen_ai.agent.id"),
            Some(&Value::from("worker#1"))
        );
        let bash: Vec<_> = by("execute_tool bash");
        assert_eq!(bash.len(), 2);
        let child_bash = bash
            .iter()
            .find(|s| s.parent_span_id == agent.span_context.span_id())
            .expect("the child's call beneath it");
        assert!(
            by("chat scripted")
                .iter()
                .any(|s| s.parent_span_id == agent.span_context.span_id())
        );
        let mut ids: Vec<SpanId> = spans.iter().map(|s| s.span_context.span_id()).collect();
        ids.sort_by_key(|i| i.to_bytes());
        ids.dedup();
        assert_eq!(ids.len(), spans.len(), "span ids collide");
        assert_ne!(
            child_bash.span_context.span_id(),
            bash[0].span_context.span_id()
        );
    }

    #[test]
    fn a_transcript_becomes_its_span_tree() {
        let t = transcript();
        let scope = InstrumentationScope::builder("runner").build();
        let spans = task_spans(&t, &place(), &scope, SpanOptions { content: false });
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "invoke_agent t",
                "chat claude-x",
                "chat claude-x",
                "execute_tool bash",
                "check tests"
            ]
        );
        let (agent, chat, tool, check) = (&spans[0], &spans[1], &spans[3], &spans[4]);
        assert_eq!(agent.parent_span_id, place().run_span);
        assert!(
            spans[1..]
                .iter()
                .all(|s| s.parent_span_id == place().task_span)
        );
        // Times: from the transcript's start and each record's offsets.
        let start = task_start(&t);
        assert_eq!(agent.end_time, start + Duration::from_millis(5000));
        assert_eq!(chat.start_time, start + Duration::from_millis(100));
        assert_eq!(chat.end_time, start + Duration::from_millis(1000));
        // What the vendor said of itself, and the retry as an event.
        assert_eq!(
            attr(chat, "gen_ai.response.model"),
            Some(&Value::from("claude-x-2026"))
        );
        assert_eq!(
            attr(chat, "gen_ai.provider.name"),
            Some(&Value::from("anthropic"))
        );
        assert_eq!(chat.events.events[0].name, "runner.retry");
        assert_eq!(
            chat.events.events[0].timestamp,
            start + Duration::from_millis(150)
        );
        // The compaction at turn 2's request; the hook at the call's end.
        assert_eq!(agent.events.events[0].name, "runner.compaction");
        assert_eq!(
            agent.events.events[0].timestamp,
            start + Duration::from_millis(2000)
        );
        assert_eq!(
            tool.events.events[0].timestamp,
            start + Duration::from_millis(1500)
        );
        assert!(matches!(tool.status, Status::Error { .. }));
        assert_eq!(
            attr(tool, "runner.policy.decision"),
            Some(&Value::from("not_asked"))
        );
        assert_eq!(attr(tool, "runner.tool.exit_code"), Some(&Value::I64(2)));
        assert!(matches!(check.status, Status::Error { .. }));
        assert!(matches!(agent.status, Status::Error { .. }));
        // Content stays out unless asked for.
        let texts = format!("{spans:?}");
        for t in [
            "the secret plan",
            "thinking aloud",
            "the build output",
            "be brief",
        ] {
            assert!(!texts.contains(t), "{t}");
        }
        let with = task_spans(&t, &place(), &scope, SpanOptions { content: true });
        let texts = format!("{with:?}");
        for t in [
            "the secret plan",
            "thinking aloud",
            "the build output",
            "be brief",
        ] {
            assert!(texts.contains(t), "{t}");
        }
    }
}
