//! `runner exec PROMPT` (issue 74): a one-off task from the command line,
//! run as the task file it writes is; the answer on stdout.

use std::path::Path;

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{Vendor, runner_for};
use crate::common::{read_json, runner, stderr, write};

/// A fake OpenAI model: an `ls` call, then its answer.
fn lister() -> FakeServer {
    FakeServer::start(|r, _| {
        let asked_before = r.body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        Reply::json(
            200,
            &if asked_before {
                json!({"choices": [{"message": {"role": "assistant", "content": "a.txt and notes/ are here."},
                    "finish_reason": "stop"}]})
            } else {
                json!({"choices": [{"message": {"role": "assistant", "content": "",
                    "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "ls", "arguments": "{\"path\": \".\"}"}}]},
                    "finish_reason": "tool_calls"}]})
            },
        )
    })
}

fn repo(d: &Path) {
    write(d, "a.txt", "a\n");
    write(d, "notes/n.md", "n\n");
}

/// What two runs of the same task share: everything but names, times,
/// folders and the decoys' values.
fn same_fields(t: &Value) -> Value {
    let calls: Vec<Value> = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            json!([
                c["tool"],
                c["arguments"],
                c["decision"]["decision"],
                c["decision"]["rule"],
                c["status"],
                c["content"]
            ])
        })
        .collect();
    json!({
        "model": t["model"], "mode": t["mode"], "outcome": t["outcome"], "counts": t["counts"],
        "final_answer": t["final_answer"], "calls": calls, "changes": t["changes"],
        "turns": t["turns"].as_array().unwrap().iter().map(|x| x["text"].clone()).collect::<Vec<_>>(),
        "backstops": t["backstops"],
    })
}

#[test]
fn a_prompt_runs_in_the_current_folder_with_the_answer_on_stdout() {
    let server = lister();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repo(d);
    // A task file with the same fields, kept outside the folder (its
    // outputs too), run first: the same listing.
    let elsewhere = tempfile::tempdir().unwrap();
    let task = format!(
        "name: by-hand\nprompt: list the files\nmodel: {}\nworkspace: {}\npolicy:\n  default: deny\n  rules: []\n",
        Vendor::OpenAi.model(),
        d.display()
    );
    let by_hand = write(elsewhere.path(), "by-hand.yaml", &task);
    let o = runner_for(Vendor::OpenAi, &server.url(), "sk-test")
        .current_dir(elsewhere.path())
        .args(["run", "-q", "--out", "out"])
        .arg(&by_hand)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let by_hand = read_json(elsewhere.path().join("out/by-hand/transcript.json"));
    let o = runner_for(Vendor::OpenAi, &server.url(), "sk-test")
        .current_dir(d)
        .args(["exec", "--model", Vendor::OpenAi.model(), "list the files"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "a.txt and notes/ are here.\n"
    );
    // The outputs of a task run, and the task file it ran.
    for f in [
        "exec.yaml",
        "exec/transcript.json",
        "exec/changes.diff",
        "junit.xml",
        "summary.md",
    ] {
        assert!(d.join("runner-out").join(f).is_file(), "{f}");
    }
    let t = read_json(d.join("runner-out/exec/transcript.json"));
    assert_eq!(t["tool_calls"][0]["tool"], "ls");
    assert!(
        t["tool_calls"][0]["content"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
    assert_eq!(same_fields(&t), same_fields(&by_hand));
    // `runner run` runs the written task again.
    let o = runner_for(Vendor::OpenAi, &server.url(), "sk-test")
        .current_dir(d)
        .args(["run", "-q", "runner-out/exec.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        same_fields(&read_json(d.join("runner-out/exec/transcript.json"))),
        same_fields(&by_hand)
    );
}

#[test]
fn the_built_in_policy_is_read_only_and_allow_widens_it() {
    // A model that writes a file.
    let server = FakeServer::start(|r, _| {
        let done = r.body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        Reply::json(
            200,
            &if done {
                json!({"choices": [{"message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}]})
            } else {
                json!({"choices": [{"message": {"role": "assistant", "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "write_file",
                    "arguments": "{\"file_path\": \"b.txt\", \"content\": \"b\\n\"}"}}]},
                "finish_reason": "tool_calls"}]})
            },
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repo(d);
    let exec = |extra: &[&str]| {
        runner_for(Vendor::OpenAi, &server.url(), "sk-test")
            .current_dir(d)
            .env("RUNNER_MODEL", Vendor::OpenAi.model())
            .args(["exec", "-q", "--json"])
            .args(extra)
            .arg("write b.txt")
            .output()
            .unwrap()
    };
    let o = exec(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // --json: the events on stdout.
    assert!(
        crate::common::events(&o)
            .iter()
            .any(|e| e["event"] == "task_finished")
    );
    let t = read_json(d.join("runner-out/exec/transcript.json"));
    assert_eq!(
        t["tool_calls"][0]["status"], "denied",
        "{}",
        t["tool_calls"][0]
    );
    let o = exec(&["--allow", "Edit(b.txt)", "--apply"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("runner-out/exec/transcript.json"));
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
    assert_eq!(
        std::fs::read_to_string(d.join("b.txt")).unwrap(),
        "b\n",
        "applied"
    );
    // --deny narrows a policy file; a policy file found by its name holds.
    std::fs::remove_file(d.join("b.txt")).unwrap();
    write(d, ".runner/policy.yaml", "default: allow\n");
    let o = exec(&["--deny", "Edit(b.txt)"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("runner-out/exec/transcript.json"));
    assert_eq!(t["tool_calls"][0]["status"], "denied");
    let o = exec(&[]);
    let t = read_json(d.join("runner-out/exec/transcript.json"));
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", stderr(&o));
}

#[test]
fn bad_input_exits_2_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let exec = |args: &[&str]| {
        runner()
            .current_dir(d)
            .env_remove("RUNNER_MODEL")
            .arg("exec")
            .args(args)
            .output()
            .unwrap()
    };
    for (args, says) in [
        (&[][..], "<PROMPT>"),
        (&["  "][..], "the prompt is empty"),
        (
            &["--model", "openai:x", "@missing.md"][..],
            "the prompt file missing.md",
        ),
        (&["hello"][..], "no model: give --model"),
        (
            &["--model", "scripted", "hello"][..],
            "the scripted model plays a task file",
        ),
        (
            &[
                "--model", "openai:x", "--policy", "p.yaml", "--allow", "Edit(**)", "hi",
            ][..],
            "--allow widens the built-in read-only policy only",
        ),
    ] {
        let o = exec(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // A policy validate rejects: file:line:col, nothing run.
    write(d, "bad.yaml", "default: allow\nrulez: []\n");
    let o = exec(&["--model", "openai:x", "--policy", "bad.yaml", "hi"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.yaml:2:"), "{}", stderr(&o));
}
