//! git in a run: the copy shows what the original checkout shows, the
//! agent's git never reaches the original repository, `changes.diff`
//! applies from the repository root, and `--apply` merges several tasks.

use std::path::Path;
use std::process::Command;

use crate::common::{bash_turns, examples, git, read_json, runner, write};

/// A repository with two commits, then a staged, an unstaged and an
/// untracked change, all inside `sub/`.
fn repo_with_changes(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "t"]);
    git(root, &["config", "user.email", "t@example.com"]);
    write(root, "top.txt", "top\n");
    write(root, "sub/a.txt", "one\ntwo\nthree\n");
    write(root, "sub/b.txt", "b\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    write(root, "sub/a.txt", "one\ntwo\nthree\nfour\n");
    git(root, &["commit", "-qam", "second"]);
    write(root, "sub/staged.txt", "staged\n");
    git(root, &["add", "sub/staged.txt"]);
    write(root, "sub/b.txt", "b changed\n");
    write(root, "sub/untracked.txt", "u\n");
}

/// Runs one scripted task whose calls are `commands` (bash) in `workspace`
/// (relative to `dir`); returns the transcript.
fn run_commands(
    dir: &Path,
    workspace: &str,
    commands: &[&str],
    extra: &[&str],
) -> serde_json::Value {
    let calls = bash_turns(commands);
    let task = write(
        dir,
        "t.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: {workspace}\npolicy:\n  default: allow\nscript:\n{calls}  - text: done\n"
        ),
    );
    let o = runner()
        .args(["run", "-q", "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    read_json(dir.join("out/t/transcript.json"))
}

/// The transcript's calls, each of which must have run ("ok").
fn ran_all(t: &serde_json::Value) -> &Vec<serde_json::Value> {
    let calls = t["tool_calls"].as_array().unwrap();
    for c in calls {
        assert_eq!(c["status"], "ok", "{}", c["content"]);
    }
    calls
}

/// The stdout a bash call printed.
fn stdout_of(call: &serde_json::Value) -> String {
    let c = call["content"].as_str().unwrap();
    let out = c.split("--- stdout ---\n").nth(1).unwrap_or("");
    out.split("\n--- stderr ---")
        .next()
        .unwrap()
        .trim_end()
        .to_string()
}

const VIEWS: [&str; 3] = ["git status --porcelain", "git log --oneline -2", "git diff"];

#[test]
fn git_in_the_copy_shows_what_the_original_shows() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    repo_with_changes(&root);
    // The workspace at the top of the repository, and a folder inside it.
    for (workspace, cwd) in [("repo", root.clone()), ("repo/sub", root.join("sub"))] {
        let t = run_commands(dir.path(), workspace, &VIEWS, &[]);
        let calls = t["tool_calls"].as_array().unwrap();
        for (call, cmd) in calls.iter().zip(VIEWS) {
            assert_eq!(call["status"], "ok", "{cmd}: {}", call["content"]);
            let args: Vec<&str> = cmd.split(' ').skip(1).collect();
            let want = git(&cwd, &args);
            assert_eq!(stdout_of(call), want.trim_end(), "`{cmd}` in {workspace}");
            assert!(!want.trim().is_empty(), "`{cmd}` shows nothing to compare");
        }
    }
}

#[test]
fn the_agents_git_never_reaches_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    repo_with_changes(&root);
    let refs = git(&root, &["show-ref"]);
    let head = git(&root, &["rev-parse", "HEAD"]);
    let objects = git(&root, &["count-objects", "-v"]);
    let index = std::fs::read(root.join(".git/index")).unwrap();
    let t = run_commands(
        dir.path(),
        "repo/sub",
        &[
            "echo agent >> a.txt && git add -A && git commit -qm agent && git log --oneline -1",
            "git checkout -q -b agent-branch && git tag agent-tag && git stash list",
        ],
        &[],
    );
    ran_all(&t);
    assert!(stdout_of(&t["tool_calls"][0]).ends_with("agent"));
    assert_eq!(git(&root, &["show-ref"]), refs);
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&root, &["count-objects", "-v"]), objects);
    assert_eq!(std::fs::read(root.join(".git/index")).unwrap(), index);
    // The commit's change is in the diff, named from the repository root.
    let diff = std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("+++ b/sub/a.txt") && diff.contains("+agent"),
        "{diff}"
    );
}

