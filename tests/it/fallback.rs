//! Fallback chains (issue 30, item 2): a task whose model fails for good
//! goes on with the next model of its chain, across vendors, with the
//! conversation carried over in the next vendor's wire format; each switch
//! is an event and a transcript record, and each turn is priced at the
//! model that answered.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{events, read_json, runner, stderr, write};

/// `runner` pointed at one fake per vendor.
fn runner_for_all(servers: &[(Vendor, &FakeServer)]) -> Command {
    let mut cmd = runner();
    for v in ALL {
        cmd.env_remove(v.key_var()).env_remove(v.url_var());
    }
    cmd.env("CI", "true");
    for (v, s) in servers {
        cmd.env(v.key_var(), "sk-test-fallback-key")
            .env(v.url_var(), v.base_url(&s.url()));
    }
    cmd
}

fn task(dir: &Path, model: &str) {
    write(dir, "ws/a.txt", "alpha\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: List the files.\n{model}\nworkspace: ws\ntools: [ls]\nmodel_options: {{max_retries: 1}}\n"
        ),
    );
}

fn error(status: u16, body: Value) -> Reply {
    Reply::json(status, &body)
}

#[test]
fn a_three_model_chain_finishes_the_task_its_first_two_models_fail() {
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "model: [anthropic:claude-sonnet-4-5, openai:gpt-4.1, gemini:gemini-2.5-pro]",
    );
    // Claude answers the first turn, then its quota is spent; OpenAI is
    // overloaded past its retry; Gemini finishes.
    let mut first = turn("", vec![call("c1", "ls", json!({}))]);
    first.input_tokens = 1000;
    first.output_tokens = 100;
    let anthropic = FakeServer::queue(vec![
        wire::reply(Vendor::Anthropic, &first),
        error(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "Your credit balance is too low to access the Anthropic API."}}),
        ),
    ]);
    let overloaded = || {
        error(
            529,
            json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
        )
    };
    let openai = FakeServer::queue(vec![overloaded(), overloaded()]);
    let mut last = turn("The workspace holds a.txt.", vec![]);
    last.input_tokens = 2000;
    last.output_tokens = 50;
    let gemini = FakeServer::queue(vec![wire::reply(Vendor::Gemini, &last)]);
    let out = runner_for_all(&[
        (Vendor::Anthropic, &anthropic),
        (Vendor::OpenAi, &openai),
        (Vendor::Gemini, &gemini),
    ])
    .current_dir(dir.path())
    .args(["run", "--format", "json", "--out", "out", "task.yaml"])
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(anthropic.requests().len(), 2);
    assert_eq!(openai.requests().len(), 2);
    assert_eq!(gemini.requests().len(), 1);
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(t["outcome"]["status"], "passed");
    assert_eq!(t["final_answer"], "The workspace holds a.txt.");
    // The switches, in order, with the class that caused each.
    assert_eq!(
        t["model_switches"],
        json!([
            {"turn": 2, "from": "anthropic:claude-sonnet-4-5", "to": "openai:gpt-4.1", "class": "quota"},
            {"turn": 2, "from": "openai:gpt-4.1", "to": "gemini:gemini-2.5-pro", "class": "overloaded"},
        ])
    );
    let switched: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["event"] == "model_switched")
        .collect();
    assert_eq!(switched.len(), 2);
    assert_eq!(switched[1]["to"], "gemini:gemini-2.5-pro");
    // The conversation went on in Gemini's wire format: Claude's call and
    // its result as a functionCall and a functionResponse.
    let body = &gemini.requests()[0].body;
    let results = wire::tool_results(Vendor::Gemini, body);
    assert_eq!(results.len(), 1, "{body}");
    assert!(results[0].1.contains("a.txt"), "{results:?}");
    assert!(body.to_string().contains("functionCall"), "{body}");
    // Each turn priced at the model that answered it.
    let turns = t["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert!(turns[0].get("model").unwrap_or(&Value::Null) == "anthropic:claude-sonnet-4-5");
    assert_eq!(turns[1]["model"], "gemini:gemini-2.5-pro");
    let claude = (1000.0 * 3.00 + 100.0 * 15.00) / 1e6;
    let gemini_cost = (2000.0 * 1.25 + 50.0 * 10.00) / 1e6;
    let close = |a: &Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-9;
    assert!(
        close(&turns[0]["usage"]["cost_usd"], claude),
        "{}",
        turns[0]["usage"]
    );
    assert!(
        close(&turns[1]["usage"]["cost_usd"], gemini_cost),
        "{}",
        turns[1]["usage"]
    );
    assert!(
        close(&t["usage"]["cost_usd"], claude + gemini_cost),
        "{}",
        t["usage"]
    );
    // report.html shows the switches and the retries.
    let report = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(
        report.contains("went on with <code>gemini:gemini-2.5-pro</code>"),
        "report.html names no switch"
    );
    assert!(
        report.contains("retried request(s)"),
        "report.html names no retry"
    );
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(
        summary.contains("went on with `gemini:gemini-2.5-pro`"),
        "{summary}"
    );
    // The progress line names the switch.
    assert!(
        stderr(&out).contains("going on with gemini:gemini-2.5-pro"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_chain_that_runs_out_fails_with_the_last_class() {
    // The last model fails too: the task errors with its class.
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "model: openai:gpt-4.1\nfallback: [anthropic:claude-sonnet-4-5]",
    );
    let openai = FakeServer::queue(vec![error(401, json!({"error": {"message": "bad key"}}))]);
    let limited = || {
        error(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        )
        .header("retry-after", "0")
    };
    let anthropic = FakeServer::queue(vec![limited(), limited()]);
    let out = runner_for_all(&[(Vendor::OpenAi, &openai), (Vendor::Anthropic, &anthropic)])
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(75),
        "rate-limited everywhere: resumable {}",
        stderr(&out)
    );
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(
        t["outcome"]["error_class"], "rate_limited",
        "{}",
        t["outcome"]
    );
    assert_eq!(t["model_switches"][0]["class"], "auth");
    assert_eq!(openai.requests().len(), 1, "auth is never sent again");
    // Retried once (max_retries: 1), then no model is left.
    assert_eq!(anthropic.requests().len(), 2);
}

#[test]
fn the_command_line_gives_a_chain_and_every_model_of_it_needs_a_key() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "model: scripted\nscript: []");
    let gemini = FakeServer::queue(vec![wire::reply(Vendor::Gemini, &turn("Done.", vec![]))]);
    let down = || error(503, json!({"error": {"message": "down"}}));
    let openai = FakeServer::queue(vec![down(), down()]);
    let out = runner_for_all(&[(Vendor::OpenAi, &openai), (Vendor::Gemini, &gemini)])
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml", "--model"])
        .arg("openai:gpt-4.1,gemini:gemini-2.5-flash")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(openai.requests().len(), 2, "tried, retried once, left");
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(t["model_switches"][0]["to"], "gemini:gemini-2.5-flash");
    assert_eq!(t["model_switches"][0]["class"], "unavailable");
    // A fallback without its key is an input error before anything runs.
    let out = runner_for_all(&[(Vendor::OpenAi, &openai)])
        .current_dir(dir.path())
        .args(["run", "--out", "out2", "task.yaml", "--model"])
        .arg("openai:gpt-4.1,anthropic:claude-sonnet-4-5")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ANTHROPIC_API_KEY"),
        "{}",
        stderr(&out)
    );
    // `scripted` cannot be part of a chain.
    write(
        dir.path(),
        "bad.yaml",
        "prompt: x\nworkspace: ws\nmodel: [scripted, openai:gpt-4.1]\nscript: []\n",
    );
    let err = crate::common::validate_refuses(dir.path(), "bad.yaml");
    assert!(
        err.contains("bad.yaml:3") && err.contains("fallback chain"),
        "{err}"
    );
}

