//! `runner doctor` (issue 44): what this machine offers the sandbox and
//! which backstops a run here holds, on this machine and with Landlock or
//! the supervisor simulated away; `--require` for a workflow's first step.

use serde_json::Value;

use crate::common::{python, runner, stderr, write};

fn doctor(env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut cmd = runner();
    cmd.arg("doctor").args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn report(env: &[(&str, &str)]) -> Value {
    let out = doctor(env, &["--format", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The backstop `name`: (held, why).
fn backstop(r: &Value, name: &str) -> (bool, String) {
    let b = r["backstops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {r}"));
    (
        b["held"].as_bool().unwrap(),
        b["why"].as_str().unwrap().into(),
    )
}

/// This machine (and CI's, of the same kind) has Landlock with scopes and
/// seccomp's user notification: every backstop holds, and the JSON is
/// what `runner schema doctor` says.
#[test]
fn this_machine_holds_every_backstop_and_the_json_is_its_schema() {
    let r = report(&[]);
    assert_eq!(r["platform"], "linux");
    assert_eq!(r["sandbox"], "landlock");
    assert!(r["kernel"].as_str().is_some_and(|k| !k.is_empty()), "{r}");
    assert!(r["landlock_abi"].as_u64().unwrap() >= 6, "{r}");
    assert_eq!(r["seccomp_notify"], true);
    assert_eq!(r["supervisor"], true);
    for name in ["reads", "edits", "confined", "exec", "network"] {
        let (held, why) = backstop(&r, name);
        assert!(held, "{name}: {why}");
    }
    assert!(backstop(&r, "exec").1.contains("supervisor"));
    let dir = tempfile::tempdir().unwrap();
    let schema = runner().args(["schema", "doctor"]).output().unwrap();
    let file = write(
        dir.path(),
        "doctor.schema.json",
        &String::from_utf8_lossy(&schema.stdout),
    );
    let check = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
v.validate(json.load(sys.stdin))
assert not v.is_valid({"platform": "linux"})
"#;
    python(
        check,
        &[&file.display().to_string()],
        r.to_string().as_bytes(),
    );
    let text = doctor(&[], &[]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("landlock         ABI"), "{text}");
    assert!(text.contains("exec        held"), "{text}");
}

/// Without Landlock the supervisor still runs (the network backstop:
/// connections by address), the edits backstop holds, each missing one
/// says why, and `--require` fails on exactly the missing ones.
#[test]
fn without_landlock_only_edits_hold_and_require_says_which_are_missing() {
    let env = [("RUNNER_SIMULATE_NO_LANDLOCK", "1")];
    let r = report(&env);
    assert!(r.get("landlock_abi").is_none(), "{r}");
    assert_eq!(r["supervisor"], true);
    assert!(backstop(&r, "edits").0);
    assert!(backstop(&r, "network").0);
    for name in ["reads", "confined", "exec"] {
        let (held, why) = backstop(&r, name);
        assert!(!held, "{name}");
        assert!(why.contains("RUNNER_SIMULATE_NO_LANDLOCK"), "{name}: {why}");
    }
    let ok = doctor(&env, &["--require", "edits"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let missing = doctor(&env, &["--require", "edits,confined,exec"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = stderr(&missing);
    assert!(
        err.contains("confined (") && err.contains("exec (") && !err.contains("edits ("),
        "{err}"
    );
}

/// Without the supervisor (seccomp's user notification refused), Landlock
/// still confines writes here (no daemon socket is reachable), but execs
/// and connections are not decided at the syscall.
#[test]
fn without_the_supervisor_exec_and_network_are_missing() {
    let r = report(&[("RUNNER_SIMULATE_NO_SUPERVISOR", "1")]);
    assert_eq!(r["seccomp_notify"], false);
    assert_eq!(r["supervisor"], false);
    assert!(backstop(&r, "reads").0);
    let no_daemons = r["daemon_sockets"].as_array().unwrap().is_empty();
    assert_eq!(backstop(&r, "confined").0, no_daemons, "{r}");
    for name in ["exec", "network"] {
        let (held, why) = backstop(&r, name);
        assert!(!held && why.contains("no supervisor"), "{name}: {why}");
    }
    let bad = doctor(&[], &["--require", "everything"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("--require everything"),
        "{}",
        stderr(&bad)
    );
}

/// Where the runner may not ptrace its commands (simulated), the exec
/// backstop is partial: execs are decided when asked for, but not
/// followed to where the kernel runs them; the rest holds. The report
/// says what commands hold of the runner's capabilities.
#[test]
fn without_ptrace_the_exec_backstop_is_partial() {
    let r = report(&[("RUNNER_SIMULATE_NO_EXEC_FOLLOW", "1")]);
    assert_eq!(r["exec_follow"], false);
    assert_eq!(r["supervisor"], true);
    let (held, why) = backstop(&r, "exec");
    assert!(
        !held && why.starts_with("partial:") && why.contains("RUNNER_SIMULATE_NO_EXEC_FOLLOW"),
        "{why}"
    );
    assert!(backstop(&r, "network").0);
    let here = report(&[]);
    assert_eq!(here["exec_follow"], true);
    assert!(
        here["capabilities"]
            .as_str()
            .unwrap()
            .contains("cannot chroot"),
        "{here}"
    );
    let missing = doctor(
        &[("RUNNER_SIMULATE_NO_EXEC_FOLLOW", "1")],
        &["--require", "exec"],
    );
    assert_eq!(missing.status.code(), Some(1), "{}", stderr(&missing));
}

/// `runner sandbox TASK -- CMD` runs a command under the task's sandbox
/// in a copy of its workspace: a write inside the copy succeeds, one
/// outside it fails, and the original workspace is untouched; `--print`
/// says what is enforced.
#[test]
fn sandbox_runs_a_command_in_the_tasks_copy_and_walls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: p\nworkspace: ws\nscript: []\n",
    );
    let sandbox = |args: &[&str]| {
        runner()
            .current_dir(d)
            .args(["sandbox", "t.yaml"])
            .args(args)
            .output()
            .unwrap()
    };
    let plan = sandbox(&["--print"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = String::from_utf8_lossy(&plan.stdout);
    assert!(
        text.contains("sandbox: landlock (ABI") && text.contains("writable: "),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "the original workspace {}",
            d.join("ws").display()
        )),
        "{text}"
    );
    let inside = sandbox(&[
        "--",
        "sh",
        "-c",
        "echo in > inside.txt && cat inside.txt a.txt",
    ]);
    assert!(inside.status.success(), "{}", stderr(&inside));
    assert_eq!(String::from_utf8_lossy(&inside.stdout), "in\na\n");
    let outside = d.join("outside.txt");
    let script = format!("echo out > {}", outside.display());
    let out = sandbox(&["--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(1));
    // Landlock refuses it, or the test's folder (in the machine's /tmp) is
    // bound back read-only into the command's own /tmp.
    assert!(
        stderr(&out).contains("Permission denied")
            || stderr(&out).contains("Read-only file system"),
        "{}",
        stderr(&out)
    );
    assert!(!outside.exists());
    assert!(
        !d.join("ws/inside.txt").exists(),
        "the original was written"
    );
    let nothing = sandbox(&[]);
    assert_eq!(nothing.status.code(), Some(2));
}

#[test]
fn sandbox_prints_the_macos_profile_of_the_tasks_copy_here() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "prompt: p\nworkspace: ws\nscript: []\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Edit(.github/**)\", \"Read(./.env)\", \"Bash(git push:*)\"]\n  network:\n    allow: [example.com]\n",
    );
    let out = runner()
        .current_dir(d)
        .args(["sandbox", "t.yaml", "--platform", "macos", "--print"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let profile = String::from_utf8_lossy(&out.stdout);
    assert!(profile.starts_with("(version 1)\n"), "{profile}");
    // The copy (a temp folder) is writable, the original unreadable.
    let copy = profile
        .lines()
        .find_map(|l| l.trim().strip_prefix("(subpath \"")?.strip_suffix("\")"))
        .unwrap();
    assert!(copy.contains("runner-ws-"), "{profile}");
    assert!(
        profile.contains(&format!("(deny file-write* (subpath \"{copy}/.github\"))")),
        "{profile}"
    );
    assert!(
        profile.contains(&format!("(deny file-write* (literal \"{copy}/.env\"))")),
        "{profile}"
    );
    let original = std::fs::canonicalize(d.join("ws")).unwrap();
    assert!(
        profile.contains(&format!(
            "(deny file-read* file-write* (subpath \"{}\"))",
            original.display()
        )),
        "{profile}"
    );
    assert!(
        profile.contains("(remote ip \"localhost:PORT\")"),
        "{profile}"
    );
    assert!(profile.contains(";   deny Bash(git push:*)"), "{profile}");
    // A command runs under this machine's sandbox only.
    let refused = runner()
        .current_dir(d)
        .args(["sandbox", "t.yaml", "--platform", "macos", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("give --print alone"),
        "{}",
        stderr(&refused)
    );
}
