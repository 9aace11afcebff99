//! The HTTP providers against fake servers on 127.0.0.1 that speak each
//! vendor's wire format byte for byte (see tests/common/wire.rs). Every
//! test runs the `runner` binary on a real task file.

use std::path::Path;
use std::time::Duration;

use crate::common::fake_llm::{FakeServer, Recorded, Reply};
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{read_json, runner, stderr, write};
use serde_json::{Value, json};

const KEY: &str = "sk-test-SECRET-7f3a9";

/// A workspace with two files and a task for `v` with extra YAML lines.
fn setup(dir: &Path, v: Vendor, extra: &str) -> std::path::PathBuf {
    write(dir, "ws/a.txt", "alpha\n");
    write(dir, "ws/b.txt", "beta\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Read a.txt and b.txt and say what they hold.\nmodel: {}\nworkspace: ws\ntools: [read_file, ls]\n{extra}",
            v.model()
        ),
    )
}

/// Runs the task against `server`; returns the process output and the
/// transcript.
fn run(dir: &Path, v: Vendor, server: &FakeServer) -> (std::process::Output, Value) {
    let out = wire::runner_for(v, &server.url(), KEY)
        .current_dir(dir)
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn assert_no_key(dir: &Path, out: &std::process::Output) {
    for f in ["out/t/transcript.json", "out/junit.xml", "out/summary.md"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(!text.contains(KEY), "the key leaked into {f}");
    }
    assert!(!stderr(out).contains(KEY), "the key leaked into stderr");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY));
}

fn outcome(t: &Value) -> (&str, &str) {
    (
        t["outcome"]["status"].as_str().unwrap(),
        t["outcome"]["reason"].as_str().unwrap(),
    )
}

fn check_request_shape(v: Vendor, r: &Recorded) {
    assert_eq!(r.method, "POST");
    match v {
        Vendor::OpenAi => {
            assert_eq!(r.path, "/v1/chat/completions");
            assert_eq!(
                r.header("authorization"),
                Some(format!("Bearer {KEY}").as_str())
            );
            assert_eq!(r.body["model"], "fake-gpt");
            assert_eq!(r.body["stream"], true);
            assert_eq!(r.body["stream_options"]["include_usage"], true);
            assert_eq!(r.body["messages"][0]["role"], "system");
            let mut tools: Vec<&str> = r.body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap())
                .collect();
            tools.sort();
            assert_eq!(tools, ["ls", "read_file"]);
        }
        Vendor::Anthropic => {
            assert_eq!(r.path, "/v1/messages");
            assert_eq!(r.header("x-api-key"), Some(KEY));
            assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(r.body["model"], "fake-claude");
            assert!(r.body["max_tokens"].as_u64().unwrap() > 0);
            // The system prompt as a block with a cache breakpoint.
            assert!(r.body["system"][0]["text"].as_str().unwrap().len() > 10);
            assert_eq!(r.body["system"][0]["cache_control"]["type"], "ephemeral");
            assert_eq!(r.body["tools"].as_array().unwrap().len(), 2);
            assert!(r.body["tools"][0]["input_schema"].is_object());
        }
        Vendor::Gemini => {
            assert_eq!(
                r.path,
                "/v1beta/models/fake-gemini:streamGenerateContent?alt=sse"
            );
            assert_eq!(r.header("x-goog-api-key"), Some(KEY));
            assert!(!r.path.contains(KEY));
            assert_eq!(
                r.body["tools"][0]["functionDeclarations"]
                    .as_array()
                    .unwrap()
                    .len(),
                2
            );
            assert!(r.body["systemInstruction"]["parts"][0]["text"].is_string());
        }
    }
}

