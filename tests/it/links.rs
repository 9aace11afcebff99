//! Edit rules cover the path they name, and links are decided where they
//! lead (issue 72): a folder an `Edit(X/**)` rule denies cannot be made as
//! a symlink to another folder and reach the checkout through `--apply`;
//! links out of the workspace, into `.git` or in a loop never leave the
//! copy.

use std::path::Path;

use crate::common::{git, read_json, runner, stderr, write};

/// A repository without `.github`, and a task whose inline code makes
/// what `script` says; run with `--apply`.
fn run_script(d: &Path, script: &str) -> (std::process::Output, serde_json::Value) {
    let ws = d.join("ws");
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/src/lib.rs", "// lib\n");
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    write(d, "ws/tools/make.py", script);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "tool"]);
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
sandbox: {network: false}
policy:
  default: allow
  rules:
    - deny: ["Edit(.github/**)"]
      reason: CI configuration is off limits
script:
  - tool_calls:
      - {name: bash, args: {command: "python3 tools/make.py && echo more >> README.md"}}
  - text: done
"#,
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "--apply"])
        .arg(&task)
        .output()
        .unwrap();
    let t = read_json(d.join("out/t/transcript.json"));
    (o, t)
}

#[test]
fn a_denied_folder_made_as_a_link_fails_the_task_and_never_reaches_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (o, t) = run_script(
        d,
        "import os\nos.makedirs('src/gh/workflows')\nopen('src/gh/workflows/ci.yml','w').write('on: push\\n')\nos.symlink('src/gh', '.github')\n",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
    assert_eq!(t["outcome"]["status"], "failed", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("`.github`") && reason.contains("deny Edit(.github/**)"),
        "{reason}"
    );
    let v = &t["violations"][0];
    assert_eq!(v["path"], ".github", "{v}");
    // The original is untouched: no link, no workflow, nothing applied.
    let ws = d.join("ws");
    assert!(ws.join(".github").symlink_metadata().is_err());
    assert!(!ws.join("src/gh").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("README.md")).unwrap(),
        "readme\n"
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(!diff.contains(".github"), "{diff}");
}

/// `Edit(X/**)` covers X itself: a file named `.github` is an edit of it.
#[test]
fn a_file_in_place_of_a_denied_folder_is_an_edit_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (o, t) = run_script(d, "open('.github','w').write('x\\n')\n");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(t["violations"][0]["path"], ".github", "{}", t["violations"]);
    assert_eq!(
        t["violations"][0]["rule"], "deny Edit(.github/**)",
        "{}",
        t["violations"]
    );
    assert!(!d.join("ws/.github").exists());
}

/// Links to `/`, into `.git` and in a loop: refused by the built-in rule,
/// never followed; the task fails and nothing is applied.
#[test]
fn links_out_of_the_workspace_into_git_or_in_a_loop_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (o, t) = run_script(
        d,
        "import os\nos.symlink('/', 'root')\nos.symlink('.git/hooks', 'hooks')\nos.symlink('l2', 'l1')\nos.symlink('l1', 'l2')\nos.symlink('src', 'ok')\n",
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let violations = t["violations"].as_array().unwrap();
    let of = |p: &str| {
        violations
            .iter()
            .find(|v| v["path"] == p)
            .unwrap_or_else(|| panic!("no violation for {p}: {violations:?}"))["rule"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        of("root").contains("outside the workspace"),
        "{}",
        of("root")
    );
    assert!(of("hooks").contains("into .git"), "{}", of("hooks"));
    assert!(of("l1").contains("loop"), "{}", of("l1"));
    // A link inside the workspace to an allowed folder is a change like any.
    assert!(
        violations.iter().all(|v| v["path"] != "ok"),
        "{violations:?}"
    );
    let ws = d.join("ws");
    for p in ["root", "hooks", "l1", "l2", "ok"] {
        assert!(ws.join(p).symlink_metadata().is_err(), "{p} applied");
    }
}

/// `--resume --apply` of a task kept from an earlier run checks its diff
/// against the task's rules as they are now: a policy that came to deny
/// the folder since refuses it, and the original stays untouched.
#[test]
fn a_kept_tasks_diff_is_checked_again_before_it_is_applied() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ws = d.join("ws");
    write(d, "ws/README.md", "readme\n");
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    let task = |rules: &str| {
        write(
            d,
            "t.yaml",
            &format!(
                "prompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules: [{rules}]\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"mkdir -p .github && echo x > .github/ci.yml\"}}}}\n  - text: done\n"
            ),
        )
    };
    task("");
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    task("{deny: [\"Edit(.github/**)\"]}");
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--resume", "out", "--apply", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("refused: `.github/ci.yml`: deny Edit(.github/**)"),
        "{err}"
    );
    assert!(!ws.join(".github").exists());
}
