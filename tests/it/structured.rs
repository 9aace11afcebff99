//! Structured final output (`output_schema:`) and `tool_choice`.

use std::path::Path;

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{events, read_json, runner, stderr, validate_refuses, write};
use serde_json::{Value, json};

const SCHEMA: &str = "{type: object, required: [label], properties: {label: {enum: [bug, feature]}}, additionalProperties: false}";

/// A scripted task answering each of `answers` in turn.
fn task(dir: &Path, schema: &str, answers: &[&str], max_turns: u32) {
    write(dir, "ws/a.txt", "a\n");
    let script: String = answers
        .iter()
        .map(|a| format!("  - text: {}\n", serde_json::to_string(a).unwrap()))
        .collect();
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Label the issue.\nworkspace: ws\nmax_turns: {max_turns}\noutput_schema: {schema}\nscript:\n{script}"
        ),
    );
}

fn run(dir: &Path) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .args(["run", "--out", "out", "--format", "json", "task.yaml"])
        .output()
        .unwrap();
    (out, read_json(dir.join("out/t/transcript.json")))
}

#[test]
fn answers_that_are_not_json_or_break_the_schema_go_back_until_one_holds() {
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        SCHEMA,
        &[
            "It is a bug.",
            "{\"label\": \"question\"}",
            "```json\n{\"label\": \"bug\"}\n```",
        ],
        5,
    );
    let (out, t) = run(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = read_json(dir.path().join("out/t/output.json"));
    assert_eq!(written, json!({"label": "bug"}));
    assert_eq!(t["output"], written);
    assert_eq!(t["counts"]["turns"], 3);
    // Each refusal went back to the model with the errors.
    let feedback: Vec<&str> = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .skip(1)
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(feedback.len(), 2);
    assert!(
        feedback[0].contains("the answer is not JSON"),
        "{}",
        feedback[0]
    );
    assert!(feedback[1].contains("at /label: "), "{}", feedback[1]);
    // The task_finished event carries it.
    let finished = events(&out)
        .into_iter()
        .find(|e| e["event"] == "task_finished")
        .unwrap();
    assert_eq!(finished["output"], written);
}

#[test]
fn a_task_that_never_answers_validly_fails_and_writes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    // An output.json of an earlier run must not survive.
    write(dir.path(), "out/t/output.json", "{\"label\": \"bug\"}");
    task(dir.path(), SCHEMA, &["nope", "{\"label\": 3}"], 2);
    let (out, t) = run(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(t["outcome"]["status"], "failed");
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "ran out of turns without an answer valid against output_schema: at /label: "
        ),
        "{reason}"
    );
    assert!(t.get("output").is_none());
    assert!(!dir.path().join("out/t/output.json").exists());
}

#[test]
fn a_schema_in_a_file_works_and_a_bad_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "schemas/label.yaml",
        "type: object\nrequired: [label]\nproperties:\n  label: {type: string}\n",
    );
    task(
        dir.path(),
        "schemas/label.yaml",
        &["{\"label\": \"anything\"}"],
        2,
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t["output"], json!({"label": "anything"}));
    write(dir.path(), "schemas/bad.json", "{\"type\": 12}");
    task(dir.path(), "schemas/bad.json", &["{}"], 2);
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains("task.yaml:5:16: output_schema: not a JSON Schema"),
        "{}",
        err
    );
}

/// The vendor's shape of "call read_file now".
fn forced(v: Vendor, body: &Value) -> Value {
    match v {
        Vendor::OpenAi | Vendor::Anthropic => body["tool_choice"].clone(),
        Vendor::Gemini => body["toolConfig"].clone(),
    }
}

#[test]
fn tool_choice_reaches_the_first_request_only_in_each_vendors_shape() {
    for v in ALL {
        for (choice, want) in [
            (
                "read_file",
                match v {
                    Vendor::OpenAi => {
                        json!({"type": "function", "function": {"name": "read_file"}})
                    }
                    Vendor::Anthropic => json!({"type": "tool", "name": "read_file"}),
                    Vendor::Gemini => {
                        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read_file"]}})
                    }
                },
            ),
            (
                "required",
                match v {
                    Vendor::OpenAi => json!("required"),
                    Vendor::Anthropic => json!({"type": "any"}),
                    Vendor::Gemini => json!({"functionCallingConfig": {"mode": "ANY"}}),
                },
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            write(dir.path(), "ws/a.txt", "a\n");
            write(
                dir.path(),
                "task.yaml",
                &format!(
                    "name: t\nprompt: Read a.txt.\nmodel: {}\nworkspace: ws\ntools: [read_file, ls]\nmodel_options: {{tool_choice: {choice}}}\n",
                    v.model()
                ),
            );
            let server = FakeServer::queue(vec![
                wire::reply(
                    v,
                    &turn(
                        "",
                        vec![call("c1", "read_file", json!({"file_path": "a.txt"}))],
                    ),
                ),
                wire::reply(v, &turn("It holds a.", vec![])),
            ]);
            let out = wire::runner_for(v, &server.url(), "sk-test")
                .current_dir(dir.path())
                .args(["run", "--out", "out", "task.yaml"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{v:?}: {}", stderr(&out));
            let reqs = server.requests();
            assert_eq!(reqs.len(), 2);
            assert_eq!(forced(v, &reqs[0].body), want, "{v:?} {choice}");
            // Later turns are `auto`: OpenAI's said explicitly (a server
            // may show no tools to a request without it), the others'
            // by leaving the field out.
            let later = match v {
                Vendor::OpenAi => json!("auto"),
                Vendor::Anthropic | Vendor::Gemini => Value::Null,
            };
            assert_eq!(forced(v, &reqs[1].body), later, "{v:?}: forced again");
        }
    }
    // A name that is not one of the task's tools is refused.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: p\nworkspace: ws\ntools: [ls]\nmodel_options: {tool_choice: read_file}\nscript: []\n",
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains(
            "task.yaml:5:30: model_options.tool_choice: `read_file` is not one of the task's tools"
        ),
        "{}",
        err
    );
}