#[test]
fn a_two_turn_conversation_with_parallel_calls() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let server = FakeServer::queue(vec![
            wire::reply(
                v,
                &turn(
                    "Reading both files.",
                    vec![
                        call("c1", "read_file", json!({"file_path": "a.txt"})),
                        call("c2", "read_file", json!({"file_path": "b.txt"})),
                    ],
                ),
            ),
            wire::reply(v, &turn("a.txt holds alpha, b.txt holds beta.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(outcome(&t).0, "passed", "{v:?}");
        assert_eq!(t["model"], v.model().to_string());
        let calls = t["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2, "{v:?}");
        assert!(
            calls.iter().all(|c| c["status"] == "ok"),
            "{v:?}: {calls:?}"
        );
        assert_eq!(
            t["usage"],
            json!({"input_tokens": 200, "output_tokens": 40, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "cost_usd": null}),
            "{v:?}"
        );
        assert_eq!(t["turns"][0]["usage"]["input_tokens"], 100);
        assert_eq!(
            t["turns"][1]["text"], "a.txt holds alpha, b.txt holds beta.",
            "{v:?}"
        );
        assert!(t["turns"][0]["raw"].is_object());

        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{v:?}");
        check_request_shape(v, &reqs[0]);
        let results = wire::tool_results(v, &reqs[1].body);
        assert_eq!(results.len(), 2, "{v:?}: {:?}", reqs[1].body);
        assert!(
            results[0].1.contains("alpha") && !results[0].2,
            "{v:?}: {results:?}"
        );
        assert!(results[1].1.contains("beta"), "{v:?}: {results:?}");
        if v != Vendor::Gemini {
            assert_eq!((results[0].0.as_str(), results[1].0.as_str()), ("c1", "c2"));
        }
        assert_no_key(dir.path(), &out);
        let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
        assert!(
            junit.contains("name=\"input_tokens\" value=\"200\""),
            "{junit}"
        );
    }
}

#[test]
fn a_text_only_answer_ends_the_task() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let server = FakeServer::queue(vec![wire::reply(v, &turn("Nothing to do.", vec![]))]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(t["turns"].as_array().unwrap().len(), 1);
        assert_eq!(t["turns"][0]["text"], "Nothing to do.");
        assert_eq!(server.requests().len(), 1);
    }
}

fn error_body(message: &str) -> Value {
    json!({"error": {"message": message, "type": "rate_limit_error"}})
}

#[test]
fn a_429_with_retry_after_is_retried() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        // Gemini says when in its body (`RetryInfo`), the others in a
        // header.
        let refusal = match v {
            Vendor::Gemini => Reply::json(
                429,
                &json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                    "message": "Rate limit reached",
                    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                        "retryDelay": "1s"}]}}),
            ),
            _ => Reply::json(429, &error_body("Rate limit reached")).header("retry-after", "1"),
        };
        let server = FakeServer::queue(vec![refusal, wire::reply(v, &turn("Done.", vec![]))]);
        let started = std::time::Instant::now();
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(outcome(&t).0, "passed");
        assert_eq!(server.requests().len(), 2, "{v:?}");
        // The wait the server asked for was kept (it is a lower bound, not
        // a speed goal).
        assert!(started.elapsed() >= Duration::from_secs(1));
        // The transcript keeps the retry, with the wait the server set.
        let retries = &t["turns"][0]["retries"];
        assert_eq!(
            retries.as_array().map(Vec::len),
            Some(1),
            "{v:?}: {retries}"
        );
        assert_eq!(retries[0]["wait_ms"], 1000, "{v:?}");
        assert!(
            retries[0]["error"].as_str().unwrap().contains("429"),
            "{v:?}: {retries}"
        );
        assert!(
            stderr(&out).contains("Rate limit reached"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn two_500s_then_success() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let server = FakeServer::queue(vec![
            Reply::json(500, &error_body("internal")),
            Reply::json(503, &error_body("unavailable")),
            wire::reply(v, &turn("Done.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(outcome(&t).0, "passed");
        assert_eq!(server.requests().len(), 3, "{v:?}");
        let retries = &t["turns"][0]["retries"];
        let attempts: Vec<_> = retries
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["attempt"].as_u64().unwrap())
            .collect();
        assert_eq!(attempts, [1, 2], "{v:?}: {retries}");
    }
}

#[test]
fn retries_run_out_and_the_task_errors_with_the_last_failure() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "model_options: {max_retries: 1}\n");
    let server = FakeServer::queue(vec![
        Reply::json(500, &error_body("internal")),
        Reply::json(502, &error_body("bad gateway")),
    ]);
    let (out, t) = run(dir.path(), v, &server);
    assert_eq!(out.status.code(), Some(75), "unavailable: resumable");
    let (status, reason) = outcome(&t);
    assert_eq!(status, "error");
    assert!(
        reason.contains("HTTP 502")
            && reason.contains("bad gateway")
            && reason.contains("2 attempts"),
        "{reason}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_400_is_not_retried() {
    let v = Vendor::Anthropic;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "");
    let server = FakeServer::queue(vec![Reply::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too large"}}),
    )]);
    let (_, t) = run(dir.path(), v, &server);
    let (status, reason) = outcome(&t);
    assert_eq!(status, "error");
    assert!(
        reason.contains("HTTP 400: max_tokens: too large"),
        "{reason}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_stream_cut_in_the_middle_is_an_error_or_a_retry_never_a_short_answer() {
    for v in ALL {
        let t1 = turn("This answer is longer than what arrives.", vec![]);
        // Without retries: an error naming the cut.
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "model_options: {max_retries: 0}\n");
        let server = FakeServer::queue(vec![wire::reply(v, &t1).cut_after(2)]);
        let (out, t) = run(dir.path(), v, &server);
        assert_eq!(out.status.code(), Some(75), "{v:?}: unavailable, resumable");
        let (status, reason) = outcome(&t);
        assert_eq!(status, "error", "{v:?}: {reason}");
        assert!(
            reason.contains("cut") || reason.contains("ended before"),
            "{v:?}: {reason}"
        );
        assert_eq!(t["turns"].as_array().unwrap().len(), 0, "{v:?}");

        // With a retry: the second, whole answer is used.
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "model_options: {max_retries: 1}\n");
        let server = FakeServer::queue(vec![wire::reply(v, &t1).cut_after(2), wire::reply(v, &t1)]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(t["turns"][0]["text"], t1.text, "{v:?}");
        assert_eq!(server.requests().len(), 2);
    }
}

