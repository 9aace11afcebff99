//! The exec wall's corpus (issue 41): every row of
//! tests/fixtures/policy/exec-wall.yaml runs for real, as one task's bash
//! calls, under program deny rules with the supervisor on. A hostile row
//! starts a denied program where the gate cannot see it (inline code, a
//! value only known at run time, a copy, a link, a spoofed `argv[0]`, a
//! wrapper): its exec is refused and the call's record names the rule. A
//! plain row starts what no rule denies: nothing is refused. And whatever
//! the rows did, the remote the sandbox lets them write got no push.

use std::path::Path;
use std::process::Command;

use crate::common::{bash_turns, read_json, runner, stderr, write};

const PUSH: &str = "push -q origin HEAD:refs/heads/pushed";

struct Row {
    bash: String,
    refused_by: Option<String>,
    /// For a refusal by a program's rule of an argv that does not match it
    /// as written: a part of the reason the record gives. None: the argv
    /// matches the rule, and the record gives no reason.
    reason: Option<String>,
    /// Refused where the kernel committed the exec, after the first look
    /// let it go (the record's `ended`).
    ended: bool,
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/policy/exec-wall.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let bash = c["bash"].as_str().unwrap().replace("$PUSH", PUSH);
            let refused_by = match c["expect"].as_str().unwrap() {
                "refused" => Some(c["rule"].as_str().unwrap().to_string()),
                "runs" => None,
                other => panic!("{bash}: expect {other}"),
            };
            let reason = c["reason"].as_str().map(str::to_string);
            let ended = c["ended"].as_bool().unwrap_or(false);
            Row {
                bash,
                refused_by,
                reason,
                ended,
            }
        })
        .collect()
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap()
}

/// `d/ws`, a git repository with one commit whose `origin` is the bare
/// repository `d/remote.git`; the remote's path.
pub(crate) fn workspace_with_remote(d: &Path) -> std::path::PathBuf {
    let ws = d.join("ws");
    write(d, "ws/a.txt", "a\n");
    assert!(
        git(d, &["init", "-q", "--bare", "remote.git"])
            .status
            .success()
    );
    for args in [
        &["init", "-q"][..],
        &["add", "."],
        &["commit", "-qm", "init"],
    ] {
        assert!(git(&ws, args).status.success(), "git {args:?}");
    }
    let remote = d.join("remote.git").canonicalize().unwrap();
    let origin = remote.display().to_string();
    assert!(
        git(&ws, &["remote", "add", "origin", &origin])
            .status
            .success()
    );
    remote
}

/// Runs a task of `settings` whose turns are `commands` in `d`, which
/// must pass; its transcript.
fn run_passing(d: &Path, settings: &str, commands: &[&str]) -> serde_json::Value {
    run_passing_with(d, settings, commands, &[])
}

/// [`run_passing`] with `env` set.
pub(crate) fn run_passing_with(
    d: &Path,
    settings: &str,
    commands: &[&str],
    env: &[(&str, &str)],
) -> serde_json::Value {
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\n{settings}script:\n{}  - text: done\n",
            bash_turns(commands)
        ),
    );
    run_with(runner(), d, &task, env)
}

/// `runner` (the binary, or a command that starts it) running `task` in
/// `d` with `env`, which must pass; its transcript.
fn run_with(mut runner: Command, d: &Path, task: &Path, env: &[(&str, &str)]) -> serde_json::Value {
    let o = runner
        .current_dir(d)
        .envs(env.iter().copied())
        .args(["run", "-q", "--out", "out"])
        .arg(task)
        .output()
        .unwrap();
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(o.status.code(), Some(0), "{}: {}", t["outcome"], stderr(&o));
    t
}

/// Whether the run `t` had no supervisor (the kernel refused it), said on
/// stderr: a test of what it decides has nothing to look at then.
pub(crate) fn without_supervisor(t: &serde_json::Value) -> bool {
    let none = t["sandbox"]
        .as_str()
        .is_some_and(|s| s.contains("no supervisor"));
    if none {
        eprintln!("no supervisor here: {}", t["sandbox"]);
    }
    none
}

