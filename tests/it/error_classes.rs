//! Provider errors in classes (issue 30, item 1): against each vendor's
//! fake over real HTTP, each class gets its action (retried or not, how
//! many requests) and its name in the transcript, the JSON events, JUnit
//! and the error message.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, ALL, Vendor, turn};
use crate::common::{events, read_json, stderr, write};

fn setup(dir: &Path, v: Vendor) {
    write(dir, "ws/a.txt", "alpha\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Say hi.\nmodel: {}\nworkspace: ws\ntools: [ls]\nmodel_options: {{max_retries: 1}}\n",
            v.model()
        ),
    );
}

fn run(dir: &Path, v: Vendor, server: &FakeServer) -> (std::process::Output, Value) {
    let out = wire::runner_for(v, &server.url(), "sk-test-key-classes")
        .current_dir(dir)
        .args(["run", "--format", "json", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn error(status: u16, body: Value) -> Reply {
    Reply::json(status, &body)
}

/// A task that fails for good with `class`: one request (or two when the
/// class is retried and `max_retries: 1` runs out), and the class in every
/// output.
fn fails_with(v: Vendor, replies: Vec<Reply>, class: &str, requests: usize) {
    let dir = tempfile::tempdir().unwrap();
    setup(dir.path(), v);
    let server = FakeServer::queue(replies);
    let (out, t) = run(dir.path(), v, &server);
    // What passes with time ends resumable (75); a refusal does not (1).
    let code = if ["quota", "overloaded", "unavailable", "rate_limited"].contains(&class) {
        75
    } else {
        1
    };
    assert_eq!(
        out.status.code(),
        Some(code),
        "{v:?} {class}: {}",
        stderr(&out)
    );
    assert_eq!(server.requests().len(), requests, "{v:?} {class}");
    assert_eq!(t["outcome"]["status"], "error", "{v:?} {class}");
    assert_eq!(
        t["outcome"]["error_class"], class,
        "{v:?}: {}",
        t["outcome"]
    );
    assert!(
        t["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("({class})")),
        "{v:?}: {}",
        t["outcome"]["reason"]
    );
    let finished = events(&out)
        .into_iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(finished["error_class"], class, "{v:?}: {finished}");
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(
        junit.contains(&format!("type=\"{class}\"")),
        "{v:?}: {junit}"
    );
}

#[test]
fn a_spent_quota_a_refused_key_and_a_refused_request_are_never_sent_again() {
    for v in ALL {
        fails_with(
            v,
            vec![error(
                429,
                json!({"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}),
            )],
            "quota",
            1,
        );
        fails_with(
            v,
            vec![error(
                401,
                json!({"error": {"message": "invalid x-api-key"}}),
            )],
            "auth",
            1,
        );
        fails_with(
            v,
            vec![error(
                400,
                json!({"error": {"message": "tools[0].name: bad"}}),
            )],
            "refused_request",
            1,
        );
    }
}

#[test]
fn overload_and_unavailability_are_retried_then_named() {
    for v in ALL {
        let overloaded = || {
            error(
                529,
                json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
            )
        };
        fails_with(v, vec![overloaded(), overloaded()], "overloaded", 2);
        let down = || error(502, json!({"error": {"message": "bad gateway"}}));
        fails_with(v, vec![down(), down()], "unavailable", 2);
    }
}

#[test]
fn a_retried_request_keeps_the_class_of_each_failed_try() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v);
        let server = FakeServer::queue(vec![
            error(
                429,
                json!({"error": {"type": "rate_limit_error", "message": "slow down"}}),
            )
            .header("retry-after", "0"),
            wire::reply(v, &turn("Hi.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(server.requests().len(), 2);
        assert_eq!(
            t["turns"][0]["retries"][0]["class"], "rate_limited",
            "{v:?}"
        );
        assert!(t["outcome"].get("error_class").is_none(), "{v:?}");
        let responded = events(&out)
            .into_iter()
            .find(|e| e["event"] == "model_responded")
            .unwrap();
        assert_eq!(responded["retries"][0]["class"], "rate_limited", "{v:?}");
    }
}

#[test]
fn an_overloaded_error_event_is_retried_until_a_call_was_handed_out() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v);
        let mut cut = wire::stream(v, &turn("Starting to answer", vec![]));
        cut.truncate(2);
        cut.push(v.error_event("Overloaded right now"));
        let server =
            FakeServer::queue(vec![Reply::sse(&cut), wire::reply(v, &turn("Hi.", vec![]))]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(server.requests().len(), 2, "{v:?}");
        // The event's words say the server is overloaded.
        assert_eq!(t["turns"][0]["retries"][0]["class"], "overloaded", "{v:?}");
    }
}

#[test]
fn a_context_overflow_is_sent_again_once_and_a_bad_response_never() {
    for v in ALL {
        // Too long: compacted and sent once more.
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v);
        let server = FakeServer::queue(vec![
            wire::reply(v, &turn("", vec![wire::call("c1", "ls", json!({}))])),
            error(
                400,
                json!({"error": {"message": "This model's maximum context length is 8192 tokens"}}),
            ),
            wire::reply(v, &turn("Hi.", vec![])),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert!(out.status.success(), "{v:?}: {}", stderr(&out));
        assert_eq!(server.requests().len(), 3, "{v:?}");
        assert_eq!(t["outcome"]["status"], "passed", "{v:?}");
        // Too long again after that: the task fails with the class.
        let dir = tempfile::tempdir().unwrap();
        setup(dir.path(), v);
        let too_long = || {
            error(
                400,
                json!({"error": {"message": "prompt is too long: 250000 tokens > 200000 maximum"}}),
            )
        };
        let server = FakeServer::queue(vec![
            wire::reply(v, &turn("", vec![wire::call("c1", "ls", json!({}))])),
            too_long(),
            too_long(),
        ]);
        let (out, t) = run(dir.path(), v, &server);
        assert_eq!(out.status.code(), Some(1), "{v:?}: {}", stderr(&out));
        assert_eq!(server.requests().len(), 3, "{v:?}");
        assert_eq!(t["outcome"]["status"], "failed", "{v:?}");
        assert_eq!(t["outcome"]["error_class"], "context_overflow", "{v:?}");
        // An answer that cannot be read: never sent again.
        let garbage = match v {
            Vendor::OpenAi => "data: not an answer\n\n",
            Vendor::Anthropic => "event: message_start\ndata: not an answer\n\n",
            Vendor::Gemini => "data: not an answer\r\n\r\n",
        };
        fails_with(
            v,
            vec![Reply::sse(&[garbage.to_string()])],
            "bad_response",
            1,
        );
    }
}