/// An error event in `v`'s stream that refuses the request.
fn refused_event(v: Vendor, message: &str) -> String {
    match v {
        Vendor::OpenAi => format!(
            "data: {}\n\n",
            json!({"error": {"message": message, "type": "invalid_request_error"}})
        ),
        Vendor::Anthropic => format!(
            "event: error\ndata: {}\n\n",
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        ),
        Vendor::Gemini => format!(
            "data: {}\r\n\r\n",
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        ),
    }
}

#[test]
fn an_error_event_in_the_stream_fails_the_turn() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let mut events = wire::stream(v, &turn("Starting to answer", vec![]));
        events.truncate(2);
        events.push(refused_event(v, "invalid_request_error: no such model"));
        let server = FakeServer::queue(vec![Reply::sse(&events)]);
        let (out, t) = run(dir.path(), v, &server);
        assert_eq!(out.status.code(), Some(1));
        let (status, reason) = outcome(&t);
        assert_eq!(status, "error", "{v:?}");
        assert!(reason.contains("no such model"), "{v:?}: {reason}");
        assert_eq!(t["outcome"]["error_class"], "refused_request", "{v:?}");
        // An overloaded server's event is retried (tests/it/error_classes.rs);
        // a refusal is not.
        assert_eq!(
            server.requests().len(),
            1,
            "{v:?}: a refused request is not sent again"
        );
    }
}

#[test]
fn malformed_tool_call_json_goes_back_as_an_error_naming_the_call() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let bad = wire::Call {
            id: "c9".into(),
            name: "read_file".into(),
            args: "{\"file_path\": \"a.txt\"".into(),
        };
        let server = FakeServer::queue(vec![
            wire::reply(v, &turn("", vec![bad])),
            wire::reply(v, &turn("Sorry, I sent bad JSON.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        let c = &t["tool_calls"][0];
        assert_eq!(c["status"], "error", "{v:?}");
        let reqs = server.requests();
        let results = wire::tool_results(v, &reqs[1].body);
        assert_eq!(results.len(), 1, "{v:?}");
        let (_, content, is_error) = &results[0];
        let id = c["id"].as_str().unwrap();
        assert!(
            content.contains(&format!("call {id} to read_file")),
            "{v:?}: {content}"
        );
        assert!(content.contains("JSON"), "{v:?}: {content}");
        assert!(*is_error || content.starts_with("Error"), "{v:?}");
    }
}

#[test]
fn a_stalled_stream_hits_the_idle_timeout() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(
            dir.path(),
            v,
            "model_options: {idle_timeout: 1s, max_retries: 0}\n",
        );
        let server = FakeServer::queue(vec![
            wire::reply(v, &turn("A slow answer.", vec![])).pause_before(1, Duration::from_secs(4)),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert_eq!(out.status.code(), Some(75), "unavailable: resumable");
        let (status, reason) = outcome(&t);
        assert_eq!(status, "error", "{v:?}");
        assert!(reason.contains("idle timeout"), "{v:?}: {reason}");
    }
}

#[test]
fn a_read_only_call_starts_while_the_next_call_is_still_streaming() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "");
        let t1 = turn(
            "",
            vec![
                call("c1", "read_file", json!({"file_path": "a.txt"})),
                call("c2", "read_file", json!({"file_path": "b.txt"})),
            ],
        );
        // Pause inside the second call: after its first event where the
        // vendor streams it in pieces, before it where it comes whole.
        let at = wire::events_before_call(v, &t1, 1) + usize::from(v != Vendor::Gemini);
        let server = FakeServer::queue(vec![
            wire::reply(v, &t1).pause_before(at, Duration::from_millis(1500)),
            wire::reply(v, &turn("Done.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        let calls = t["tool_calls"].as_array().unwrap();
        let first = calls[0]["started_ms"].as_u64().unwrap();
        let second = calls[1]["started_ms"].as_u64().unwrap();
        // The second call cannot start before the stream ends, 1.5 s after
        // the first call was complete; the first started in that gap.
        assert!(
            first + 1000 <= second,
            "{v:?}: first started at {first} ms, second at {second} ms"
        );
        assert!(calls.iter().all(|c| c["status"] == "ok"));
        // Results still go back in the model's order.
        let results = wire::tool_results(v, &server.requests()[1].body);
        assert!(results[0].1.contains("alpha") && results[1].1.contains("beta"));
    }
}

#[test]
fn a_missing_key_stops_the_run_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), Vendor::Anthropic, "");
    let mut cmd = runner();
    for v in ALL {
        cmd.env_remove(v.key_var()).env_remove(v.url_var());
    }
    let out = cmd
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("task.yaml") && err.contains("ANTHROPIC_API_KEY"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists(), "nothing is written");
}