#[test]
fn the_exec_wall_holds_where_the_gate_cannot_see() {
    let rows = rows();
    let hostile = rows.iter().filter(|r| r.refused_by.is_some()).count();
    assert!(
        hostile >= 12 && rows.len() - hostile >= 8,
        "{} rows",
        rows.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let remote = workspace_with_remote(d);
    let origin = remote.display().to_string();
    let commands: Vec<&str> = rows.iter().map(|r| r.bash.as_str()).collect();
    let t = run_passing(
        d,
        &format!(
            "max_turns: 80\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\", \"Bash(curl:*)\", \"Bash(cargo publish:*)\", \"Bash(gh pr merge:*)\"]\nsandbox: {{write: [\"{origin}\"]}}\n"
        ),
        &commands,
    );
    assert_eq!(t["backstops"]["exec"], true, "{}", t["backstops"]);
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), rows.len());
    let mut wrong = Vec::new();
    for (row, call) in rows.iter().zip(calls) {
        // The gate let each row run: the wall is what is tested.
        if call["decision"]["decision"] != "allow" {
            wrong.push(format!(
                "{}: the gate decided {}",
                row.bash, call["decision"]
            ));
            continue;
        }
        let refusals = call["metadata"]["sandbox_refusals"].as_array();
        let first = refusals.and_then(|r| r.first());
        let rule = first.map(|r| r["rule"].as_str().unwrap_or_default().to_string());
        let reason = first.and_then(|r| r["reason"].as_str());
        let ended = first.is_some_and(|r| r["ended"] == true);
        match (&row.refused_by, &rule) {
            (Some(want), Some(got)) if want == got => {
                if ended != row.ended {
                    wrong.push(format!(
                        "{}: ended {ended}, expected {} ({})",
                        row.bash, row.ended, call["content"]
                    ));
                }
                let fits = match (&row.reason, reason) {
                    (None, None) => true,
                    // The model reads it too.
                    (Some(part), Some(given)) => {
                        given.contains(part.as_str())
                            && call["content"].as_str().is_some_and(|c| c.contains(given))
                    }
                    _ => false,
                };
                if !fits {
                    wrong.push(format!(
                        "{}: expected the reason {:?}, the record gives {reason:?}",
                        row.bash, row.reason
                    ));
                }
            }
            (None, None) => {
                if call["status"] != "ok" {
                    wrong.push(format!("{}: ran, but {}", row.bash, call["content"]));
                }
            }
            _ => wrong.push(format!(
                "{}: expected {:?}, refused by {:?} ({})",
                row.bash, row.refused_by, rule, call["content"]
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Nothing reached the remote.
    let refs = git(&remote, &["for-each-ref"]);
    assert!(
        refs.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&refs.stdout)
    );
    assert_eq!(
        t["counts"]["denied_calls"].as_u64(),
        Some(hostile as u64),
        "{}",
        t["counts"]
    );
}

/// Each command's supervisor thread ends with the command's processes
/// (the kernel hangs its listener up): after six commands under a program
/// deny rule, the runner has the running command's supervisor only.
/// (A version that waited in the receive rather than in `poll` once spun
/// on the receive's `ENOENT` after the hang-up and kept every thread.)
#[test]
fn a_commands_supervisor_ends_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let count = "for t in /proc/$PPID/task/*; do cat $t/comm; done | grep -c '^runner-supervis'";
    let mut commands = vec!["true"; 5];
    commands.push(count);
    let t = run_passing(
        d,
        "workspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Read(/proc/**)\"]\n    - deny: [\"Bash(git push:*)\"]\n",
        &commands,
    );
    if t["backstops"]["exec"] != true {
        eprintln!("no supervisor here: {}", t["sandbox"]);
        return;
    }
    let calls = t["tool_calls"].as_array().unwrap();
    let last = calls.last().unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let n = last
        .lines()
        .skip_while(|l| *l != "--- stdout ---")
        .nth(1)
        .unwrap_or_else(|| panic!("{last}"));
    assert_eq!(n, "1", "{last}");
}

/// Without Landlock (simulated, `best-effort`) commands may write
/// anywhere, so no deny rule is backed and the gate decides as strictly
/// as before (inline code refused); but the supervisor still runs, and
/// what the gate lets through without looking into it (a script, a
/// Makefile recipe) cannot start a denied program: the push never lands.
#[test]
fn without_landlock_the_exec_wall_still_holds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let remote = workspace_with_remote(d);
    write(d, "ws/push.sh", &format!("git {PUSH}; echo pushed=$?\n"));
    write(
        d,
        "ws/Makefile",
        &format!("all:\n\tgit {PUSH}; echo made=$$?\n"),
    );
    let t = run_passing_with(
        d,
        &format!(
            "workspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\nsandbox: {{write: [\"{}\"]}}\n",
            remote.display()
        ),
        &[
            "bash push.sh",
            "make -s",
            "python3 -c 'import os; os.execvp(\"git\", [\"git\", \"push\"])'",
        ],
        &[("RUNNER_SIMULATE_NO_LANDLOCK", "1")],
    );
    if without_supervisor(&t) {
        return;
    }
    for held in ["confined", "exec"] {
        assert_eq!(t["backstops"][held], false, "{}", t["backstops"]);
    }
    let calls = t["tool_calls"].as_array().unwrap();
    for (call, said) in calls.iter().zip(["pushed=126", "made=126"]) {
        assert_eq!(call["decision"]["decision"], "allow", "{call}");
        let content = call["content"].as_str().unwrap();
        assert!(content.contains(said), "{content}");
        let refusal = &call["metadata"]["sandbox_refusals"][0];
        assert_eq!(refusal["rule"], "deny Bash(git push:*)", "{call}");
        assert_eq!(refusal["argv"][1], "push", "{call}");
    }
    // make's shell tries each folder of PATH: one refusal, said once.
    let make = &calls[1];
    assert_eq!(
        make["metadata"]["sandbox_refusals"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "{make}"
    );
    assert_eq!(
        make["content"]
            .as_str()
            .unwrap()
            .matches("refused by the sandbox")
            .count(),
        1,
        "{make}"
    );
    assert_ne!(calls[2]["decision"]["decision"], "allow", "{}", calls[2]);
    let refs = git(&remote, &["for-each-ref"]);
    assert!(
        refs.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&refs.stdout)
    );
}

