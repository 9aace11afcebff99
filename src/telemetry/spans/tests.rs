use super::*;
use opentelemetry::Value;
use opentelemetry::trace::{TraceId, TraceState};
use std::time::Duration;

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
