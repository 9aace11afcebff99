//! Long runs: a conversation kept inside a small context window, requests
//! that keep a stable prefix for the vendors' prompt caches, cost in money
//! and budgets. The fakes of OpenAI, Anthropic and Gemini here enforce a
//! 16,000-token window with each vendor's own "too long" error, reject a
//! tool result whose call is not in the message right before it, and
//! report as cached the input that repeats the previous request's prefix.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{events, read_json, stderr, validate_refuses, write};
use serde_json::{Value, json};

const WINDOW: u64 = 16_000;
const READS: usize = 300;
const PRICING: &str = "{input: 3.0, cached_input: 0.3, output: 15.0, cache_write: 3.75}";

/// The fake's tokenizer: four characters of the request body a token.
fn tokens_of(chars: usize) -> u64 {
    (chars / 4) as u64
}

fn too_long(v: Vendor, n: u64) -> Reply {
    let body = match v {
        Vendor::OpenAi => json!({"error": {
            "message": format!("This model's maximum context length is {WINDOW} tokens. However, your messages resulted in {n} tokens."),
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}),
        Vendor::Anthropic => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": format!("prompt is too long: {n} tokens > {WINDOW} maximum")}}),
        Vendor::Gemini => json!({"error": {"code": 400,
            "message": format!("The input token count ({n}) exceeds the maximum number of tokens allowed ({WINDOW})."),
            "status": "INVALID_ARGUMENT"}}),
    };
    Reply::json(400, &body)
}

/// Removes Anthropic's cache breakpoints: they mark the prefix, they are
/// not part of it.
fn strip_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "cache_control")
                .map(|(k, v)| (k.clone(), strip_cache_control(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_cache_control).collect()),
        other => other.clone(),
    }
}

/// What every request carries first (system prompt, tools), and the
/// conversation after it, as the vendor reads them.
fn split(v: Vendor, body: &Value) -> (Value, Vec<Value>) {
    let body = strip_cache_control(body);
    match v {
        Vendor::OpenAi => {
            let m = body["messages"].as_array().cloned().unwrap_or_default();
            (json!([m.first(), body["tools"]]), m[1..].to_vec())
        }
        Vendor::Anthropic => (
            json!([body["system"], body["tools"]]),
            body["messages"].as_array().cloned().unwrap_or_default(),
        ),
        Vendor::Gemini => (
            json!([body["systemInstruction"], body["tools"]]),
            body["contents"].as_array().cloned().unwrap_or_default(),
        ),
    }
}

/// The tool results of a message, and the calls of one (by id; Gemini by
/// name).
fn results_and_calls(v: Vendor, m: &Value) -> (Vec<String>, Vec<String>) {
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    match v {
        Vendor::OpenAi => {
            let results = (m["role"] == "tool").then(|| s(&m["tool_call_id"]));
            let calls = m["tool_calls"].as_array().into_iter().flatten();
            (
                results.into_iter().collect(),
                calls.map(|c| s(&c["id"])).collect(),
            )
        }
        Vendor::Anthropic => {
            let blocks: Vec<&Value> = m["content"].as_array().into_iter().flatten().collect();
            (
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| s(&b["tool_use_id"]))
                    .collect(),
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_use")
                    .map(|b| s(&b["id"]))
                    .collect(),
            )
        }
        Vendor::Gemini => {
            let parts: Vec<&Value> = m["parts"].as_array().into_iter().flatten().collect();
            (
                parts
                    .iter()
                    .filter_map(|p| p.get("functionResponse"))
                    .map(|r| s(&r["name"]))
                    .collect(),
                parts
                    .iter()
                    .filter_map(|p| p.get("functionCall"))
                    .map(|c| s(&c["name"]))
                    .collect(),
            )
        }
    }
}

/// Why the vendor would reject the conversation's tool results, if it
/// would: each result's call must be in the model message right before
/// (OpenAI: before the run of tool messages it belongs to).
fn pairing_error(v: Vendor, conv: &[Value]) -> Option<String> {
    for (i, m) in conv.iter().enumerate() {
        let (results, _) = results_and_calls(v, m);
        if results.is_empty() {
            continue;
        }
        let mut j = i;
        while v == Vendor::OpenAi && j > 0 && conv[j - 1]["role"] == "tool" {
            j -= 1;
        }
        let calls = j
            .checked_sub(1)
            .map(|k| results_and_calls(v, &conv[k]).1)
            .unwrap_or_default();
        if let Some(r) = results.iter().find(|r| !calls.contains(r)) {
            return Some(format!(
                "message {i}: tool result `{r}` has no call in the message before it"
            ));
        }
    }
    None
}

