//! A shadow policy (issue 76): every call decided under a candidate too,
//! never enforced; the changes listed in the summary, the report and
//! JUnit, and `--shadow-fail-on` as the candidate's own gate.

use std::path::Path;

use serde_json::Value;

use crate::common::{examples, read_json, runner, stderr, validate_refuses, write};

/// `runner run -q --out out EXTRA tasks/*.yaml` over the examples in `d`.
fn run_examples(d: &Path, extra: &[&str]) -> std::process::Output {
    let tasks: Vec<String> = std::fs::read_dir(d.join("tasks"))
        .unwrap()
        .map(|e| format!("tasks/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out"])
        .args(extra)
        .args(&tasks)
        .output()
        .unwrap()
}

/// The `bash` call of task `task` in `d/out` whose command starts with
/// `command`.
fn bash_call(d: &Path, task: &str, command: &str) -> Value {
    let t = read_json(d.join(format!("out/{task}/transcript.json")));
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["tool"] == "bash"
                && c["arguments"]["command"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(command))
        })
        .cloned()
        .unwrap_or_else(|| panic!("no `{command}` call in {task}"))
}

#[test]
fn a_candidate_over_the_example_tasks_lists_the_calls_it_would_deny() {
    let dir = examples();
    let d = dir.path();
    // The control: no shadow, no shadow anywhere.
    let o = run_examples(d, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let grep = bash_call(d, "rename-function", "grep -rn sum_prices");
    assert!(grep.get("shadow").is_none(), "{grep}");
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(!summary.contains("Shadow policy"), "{summary}");
    assert!(
        !std::fs::read_to_string(d.join("out/junit.xml"))
            .unwrap()
            .contains("shadow_")
    );
    // Under the candidate (ci.yaml, and no `git commit`, no `bash grep`)
    // the run passes as before: nothing is enforced.
    let o = run_examples(d, &["--shadow-policy", "policies/ci-next.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let grep = bash_call(d, "rename-function", "grep -rn sum_prices");
    assert_eq!(grep["status"], "ok", "{grep}");
    assert_eq!(grep["decision"]["decision"], "allow");
    assert_eq!(grep["shadow"]["decision"], "deny", "{grep}");
    assert_eq!(grep["shadow"]["rule"], "deny Bash(grep:*)");
    assert_eq!(grep["shadow"]["policy"], "policies/ci-next.yaml");
    let t = read_json(d.join("out/rename-function/transcript.json"));
    assert_eq!(t["counts"]["shadow_newly_denied"], 1, "{}", t["counts"]);
    // Calls it agrees on carry its decision too.
    let agreed = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["shadow"]["decision"] == c["decision"]["decision"])
        .count();
    assert!(agreed >= 6, "{agreed}");
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(summary.contains("### Shadow policy"), "{summary}");
    assert!(
        summary.contains("- newly-denied: turn 4, bash Bash(grep -rn sum_prices src)")
            && summary.contains("→ deny (deny Bash(grep:*), policies/ci-next.yaml:25)"),
        "{summary}"
    );
    let junit = std::fs::read_to_string(d.join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("<property name=\"shadow_newly_denied\" value=\"1\"/>"),
        "{junit}"
    );
    let report = std::fs::read_to_string(d.join("out/report.html")).unwrap();
    assert!(report.contains("The shadow policy would change (1)"));
    // As the candidate's gate: exit 1 when it would deny a call the run
    // allowed, the reason on stderr; it would allow nothing the run denied.
    for (on, code) in [("newly-denied", 1), ("newly-allowed", 0)] {
        let candidate = ["--shadow-policy", "policies/ci-next.yaml"];
        let o = run_examples(d, &[&candidate[..], &["--shadow-fail-on", on]].concat());
        assert_eq!(o.status.code(), Some(code), "{on}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).contains("the shadow policy would deny 2 call(s) the run allowed"),
            code == 1,
            "{}",
            stderr(&o)
        );
    }
}

/// A task's `shadow_policy:`, its changes both ways, and the JSON events.
#[test]
fn a_tasks_shadow_policy_is_decided_on_every_call_and_in_the_events() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "candidate.yaml",
        "default: allow\nrules:\n  - deny: [\"Bash(cat:*)\"]\n",
    );
    write(
        d,
        "t.yaml",
        "name: t\nprompt: p\nworkspace: ws\nshadow_policy: candidate.yaml\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(rm:*)\"]\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: cat a.txt}}\n  - tool_calls:\n      - {name: bash, args: {command: rm a.txt}}\n  - tool_calls:\n      - {name: bash, args: {command: echo fine}}\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--format", "json", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    let calls = t["tool_calls"].as_array().unwrap();
    let shadow: Vec<&Value> = calls.iter().map(|c| &c["shadow"]["decision"]).collect();
    assert_eq!(shadow, ["deny", "allow", "allow"], "{calls:?}");
    assert_eq!(t["counts"]["shadow_newly_denied"], 1);
    assert_eq!(t["counts"]["shadow_newly_allowed"], 1);
    assert!(d.join("ws/a.txt").is_file(), "the rm stayed denied");
    let finished: Vec<Value> = crate::common::events(&o)
        .into_iter()
        .filter(|e| e["event"] == "tool_finished")
        .collect();
    assert_eq!(finished.len(), 3);
    assert_eq!(finished[0]["record"]["shadow"]["rule"], "deny Bash(cat:*)");
    // `--shadow-policy` takes precedence over the task's: under one that
    // agrees with the run, nothing changes.
    write(
        d,
        "same.yaml",
        "default: allow\nrules:\n  - deny: [\"Bash(rm:*)\"]\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "--shadow-policy", "same.yaml"])
        .args(["--shadow-fail-on", "changed", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    assert!(
        t["counts"].get("shadow_newly_denied").is_none(),
        "{}",
        t["counts"]
    );
    assert_eq!(t["tool_calls"][0]["shadow"]["decision"], "allow");
}

#[test]
fn a_bad_shadow_policy_stops_the_run_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "t.yaml", "name: t\nprompt: p\nscript:\n  - text: done\n");
    write(d, "bad.yaml", "default: allow\nrulez: []\n");
    let o = runner()
        .current_dir(d)
        .args([
            "run",
            "--out",
            "out",
            "--shadow-policy",
            "bad.yaml",
            "t.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("bad.yaml:2:"), "{}", stderr(&o));
    assert!(!d.join("out").exists(), "nothing ran");
    // `--shadow-fail-on` with no shadow to decide with.
    let o = runner()
        .current_dir(d)
        .args([
            "run",
            "--out",
            "out",
            "--shadow-fail-on",
            "changed",
            "t.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--shadow-fail-on: no shadow policy"),
        "{}",
        stderr(&o)
    );
    // A task's: a file that is not there, or one validate rejects.
    write(
        d,
        "missing.yaml",
        "name: t\nprompt: p\nshadow_policy: nowhere.yaml\nscript:\n  - text: done\n",
    );
    let e = validate_refuses(d, "missing.yaml");
    assert!(
        e.contains("missing.yaml:3:") && e.contains("shadow_policy: file"),
        "{e}"
    );
    write(
        d,
        "rejected.yaml",
        "name: t\nprompt: p\nshadow_policy: [bad.yaml]\nscript:\n  - text: done\n",
    );
    let e = validate_refuses(d, "rejected.yaml");
    assert!(e.contains("bad.yaml:2:"), "{e}");
}
