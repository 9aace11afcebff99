//! What people open after a run: summary.md (and the step summary), the
//! HTML report, `runner replay` and `runner policy suggest`.

use std::path::Path;

use crate::common::{read_json, runner, stderr, validate_accepts, write};

/// A task that writes `big.txt` (`lines` lines), is denied `rm -rf
/// build` by its policy, is denied `Bash(git push)` by the default, is
/// denied reading `secret.txt` in `ls -la; cat secret.txt`, and answers
/// `answer`.
fn task(dir: &Path, name: &str, lines: usize, answer: &str) {
    write(dir, "ws/readme.txt", "hello\n");
    let content: String = (0..lines)
        .map(|i| format!("line {i} of the file\n"))
        .collect();
    let script = format!(
        "script:\n  - tool_calls:\n      - {{name: write_file, args: {{file_path: big.txt, content: {}}}}}\n  - tool_calls:\n      - {{name: bash, args: {{command: \"rm -rf build\"}}}}\n      - {{name: bash, args: {{command: \"git push origin main\"}}}}\n      - {{name: bash, args: {{command: \"cargo fmt --check\"}}}}\n      - {{name: bash, args: {{command: \"ls -la; cat secret.txt\"}}}}\n  - text: {}\n",
        serde_json::to_string(&content).unwrap(),
        serde_json::to_string(answer).unwrap()
    );
    write(
        dir,
        &format!("tasks/{name}.yaml"),
        &format!(
            "name: {name}\nprompt: Write big.txt.\nworkspace: ../ws\npolicy: ../policy.yaml\n{script}"
        ),
    );
    write(
        dir,
        "policy.yaml",
        "default: deny\nrules:\n  - allow: [\"Edit(big.txt)\", \"Read(**)\", \"Bash(ls:*)\"]\n  - deny: [\"Bash(rm:*)\"]\n    reason: no deleting\n  - deny: [\"Read(./secret.txt)\"]\n",
    );
}

fn run(dir: &Path, tasks: &[&str]) -> std::process::Output {
    let mut cmd = runner();
    cmd.current_dir(dir)
        .env("CI", "true")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["run", "--out", "out"]);
    for t in tasks {
        cmd.arg(format!("tasks/{t}.yaml"));
    }
    cmd.output().unwrap()
}

#[test]
fn the_summary_shows_answers_denials_and_diffs_under_a_megabyte() {
    let dir = tempfile::tempdir().unwrap();
    let answer = "Done.\nIt holds ``` fences\n</details> and <script>alert(1)</script>\n4\n5\n6\n7\n8\n9\n10";
    task(dir.path(), "small", 3, answer);
    // 60,000 lines: a diff of about 1.5 MB.
    task(dir.path(), "large", 60_000, "Wrote it.");
    let out = run(dir.path(), &["small", "large"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.len() < 1_000_000, "{}", summary.len());
    // The answer's first eight lines, in a fence its own backticks do not close.
    assert!(summary.contains("````text\nDone.\nIt holds ``` fences\n</details> and <script>"));
    assert!(summary.contains("(2 more line(s) in the transcript)"));
    // The denied calls with the rule and the layer that decided.
    assert!(
        summary.contains("`Bash(rm -rf build)` denied by `deny Bash(rm:*)` (")
            && summary.contains("policy.yaml)"),
        "{summary}"
    );
    assert!(
        summary.contains("`Bash(git push origin main)` denied by `default deny` ("),
        "{summary}"
    );
    // A call is named by the signature its rule matched, not its first.
    assert!(
        summary.contains("`Read(secret.txt)` denied by `deny Read(./secret.txt)` ("),
        "{summary}"
    );
    // The diffs folded; the large one cut with a note.
    assert!(summary.contains("<details><summary>changes.diff: 1 file(s), +3 -0</summary>"));
    assert!(summary.contains("+line 2 of the file\n"));
    assert!(summary.contains("<details><summary>changes.diff: 1 file(s), +60000 -0</summary>"));
    assert!(summary.contains("more line(s): the whole diff is in large/changes.diff)"));
    assert!(summary.contains("+line 100 of the file\n"));
}

fn replay(dir: &Path, policy: &str, extra: &[&str]) -> std::process::Output {
    runner()
        .current_dir(dir)
        .args(["replay", "--policy", policy])
        .args(extra)
        .arg("out/small/transcript.json")
        .output()
        .unwrap()
}

#[test]
fn replay_names_the_calls_a_policy_change_would_decide_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "small", 3, "Done.");
    assert!(run(dir.path(), &["small"]).status.success());
    // The same policy: nothing changes.
    let out = replay(dir.path(), "policy.yaml", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.ends_with("5 call(s) decided again: 0 changed, 5 unchanged\n"),
        "{text}"
    );
    // Stricter: the write is denied now; looser: `git push` is allowed.
    write(
        dir.path(),
        "stricter.yaml",
        "default: deny\nrules:\n  - allow: [\"Read(**)\", \"Bash(git push:*)\"]\n  - deny: [\"Bash(rm:*)\", \"Edit(*.txt)\"]\n",
    );
    let out = replay(dir.path(), "stricter.yaml", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("(task small, turn 1, write_file Edit(big.txt)): allow (allow Edit(big.txt), policy.yaml:3) -> deny (deny Edit(*.txt), stricter.yaml:4)"),
        "{text}"
    );
    assert!(
        text.contains("bash Bash(git push origin main)): deny (default deny"),
        "{text}"
    );
    assert!(
        text.ends_with("5 call(s) decided again: 2 changed, 3 unchanged\n"),
        "{text}"
    );
    let out = replay(dir.path(), "stricter.yaml", &["--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"].as_array().unwrap().len(), 2);
    assert_eq!(v["changed"][0]["after"]["decision"], "deny");
    assert_eq!(v["changed"][0]["after"]["rule"], "deny Edit(*.txt)");
    // Bad input: exit 2.
    write(
        dir.path(),
        "out/small/transcript.json",
        "{\"not\": \"a transcript\"}",
    );
    let out = replay(dir.path(), "policy.yaml", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not a runner transcript"),
        "{}",
        stderr(&out)
    );
}

