//! Tripwires (issue 76): `max_denials` ends a task at its Nth denied
//! call and `fail_fast` at the first denial of a class, the model not
//! asked again; `outcome.tripwire` names which.

use std::path::Path;

use serde_json::Value;

use crate::common::{bash_turns, runner, stderr, validate_refuses, write};

/// Runs task `t` in `d` (`--format json` events on stdout), which must
/// exit `code`; its transcript and the `task_finished` event.
fn run(d: &Path, code: i32) -> (Value, Value) {
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--format", "json", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    let finished = crate::common::events(&o)
        .into_iter()
        .find(|e| e["event"] == "task_finished")
        .expect("a task_finished event");
    (
        crate::common::read_json(d.join("out/t/transcript.json")),
        finished,
    )
}

/// A task in `d` with `fields` and a script of one `bash` call a turn.
fn task(d: &Path, fields: &str, policy: &str, commands: &[&str]) {
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        &format!(
            "name: t\nprompt: p\nworkspace: ws\nmax_turns: 10\n{fields}policy:\n{policy}script:\n{}  - text: done\n",
            bash_turns(commands)
        ),
    );
}

const NO_RM: &str =
    "  default: allow\n  rules:\n    - deny: [\"Bash(rm:*)\"]\n      reason: no removing\n";

#[test]
fn max_denials_ends_the_task_at_the_nth_denied_call_with_turns_left() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let asks = [
        "rm a.txt",
        "echo fine",
        "rm -f a.txt",
        "rm -rf .",
        "rm a.txt",
    ];
    // The control: without a budget the model asks on, and finishes.
    task(d, "", NO_RM, &asks);
    let (t, _) = run(d, 0);
    assert_eq!(t["counts"]["denied_calls"], 4, "{}", t["counts"]);
    assert_eq!(t["counts"]["turns"], 6);
    // With `max_denials: 2` the task ends after the third turn's call,
    // the second denied one; seven turns are left unused.
    task(d, "max_denials: 2\n", NO_RM, &asks);
    let (t, finished) = run(d, 1);
    assert_eq!(t["outcome"]["status"], "failed");
    assert_eq!(t["outcome"]["tripwire"], "denials", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("denials: 2 call(s) were denied (max_denials: 2)"),
        "{reason}"
    );
    assert!(reason.contains("deny Bash(rm:*)"), "{reason}");
    assert_eq!(t["counts"]["turns"], 3, "{}", t["counts"]);
    assert_eq!(t["tool_calls"].as_array().unwrap().len(), 3);
    assert!(
        std::fs::read_to_string(d.join("ws/a.txt")).is_ok(),
        "nothing was removed"
    );
    // The events say so too.
    assert_eq!(finished["tripwire"], "denials", "{finished}");
    let junit = std::fs::read_to_string(d.join("out/junit.xml")).unwrap();
    assert!(junit.contains("denials: 2 call(s)"), "{junit}");
    // The action's `conclusion` output names the wire.
    let o = runner()
        .current_dir(d)
        .args([
            "run",
            "-q",
            "--out",
            "out",
            "--github-output",
            "gh",
            "t.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let written = std::fs::read_to_string(d.join("gh")).unwrap();
    assert!(
        written.starts_with("exit-code=1\nconclusion=denials\n"),
        "{written}"
    );
}

#[test]
fn fail_fast_credentials_ends_at_the_credentials_layers_denial_only() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/.npmrc", "//registry.npmjs.org/:_authToken=SECRET\n");
    let asks = ["rm a.txt", "cat .npmrc", "echo after"];
    // An ordinary denial does not trip it; the credentials layer's does.
    task(d, "fail_fast: [credentials]\n", NO_RM, &asks);
    let (t, _) = run(d, 1);
    assert_eq!(t["outcome"]["tripwire"], "credentials", "{}", t["outcome"]);
    assert_eq!(t["counts"]["turns"], 2);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("fail_fast credentials: bash in turn 2"),
        "{reason}"
    );
    // The control: failing fast on another class, the task goes on.
    task(d, "fail_fast: [exec, network]\n", NO_RM, &asks);
    let (t, _) = run(d, 0);
    assert_eq!(t["counts"]["turns"], 4);
    assert!(t["outcome"].get("tripwire").is_none(), "{}", t["outcome"]);
}

#[test]
fn fail_fast_network_ends_at_a_refused_fetch_or_connection() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let policy = "  default: allow\n  network:\n    deny: [evil.test]\n";
    // The analysis cannot see the host: the proxy refuses the connection.
    let connect = "python3 -c \"import urllib.request; urllib.request.urlopen('http://evil.test:9/')\" || echo refused";
    task(
        d,
        "fail_fast: [network]\n",
        policy,
        &["echo one", connect, "echo three"],
    );
    let (t, _) = run(d, 1);
    assert_eq!(t["outcome"]["tripwire"], "network", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("evil.test:9"), "{reason}");
    assert_eq!(t["counts"]["turns"], 2);
    // The control: without the wire, the refusal is recorded and the task
    // goes on.
    task(d, "", policy, &["echo one", connect, "echo three"]);
    let (t, _) = run(d, 0);
    assert_eq!(t["counts"]["turns"], 4);
    assert_eq!(t["counts"]["denied_connections"], 1, "{}", t["counts"]);
}

#[test]
fn fail_fast_exec_ends_when_the_wall_refuses_a_denied_program() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let policy = "  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\n";
    // Inline code the analysis cannot read runs `git push`: the exec wall
    // refuses it.
    let push = "python3 -c \"import subprocess; subprocess.run(['git', 'push', 'origin'])\"";
    task(d, "fail_fast: [exec]\n", policy, &[push, "echo two"]);
    let (t, _) = run(d, 1);
    let call = &t["tool_calls"][0];
    assert_eq!(call["decision"]["decision"], "allow", "{call}");
    assert_eq!(t["outcome"]["tripwire"], "exec", "{}", t["outcome"]);
    assert!(
        t["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("git push"),
        "{}",
        t["outcome"]
    );
    assert_eq!(t["counts"]["turns"], 1);
}

#[test]
fn bad_tripwires_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "zero.yaml",
        "name: t\nprompt: p\nmodel: scripted\nmax_denials: 0\n",
    );
    let e = validate_refuses(d, "zero.yaml");
    assert!(
        e.contains("zero.yaml:4:") && e.contains("max_denials: must be at least 1"),
        "{e}"
    );
    write(
        d,
        "class.yaml",
        "name: t\nprompt: p\nmodel: scripted\nfail_fast: [network, secrets]\n",
    );
    let e = validate_refuses(d, "class.yaml");
    assert!(
        e.contains("class.yaml:4:")
            && e.contains("fail_fast: unknown class `secrets`; the classes are credentials, network, exec, canary"),
        "{e}"
    );
}
