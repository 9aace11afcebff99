//! A private `/tmp` for a task's commands (issue 73, item 3): the scratch
//! files agents write there land in a folder of the task's, the gate
//! decides those writes as no edits outside the workspace, and nothing
//! reaches the machine's `/tmp`.

use std::path::Path;

use crate::common::{bash_turns, git, run_task, write};

/// Whether this machine can give commands a mount namespace: root, or
/// unprivileged user namespaces (as `runner doctor` reports it).
fn private_tmp_here() -> bool {
    let out = crate::common::runner()
        .args(["doctor", "--format", "json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    r["backstops"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["name"] == "private-tmp" && b["held"] == true)
}

fn repo(d: &Path) {
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/.env", "TOKEN=x\n");
    git(&d.join("ws"), &["init", "-q"]);
    git(&d.join("ws"), &["add", "README.md"]);
    git(&d.join("ws"), &["commit", "-qm", "init"]);
}

#[test]
fn a_scratch_script_in_tmp_runs_and_leaves_nothing_in_the_machines_tmp() {
    if !private_tmp_here() {
        eprintln!("no private /tmp on this machine: nothing to test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repo(d);
    let name = format!("runner-fix-{}.py", std::process::id());
    let scratch =
        format!("cat <<'PY' > /tmp/{name} && python3 /tmp/{name}\nprint('fixed', 6 * 7)\nPY");
    let again = format!("ls /tmp && cat /tmp/{name} | wc -l");
    // Run from the private /tmp: the exec wall finds the file the command
    // names there, a script as the copy of a denied program.
    let script =
        "printf '#!/bin/sh\\necho ran-from-tmp\\n' > /tmp/s.sh && chmod +x /tmp/s.sh && /tmp/s.sh";
    let git_path = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let git_path = String::from_utf8_lossy(&git_path.stdout).trim().to_string();
    let copy = format!("cp {git_path} /tmp/g && /tmp/g push origin HEAD");
    // An allow list that names the programs, a deny rule behind each wall:
    // the write to /tmp needs no rule of its own.
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy:\n  default: deny\n  rules:\n    - allow: [\"Bash(cat:*)\", \"Bash(python3:*)\", \"Bash(ls:*)\", \"Bash(wc:*)\", \"Bash(printf:*)\", \"Bash(chmod:*)\", \"Bash(/tmp/s.sh)\", \"Bash(cp:*)\", \"Bash(/tmp/g:*)\"]\n    - deny: [\"Read(./.env)\", \"Bash(git push:*)\"]\nscript:\n{}  - text: done\n",
            bash_turns(&[&scratch, &again, script, &copy])
        ),
    );
    let t = run_task(d, &task, &[], 0);
    let calls = t["tool_calls"].as_array().unwrap();
    let out = |i: usize| calls[i]["content"].as_str().unwrap_or_default().to_string();
    assert_eq!(calls[0]["decision"]["decision"], "allow", "{}", calls[0]);
    assert!(out(0).contains("fixed 42"), "{}", out(0));
    // The next command sees the same private /tmp: the script, and only
    // what the task put there.
    assert!(out(1).contains(&name), "{}", out(1));
    assert!(
        out(1).contains("\n1\n") || out(1).contains("1\n"),
        "{}",
        out(1)
    );
    assert!(!Path::new("/tmp").join(&name).exists());
    assert!(out(2).contains("ran-from-tmp"), "{}", calls[2]);
    let refused = &calls[3]["metadata"]["sandbox_refusals"][0];
    assert_eq!(refused["rule"], "deny Bash(git push:*)", "{}", calls[3]);
    assert_eq!(t["backstops"]["private_tmp"], true, "{}", t["backstops"]);
    assert!(
        t["sandbox"]
            .to_string()
            .contains("/tmp and /var/tmp of their own"),
        "{}",
        t["sandbox"]
    );
}

/// Turned off, commands see the machine's /tmp, and a write there stays
/// refused (by the gate, as an edit outside the workspace).
#[test]
fn turned_off_a_write_to_tmp_is_refused_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repo(d);
    let name = format!("runner-off-{}.txt", std::process::id());
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\nsandbox: {{private_tmp: false}}\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Read(./.env)\"]\nscript:\n{}  - text: done\n",
            bash_turns(&[&format!("echo x > /tmp/{name}")])
        ),
    );
    let t = run_task(d, &task, &[], 0);
    let call = &t["tool_calls"][0];
    assert_eq!(call["decision"]["decision"], "deny", "{call}");
    assert!(
        call["decision"]["reason"]
            .as_str()
            .unwrap()
            .contains("outside the workspace"),
        "{call}"
    );
    assert_eq!(t["backstops"]["private_tmp"], false, "{}", t["backstops"]);
    assert!(!Path::new("/tmp").join(&name).exists());
}
