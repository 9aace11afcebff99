//! A plain command (`cat a.txt`, `env`) runs without bash in front of it
//! (the bash tool's `plain` module): what it sees and prints is what bash
//! would have given it, and the policy and the walls decide it as before.
//! The module's own test compares a corpus with `bash -c` word for word.

use crate::common::{bash_turns, printed, run_task, write};

/// A task in `d/ws` running `commands` (`deny Bash(git push:*)`, else
/// allow), with `extra` task fields.
fn task(d: &std::path::Path, commands: &[&str], extra: &str) -> std::path::PathBuf {
    write(
        d,
        "t.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: ['Bash(git push:*)']\n{extra}script:\n{}  - text: done\n",
            bash_turns(commands)
        ),
    )
}

/// `env` alone and `"env"` (quoted: bash runs it, as a lone command)
/// print the same lines; the gate denies a plain command as any other.
#[test]
fn a_plain_command_sees_what_bash_would_have_given_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let commands = [
        "env",
        "\"env\"",
        "cat a.txt",
        "/usr/bin/env git push origin main",
    ];
    let t = run_task(d, &task(d, &commands, ""), &[], 0);
    let sorted = |i| {
        let mut v: Vec<String> = printed(&t, i).lines().map(String::from).collect();
        v.sort();
        v
    };
    assert_eq!(sorted(0), sorted(1));
    assert!(sorted(0).iter().any(|l| l.starts_with("SHLVL=")));
    assert_eq!(printed(&t, 2), "a\n");
    assert_eq!(
        t["tool_calls"][3]["status"], "denied",
        "{}",
        t["tool_calls"][3]
    );
}

/// The plain command really starts without bash: with a `PATH` that
/// holds `env` and no `bash`, `env` runs and `"env"` (bash's) cannot start.
#[test]
fn a_plain_command_needs_no_bash() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink("/usr/bin/env", bin.join("env")).unwrap();
    let extra = format!("env:\n  set:\n    PATH: {}\n", bin.display());
    let t = run_task(d, &task(d, &["env", "\"env\""], &extra), &[], 0);
    assert!(printed(&t, 0).contains("PWD="), "{}", t["tool_calls"][0]);
    let by_bash = &t["tool_calls"][1];
    assert_eq!(by_bash["status"], "error", "{by_bash}");
    assert!(
        by_bash["content"]
            .as_str()
            .unwrap()
            .contains("could not start bash"),
        "{by_bash}"
    );
}

/// A plain command the exec wall refuses (a copy of git pushing): nothing
/// runs, bash then says so as before, and the refusal is recorded once.
#[test]
fn a_plain_command_the_wall_refuses_is_recorded_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let commands = ["cp \"$(command -v git)\" ./g", "./g push origin HEAD:main"];
    let file = task(d, &commands, "");
    let o = crate::common::runner()
        .current_dir(d)
        .args(["run", "--out", "out"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    let t = crate::common::read_json(d.join("out/t/transcript.json"));
    if crate::exec_wall::without_supervisor(&t) {
        return;
    }
    // Said once on stderr too, though the plain start and bash both met it.
    let said = crate::common::stderr(&o).matches("exec refused").count();
    assert_eq!(said, 1, "{}", crate::common::stderr(&o));
    let pushed = &t["tool_calls"][1];
    assert!(
        pushed["content"]
            .as_str()
            .unwrap()
            .contains("exit code 126"),
        "{pushed}"
    );
    let refusals = pushed["metadata"]["sandbox_refusals"].as_array().unwrap();
    assert_eq!(refusals.len(), 1, "{pushed}");
    assert_eq!(refusals[0]["rule"], "deny Bash(git push:*)");
}
