//! The trace context of what runs now: the task, and the call or check
//! whose commands are starting. Commands, hooks and MCP servers get it as
//! `TRACEPARENT` (and the CI's `TRACESTATE`), so their own spans join the
//! run's trace under the span that started them.
//!
//! A task-local, set only when the run exports telemetry: without it the
//! lookups in [`crate::process`] find nothing and cost a thread-local read.

use std::future::Future;
use std::sync::Arc;

use opentelemetry::trace::{SpanId, TraceId};

use super::ids::{TraceParent, check_span, tool_span};

/// A task's place in the trace, and the span now current.
#[derive(Debug, Clone)]
struct Scope {
    trace_id: TraceId,
    task_span: SpanId,
    span: SpanId,
    sampled: bool,
    trace_state: Option<Arc<str>>,
}

tokio::task_local! {
    static CURRENT: Scope;
}

/// What a task's scope is made from.
#[derive(Debug, Clone)]
pub struct TaskContext {
    pub trace_id: TraceId,
    pub task_span: SpanId,
    pub sampled: bool,
    pub trace_state: Option<Arc<str>>,
}

/// Runs a task's work with `ctx` current (`None`: no telemetry, no scope).
pub async fn in_task<F: Future>(ctx: Option<TaskContext>, f: F) -> F::Output {
    match ctx {
        Some(c) => {
            let scope = Scope {
                trace_id: c.trace_id,
                task_span: c.task_span,
                span: c.task_span,
                sampled: c.sampled,
                trace_state: c.trace_state,
            };
            CURRENT.scope(scope, f).await
        }
        None => f.await,
    }
}

/// Runs `f` under a child span of the current task (when there is one).
async fn in_child<F: Future>(span: impl FnOnce(SpanId) -> SpanId, f: F) -> F::Output {
    match CURRENT.try_with(Scope::clone) {
        Ok(mut s) => {
            s.span = span(s.task_span);
            CURRENT.scope(s, f).await
        }
        Err(_) => f.await,
    }
}

/// Runs a tool call's work (its hooks and commands) under its
/// `execute_tool` span.
pub async fn in_tool<F: Future>(turn: u32, id: &str, f: F) -> F::Output {
    in_child(|task| tool_span(task, turn, id), f).await
}

/// Runs a child agent (issue 32) as a task of its own beneath the current
/// call: its calls' spans derive from its `invoke_agent` span, so they
/// cannot collide with its parent's.
pub async fn in_agent<F: Future>(id: &str, f: F) -> F::Output {
    match CURRENT.try_with(Scope::clone) {
        Ok(mut s) => {
            s.task_span = super::ids::agent_span(s.span, id);
            s.span = s.task_span;
            CURRENT.scope(s, f).await
        }
        Err(_) => f.await,
    }
}

/// Runs a check under its span.
pub async fn in_check<F: Future>(attempt: u32, name: &str, f: F) -> F::Output {
    in_child(|task| check_span(task, attempt, name), f).await
}

/// The variables that carry the current span to a process:
/// `TRACEPARENT`, and `TRACESTATE` when the run was given one. Empty
/// outside a traced task.
pub fn propagation_env() -> Vec<(&'static str, String)> {
    CURRENT
        .try_with(|s| {
            let mut v = vec![(
                "TRACEPARENT",
                TraceParent::format(s.trace_id, s.span, s.sampled),
            )];
            if let Some(ts) = &s.trace_state {
                v.push(("TRACESTATE", ts.to_string()));
            }
            v
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn scopes_nest_as_the_work_does() {
        assert!(propagation_env().is_empty());
        let trace_id = TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
        let task_span = SpanId::from_hex("00f067aa0ba902b7").unwrap();
        let ctx = TaskContext {
            trace_id,
            task_span,
            sampled: true,
            trace_state: Some("vendor=x".into()),
        };
        let (task, tool, check) = in_task(Some(ctx), async {
            let task = propagation_env();
            let tool = in_tool(3, "call_1", async { propagation_env() }).await;
            let check = in_check(1, "tests", async { propagation_env() }).await;
            (task, tool, check)
        })
        .await;
        let tp = |span: SpanId| format!("00-{trace_id}-{span}-01");
        assert_eq!(task[0], ("TRACEPARENT", tp(task_span)));
        assert_eq!(task[1], ("TRACESTATE", "vendor=x".to_string()));
        assert_eq!(tool[0].1, tp(tool_span(task_span, 3, "call_1")));
        assert_eq!(check[0].1, tp(check_span(task_span, 1, "tests")));
        assert!(
            in_tool(1, "x", async { propagation_env() })
                .await
                .is_empty()
        );
    }
}
