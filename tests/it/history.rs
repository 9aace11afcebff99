//! What leaves through git's history (issue 72): a `.env` committed once
//! and removed since is not readable in the copy, whoever reads history
//! (bash, inline code, `git archive | tar`, every object in the store),
//! while the diff and `--apply` stay exact; without the backstop, readers
//! of history are decided strictly.

use std::path::Path;
use std::process::Command;

use crate::common::{git, run_task as run, write};

/// A repository whose first commit held a `.env` with `hunter2-history`;
/// the second removed it, and the work tree has a new untracked one.
fn repository(d: &Path) -> std::path::PathBuf {
    let ws = d.join("ws");
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/src/lib.rs", "// lib\n");
    write(d, "ws/.env", "PASSWORD=hunter2-history\n");
    git(&ws, &["init", "-q", "-b", "main"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "first"]);
    git(&ws, &["rm", "-q", "--cached", ".env"]);
    write(d, "ws/.gitignore", ".env\n");
    git(&ws, &["add", ".gitignore"]);
    git(&ws, &["commit", "-qm", "untrack .env"]);
    write(d, "ws/.env", "PASSWORD=current-0815\n");
    ws
}

const READERS: &str = r#"
      - {name: bash, args: {command: "git log -p --all | grep -i password"}}
      - {name: bash, args: {command: "python3 -c \"import subprocess; print(subprocess.run(['git','log','-p','--all'],capture_output=True,text=True).stdout)\""}}
      - {name: bash, args: {command: "git archive HEAD~1 | tar -xO .env"}}
      - {name: bash, args: {command: "git cat-file --batch-all-objects --batch | grep -a PASSWORD"}}
      - {name: bash, args: {command: "python3 -c \"import subprocess; print(subprocess.run(['git','show','HEAD~1:.env'],capture_output=True,text=True))\""}}
"#;

#[test]
fn history_of_a_once_committed_env_is_not_readable_in_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ws = repository(d);
    let task = write(
        d,
        "t.yaml",
        &format!(
            r#"prompt: p
workspace: ws
sandbox: {{network: false}}
policy:
  default: allow
  rules:
    - deny: ["Read(./.env)"]
script:
  - tool_calls:{READERS}
      - {{name: bash, args: {{command: "git log --oneline; git status --porcelain"}}}}
      - {{name: bash, args: {{command: "echo more >> README.md && git diff"}}}}
  - text: done
"#
        ),
    );
    let t = run(d, &task, &["--apply"], 0);
    let calls = t["tool_calls"].as_array().unwrap();
    for c in calls {
        let text = c.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("current-0815"), "{text}");
    }
    // The readers ran: allowed, as reads the copy keeps safe.
    for c in &calls[..4] {
        assert_ne!(c["status"], "denied", "{c}");
    }
    assert_eq!(t["backstops"]["history"], true, "{}", t["backstops"]);
    assert_eq!(t["backstops"]["reads"], true, "{}", t["backstops"]);
    let note = t["sandbox"].to_string();
    assert!(note.contains("cut to one commit"), "{note}");
    assert!(note.contains(".env"), "{note}");
    // One commit, and a clean status: the tracked files are all there.
    let log = calls[5]["content"].as_str().unwrap_or_default();
    assert_eq!(log.matches("HEAD's tree without").count(), 1, "{log}");
    assert!(!log.contains("untrack") && !log.contains("first"), "{log}");
    assert!(!log.contains(" D ") && !log.contains("??"), "{log}");
    // git diff in the copy, the run's diff and --apply are exact.
    let diff = calls[6]["content"].as_str().unwrap_or_default();
    assert!(diff.contains("+more"), "{diff}");
    let changes = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        changes.contains("README.md") && changes.contains("+more"),
        "{changes}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("README.md")).unwrap(),
        "readme\nmore\n"
    );
    // The original repository is untouched: its history and objects.
    let out = Command::new("git")
        .current_dir(&ws)
        .args(["log", "--oneline"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 2);
}