#[test]
fn room_is_made_for_the_next_models_window_before_the_turn_goes_to_it() {
    // gpt-4.1 (a 1,047,576-token window) calls a command printing 20,000
    // characters three times and reports 90,000 input tokens for the third
    // request, then is overloaded. gpt-4o-mini's window (128,000) would
    // not hold the next request at that rate (80% of it: 102,400 tokens),
    // so old results are stubbed for it before the turn goes there.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "alpha\n");
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: Print a lot.\nmodel: [openai:gpt-4.1, openai:gpt-4o-mini]\nworkspace: ws\ntools: [bash]\npolicy:\n  default: allow\nmodel_options: {max_retries: 0}\n",
    );
    let server = FakeServer::start(|r, _| {
        let model = r.body["model"].as_str().unwrap_or_default().to_string();
        let results = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        match (model.as_str(), results) {
            ("gpt-4.1", 0..=2) => {
                let command = "python3 -c \"print('x' * 20000)\"";
                let mut t = turn(
                    "",
                    vec![call(
                        &format!("c{results}"),
                        "bash",
                        json!({"command": command}),
                    )],
                );
                t.input_tokens = if results == 2 { 90_000 } else { 1_000 };
                wire::reply(Vendor::OpenAi, &t)
            }
            ("gpt-4.1", _) => error(
                529,
                json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
            _ => wire::reply(Vendor::OpenAi, &turn("Done.", vec![])),
        }
    });
    let out = runner_for_all(&[(Vendor::OpenAi, &server)])
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert_eq!(t["model_switches"][0]["turn"], 4);
    assert_eq!(t["model_switches"][0]["to"], "openai:gpt-4o-mini");
    // No compaction for gpt-4.1's window; one for gpt-4o-mini's.
    let compactions = t["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1, "{}", t["compactions"]);
    assert_eq!(compactions[0]["turn"], 4);
    assert!(
        compactions[0]["tokens_before"].as_u64().unwrap() > 102_400,
        "{}",
        compactions[0]
    );
    assert!(
        compactions[0]["tokens_after"].as_u64().unwrap() <= 102_400,
        "{}",
        compactions[0]
    );
    // The request gpt-4o-mini got is the compacted one.
    let last = server.requests().last().unwrap().body.to_string();
    assert!(last.len() < 50_000, "{} characters", last.len());
}