/// The paths `changes.diff` names.
fn diff_paths(dir: &Path) -> Vec<String> {
    let diff = std::fs::read_to_string(dir.join("out/t/changes.diff")).unwrap();
    diff.lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .map(|l| l.split(" b/").next().unwrap().to_string())
        .collect()
}

#[test]
fn a_workspace_in_a_folder_ignores_what_the_folders_above_it_ignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, ".gitignore", "node_modules/\n*.log\n");
    write(&root, "packages/.gitignore", "dist/\n");
    write(&root, "packages/app/src/a.js", "a\n");
    write(&root, "packages/app/node_modules/dep/index.js", "dep\n");
    write(&root, "packages/app/debug.log", "log\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let t = run_commands(
        dir.path(),
        "repo/packages/app",
        &[
            // What is ignored above the workspace was not copied ...
            "test ! -e node_modules && test ! -e debug.log && echo clean",
            // ... and what a build writes there stays out of the diff.
            "mkdir -p node_modules/new dist && echo x > node_modules/new/i.js && echo x > dist/out.js && echo x > build.log && echo b >> src/a.js",
            "git status --porcelain",
        ],
        &[],
    );
    let calls = ran_all(&t);
    assert_eq!(stdout_of(&calls[0]), "clean");
    assert_eq!(stdout_of(&calls[2]), " M packages/app/src/a.js");
    assert_eq!(diff_paths(dir.path()), ["packages/app/src/a.js"]);
    // glob, like rg in the original, does not list them either.
    let out = runner()
        .args(["tool", "glob", r#"{"pattern": "**/*.js"}"#, "--workspace"])
        .arg(root.join("packages/app"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "src/a.js");
}

#[test]
fn tracked_files_that_an_ignore_rule_matches_are_in_the_copy_and_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, ".gitignore", "settings.cfg\nbuild/\n*.log\n");
    write(&root, "settings.cfg", "v=1\n");
    write(&root, "build/keep.txt", "keep\n");
    write(&root, "build/untracked.o", "obj\n");
    write(&root, "build/gone.txt", "gone\n");
    write(&root, "a.txt", "a\n");
    git(&root, &["add", "-A"]);
    write(&root, "logs/x.log", "x\n");
    git(
        &root,
        &[
            "add",
            "-f",
            "settings.cfg",
            "build/keep.txt",
            "build/gone.txt",
            "logs/x.log",
        ],
    );
    git(&root, &["commit", "-qm", "first"]);
    // Tracked, ignored and deleted in the checkout (or its folder now a
    // file): nothing to copy, and no reason not to run.
    std::fs::remove_file(root.join("build/gone.txt")).unwrap();
    std::fs::remove_dir_all(root.join("logs")).unwrap();
    write(&root, "logs", "now a file\n");
    let t = run_commands(
        dir.path(),
        "repo",
        &[
            "git status --porcelain && cat settings.cfg build/keep.txt && test ! -e build/untracked.o",
            "echo v=2 > settings.cfg && rm build/keep.txt",
        ],
        &[],
    );
    let calls = ran_all(&t);
    // As git shows the original (the deletions there), and readable.
    let status = git(&root, &["status", "--porcelain"]);
    assert!(status.contains(" D build/gone.txt"), "{status}");
    assert_eq!(stdout_of(&calls[0]), format!("{status}v=1\nkeep"));
    assert_eq!(diff_paths(dir.path()), ["build/keep.txt", "settings.cfg"]);
    let check = Command::new("git")
        .args(["apply", "--check"])
        .arg(dir.path().join("out/t/changes.diff"))
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn a_submodule_in_the_copy_answers_for_itself() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib");
    git(dir.path(), &["init", "-q", "-b", "main", "lib"]);
    write(&lib, "l.txt", "l\n");
    git(&lib, &["add", "-A"]);
    git(&lib, &["commit", "-qm", "lib first"]);
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, "m.txt", "m\n");
    let url = lib.to_str().unwrap();
    git(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            url,
            "lib",
        ],
    );
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "main first"]);
    write(&root, "lib/l.txt", "l changed\n");
    let modules = root.join(".git/modules/lib");
    let objects = git(&modules, &["count-objects", "-v"]);
    let t = run_commands(
        dir.path(),
        "repo",
        &[
            "git status --porcelain",
            "cd lib && git log --format=%s -1 && git status --porcelain",
            "cd lib && echo more >> l.txt && git commit -qam agent && git log --format=%s -1",
        ],
        &[],
    );
    let calls = ran_all(&t);
    // The superproject sees the submodule's change as the original does,
    // and git inside the submodule answers for the submodule.
    let want = git(&root, &["status", "--porcelain"]);
    assert_eq!(stdout_of(&calls[0]), want.trim_end());
    assert!(want.contains(" M lib"), "{want}");
    assert_eq!(stdout_of(&calls[1]), "lib first\n M l.txt");
    assert_eq!(stdout_of(&calls[2]), "agent");
    // Its commit stayed in the copy.
    assert_eq!(
        git(&root.join("lib"), &["log", "--format=%s", "-1"]).trim(),
        "lib first"
    );
    assert_eq!(git(&modules, &["count-objects", "-v"]), objects);
    assert_eq!(diff_paths(dir.path()), ["lib/l.txt"]);
}

