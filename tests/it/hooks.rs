//! Hooks around tool calls: `pre_tool` denies (and fails closed),
//! `post_tool` adds to what the model sees or fails the task; hooks of a
//! `--policy` layer run for every task.

use std::path::Path;

use crate::common::{events, read_json, runner, stderr, write};
use serde_json::Value;

/// A scripted task writing each of `files` in one turn, under `hooks`.
fn task(dir: &Path, hooks: &str, files: &[&str]) {
    write(dir, "ws/keep.txt", "keep\n");
    let calls: String = files
        .iter()
        .map(|f| {
            format!("      - {{name: write_file, args: {{file_path: {f}, content: \"x\\n\"}}}}\n")
        })
        .collect();
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: p\nworkspace: ws\npolicy: {{default: allow}}\n{hooks}script:\n  - tool_calls:\n{calls}  - text: done\n"
        ),
    );
}

fn run(dir: &Path, extra: &[&str]) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .args(["run", "--out", "out"])
        .args(extra)
        .arg("task.yaml")
        .output()
        .unwrap();
    (out, read_json(dir.join("out/t/transcript.json")))
}

fn call<'a>(t: &'a Value, file: &str) -> &'a Value {
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["arguments"]["file_path"] == file)
        .unwrap()
}

const CHECK_INPUT: &str = r#"python3 -c 'import json,os,sys; d=json.load(sys.stdin); ok = os.environ["RUNNER_HOOK"] == "pre_tool" and d["task"] == "t" and d["tool"] == "write_file" and d["args"]["file_path"] == "ok.txt" and d["signatures"] == ["Edit(ok.txt)"] and d["decision"]["decision"] == "allow"; sys.exit(0 if ok else 3)'"#;

#[test]
fn pre_tool_hooks_deny_and_fail_closed_and_post_tool_output_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = format!(
        r#"hooks:
  pre_tool:
    - match: ["Edit(deny2.txt)"]
      run: echo "not this file" >&2; exit 2
    - match: ["Edit(deny3.txt)"]
      run: exit 3
    - match: ["Edit(slow.txt)"]
      run: sleep 20
      timeout: 1s
    - match: ["Edit(ok.txt)"]
      run: {}
  post_tool:
    - match: ["Edit(ok.txt)"]
      run: python3 -c 'import json,os,sys; d=json.load(sys.stdin); print("post saw", os.environ["RUNNER_HOOK"], d["status"])'
"#,
        serde_json::to_string(CHECK_INPUT).unwrap()
    );
    task(
        dir.path(),
        &hooks,
        &["deny2.txt", "deny3.txt", "slow.txt", "ok.txt"],
    );
    let (out, t) = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c = call(&t, "deny2.txt");
    assert_eq!(c["status"], "denied");
    assert!(
        c["content"].as_str().unwrap().contains("not this file"),
        "{c}"
    );
    assert_eq!(
        c["decision"]["rule"],
        "pre_tool hook `echo \"not this file\" >&2; exit 2`"
    );
    assert_eq!(c["hooks"][0]["effect"], "denied");
    let c = call(&t, "deny3.txt");
    assert_eq!(c["status"], "denied");
    assert!(
        c["content"]
            .as_str()
            .unwrap()
            .contains("exited 3 (a failing hook denies the call)"),
        "{c}"
    );
    assert_eq!(c["hooks"][0]["effect"], "failed_closed");
    let c = call(&t, "slow.txt");
    assert_eq!(c["status"], "denied");
    assert!(
        c["content"].as_str().unwrap().contains("ran out of time"),
        "{c}"
    );
    assert_eq!(c["hooks"][0]["timed_out"], true);
    let c = call(&t, "ok.txt");
    assert_eq!(c["status"], "ok", "{c}");
    assert_eq!(c["hooks"][0]["effect"], "allowed");
    assert_eq!(c["hooks"][1]["kind"], "post_tool");
    // What the model saw of the call holds the post_tool hook's output.
    let seen = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap())
        .find(|c| c.contains("post saw"))
        .unwrap();
    assert!(seen.contains("post saw post_tool ok"), "{seen}");
    // Only the allowed call's file is in the diff.
    let diff = std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap();
    assert!(diff.contains("b/ok.txt"), "{diff}");
    for denied in ["deny2.txt", "deny3.txt", "slow.txt"] {
        assert!(!diff.contains(denied), "{denied} was written:\n{diff}");
    }
}

#[test]
fn a_failing_post_tool_hook_fails_the_task() {
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "hooks:\n  post_tool:\n    - {match: [\"Edit(**)\"], run: \"exit 3\"}\n",
        &["a.txt"],
    );
    let (out, t) = run(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(t["outcome"]["status"], "failed");
    assert_eq!(
        t["outcome"]["reason"],
        "the post_tool hook `exit 3` exited 3"
    );
}

#[test]
fn hooks_of_a_policy_layer_run_for_every_task() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "", &["ok.txt", "b.txt"]);
    write(
        dir.path(),
        "layer.yaml",
        "default: allow\nhooks:\n  pre_tool:\n    - match: [\"Edit(b.txt)\"]\n      run: echo layer says no >&2; exit 2\n  post_tool:\n    - match: [\"Edit(ok.txt)\"]\n      run: touch hook-was-here\n",
    );
    let (out, t) = run(dir.path(), &["--policy", "layer.yaml", "--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(call(&t, "ok.txt")["status"], "ok");
    let b = call(&t, "b.txt");
    assert_eq!(b["status"], "denied");
    assert_eq!(b["decision"]["policy"], "layer.yaml");
    assert!(b["content"].as_str().unwrap().contains("layer says no"));
    // The hook's run is in the event stream as in the transcript.
    let finished = events(&out)
        .into_iter()
        .find(|e| e["event"] == "tool_finished" && e["record"]["arguments"]["file_path"] == "b.txt")
        .unwrap();
    assert_eq!(finished["record"]["hooks"], b["hooks"]);
    assert_eq!(b["hooks"][0]["effect"], "denied");
    // Hooks run in the workspace copy: what they write is in the diff,
    // not in the original.
    let diff = std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap();
    assert!(diff.contains("b/hook-was-here"), "{diff}");
    assert!(!dir.path().join("ws/hook-was-here").exists());
}

/// The task's `timeout` bounds a hook that outlives it (its own timeout is
/// longer): the run ends at the task's time with the outcome `timeout`, a
/// complete transcript and JUnit, and the hook's process is gone.
#[test]
fn the_task_timeout_cuts_a_hook_that_outlives_it() {
    let dir = tempfile::tempdir().unwrap();
    // A sleep no other process on the machine has: the hook's, to look
    // for afterwards (the hook's sandbox lets it write nowhere we keep).
    let nap = format!("29.{}", std::process::id());
    let hooks = format!(
        "timeout: 1s\nhooks:\n  pre_tool:\n    - match: [\"Edit(slow.txt)\"]\n      run: sleep {nap}\n      timeout: 60s\n"
    );
    task(dir.path(), &hooks, &["slow.txt"]);
    let start = std::time::Instant::now();
    let (out, t) = run(dir.path(), &[]);
    let took = start.elapsed();
    assert_eq!(
        out.status.code(),
        Some(75),
        "out of time: resumable {}",
        stderr(&out)
    );
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    assert_eq!(t["outcome"]["status"], "timeout", "{t}");
    assert!(
        t["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{t}"
    );
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("type=\"timeout\""), "{junit}");
    // The hook was killed with the task, not left to finish.
    let running = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains(&nap));
    assert!(!running, "the hook's `sleep {nap}` is still running");
}
