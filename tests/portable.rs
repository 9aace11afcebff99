//! The portable build (`--features portable`, the same as `RUSTFLAGS="--cfg
//! runner_portable"`): the path of `src/contain/` that Windows and every
//! platform without a sandbox of ours takes, built and tested on Linux by
//! `.ci/run` (`cargo test --features portable --test portable`). In other
//! builds this file is empty.
//!
//! It runs the example tasks, reports no sandbox (the transcript's
//! `sandbox`, `runner doctor`), and decides as strictly as with no
//! backstop: inline code under a deny rule the analysis cannot see past is
//! refused, where the Linux build's supervisor lets it run.
#![cfg(runner_portable)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn runner() -> Command {
    Command::cargo_bin("runner").unwrap()
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn transcript(out: &Path, task: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join(task).join("transcript.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_example_tasks_pass_and_each_transcript_says_there_is_no_sandbox() {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = runner();
    cmd.current_dir(repo())
        .env("CI", "true")
        .arg("run")
        .arg("--out")
        .arg(out.path());
    let mut tasks: Vec<PathBuf> = std::fs::read_dir(repo().join("tasks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    tasks.sort();
    assert!(tasks.len() >= 5, "{tasks:?}");
    let run = cmd.args(&tasks).output().unwrap();
    let log = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{log}");
    for task in &tasks {
        let name = task.file_stem().unwrap().to_str().unwrap();
        let t = transcript(out.path(), name);
        let sandbox = t["sandbox"].as_str().unwrap_or_default();
        assert!(
            sandbox.starts_with("none (this build has no OS sandbox (a portable build))"),
            "{name}: {sandbox}"
        );
    }
}

#[test]
fn doctor_reports_no_sandbox_and_require_fails() {
    let out = runner()
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["sandbox"], "none", "{r}");
    assert_eq!(r["supervisor"], false, "{r}");
    let held: Vec<&str> = r["backstops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["held"] == true)
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(held, ["edits"], "{r}");
    let required = runner()
        .args(["doctor", "--require", "confined"])
        .output()
        .unwrap();
    assert_eq!(required.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&required.stderr)
            .contains("confined (this build has no OS sandbox"),
        "{}",
        String::from_utf8_lossy(&required.stderr)
    );
}

#[test]
fn inline_code_under_an_unbacked_deny_rule_is_refused_and_sandbox_required_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/a.txt"), "a\n").unwrap();
    let task = |sandbox: &str| {
        format!(
            r#"prompt: p
workspace: ws
{sandbox}
policy:
  default: allow
  rules:
    - deny: ["Bash(git push:*)"]
script:
  - tool_calls:
      - {{name: bash, args: {{command: "python3 -c 'print(6 * 7)'"}}}}
      - {{name: bash, args: {{command: "cat a.txt"}}}}
  - text: done
"#
        )
    };
    std::fs::write(d.join("t.yaml"), task("")).unwrap();
    let out = d.join("out");
    let run = runner()
        .current_dir(d)
        .env("CI", "true")
        .args(["run", "--out"])
        .arg(&out)
        .arg("t.yaml")
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let t = transcript(&out, "t");
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["status"], "denied", "{}", calls[0]);
    let reason = calls[0]["decision"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("cannot be checked safely") && reason.contains("inline code"),
        "{reason}"
    );
    assert_eq!(calls[1]["status"], "ok", "{}", calls[1]);
    assert!(
        calls[1]["content"]
            .as_str()
            .unwrap()
            .ends_with("--- stdout ---\na\n"),
        "{}",
        calls[1]
    );

    // `sandbox: required` cannot be met here: the task fails and says why.
    std::fs::write(d.join("t.yaml"), task("sandbox: required")).unwrap();
    let run = runner()
        .current_dir(d)
        .env("CI", "true")
        .args(["run", "--out"])
        .arg(d.join("out2"))
        .arg("t.yaml")
        .output()
        .unwrap();
    assert_ne!(run.status.code(), Some(0));
    let t = transcript(&d.join("out2"), "t");
    assert!(
        t.to_string()
            .contains("sandbox: required, but this build has no OS sandbox"),
        "{t}"
    );
}