#[test]
fn every_kind_of_change_applies_from_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, "sub/edit.txt", "1\n2\n3\n");
    write(&root, "sub/gone.txt", "bye\n");
    write(&root, "sub/empty-gone.txt", "");
    write(&root, "sub/script.sh", "echo hi\n");
    write(&root, "sub/no-newline.txt", "a\nb");
    std::fs::write(root.join("sub/image.bin"), [0u8, 1, 2, 3, 255, 0, 7]).unwrap();
    std::os::unix::fs::symlink("edit.txt", root.join("sub/link")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    let before = dir.path().join("before");
    git(dir.path(), &["clone", "-q", "repo", "before"]);
    run_commands(
        dir.path(),
        "repo/sub",
        &[concat!(
            "printf '1\\n2 changed\\n3\\n' > edit.txt && rm gone.txt empty-gone.txt && ",
            "printf 'new\\n' > new.txt && : > empty.txt && chmod +x script.sh && ",
            "printf 'a\\nb changed' > no-newline.txt && printf 'no newline' > new-no-newline.txt && ",
            "printf '\\000\\001binary\\377' > new.bin && printf '\\000\\002\\003' > image.bin && ",
            "ln -sf no-newline.txt link && ln -s edit.txt new-link"
        )],
        &[],
    );
    let diff = dir.path().join("out/t/changes.diff");
    let text = std::fs::read_to_string(&diff).unwrap();
    for needle in [
        "diff --git a/sub/edit.txt b/sub/edit.txt",
        "deleted file mode 100644",
        "new file mode 100644",
        "old mode 100644\nnew mode 100755",
        "GIT binary patch",
        "\\ No newline at end of file",
        "new file mode 120000",
    ] {
        assert!(text.contains(needle), "no `{needle}` in\n{text}");
    }
    // From the repository root, on the tree the task started from.
    git(&before, &["apply", "--check", diff.to_str().unwrap()]);
    git(&before, &["apply", diff.to_str().unwrap()]);
    // What the task left is what applying gives.
    let ws_copy_files = [
        "edit.txt",
        "new.txt",
        "empty.txt",
        "script.sh",
        "no-newline.txt",
        "new-no-newline.txt",
        "new.bin",
        "image.bin",
    ];
    let expect: [&[u8]; 8] = [
        b"1\n2 changed\n3\n",
        b"new\n",
        b"",
        b"echo hi\n",
        b"a\nb changed",
        b"no newline",
        b"\x00\x01binary\xff",
        b"\x00\x02\x03",
    ];
    for (f, want) in ws_copy_files.iter().zip(expect) {
        assert_eq!(
            std::fs::read(before.join("sub").join(f)).unwrap(),
            want,
            "{f}"
        );
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(before.join("sub/script.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "script.sh is not executable");
    assert!(!before.join("sub/gone.txt").exists() && !before.join("sub/empty-gone.txt").exists());
    assert_eq!(
        std::fs::read_link(before.join("sub/link")).unwrap(),
        Path::new("no-newline.txt")
    );
    assert_eq!(
        std::fs::read_link(before.join("sub/new-link")).unwrap(),
        Path::new("edit.txt")
    );
    // And git agrees that nothing else changed.
    let status = git(&before, &["status", "--porcelain"]);
    assert!(!status.contains("top"), "{status}");
}

/// The examples as a repository of their own, committed.
fn examples_repo() -> tempfile::TempDir {
    let dir = examples();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "examples"]);
    dir
}

fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn apply_merges_the_example_tasks_as_their_diffs_would() {
    let applied = examples_repo();
    let tasks = [
        "denied-action",
        "fix-typos",
        "investigate",
        "rename-function",
    ];
    let o = runner()
        .current_dir(applied.path())
        .args(["run", "-q", "--apply", "--out"])
        .arg(applied.path().join("../apply-out"))
        .args(tasks.map(|t| format!("tasks/{t}.yaml")))
        .output()
        .unwrap();
    let out = applied.path().join("../apply-out");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let by_hand = examples_repo();
    for t in tasks {
        let diff = out.join(t).join("changes.diff");
        if std::fs::metadata(&diff).unwrap().len() > 0 {
            git(by_hand.path(), &["apply", diff.to_str().unwrap()]);
        }
    }
    assert_eq!(tree(applied.path()), tree(by_hand.path()));
    // Two of them edit the same file, in different places.
    let readme = std::fs::read_to_string(applied.path().join("examples/shop/README.md")).unwrap();
    assert!(
        readme.contains("## Linting") && readme.contains("receive an email"),
        "{readme}"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn a_real_conflict_applies_one_task_and_marks_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, "ws/a.txt", "one\ntwo\nthree\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    for (name, line) in [("first", "TWO"), ("second", "deux")] {
        write(
            dir.path(),
            &format!("{name}.yaml"),
            &format!(
                "prompt: x\nworkspace: repo/ws\npolicy: {{default: allow}}\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"sed -i s/two/{line}/ a.txt\"}}}}\n  - text: done\n"
            ),
        );
    }
    let o = runner()
        .current_dir(dir.path())
        .args([
            "run",
            "-q",
            "--apply",
            "--jobs",
            "1",
            "--out",
            "out",
            "first.yaml",
            "second.yaml",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("a.txt"), "{err}");
    assert_eq!(
        std::fs::read_to_string(root.join("ws/a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
    let second = read_json(dir.path().join("out/second/transcript.json"));
    assert_eq!(second["outcome"]["status"], "conflict");
    assert!(
        second["outcome"]["reason"]
            .as_str()
            .unwrap()
            .contains("a.txt")
    );
    let diff = std::fs::read_to_string(dir.path().join("out/second/changes.diff")).unwrap();
    assert!(diff.contains("+deux"), "{diff}");
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("type=\"conflict\""), "{junit}");
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains("conflict"), "{summary}");
}

/// Runs `calls` (a script's first turns) with `--apply` in `d/ws`, then
/// a 2.5 s wait; 1.2 s in, while the copy has long been made, `edit`
/// changes the original by hand. The run must end in a conflict; returns
/// its transcript.
fn apply_after_an_edit_by_hand(
    d: &Path,
    mode: &str,
    calls: &str,
    edit: impl FnOnce(),
) -> serde_json::Value {
    write(
        d,
        "task.yaml",
        &format!(
            "name: t\nprompt: p\nworkspace: ws\npolicy: {{default: allow}}\nscript:\n{calls}  - tool_calls:\n      - {{name: probe, args: {{label: wait, sleep_ms: 2500}}}}\n  - text: done\n"
        ),
    );
    let mut child = runner()
        .current_dir(d)
        .args(["run", "-q", "--apply", "--workspace-mode", mode])
        .args(["--out", "out", "task.yaml"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    edit();
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(t["outcome"]["status"], "conflict", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("while the task ran"), "{reason}");
    t
}

/// A file changed by hand in the original while the task ran is not
/// overwritten by `--apply`: what the task started from is gone, so the
/// task is a conflict and the hand's edit stays.
#[test]
fn apply_never_undoes_an_edit_made_while_the_task_ran() {
    for mode in workspace_modes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "ws/a.txt", "one\ntwo\n");
        write(d, "ws/b.txt", "b\n");
        let calls = r#"  - tool_calls:
      - {name: read_file, args: {file_path: a.txt}}
      - {name: read_file, args: {file_path: b.txt}}
  - tool_calls:
      - {name: edit_file, args: {file_path: a.txt, old_string: two, new_string: TWO}}
      - {name: edit_file, args: {file_path: b.txt, old_string: b, new_string: B}}
"#;
        apply_after_an_edit_by_hand(d, mode, calls, || {
            write(d, "ws/a.txt", "one\ntwo\nthree by hand\n");
        });
        assert_eq!(
            std::fs::read_to_string(d.join("ws/a.txt")).unwrap(),
            "one\ntwo\nthree by hand\n",
            "{mode}"
        );
        // All or nothing: b.txt is not applied either.
        assert_eq!(std::fs::read_to_string(d.join("ws/b.txt")).unwrap(), "b\n");
    }
}

/// The ways a task's copy can be made here: an overlay as root (where
/// the original changing under the task is seen at once), and a copy.
fn workspace_modes() -> Vec<&'static str> {
    match crate::common::is_root() {
        true => vec!["overlay", "copy"],
        false => vec!["copy"],
    }
}

/// A symlink changed in the original while the task ran is a conflict
/// too: its new target is not undone.
#[test]
fn apply_never_undoes_a_symlink_changed_while_the_task_ran() {
    for mode in workspace_modes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "ws/a.txt", "a\n");
        std::os::unix::fs::symlink("a.txt", d.join("ws/l")).unwrap();
        let calls = "  - tool_calls:\n      - {name: bash, args: {command: ln -sfn b.txt l}}\n";
        apply_after_an_edit_by_hand(d, mode, calls, || {
            std::fs::remove_file(d.join("ws/l")).unwrap();
            std::os::unix::fs::symlink("by-hand.txt", d.join("ws/l")).unwrap();
        });
        assert_eq!(
            std::fs::read_link(d.join("ws/l")).unwrap(),
            Path::new("by-hand.txt"),
            "{mode}"
        );
    }
}

/// The output folder inside the workspace is left out of the copy, even
/// where git tracks a file in it that an ignore rule matches.
#[test]
fn an_output_folder_in_the_workspace_is_not_copied_though_git_tracks_a_file_there() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    git(dir.path(), &["init", "-q", "-b", "main", "repo"]);
    write(&root, ".gitignore", "out/\n");
    write(&root, "out/old.txt", "old\n");
    write(&root, "a.txt", "a\n");
    git(&root, &["add", "-A"]);
    git(&root, &["add", "-f", "out/old.txt"]);
    git(&root, &["commit", "-qm", "first"]);
    // The task file in the workspace, and so its output folder `out/`.
    let t = run_commands(
        &root,
        ".",
        &["test -e out && echo out copied || echo no out"],
        &[],
    );
    assert_eq!(stdout_of(&t["tool_calls"][0]), "no out");
}