/// Without the history backstop (no Landlock to keep the original's store
/// from commands), readers of history are decided strictly: refused, and
/// the transcript says why.
#[test]
fn without_the_backstop_readers_of_history_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    repository(d);
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
sandbox: off
policy:
  default: allow
  rules:
    - deny: ["Read(./.env)"]
script:
  - tool_calls:
      - {name: bash, args: {command: "git log -p --all | grep -i password"}}
      - {name: bash, args: {command: "git archive HEAD~1 | tar -xO .env"}}
      - {name: bash, args: {command: "git show HEAD~1"}}
      - {name: bash, args: {command: "git log --oneline"}}
  - text: done
"#,
    );
    let t = run(d, &task, &[], 0);
    let calls = t["tool_calls"].as_array().unwrap();
    for c in &calls[..3] {
        assert_eq!(c["status"], "denied", "{c}");
        assert!(!c.to_string().contains("hunter2"), "{c}");
        let reason = c["decision"]["reason"].as_str().unwrap();
        assert!(reason.contains("Read(**)"), "{reason}");
    }
    assert_eq!(calls[3]["status"], "ok", "{}", calls[3]);
    assert_eq!(t["backstops"]["history"], false, "{}", t["backstops"]);
}

/// A shallow clone (whose one commit never held `.env`: its view keeps
/// what it has), one that borrows the origin's objects (alternates: its
/// history is listed and cut through them) and a partial one (blobs of older commits missing: its
/// history can neither be listed whole nor cut, so the transcript says no
/// history backstop holds, and readers of history are refused). No
/// denied content reaches the agent in either.
#[test]
fn shallow_and_partial_clones_keep_history_safe_or_say_they_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let origin = repository(d);
    git(&origin, &["config", "uploadpack.allowFilter", "true"]);
    let url = format!("file://{}", origin.display());
    let path = origin.display().to_string();
    for (name, args, from) in [
        ("shallow", vec!["clone", "-q", "--depth", "1"], &url),
        ("partial", vec!["clone", "-q", "--filter=blob:none"], &url),
        // Objects borrowed from the origin's store (alternates).
        ("shared", vec!["clone", "-q", "--shared"], &path),
    ] {
        let mut a = args.clone();
        a.push(from);
        a.push(name);
        git(d, &a);
        std::fs::write(d.join(name).join(".env"), "PASSWORD=current-0815\n").unwrap();
        let task = write(
            d,
            &format!("{name}.yaml"),
            &format!(
                r#"name: t
prompt: p
workspace: {name}
sandbox: {{network: false}}
policy:
  default: allow
  rules:
    - deny: ["Read(./.env)"]
script:
  - tool_calls:{READERS}
  - text: done
"#
            ),
        );
        let t = run(d, &task, &[], 0);
        for c in t["tool_calls"].as_array().unwrap() {
            let text = c.to_string();
            assert!(!text.contains("hunter2"), "{name}: {text}");
        }
        let note = t["sandbox"].to_string();
        if name == "shallow" {
            assert_eq!(t["backstops"]["history"], true, "{name}: {note}");
        } else if name == "shared" {
            // Its history is listed through the borrowed store, and cut.
            assert_eq!(t["backstops"]["history"], true, "{name}: {note}");
            assert!(note.contains("cut to one commit"), "{name}: {note}");
        } else {
            // The objects it lacks cannot be fetched inside the view: the
            // run says which protection holds, and decides strictly.
            assert_eq!(t["backstops"]["history"], false, "{name}: {note}");
            assert!(note.contains("no history backstop"), "{name}: {note}");
            for c in &t["tool_calls"].as_array().unwrap()[..4] {
                assert_eq!(c["status"], "denied", "{name}: {c}");
            }
        }
        std::fs::remove_dir_all(d.join("out")).unwrap();
    }
}