#[derive(Default)]
struct State {
    reads: usize,
    /// The last turn request, to report its repeated prefix as cached.
    prev: Option<(Value, Vec<Value>)>,
    /// Every turn request's (prefix, conversation), in order.
    turns: Vec<(Value, Vec<Value>)>,
    /// (input, cached, written to the cache, output) as reported, per turn
    /// request.
    reported: Vec<(u64, u64, u64, u64)>,
    summaries: usize,
    too_long: usize,
    unpaired: Vec<String>,
    anthropic_breakpoints: Vec<usize>,
}

/// A fake that has the model read `big.txt` `reads` times, then finish.
fn fake(v: Vendor, reads: usize) -> (FakeServer, Arc<Mutex<State>>) {
    let state = Arc::new(Mutex::new(State::default()));
    let st = state.clone();
    let server = FakeServer::start(move |req, _| {
        let mut st = st.lock().unwrap();
        let n = tokens_of(serde_json::to_string(&req.body).unwrap().len());
        if n > WINDOW {
            st.too_long += 1;
            return too_long(v, n);
        }
        let (prefix, conv) = split(v, &req.body);
        if let Some(e) = pairing_error(v, &conv) {
            st.unpaired.push(e.clone());
            return Reply::json(400, &json!({"error": {"message": e}}));
        }
        if req.body.get("tools").is_none() {
            st.summaries += 1;
            let mut t = turn(
                "Read big.txt many times; it holds the same 40 lines.",
                vec![],
            );
            t.input_tokens = n;
            return wire::reply(v, &t);
        }
        if v == Vendor::Anthropic {
            let marks = serde_json::to_string(&req.body)
                .unwrap()
                .matches("cache_control")
                .count();
            st.anthropic_breakpoints.push(marks);
        }
        let mut t = if st.reads < reads {
            let k = st.reads;
            turn(
                "",
                vec![call(
                    &format!("call_{k}"),
                    "read_file",
                    json!({"file_path": "big.txt"}),
                )],
            )
        } else {
            turn("All read.", vec![])
        };
        // The prefix repeated from the last request is "cached".
        let cached_chars = match &st.prev {
            Some((p, c)) if *p == prefix => {
                let same = c.iter().zip(&conv).take_while(|(a, b)| a == b).count();
                serde_json::to_string(&prefix).unwrap().len()
                    + conv[..same]
                        .iter()
                        .map(|m| serde_json::to_string(m).unwrap().len())
                        .sum::<usize>()
            }
            _ => 0,
        };
        t.input_tokens = n;
        t.cached_tokens = tokens_of(cached_chars).min(n);
        // Anthropic writes what it did not read up to the last breakpoint,
        // which is on the latest message: all of it.
        if v == Vendor::Anthropic {
            t.cache_write_tokens = n - t.cached_tokens;
        }
        t.output_tokens = 25;
        st.reported.push((
            t.input_tokens,
            t.cached_tokens,
            t.cache_write_tokens,
            t.output_tokens,
        ));
        st.reads += 1;
        st.prev = Some((prefix.clone(), conv.clone()));
        st.turns.push((prefix, conv));
        wire::reply(v, &t)
    });
    (server, state)
}

/// A 600-token file (40 lines of 60 characters).
fn setup(dir: &Path, v: Vendor, extra: &str) {
    let line = "0123456789 the quick brown fox jumps over the lazy dog 01234\n";
    write(dir, "ws/big.txt", &line.repeat(40));
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Read big.txt again and again.\nmodel: {}\nworkspace: ws\ntools: [read_file]\nmax_turns: 400\nmodel_options: {{context_window: {WINDOW}, pricing: {PRICING}}}\n{extra}",
            v.model()
        ),
    )
    .parent()
    .unwrap();
}

fn run(dir: &Path, v: Vendor, server: &FakeServer) -> (std::process::Output, Value) {
    run_with(dir, v, server, &[])
}

fn run_with(
    dir: &Path,
    v: Vendor,
    server: &FakeServer,
    extra: &[&str],
) -> (std::process::Output, Value) {
    let out = wire::runner_for(v, &server.url(), "sk-test-long-runs")
        .current_dir(dir)
        .args(["run", "--out", "out", "task.yaml"])
        .args(extra)
        .output()
        .unwrap();
    (out, read_json(dir.join("out/t/transcript.json")))
}

