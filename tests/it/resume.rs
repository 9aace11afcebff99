//! `runner run --resume OUT` (issue 30, item 4): a run stopped by SIGTERM
//! exits 75, and resumed it ends as an uninterrupted run would: the same
//! diff, the spending carried over, the calls cut short told to the model,
//! and requests that extend the interrupted run's, byte for byte.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{read_json, runner, sigterm_once_running, stderr, turn_numbers, write};

/// Waits until `sleeper` runs, sends SIGTERM, and returns the exit code.
fn stop_while(mut cmd: Command, sleeper: [&str; 2]) -> i32 {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    sigterm_once_running(&child, &sleeper);
    child.wait().unwrap().code().unwrap()
}

/// A task whose second turn runs `sleep $NAP` and then writes b.txt; its
/// third turn writes b.txt again (what a model told that the write's
/// outcome is unknown would do), and the fourth ends.
fn slow_task(dir: &Path) {
    write(dir, "ws/keep.txt", "keep\n");
    write(
        dir,
        "slow.yaml",
        r#"name: slow
prompt: Write two files.
workspace: ws
policy:
  default: allow
script:
  - tool_calls:
      - {name: write_file, id: w1, args: {file_path: a.txt, content: "one\n"}}
  - tool_calls:
      - {name: bash, id: s1, args: {command: "sleep ${NAP:-0}", timeout: 120000}}
      - {name: write_file, id: w2, args: {file_path: b.txt, content: "two\n"}}
  - tool_calls:
      - {name: write_file, id: w3, args: {file_path: b.txt, content: "two\n"}}
  - text: Both files are written.
"#,
    );
    write(
        dir,
        "quick.yaml",
        "name: quick\nprompt: Nothing.\nworkspace: ws\nscript:\n  - text: Nothing to do.\n",
    );
}

#[test]
fn a_run_stopped_by_sigterm_resumes_to_the_diff_of_an_uninterrupted_run() {
    // The uninterrupted run.
    let reference = tempfile::tempdir().unwrap();
    slow_task(reference.path());
    let out = runner()
        .current_dir(reference.path())
        .env_remove("NAP")
        .args(["run", "--out", "out", "quick.yaml", "slow.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = std::fs::read_to_string(reference.path().join("out/slow/changes.diff")).unwrap();
    assert!(expected.contains("b/b.txt"), "{expected}");

    // Stopped while turn 2's command runs, before its write.
    let dir = tempfile::tempdir().unwrap();
    slow_task(dir.path());
    let mut cmd = runner();
    cmd.current_dir(dir.path()).env("NAP", "47.25").args([
        "run",
        "--jobs",
        "1",
        "--out",
        "out",
        "quick.yaml",
        "slow.yaml",
    ]);
    assert_eq!(
        stop_while(cmd, ["sleep", "47.25"]),
        75,
        "resumable: try again"
    );
    let stopped = read_json(dir.path().join("out/slow/transcript.json"));
    assert_eq!(stopped["outcome"]["status"], "cancelled");
    let quick_before = std::fs::read(dir.path().join("out/quick/transcript.json")).unwrap();

    // Resumed: the quick task is kept as it was, the slow one goes on.
    let out = runner()
        .current_dir(dir.path())
        .env_remove("NAP")
        .args(["run", "--resume", "out", "quick.yaml", "slow.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(dir.path().join("out/quick/transcript.json")).unwrap(),
        quick_before,
        "a task that ended is kept"
    );
    let diff = std::fs::read_to_string(dir.path().join("out/slow/changes.diff")).unwrap();
    assert_eq!(diff, expected);
    let t = read_json(dir.path().join("out/slow/transcript.json"));
    assert_eq!(t["outcome"]["status"], "passed", "{}", t["outcome"]);
    assert_eq!(t["resumes"], 1);
    assert_eq!(t["started_at"], stopped["started_at"]);
    assert_eq!(turn_numbers(&t), [1, 2, 3, 4], "the turns carry over");
    // The calls cut short were told to the model as of unknown outcome.
    let told: Vec<&Value> = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["role"] == "tool"
                && m["content"]
                    .as_str()
                    .unwrap()
                    .starts_with("outcome unknown")
        })
        .collect();
    assert_eq!(told.len(), 2, "{}", t["messages"]);
    assert_eq!(told[0]["call_id"], "s1");
    assert!(
        told[0]["content"]
            .as_str()
            .unwrap()
            .contains("may have run")
    );
    assert_eq!(told[1]["call_id"], "w2");
    let report = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(
        report.contains("resumed 1 time(s)"),
        "report.html names no resumption"
    );
    // Summary and JUnit hold both tasks.
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("quick") && junit.contains("slow"), "{junit}");
}

