//! A plain command (`cat a.txt`, `env`) runs without bash in front of it
//! (the bash tool's `plain` module): what it sees and prints is what bash
//! would have given it, and the policy decides it as before.

use crate::common::{bash_turns, printed, read_json, runner, stderr, write};

/// A plain command runs without bash in front of it (see the bash tool's
/// `plain` module): what it sees is what bash would have given it. `env`
/// alone and `"env"` (quoted: bash runs it, as a lone command) print the
/// same lines;
/// a plain command the exec wall refuses still fails as under bash, with
/// its record.
#[test]
fn a_plain_command_sees_what_bash_would_have_given_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let task = write(
        d,
        "t.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: ['Bash(git push:*)']\nscript:\n{}  - text: done\n",
            bash_turns(&[
                "env",
                "\"env\"",
                "cat a.txt",
                "/usr/bin/env git push origin main"
            ])
        ),
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    let mut alone: Vec<String> = printed(&t, 0).lines().map(String::from).collect();
    alone.sort();
    let mut by_bash: Vec<String> = printed(&t, 1).lines().map(String::from).collect();
    by_bash.sort();
    assert_eq!(alone, by_bash);
    assert!(alone.iter().any(|l| l.starts_with("SHLVL=")), "{alone:?}");
    assert_eq!(printed(&t, 2), "a\n");
    // Denied by the gate before anything starts, plain or not.
    assert_eq!(
        t["tool_calls"][3]["status"], "denied",
        "{}",
        t["tool_calls"][3]
    );
}