/// The task passed and the fake saw no unpaired tool result.
fn assert_passed(v: Vendor, out: &std::process::Output, t: &Value, st: &State) {
    assert_eq!(
        t["outcome"]["status"],
        "passed",
        "{v:?}: {}\n{}",
        t["outcome"],
        stderr(out)
    );
    assert!(out.status.success());
    assert!(st.unpaired.is_empty(), "{v:?}: {:?}", st.unpaired);
}

fn price(input: u64, cached: u64, written: u64, output: u64) -> f64 {
    ((input - cached - written) as f64 * 3.0
        + cached as f64 * 0.3
        + written as f64 * 3.75
        + output as f64 * 15.0)
        / 1e6
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn three_hundred_reads_fit_a_16k_window_with_a_stable_prefix_and_a_cost() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let (server, state) = fake(v, READS);
        let (out, t) = run(dir.path(), v, &server);
        let st = state.lock().unwrap();
        assert_passed(v, &out, &t, &st);
        assert_eq!(st.too_long, 0, "{v:?}: requests over the window");
        assert_eq!(st.reads, READS + 1, "{v:?}");
        // The transcript keeps every original message; the compactions
        // are recorded with their sizes.
        let messages = t["messages"].as_array().unwrap();
        assert!(messages.len() > 2 * READS, "{v:?}: {}", messages.len());
        let compactions = t["compactions"].as_array().unwrap();
        assert!(
            compactions.iter().any(|c| c["method"] == "summarized")
                && compactions.iter().any(|c| c["method"] == "stubbed_results"),
            "{v:?}: {compactions:?}"
        );
        for c in compactions {
            assert!(c["tokens_after"].as_u64() < c["tokens_before"].as_u64());
        }
        assert!(st.summaries >= 1);

        // Each request extends the one before byte for byte, except at a
        // compaction's turn.
        let compacted: Vec<u64> = compactions
            .iter()
            .map(|c| c["turn"].as_u64().unwrap())
            .collect();
        for (k, pair) in st.turns.windows(2).enumerate() {
            let ((p0, c0), (p1, c1)) = (&pair[0], &pair[1]);
            let extends = p0 == p1 && c1.len() > c0.len() && c1[..c0.len()] == c0[..];
            let turn = k as u64 + 2;
            assert!(
                extends || compacted.contains(&turn),
                "{v:?}: request of turn {turn} does not extend the one before"
            );
        }
        if v == Vendor::Anthropic {
            // Tools, system prompt, latest message: three breakpoints.
            assert!(
                st.anthropic_breakpoints.iter().all(|&n| n == 3),
                "{:?}",
                st.anthropic_breakpoints
            );
        }

        // Cost: each turn's reported usage at the task's prices, cached
        // input at its own; the total adds the summaries.
        let turns = t["turns"].as_array().unwrap();
        assert_eq!(turns.len(), st.reported.len());
        let mut total = 0.0;
        for (rec, &(input, cached, written, output)) in turns.iter().zip(&st.reported) {
            let u = &rec["usage"];
            assert_eq!(
                (
                    u["input_tokens"].as_u64(),
                    u["cached_input_tokens"].as_u64(),
                    u["cache_write_input_tokens"].as_u64()
                ),
                (Some(input), Some(cached), Some(written)),
                "{v:?}"
            );
            let cost = u["cost_usd"].as_f64().unwrap();
            assert!(
                close(cost, price(input, cached, written, output)),
                "{v:?}: {cost}"
            );
            total += cost;
        }
        for c in compactions {
            total += c["usage"]["cost_usd"].as_f64().unwrap_or(0.0);
        }
        let cached: u64 = st.reported.iter().map(|r| r.1).sum();
        let input: u64 = st.reported.iter().map(|r| r.0).sum();
        assert!(
            cached > input / 2,
            "{v:?}: little was cached: {cached} of {input}"
        );
        let cost = t["usage"]["cost_usd"].as_f64().unwrap();
        assert!(close(cost, total), "{v:?}: {cost} != {total}");
        let written: u64 = st.reported.iter().map(|r| r.2).sum();
        let output: u64 = st.reported.iter().map(|r| r.3).sum();
        eprintln!(
            "{v:?}: {} turns, {} compactions, input {input} tokens ({cached} cached, {written} written to the cache), output {output}; cost ${cost:.4}; uncached ${:.4}",
            turns.len(),
            compactions.len(),
            price(input, 0, 0, output)
        );
        let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
        // The task's total: the turns' and the summaries' writes.
        let total_written = t["usage"]["cache_write_input_tokens"].as_u64().unwrap();
        assert!(total_written >= written, "{v:?}");
        assert_eq!(total_written > 0, v == Vendor::Anthropic, "{v:?}");
        assert!(
            junit.contains(&format!(
                "name=\"cache_write_input_tokens\" value=\"{total_written}\""
            )),
            "{v:?}"
        );
        if v == Vendor::OpenAi {
            assert!(junit.contains(&format!("name=\"cost_usd\" value=\"{cost:.6}\"")));
            let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
            assert!(summary.contains(&format!("${cost:.4}")), "{summary}");
        }
    }
}

