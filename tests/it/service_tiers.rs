//! `model_options.service_tier` (issue 46, item 2): it reaches the
//! vendors that define it as their APIs do, the turn is priced at the
//! tier that served it, and a tier a vendor does not define is an error
//! at load, with its place.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, Vendor, turn};
use crate::common::{read_json, stderr, validate_accepts, validate_refuses, write};

fn task(dir: &Path, model: &str, options: &str) {
    write(dir, "ws/a.txt", "alpha\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Say hi.\nmodel: {model}\nworkspace: ws\ntools: [ls]\nmodel_options: {{{options}}}\n"
        ),
    );
}

/// A whole Chat Completions answer served by `tier`: 1M tokens in, 100k
/// out, so its cost reads as the price.
fn served_by(tier: &str) -> Reply {
    Reply::json(
        200,
        &json!({"id": "c1", "object": "chat.completion", "model": "gpt-5",
            "service_tier": tier,
            "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 100_000}}),
    )
}

fn run(dir: &Path, v: Vendor, server: &FakeServer) -> Value {
    let out = wire::runner_for(v, &server.url(), "sk-test-key-tiers")
        .current_dir(dir)
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    read_json(dir.join("out/t/transcript.json"))
}

/// OpenAI gets the tier asked for; the turn is priced at the tier the
/// answer names (flex at half of gpt-5's $1.25/$10, priority at
/// $2.50/$20), and records it.
#[test]
fn openai_gets_the_tier_and_the_turn_is_priced_at_the_one_that_served() {
    for (asked, served, cost) in [
        ("flex", "flex", 0.5 * (1.25 + 1.0)),
        ("priority", "priority", 2.50 + 2.0),
        // Priority asked, standard served (OpenAI's ramp limit): standard.
        ("priority", "default", 1.25 + 1.0),
    ] {
        let dir = tempfile::tempdir().unwrap();
        task(
            dir.path(),
            "openai:gpt-5",
            &format!("stream: false, service_tier: {asked}"),
        );
        let server = FakeServer::queue(vec![served_by(served)]);
        let t = run(dir.path(), Vendor::OpenAi, &server);
        assert_eq!(server.requests()[0].body["service_tier"], asked);
        let turn = &t["turns"][0];
        assert_eq!(turn["service_tier"], served, "{turn}");
        let got = turn["usage"]["cost_usd"].as_f64().unwrap();
        assert!(
            (got - cost).abs() < 1e-9,
            "{asked}/{served}: {got} != {cost}"
        );
    }
}

/// Anthropic gets its own tiers; a task without one sends none.
#[test]
fn anthropic_gets_its_tier_and_a_task_without_one_sends_none() {
    for (options, sent) in [
        ("service_tier: standard_only", json!("standard_only")),
        ("", Value::Null),
    ] {
        let dir = tempfile::tempdir().unwrap();
        task(dir.path(), Vendor::Anthropic.model(), options);
        let server = FakeServer::queue(vec![wire::reply(Vendor::Anthropic, &turn("hi", vec![]))]);
        run(dir.path(), Vendor::Anthropic, &server);
        assert_eq!(server.requests()[0].body["service_tier"], sent, "{options}");
    }
}

/// A tier the task's model's vendor does not define, or none at all, is
/// refused with its place; a priority price `max_cost` needs must be known.
#[test]
fn a_tier_the_vendor_does_not_define_is_an_error_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    for (model, options, says) in [
        (
            "openai:gpt-5",
            "service_tier: turbo",
            "`turbo` is none of OpenAI's (auto, default, flex, priority) or Anthropic's (auto, standard_only)",
        ),
        (
            "gemini:gemini-2.5-pro",
            "service_tier: flex",
            "`flex` is not a tier gemini defines (it has: none)",
        ),
        (
            "openai:gpt-5",
            "service_tier: standard_only",
            "`standard_only` is not a tier openai defines (it has: auto, default, flex, priority)",
        ),
        (
            "anthropic:claude-sonnet-4-5",
            "service_tier: priority",
            "it has: auto, standard_only",
        ),
    ] {
        task(dir.path(), model, options);
        let err = validate_refuses(dir.path(), "task.yaml");
        assert!(err.contains(says), "{model} {options}: {err}");
        assert!(err.contains("task.yaml:6:"), "{model} {options}: {err}");
    }
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: p\nmodel: openai:gpt-5-nano\nmax_cost: 1\nmodel_options: {service_tier: priority}\n",
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains("the priority price of `openai:gpt-5-nano` is not known"),
        "{err}"
    );
    task(dir.path(), "openai:gpt-5", "service_tier: flex");
    validate_accepts(dir.path(), "task.yaml");
}