#[test]
fn resumed_requests_extend_the_interrupted_runs_byte_for_byte() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "alpha\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: Wait, then say done.\nmodel: {}\nworkspace: ws\npolicy:\n  default: allow\nmodel_options: {{pricing: {{input: 1.0, output: 2.0}}}}\n",
            v.model()
        ),
    );
    let mut first = turn(
        "",
        vec![call(
            "c1",
            "bash",
            json!({"command": "sleep 48.75", "timeout": 120000}),
        )],
    );
    first.input_tokens = 1000;
    let replies = [
        wire::reply(v, &first),
        wire::reply(v, &turn("Done.", vec![])),
    ];
    let server = FakeServer::start(move |_, n| replies[n.min(1)].clone());
    let mut cmd = wire::runner_for(v, &server.url(), "sk-test-resume");
    cmd.current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"]);
    assert_eq!(stop_while(cmd, ["sleep", "48.75"]), 75);
    let spent = read_json(dir.path().join("out/t/transcript.json"))["usage"]["cost_usd"]
        .as_f64()
        .unwrap();
    assert!(spent > 0.0);
    let out = wire::runner_for(v, &server.url(), "sk-test-resume")
        .current_dir(dir.path())
        .args(["run", "--resume", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let (before, after) = (&reqs[0].body, &reqs[1].body);
    // The same system prompt, tools and messages, then the new ones.
    assert_eq!(before["tools"], after["tools"]);
    let (b, a) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert_eq!(
        &a[..b.len()],
        &b[..],
        "the resumed request extends the first"
    );
    assert_eq!(a[b.len()]["role"], "assistant");
    assert_eq!(a[b.len() + 1]["role"], "tool");
    assert!(
        a[b.len() + 1]["content"]
            .as_str()
            .unwrap()
            .starts_with("outcome unknown"),
        "{}",
        a[b.len() + 1]
    );
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert!(
        t["usage"]["cost_usd"].as_f64().unwrap() > spent,
        "the cost carries over"
    );
}

#[test]
fn shards_cut_short_merge_into_a_run_that_resumes() {
    // Two shards: one task passes, one runs out of time (resumable).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "ok.yaml",
        "name: ok\nprompt: x\nworkspace: ws\nscript:\n  - text: done\n",
    );
    write(
        d,
        "late.yaml",
        "name: late\nprompt: x\nworkspace: ws\ntimeout: 1s\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: \"sleep ${NAP:-0}\"}}\n  - text: done\n",
    );
    for (task, out, nap) in [("ok.yaml", "a", "0"), ("late.yaml", "b", "30")] {
        let o = runner()
            .current_dir(d)
            .env("NAP", nap)
            .args(["run", "-q", "--out", out, task])
            .output()
            .unwrap();
        assert!(matches!(o.status.code(), Some(0 | 75)), "{}", stderr(&o));
    }
    let o = runner()
        .current_dir(d)
        .args(["merge", "--out", "merged", "a", "b"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    // Spilled results come along with their task.
    std::fs::create_dir_all(d.join("a/ok/tool-results")).unwrap();
    std::fs::write(d.join("a/ok/tool-results/bash-1.txt"), "spilled\n").unwrap();
    let o = runner()
        .current_dir(d)
        .args(["merge", "--out", "merged", "a", "b"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("merged/ok/tool-results/bash-1.txt")).unwrap(),
        "spilled\n"
    );
    // And the merged folder resumes: the late task goes on and passes.
    let o = runner()
        .current_dir(d)
        .env_remove("NAP")
        .args(["run", "--resume", "merged", "ok.yaml", "late.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t = read_json(d.join("merged/late/transcript.json"));
    assert_eq!(t["outcome"]["status"], "passed", "{}", t["outcome"]);
    assert_eq!(t["resumes"], 1);
}