#[test]
fn max_cost_stops_the_task_after_the_turn_that_passes_it() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "max_cost: 0.05\n");
    let (server, state) = fake(v, READS);
    let (out, t) = run_with(dir.path(), v, &server, &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The task_finished event carries the cost.
    let finished = events(&out)
        .into_iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(finished["usage"], t["usage"]);
    assert_eq!(t["outcome"]["status"], "failed");
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("max_cost $0.05"), "{reason}");
    let cost = t["usage"]["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.05);
    // It stopped at once: the turn before had not passed the budget.
    let last = t["turns"].as_array().unwrap().last().unwrap()["usage"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(cost - last <= 0.05, "{cost} {last}");
    assert!(state.lock().unwrap().reads < READS);
}

#[test]
fn an_unknown_price_is_null_and_unknown_never_zero() {
    let v = Vendor::Gemini;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: p\nmodel: {}\nworkspace: ws\ntools: [read_file]\n",
            v.model()
        ),
    );
    let (server, _) = fake(v, 1);
    let (out, t) = run(dir.path(), v, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t["usage"]["cost_usd"].is_null(), "{}", t["usage"]);
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains("| unknown |"), "{summary}");
    // A budget needs a price.
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: p\nmodel: {}\nworkspace: ws\nmax_cost: 1\n",
            v.model()
        ),
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains("task.yaml:5:11: max_cost: the price of `gemini:fake-gemini` is not known"),
        "{}",
        err
    );
}