#[test]
fn streaming_can_be_turned_off_per_task() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    setup(
        dir.path(),
        v,
        "model_options: {stream: false, temperature: 0.2, max_tokens: 300}\n",
    );
    let server = FakeServer::queue(vec![
        Reply::json(
            200,
            &json!({
                "id": "x", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}]}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 3}
            }),
        ),
        // An Ollama-style answer: no usage, no id.
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": "alpha"}}]}),
        ),
    ]);
    let (out, t) = run(dir.path(), v, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t["tool_calls"][0]["status"], "ok");
    assert_eq!(
        t["usage"],
        json!({"input_tokens": 7, "output_tokens": 3, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "cost_usd": null})
    );
    let r = &server.requests()[0];
    assert_eq!(r.body["stream"], false);
    assert!(r.body.get("stream_options").is_none());
    assert_eq!(r.body["temperature"], 0.2);
    assert_eq!(r.body["max_tokens"], 300);
}

#[test]
fn the_token_budget_stops_the_task() {
    let v = Vendor::Gemini;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "max_tokens_total: 100\n");
    let server = FakeServer::queue(vec![
        wire::reply(v, &turn("", vec![call("c1", "ls", json!({}))])),
        wire::reply(v, &turn("never asked for", vec![])),
    ]);
    let (out, t) = run(dir.path(), v, &server);
    assert_eq!(out.status.code(), Some(1));
    let (status, reason) = outcome(&t);
    assert_eq!(status, "failed");
    assert!(reason.contains("max_tokens_total"), "{reason}");
    assert_eq!(server.requests().len(), 1);
}

