//! The task's own span: `invoke_agent {task}`, with the run's facts (model,
//! tokens, cost, outcome) and its events.

use opentelemetry::trace::{Event, SpanKind, Status};
use opentelemetry_sdk::trace::SpanData;
use runner_output::{Message, Transcript};

use super::build::{
    Builder, SpanOptions, at, int, kv, provider_and_model, redacted, strings, text_messages,
};

/// The task's `invoke_agent {task}` span, the parent of all its others.
pub(super) fn agent_span(b: &Builder, t: &Transcript, opts: SpanOptions) -> SpanData {
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