#[test]
fn the_runs_max_cost_skips_the_tasks_not_yet_started() {
    let v = Vendor::Anthropic;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "");
    let task = std::fs::read_to_string(dir.path().join("task.yaml")).unwrap();
    write(
        dir.path(),
        "tasks/a.yaml",
        &task
            .replace("name: t", "name: a")
            .replace("workspace: ws", "workspace: ../ws"),
    );
    write(
        dir.path(),
        "tasks/b.yaml",
        &task
            .replace("name: t", "name: b")
            .replace("workspace: ws", "workspace: ../ws"),
    );
    let (server, state) = fake(v, 3);
    let run = |extra: &[&str]| {
        wire::runner_for(v, &server.url(), "sk-test-long-runs")
            .current_dir(dir.path())
            .args([
                "run",
                "--out",
                "out",
                "--jobs",
                "1",
                "tasks/a.yaml",
                "tasks/b.yaml",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--max-cost", "0.01"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let a = read_json(dir.path().join("out/a/transcript.json"));
    let b = read_json(dir.path().join("out/b/transcript.json"));
    assert_eq!(a["outcome"]["status"], "passed", "{}", a["outcome"]);
    assert!(a["usage"]["cost_usd"].as_f64().unwrap() > 0.01);
    assert_eq!(b["outcome"]["status"], "skipped", "{}", b["outcome"]);
    assert!(
        b["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("--max-cost of $0.01")
    );
    assert!(b["turns"].as_array().unwrap().is_empty());
    // Said up front (neither task bounds its cost, so one starts for
    // sure), in the summary, and at the end.
    assert!(
        stderr(&out).contains("plan: 2 runs under --max-cost $0.01: at least 1 start; `a` has no max_cost or max_tokens_total"),
        "{}",
        stderr(&out)
    );
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(
        summary.contains("⏭ 1 of 2 runs not started: the run's `--max-cost` was spent."),
        "{summary}"
    );
    assert!(
        stderr(&out).contains("runner: 1 of 2 runs not started: the run's --max-cost was spent"),
        "{}",
        stderr(&out)
    );
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("<skipped message=\"skipped: the run&apos;s --max-cost"),
        "{junit}"
    );
    // Only task a asked the model.
    assert_eq!(state.lock().unwrap().reads, 4);
    // A run budget needs every task's price.
    write(
        dir.path(),
        "tasks/b.yaml",
        &task
            .replace("name: t", "name: b")
            .replace("workspace: ws", "workspace: ../ws")
            .replace(&format!(", pricing: {PRICING}"), ""),
    );
    let out = run(&["--max-cost", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--max-cost: task `b`"),
        "{}",
        stderr(&out)
    );
}

/// A window declared larger than the server's: the vendor's own "too long"
/// error makes the runner compact harder and send the turn again.
#[test]
fn the_vendors_too_long_error_compacts_harder_and_retries() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let task = std::fs::read_to_string(dir.path().join("task.yaml")).unwrap();
        write(
            dir.path(),
            "task.yaml",
            &task.replace(
                &format!("context_window: {WINDOW}"),
                "context_window: 64000",
            ),
        );
        let (server, state) = fake(v, 60);
        let (out, t) = run_with(dir.path(), v, &server, &["--format", "json"]);
        let st = state.lock().unwrap();
        assert_passed(v, &out, &t, &st);
        assert!(st.too_long >= 1, "{v:?}: the server never refused");
        let compactions = t["compactions"].as_array().unwrap();
        assert!(
            compactions.iter().any(|c| c["trigger"] == "provider_error"),
            "{v:?}: {compactions:?}"
        );
        // Each compaction is also an event, with its sizes.
        let compacted: Vec<Value> = events(&out)
            .into_iter()
            .filter(|e| e["event"] == "context_compacted")
            .collect();
        assert_eq!(compacted.len(), compactions.len(), "{v:?}");
        assert_eq!(compacted[0]["task"], "t");
        assert_eq!(
            compacted[0]["tokens_before"],
            compactions[0]["tokens_before"]
        );
    }
}

/// A task's `max_cost` covers all its runs together (issue 75 item 5):
/// under `--repeat 3`, the first run spends two thirds of it, the second
/// stops after the turn that passes what is left, and the third never
/// starts.
#[test]
fn a_tasks_max_cost_covers_its_repeated_runs_together() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    // Each conversation: three reads, then the answer; every turn costs
    // the same (1,000 tokens in, 25 out).
    let server = FakeServer::start(move |req, _| {
        let results = req.body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        let mut t = if results < 3 {
            turn(
                "",
                vec![call(
                    &format!("call_{results}"),
                    "read_file",
                    json!({"file_path": "big.txt"}),
                )],
            )
        } else {
            turn("All read.", vec![])
        };
        t.input_tokens = 1000;
        t.output_tokens = 25;
        wire::reply(v, &t)
    });
    setup(dir.path(), v, "");
    // What one run costs, alone.
    let (out, t) = run(dir.path(), v, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let one = t["usage"]["cost_usd"].as_f64().unwrap();
    assert!(one > 0.0);
    let max = one * 1.5;
    setup(dir.path(), v, &format!("max_cost: {max}\n"));
    let out = wire::runner_for(v, &server.url(), "sk-test-long-runs")
        .current_dir(dir.path())
        .args([
            "run",
            "--out",
            "out",
            "--force-out",
            "--repeat",
            "3",
            "--jobs",
            "1",
        ])
        .args(["--max-cost", "1", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The plan bounds the three runs by the task's one max_cost, not three.
    assert!(
        stderr(&out).contains(&format!(
            "plan: 3 runs under --max-cost $1: all fit (at most about ${max:.2} in all)"
        )),
        "{}",
        stderr(&out)
    );
    let attempt = |k: u32| {
        read_json(
            dir.path()
                .join(format!("out/t/attempt-{k}/transcript.json")),
        )
    };
    let (a1, a2, a3) = (attempt(1), attempt(2), attempt(3));
    assert_eq!(a1["outcome"]["status"], "passed", "{}", a1["outcome"]);
    assert_eq!(a2["outcome"]["status"], "failed", "{}", a2["outcome"]);
    let reason = a2["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("the cost budget is spent")
            && reason.ends_with("(the task's runs together)"),
        "{reason}"
    );
    // It stopped short of a whole run: the first's cost counted.
    let cost2 = a2["usage"]["cost_usd"].as_f64().unwrap();
    assert!(cost2 < one, "{cost2} {one}");
    assert_eq!(a3["outcome"]["status"], "skipped", "{}", a3["outcome"]);
    let reason = a3["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "the task's max_cost of ${max} was spent by its other runs"
        )),
        "{reason}"
    );
}