/// The examples' scripted turns, served over the OpenAI wire format: the
/// server finds the task by its prompt and answers with the script's next
/// turn. The same tasks, unchanged, must end as they do with `scripted`.
#[test]
fn the_examples_run_unchanged_against_an_openai_compatible_server() {
    let dir = crate::common::examples();
    let mut scripts: Vec<(String, Vec<Value>)> = Vec::new();
    for entry in std::fs::read_dir(dir.path().join("tasks")).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let task: Value = serde_saphyr::from_str(&text).unwrap();
        let prompt = task["prompt"].as_str().unwrap().trim().to_string();
        let script = task["script"].as_array().cloned().unwrap_or_default();
        scripts.push((prompt, script));
    }
    let scripts_count = scripts.len();
    let server = FakeServer::start(move |req, _| {
        let messages = req.body["messages"].as_array().unwrap();
        let user = messages[1]["content"].as_str().unwrap().trim();
        let n = messages.iter().filter(|m| m["role"] == "assistant").count();
        let script = &scripts
            .iter()
            .find(|(p, _)| p == user)
            .expect("a known prompt")
            .1;
        let Some(step) = script.get(n) else {
            return wire::reply(Vendor::OpenAi, &turn("", vec![]));
        };
        let calls = step["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(j, c)| wire::Call {
                id: format!("call_{}_{}", n + 1, j + 1),
                name: c["name"].as_str().unwrap().to_string(),
                args: match c.get("raw_args") {
                    Some(raw) => raw.as_str().unwrap().to_string(),
                    None => c["args"].to_string(),
                },
            })
            .collect();
        wire::reply(
            Vendor::OpenAi,
            &turn(step["text"].as_str().unwrap_or(""), calls),
        )
    });
    let scripted = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .args(["run", "--out", "scripted-out", "tasks/*.yaml"])
        .output()
        .unwrap();
    let served = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .env_remove("OPENAI_API_KEY")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args([
            "run",
            "--model",
            "openai:local-model",
            "--out",
            "served-out",
            "tasks/*.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        scripted.status.code(),
        served.status.code(),
        "{}",
        stderr(&served)
    );
    let mut compared = 0;
    for entry in std::fs::read_dir(dir.path().join("scripted-out")).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name();
        let a = read_json(entry.path().join("transcript.json"));
        let b = read_json(
            dir.path()
                .join("served-out")
                .join(&name)
                .join("transcript.json"),
        );
        assert_eq!(b["model"], "openai:local-model");
        assert_eq!(a["outcome"]["status"], b["outcome"]["status"], "{name:?}");
        assert_eq!(a["counts"], b["counts"], "{name:?}");
        let diff = |d: &str| {
            std::fs::read_to_string(dir.path().join(d).join(&name).join("changes.diff")).unwrap()
        };
        assert_eq!(diff("scripted-out"), diff("served-out"), "{name:?}");
        compared += 1;
    }
    // Every example task (their number grows with the examples).
    assert_eq!(compared, scripts_count);
    // No key was set: a local server at a custom URL needs none.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization").is_none())
    );
}

#[test]
fn anthropic_and_gemini_answer_without_streaming_too() {
    let cases = [
        (
            Vendor::Anthropic,
            "/v1/messages",
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "fake-claude",
                   "content": [{"type": "text", "text": "Listing."},
                               {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}],
                   "stop_reason": "tool_use", "usage": {"input_tokens": 11, "output_tokens": 5}}),
            json!({"content": [{"type": "text", "text": "Two files."}], "usage": {"input_tokens": 1, "output_tokens": 1}}),
        ),
        (
            Vendor::Gemini,
            "/v1beta/models/fake-gemini:generateContent",
            json!({"candidates": [{"content": {"role": "model", "parts": [
                       {"text": "Listing."}, {"functionCall": {"name": "ls", "args": {}}}]},
                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 5}}),
            json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Two files."}]},
                   "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1}}),
        ),
    ];
    for (v, path, first, second) in cases {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v, "model_options: {stream: false}\n");
        let server = FakeServer::queue(vec![Reply::json(200, &first), Reply::json(200, &second)]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(t["tool_calls"][0]["tool"], "ls");
        assert_eq!(t["tool_calls"][0]["status"], "ok");
        assert_eq!(
            t["usage"],
            json!({"input_tokens": 12, "output_tokens": 6, "cached_input_tokens": 0, "cache_write_input_tokens": 0, "cost_usd": null}),
            "{v:?}"
        );
        assert_eq!(t["turns"][1]["text"], "Two files.");
        let reqs = server.requests();
        assert_eq!(reqs[0].path, path);
        let results = wire::tool_results(v, &reqs[1].body);
        assert!(results[0].1.contains("a.txt"), "{v:?}: {results:?}");
    }
}

/// A short dummy key (`OPENAI_API_KEY=x`, common with local servers) is not
/// masked in the server's words, nor redacted out of them. The words are a
/// context-length error: the runner compacts (here there is nothing to
/// compact), retries once, then fails the task saying so.
#[test]
fn a_short_dummy_key_leaves_the_servers_words_readable() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v, "");
    let message = "This model's maximum context length is 16384 tokens; fix the max_tokens";
    let too_long = Reply::json(
        400,
        &json!({"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}}),
    );
    let server = FakeServer::queue(vec![too_long.clone(), too_long]);
    let out = wire::runner_for(v, &server.url(), "x")
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.path().join("out/t/transcript.json"));
    let (status, reason) = outcome(&t);
    assert_eq!(status, "failed");
    assert!(reason.contains(message), "{reason}");
    // The window the server named, and the truth: a prompt alone has
    // nothing to compact.
    assert!(reason.contains("(16384 tokens)"), "{reason}");
    assert!(
        reason.contains("nothing in it could be compacted"),
        "{reason}"
    );
    assert_eq!(server.requests().len(), 2);
    assert!(
        stderr(&out).contains("maximum context length"),
        "{}",
        stderr(&out)
    );
}