/// Without Landlock the runner is not dumpable, nor is a command's first
/// process until its exec, so a runner that is not root (no
/// `CAP_SYS_PTRACE`) cannot read that exec's path: the spawn's own exec,
/// of the program the runner chose, goes on, and the wall decides every
/// exec after it as before. Run as nobody when the test runs as root.
#[test]
fn without_landlock_a_runner_that_is_not_root_runs_commands_under_the_wall() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/push.sh", &format!("git {PUSH}; echo pushed=$?\n"));
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\nscript:\n{}  - text: done\n",
            bash_turns(&["echo hello", "bash push.sh"])
        ),
    );
    // The binary and the folder, usable by any user.
    let exe = d.join("runner");
    std::fs::copy(assert_cmd::cargo::cargo_bin("runner"), &exe).unwrap();
    for p in [
        d.to_path_buf(),
        d.join("ws"),
        d.join("ws/push.sh"),
        task.clone(),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    let as_nobody = if crate::common::is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    let home = d.display().to_string();
    let env = [
        ("HOME", home.as_str()),
        ("RUNNER_SIMULATE_NO_LANDLOCK", "1"),
    ];
    let t = run_with(as_nobody, d, &task, &env);
    if without_supervisor(&t) {
        return;
    }
    let calls = t["tool_calls"].as_array().unwrap();
    let first = calls[0]["content"].as_str().unwrap();
    assert!(first.contains("hello"), "{first}");
    let pushed = calls[1]["content"].as_str().unwrap();
    assert!(pushed.contains("pushed=126"), "{pushed}");
    assert_eq!(
        calls[1]["metadata"]["sandbox_refusals"][0]["rule"], "deny Bash(git push:*)",
        "{}",
        calls[1]
    );
}
