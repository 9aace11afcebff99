//! OpenAI's Responses API (`model_options.api: responses`, issue 46):
//! the conversation as input items, calls and their results matched by
//! `call_id`, streamed or whole answers, over real HTTP.

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{read_json, stderr, write};

/// Two turns (a read, then the answer), `stream` on or off.
#[test]
fn a_two_turn_task_over_the_responses_api() {
    for stream in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "ws/a.txt", "alpha\n");
        let turns = [
            turn(
                "",
                vec![call("call_r1", "read_file", json!({"file_path": "a.txt"}))],
            ),
            turn("a.txt says alpha", vec![]),
        ];
        let server = FakeServer::start(move |_, n| {
            let t = &turns[n.min(1)];
            if stream {
                Reply::sse(&wire::responses_stream(t))
            } else {
                Reply::json(200, &wire::responses_whole(t))
            }
        });
        write(
            d,
            "task.yaml",
            &format!(
                "name: t\nprompt: What does a.txt say?\nmodel: {}\nworkspace: ws\n\
                 model_options: {{api: responses, stream: {stream}, pricing: {{input: 1.0, output: 2.0}}}}\n",
                Vendor::OpenAi.model()
            ),
        );
        let out = wire::runner_for(Vendor::OpenAi, &server.url(), "sk-test")
            .current_dir(d)
            .args(["run", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "stream {stream}: {}", stderr(&out));
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "stream {stream}");
        for r in &requests {
            assert_eq!(r.path, "/v1/responses");
            assert_eq!(r.header("authorization"), Some("Bearer sk-test"));
            assert_eq!(r.body["stream"], stream);
            assert_eq!(r.body["store"], false);
            assert!(
                r.body["instructions"]
                    .as_str()
                    .unwrap()
                    .contains("coding agent")
            );
            let tool = &r.body["tools"][0];
            assert_eq!(tool["type"], "function");
            assert!(
                tool["name"].is_string() && tool["parameters"].is_object(),
                "{tool}"
            );
        }
        // The second request carries the call and its result, by call_id.
        let input = requests[1].body["input"].as_array().unwrap();
        let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["message", "function_call", "function_call_output"]);
        assert_eq!(input[1]["call_id"], "call_r1");
        assert_eq!(input[1]["arguments"], "{\"file_path\":\"a.txt\"}");
        assert_eq!(input[2]["call_id"], "call_r1");
        assert!(
            input[2]["output"].as_str().unwrap().contains("alpha"),
            "{}",
            input[2]
        );
        let t = read_json(d.join("out/t/transcript.json"));
        assert_eq!(t["final_answer"], "a.txt says alpha");
        assert_eq!(t["tool_calls"][0]["status"], "ok");
        let usage: &Value = &t["usage"];
        assert_eq!(usage["input_tokens"], 200, "{usage}");
        assert_eq!(usage["output_tokens"], 40, "{usage}");
    }
}

/// An error event in a Responses stream fails the turn with the vendor's
/// message (and its class).
#[test]
fn a_failed_response_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "alpha\n");
    let failed = format!(
        "event: response.failed\ndata: {}\n\n",
        json!({"type": "response.failed", "response": {"status": "failed",
            "error": {"code": "invalid_prompt", "message": "the prompt was refused"}}})
    );
    let server = FakeServer::start(move |_, _| Reply::sse(std::slice::from_ref(&failed)));
    write(
        d,
        "task.yaml",
        &format!(
            "name: t\nprompt: Hi.\nmodel: {}\nworkspace: ws\nmodel_options: {{api: responses, max_retries: 0}}\n",
            Vendor::OpenAi.model()
        ),
    );
    let out = wire::runner_for(Vendor::OpenAi, &server.url(), "k")
        .current_dir(d)
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let t = read_json(d.join("out/t/transcript.json"));
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("the prompt was refused"), "{reason}");
}

/// `model_options.api` takes chat or responses; anything else is an
/// error with its line.
#[test]
fn an_unknown_api_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "task.yaml",
        "name: t\nprompt: Hi.\nmodel: openai:gpt-5\nmodel_options:\n  api: assistants\n",
    );
    let out = crate::common::runner()
        .current_dir(d)
        .args(["validate", "task.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("task.yaml:5:8") && err.contains("neither chat") && err.contains("assistants"),
        "{err}"
    );
}