fn check(dir: &Path, policy: &str, tool: &str, args: &str) -> i32 {
    let out = runner()
        .current_dir(dir)
        .args(["check", "--policy", policy, "--workspace", "ws", tool, args])
        .output()
        .unwrap();
    out.status.code().unwrap()
}

/// `runner policy suggest [--policy BASE] out/small/transcript.json` in `dir`.
fn suggest(dir: &Path, base: Option<&str>) -> std::process::Output {
    let mut cmd = runner();
    cmd.current_dir(dir).args(["policy", "suggest"]);
    if let Some(b) = base {
        cmd.args(["--policy", b]);
    }
    cmd.arg("out/small/transcript.json").output().unwrap()
}

#[test]
fn suggested_rules_allow_what_the_default_denied_and_nothing_a_rule_denied() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "small", 3, "Done.");
    assert!(run(dir.path(), &["small"]).status.success());
    let (git, fmt, rm) = (
        r#"{"command": "git push origin main"}"#,
        r#"{"command": "cargo fmt --check"}"#,
        r#"{"command": "rm -rf build"}"#,
    );
    // Under the policy of the run: two calls denied by its default, one
    // by a rule.
    assert_eq!(check(dir.path(), "policy.yaml", "bash", git), 1);
    assert_eq!(check(dir.path(), "policy.yaml", "bash", fmt), 1);
    for base in [Some("policy.yaml"), None] {
        let out = suggest(dir.path(), base);
        assert!(out.status.success(), "{}", stderr(&out));
        let yaml = String::from_utf8(out.stdout).unwrap();
        assert!(
            yaml.contains("  # covers small, turn 2: Bash(git push origin main)\n  - allow: [\"Bash(git push:*)\"]\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("  - allow: [\"Bash(cargo fmt:*)\"]\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("# Denied by an explicit rule (no rule suggested):\n#   small, turn 2: Bash(rm -rf build) Edit(build/**): deny Bash(rm:*)\n"),
            "{yaml}"
        );
        assert!(!yaml.contains("allow: [\"Bash(rm"), "{yaml}");
        write(dir.path(), "suggested.yaml", &yaml);
        assert_eq!(
            check(dir.path(), "suggested.yaml", "bash", git),
            0,
            "{yaml}"
        );
        assert_eq!(
            check(dir.path(), "suggested.yaml", "bash", fmt),
            0,
            "{yaml}"
        );
        assert_eq!(check(dir.path(), "suggested.yaml", "bash", rm), 1, "{yaml}");
        // What the base allowed, it still allows.
        assert_eq!(
            check(
                dir.path(),
                "suggested.yaml",
                "write_file",
                r#"{"file_path": "big.txt", "content": "x"}"#
            ),
            i32::from(base.is_none()),
            "{yaml}"
        );
    }
}

#[test]
fn a_suggestion_keeps_the_bases_hooks_and_tests_and_never_breaks_a_test() {
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "small", 3, "Done.");
    assert!(run(dir.path(), &["small"]).status.success());
    // A base with a fail-closed hook and tests: both are in the output,
    // which loads (its tests run) and still runs the hook.
    let base = "default: deny\nrules:\n  - allow: [\"Edit(big.txt)\", \"Read(**)\"]\n  - deny: [\"Bash(rm:*)\"]\nhooks:\n  pre_tool:\n    - match: [\"Bash(git push:*)\"]\n      run: echo pushing is reviewed by hand >&2; exit 2\ntests:\n  - {call: \"Bash(rm -rf /)\", expect: deny}\n";
    write(dir.path(), "hooked.yaml", base);
    let out = suggest(dir.path(), Some("hooked.yaml"));
    assert!(out.status.success(), "{}", stderr(&out));
    let yaml = String::from_utf8(out.stdout).unwrap();
    assert!(
        yaml.contains("\nhooks: {\"pre_tool\":[{\"match\":[\"Bash(git push:*)\"],\"run\":\"echo pushing is reviewed by hand >&2; exit 2\"}]}\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("\ntests: [{\"call\":\"Bash(rm -rf /)\",\"expect\":\"deny\"}]\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("  - allow: [\"Bash(git push:*)\"]\n"),
        "{yaml}"
    );
    write(dir.path(), "suggested.yaml", &yaml);
    validate_accepts(dir.path(), "suggested.yaml");
    // The suggested policy in a run: the push is allowed by the rule and
    // denied by the hook the base had.
    let t = "name: again\nprompt: p\nworkspace: ../ws\npolicy: ../suggested.yaml\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: \"git push origin main\"}}\n  - text: done\n";
    write(dir.path(), "tasks/again.yaml", t);
    let again = runner()
        .current_dir(dir.path())
        .args(["run", "-q", "--out", "out-again", "tasks/again.yaml"])
        .output()
        .unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let tr = read_json(dir.path().join("out-again/again/transcript.json"));
    let call = &tr["tool_calls"][0];
    assert_eq!(call["decision"]["decision"], "deny", "{call}");
    assert!(
        call["content"]
            .as_str()
            .unwrap()
            .contains("pushing is reviewed by hand"),
        "{call}"
    );
    // A base whose own test expects a suggested call denied: no policy,
    // and an error that says why.
    write(
        dir.path(),
        "tested.yaml",
        "default: deny\nrules:\n  - allow: [\"Edit(big.txt)\"]\ntests:\n  - {call: \"Bash(git push origin main)\", expect: deny}\n",
    );
    let out = suggest(dir.path(), Some("tested.yaml"));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("the suggested rules break the tests of tested.yaml"),
        "{}",
        stderr(&out)
    );
}

/// The DOM a headless Chromium makes of the page at `path`.
pub(crate) fn chromium_dom(profile: &Path, path: &Path) -> String {
    let url = format!("file://{}", path.display());
    String::from_utf8(chromium(profile, &["--dump-dom", &url]).stdout).unwrap()
}

/// Headless Chromium (Debian's `chromium`; scripts/install-test-deps
/// installs it) with a profile of its own.
fn chromium(profile: &Path, args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .expect("chromium runs (scripts/install-test-deps installs it)");
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn the_report_renders_in_a_real_browser_and_markup_stays_text() {
    let dir = crate::common::examples();
    let markup = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\"> & <b>bold</b>";
    write(
        dir.path(),
        "tasks/markup.yaml",
        &format!(
            "name: markup\nprompt: p\nworkspace: ../examples/shop\npolicy: {{default: allow}}\nscript:\n  - tool_calls:\n      - {{name: write_file, args: {{file_path: notes.html, content: {0}}}}}\n  - text: {0}\n",
            serde_json::to_string(markup).unwrap()
        ),
    );
    let out = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["run", "--out", "out", "tasks/*.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = dir.path().join("out/report.html");
    // Self-contained: no element or rule that loads anything, and a
    // policy that forbids the network.
    let html = std::fs::read_to_string(&report).unwrap();
    for loads in ["<link", "<img", "<iframe", "@import", "url("] {
        assert!(!html.contains(loads), "the page has {loads}");
    }
    // No tag with a `src` or `href` to another place (text is escaped,
    // so every `<` here opens a tag of the page's own).
    for tag in html
        .split('<')
        .skip(1)
        .map(|t| t.split('>').next().unwrap())
    {
        assert!(!tag.contains(" src="), "<{tag}>");
        assert!(
            !tag.contains(" href=") || tag.contains(" href=\"#"),
            "<{tag}>"
        );
    }
    assert!(html.contains("content=\"default-src 'none';"));
    // `runner report` writes the same page again from the outputs.
    std::fs::remove_file(&report).unwrap();
    let o = runner()
        .current_dir(dir.path())
        .args(["report", "out"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", report.display());
    let dom = String::from_utf8(chromium(profile.path(), &["--dump-dom", &url]).stdout).unwrap();
    for task in [
        "denied-action",
        "fix-typos",
        "investigate",
        "rename-function",
        "markup",
    ] {
        assert!(dom.contains(&format!(">{task}</a>")), "{task} missing");
    }
    // A denied call's rule, a diff's lines, the conversation rendered.
    assert!(
        dom.contains("<code class=\"rule\">deny Edit(.github/**)</code>"),
        "{dom}"
    );
    assert!(dom.contains("<code class=\"rule\">deny Bash(curl:*)</code>"));
    assert!(
        dom.contains("<span class=\"add\">+## Linting</span>"),
        "no diff line"
    );
    assert!(
        dom.contains("<details class=\"call denied\">"),
        "the conversation was not rendered"
    );
    // The markup is text: escaped in the DOM, never run.
    assert!(
        dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;img src=x onerror=")
    );
    assert!(!dom.contains("<img src=\"x\""));
    assert!(!dom.contains("<b>bold</b>"));
    assert!(!dom.contains("<title>pwned</title>"));
    let shot = profile.path().join("report.png");
    chromium(
        profile.path(),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1600",
            &url,
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
}

/// With `-q`, nothing on the way says why a task failed: the closing
/// lines on stderr do, one per failed task, and name the summary (issue
/// 74); stdout keeps its one data line.
#[test]
fn quiet_runs_say_why_each_task_failed_and_where_the_summary_is() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::write(d, "ws/a.txt", "a\n");
    let task = crate::common::write(
        d,
        "t.yaml",
        "name: broken\nprompt: p\nworkspace: ws\nchecks:\n  - run: exit 3\nscript:\n  - text: done\n",
    );
    let ok = crate::common::write(
        d,
        "ok.yaml",
        "name: fine\nprompt: p\nworkspace: ws\nscript:\n  - text: done\n",
    );
    let o = crate::common::runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out"])
        .args([&task, &ok])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1 passed, 1 failed\n");
    let err = crate::common::stderr(&o);
    assert!(err.contains("runner: broken failed: "), "{err}");
    assert!(!err.contains("runner: fine"), "{err}");
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.contains("details in") && l.contains("summary.md")),
        "{err}"
    );
}

/// A workspace named through `..` is printed as the folder it is
/// (`examples/shop`, not `tasks/../examples/shop`), unless a symlink on the
/// way leads elsewhere (issue 74).
#[test]
fn a_workspace_through_dotdot_is_named_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "examples/shop/a.txt", "a\n");
    write(
        d,
        "tasks/t.yaml",
        "prompt: p\nworkspace: ../examples/shop\nscript:\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "tasks/t.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(t["workspace"], "examples/shop", "{}", t["workspace"]);
    // The repository's top, named from tasks/, is `.` (it was `tasks/..`).
    write(
        d,
        "tasks/top.yaml",
        "prompt: p\nworkspace: ..\nscript:\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "--out", "out", "--force-out", "tasks/top.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let t = read_json(d.join("out/top/transcript.json"));
    assert_eq!(t["workspace"], ".", "{}", t["workspace"]);
    assert!(!stderr(&o).contains("tasks/.."), "{}", stderr(&o));
    write(
        d,
        "tasks/gone.yaml",
        "prompt: p\nworkspace: ../examples/gone\nscript:\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["validate", "tasks/gone.yaml"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains("folder examples/gone not found"), "{err}");
}
