//! `runner run`, `validate`, `check` and `tool` through the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{copy_tree, examples, python, read_json, repo, runner, stderr, write};

fn snapshot(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = walk(root)
        .into_iter()
        .map(|p| {
            (
                p.strip_prefix(root).unwrap().display().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn examples_pass_and_their_diffs_apply_exactly() {
    let dir = examples();
    let shop = dir.path().join("examples/shop");
    let before = snapshot(&shop);
    let out = dir.path().join("out");
    let o = runner()
        .current_dir(dir.path())
        .args(["run", "--out"])
        .arg(&out)
        .args([
            "tasks/fix-typos.yaml",
            "tasks/rename-function.yaml",
            "tasks/denied-action.yaml",
            "tasks/investigate.yaml",
            "--jobs",
            "2",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(stdout.trim(), "4 passed, 0 failed");
    assert_eq!(
        snapshot(&shop),
        before,
        "the original workspace must stay untouched"
    );

    for task in [
        "fix-typos",
        "rename-function",
        "denied-action",
        "investigate",
    ] {
        let t = read_json(out.join(task).join("transcript.json"));
        assert_eq!(t["outcome"]["status"], "passed", "{task}");
        // Only the task built to show denials shows any (issue 50).
        if task != "denied-action" {
            assert_eq!(t["counts"]["denied_calls"], 0, "{task}: {}", t["counts"]);
        }
        for c in t["tool_calls"].as_array().unwrap() {
            assert!(c.get("decision").is_some() && c.get("duration_ms").is_some());
        }
        let diff = std::fs::read_to_string(out.join(task).join("changes.diff")).unwrap();
        if task == "investigate" {
            assert!(diff.is_empty(), "plan mode changes nothing");
            continue;
        }
        // Apply with git to one copy and with --apply's twin (patch -p1) to
        // another; both must equal what the agent produced.
        let a = tempfile::tempdir().unwrap();
        copy_tree(&shop, &a.path().join("shop"));
        let ws = a.path().join("shop");
        let st = Command::new("git")
            .args(["apply", "--check", "-"])
            .current_dir(&ws)
            .stdin(std::fs::File::open(out.join(task).join("changes.diff")).unwrap())
            .status()
            .unwrap();
        assert!(st.success(), "{task}: git apply --check failed:\n{diff}");
        let st = Command::new("git")
            .args(["apply", "-"])
            .current_dir(&ws)
            .stdin(std::fs::File::open(out.join(task).join("changes.diff")).unwrap())
            .status()
            .unwrap();
        assert!(st.success());
        let b = tempfile::tempdir().unwrap();
        copy_tree(&shop, &b.path().join("shop"));
        let st = Command::new("patch")
            .args(["-p1", "-s", "-i"])
            .arg(out.join(task).join("changes.diff"))
            .current_dir(b.path().join("shop"))
            .status()
            .unwrap();
        assert!(st.success(), "{task}: patch -p1 failed");
        assert_eq!(snapshot(&ws), snapshot(&b.path().join("shop")), "{task}");
        assert_ne!(snapshot(&ws), before, "{task} changed something");
    }
    let t = read_json(out.join("denied-action/transcript.json"));
    assert_eq!(t["counts"]["denied_calls"], 2);
    let denied: Vec<&serde_json::Value> = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "denied")
        .collect();
    assert_eq!(denied[0]["decision"]["rule"], "deny Edit(.github/**)");
    assert_eq!(denied[0]["decision"]["decision"], "deny");
    assert!(
        denied[0]["decision"]["reason"]
            .as_str()
            .is_some_and(|r| !r.is_empty())
    );
    assert!(
        denied[0]["decision"]["signatures"]
            .as_array()
            .is_some_and(|s| s
                .iter()
                .any(|s| s["family"] == "Edit" && s["specifier"] == ".github/workflows/ci.yml")),
        "{}",
        denied[0]["decision"]
    );
    assert!(
        denied[0]["content"]
            .as_str()
            .unwrap()
            .contains("CI configuration is off limits")
    );

    // junit.xml: valid against the Jenkins xUnit schema and readable by a consumer.
    let junit = out.join("junit.xml");
    // The Jenkins xUnit schema that CI systems read, kept in the repository.
    let xsd = repo().join("tests/fixtures/junit-10.xsd");
    let st = Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&junit)
        .status()
        .expect("xmllint (installed by scripts/test)");
    assert!(st.success(), "junit.xml does not validate");
    let py = String::from(
        "import junitparser,sys\nx=junitparser.JUnitXml.fromfile(sys.argv[1])\nsuites=list(x)\nassert len(suites)==4, len(suites)\nfor s in suites:\n  props={p.name:p.value for p in s.properties()}\n  assert 'denied_calls' in props and 'model' in props, props\n  assert len(list(s))==1\nprint('ok')",
    );
    let o = Command::new("python3")
        .args(["-c", &py])
        .arg(&junit)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "junitparser: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("4/4 tasks passed"));
}

#[test]
fn apply_writes_a_passing_task_back() {
    let dir = examples();
    let o = runner()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--apply",
            "--out",
            "out",
            "tasks/fix-typos.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let readme = std::fs::read_to_string(dir.path().join("examples/shop/README.md")).unwrap();
    assert!(readme.contains("receive an email") && !readme.contains("recieve"));
}

#[test]
fn a_failing_check_fails_the_run_and_retries_with_feedback() {
    let dir = examples();
    let o = runner()
        .current_dir(dir.path())
        .env("GITHUB_STEP_SUMMARY", dir.path().join("step.md"))
        .args(["run", "--out", "out", "examples/failing/failing-check.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let t = read_json(dir.path().join("out/failing-check/transcript.json"));
    assert_eq!(t["outcome"]["status"], "failed");
    assert_eq!(t["counts"]["attempts"], 2);
    assert_eq!(t["checks"].as_array().unwrap().len(), 2);
    let feedback =
        t["messages"].as_array().unwrap().iter().find(|m| {
            m["role"] == "user" && m["content"].as_str().unwrap().contains("checks failed")
        });
    assert!(
        feedback.is_some(),
        "the retry carries the failed checks' output"
    );
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(junit.contains("<failure") && junit.contains("test -f CHANGELOG.md"));
    assert!(
        std::fs::read_to_string(dir.path().join("step.md"))
            .unwrap()
            .contains("failing-check")
    );
}

/// Runs one task file (`name.yaml`, workspace `ws/` with `files`) and
/// returns its transcript; the run must pass.
fn run_single(name: &str, task: &str, files: &[(&str, &str)]) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    for (f, text) in files {
        std::fs::write(d.join("ws").join(f), text).unwrap();
    }
    let p = write(d, &format!("{name}.yaml"), task);
    let o = runner()
        .args(["run", "-q", "--out"])
        .arg(d.join("out"))
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    read_json(d.join("out").join(name).join("transcript.json"))
}

#[test]
fn broken_files_are_reported_with_location_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "policy.yaml",
        "default: deny\nrules:\n  - allow: [\"Edit(src/**)\"]\n",
    );
    let cases: Vec<(&str, String, &str)> = vec![
        ("syntax.yaml", "prompt: [unclosed\n".into(), "syntax.yaml:"),
        ("unknown.yaml", "prompt: hi\nscript: []\nbogus: 1\n".into(), "bogus"),
        ("type.yaml", "prompt: hi\nscript: []\nmax_turns: many\n".into(), "max_turns"),
        ("noprompt.yaml", "script: []\nmodel: scripted\n".into(), "prompt"),
        ("badglob.yaml", "prompt: hi\nscript: []\npolicy:\n  rules:\n    - allow: [\"Edit(src/[)\"]\n".into(), "badglob.yaml:5:"),
        ("badrule.yaml", "prompt: hi\nscript: []\npolicy:\n  rules:\n    - deny: [\"Frob(x)\"]\n".into(), "unknown family"),
        ("badtool.yaml", "prompt: hi\nscript: []\ntools: [read_file, teleport]\n".into(), "badtool.yaml:3:"),
        ("mcptool.yaml", "prompt: hi\nscript: []\ntools: [read_file, fs__read]\n".into(), "unknown tool `fs__read`"),
        ("badtest.yaml", "prompt: hi\nscript: []\npolicy:\n  rules:\n    - allow: [\"Bash(git:*)\"]\n  tests:\n    - {call: \"Bash(git push && rm -rf /)\", expect: allow}\n".into(), "policy test failed"),
        ("badtimeout.yaml", "prompt: hi\nscript: []\ntimeout: 10 parsecs\n".into(), "timeout"),
        ("badpolicypath.yaml", "prompt: hi\nscript: []\npolicy: nowhere.yaml\n".into(), "badpolicypath.yaml:3:"),
        ("emptyprompt.yaml", "script: []\nprompt: \"  \"\n".into(), "emptyprompt.yaml:2:9: prompt"),
        ("noscript.yaml", "prompt: hi\nmodel: scripted\n".into(), "noscript.yaml:2:8: script"),
        ("zeroturns.yaml", "prompt: hi\nscript: []\nmax_turns: 0\n".into(), "zeroturns.yaml:3:12: max_turns"),
        ("emptycheck.yaml", "prompt: hi\nscript: []\nchecks:\n  - run: \"\"\n".into(), "emptycheck.yaml:4:"),
        ("bothargs.yaml", "prompt: hi\nscript:\n  - tool_calls:\n      - {name: ls, args: {}, raw_args: \"{}\"}\n".into(), "bothargs.yaml:4:"),
        ("emptyrule.yaml", "prompt: hi\nscript: []\npolicy:\n  rules:\n    - reason: nothing\n".into(), "emptyrule.yaml:5:"),
        ("badrisk.yaml", "prompt: hi\nscript: []\npolicy:\n  risk:\n    \"a b\": low\n".into(), "badrisk.yaml:5:"),
    ];
    for (name, text, expect) in &cases {
        let p = write(d, name, text);
        let o = runner().arg("validate").arg(&p).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(
            err.contains(expect),
            "{name}: expected `{expect}` in: {err}"
        );
        // Every message is `file:line:column: ...`.
        let located = regex::Regex::new(&format!(r"{}:\d+:\d+: ", regex::escape(name))).unwrap();
        for line in err.lines().filter(|l| l.contains(".yaml")) {
            assert!(located.is_match(line), "{name}: not located: {line}");
        }
        // `run` refuses before running anything: no output folder content.
        let out = d.join(format!("out-{name}"));
        let o = runner()
            .arg("run")
            .arg("--out")
            .arg(&out)
            .arg(&p)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        assert!(!out.join("junit.xml").exists());
    }
    // The line:column is right for an unknown field.
    let o = runner()
        .arg("validate")
        .arg(d.join("unknown.yaml"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("unknown.yaml:3:1"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Duplicate names across files.
    let a = write(d, "a.yaml", "name: same\nprompt: hi\nscript: []\n");
    let b = write(d, "b.yaml", "name: same\nprompt: hi\nscript: []\n");
    let o = runner()
        .args(["run", "--out"])
        .arg(d.join("o"))
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("duplicate task name"));
}

#[test]
#[cfg_attr(
    not(feature = "test-tools"),
    ignore = "needs the probe tool: cargo test --features test-tools"
)]
fn batches_run_safe_calls_in_parallel_and_keep_order() {
    let task = "prompt: probe\nworkspace: ws\nmax_turns: 3\nscript:\n  - tool_calls:\n      - {name: probe, args: {label: a, sleep_ms: 400}}\n      - {name: probe, args: {label: b, sleep_ms: 400}}\n      - {name: probe, args: {label: c, sleep_ms: 400}}\n      - {name: probe, args: {label: d, sleep_ms: 100, safe: false}}\n      - {name: probe, args: {label: e, sleep_ms: 300}}\n      - {name: probe, args: {label: f, sleep_ms: 10}}\n";
    let t = run_single("probe", task, &[]);
    let calls = t["tool_calls"].as_array().unwrap();
    let labels: Vec<&str> = calls
        .iter()
        .map(|c| c["metadata"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["a", "b", "c", "d", "e", "f"],
        "results in the model's order"
    );
    let span = |c: &serde_json::Value| {
        (
            c["metadata"]["start_ms"].as_u64().unwrap(),
            c["metadata"]["end_ms"].as_u64().unwrap(),
        )
    };
    let (a, b, c, dd, e, f) = (
        span(&calls[0]),
        span(&calls[1]),
        span(&calls[2]),
        span(&calls[3]),
        span(&calls[4]),
        span(&calls[5]),
    );
    // a, b, c overlap: one batch, wall time near one call.
    let batch1 = a.1.max(b.1).max(c.1) - a.0.min(b.0).min(c.0);
    assert!(
        batch1 < 800,
        "three 400 ms calls took {batch1} ms: not parallel"
    );
    // d runs alone, after the first batch and before the next.
    assert!(
        dd.0 >= a.1.max(b.1).max(c.1) && dd.1 <= e.0.min(f.0),
        "the unsafe call splits the batches"
    );
    let batches: Vec<u64> = calls.iter().map(|c| c["batch"].as_u64().unwrap()).collect();
    assert_eq!(batches, [0, 0, 0, 1, 2, 2]);
    assert!(e.0.abs_diff(f.0) < 200, "e and f start together");
}

#[test]
fn malformed_arguments_and_unknown_tools_go_back_to_the_model() {
    let t = run_single(
        "t",
        "prompt: x\nworkspace: ws\nscript:\n  - tool_calls:\n      - {name: read_file, raw_args: '{\"file_path\": '}\n      - {name: teleport, args: {}}\n      - {name: read_file, args: {path: x}}\n  - text: done\n",
        &[],
    );
    let calls = t["tool_calls"].as_array().unwrap();
    assert!(
        calls[0]["content"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
    assert!(
        calls[1]["content"]
            .as_str()
            .unwrap()
            .contains("unknown tool `teleport`")
    );
    assert!(calls[2]["content"].as_str().unwrap().contains("file_path"));
    assert!(calls.iter().all(|c| c["status"] == "error"));
}

/// The shipped tasks and policies, checked as the README tells a new user
/// to: `runner validate` and `runner policy lint` find nothing to warn of
/// (issue 50: the examples used an unanchored `Read(.env)`).
#[test]
fn the_shipped_tasks_and_policies_lint_clean() {
    let root = repo();
    let files = |dir: &str| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        v.sort();
        v
    };
    let (tasks, policies) = (files("tasks"), files("policies"));
    assert!(tasks.len() >= 5 && policies.len() >= 2);
    let o = runner()
        .current_dir(&root)
        .arg("validate")
        .args(&tasks)
        .args(&policies)
        .output()
        .unwrap();
    let err = crate::common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let o = runner()
        .current_dir(&root)
        .args(["policy", "lint"])
        .args(&policies)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
}

#[test]
fn check_prints_the_decision() {
    let pol = repo().join("policies/ci.yaml");
    let o = runner()
        .args(["check", "--policy"])
        .arg(&pol)
        .args(["bash", r#"{"command":"git status && rm -rf /"}"#])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    // The output is the serialised Decision, as the transcript records it.
    let d: runner_policy::Decision = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        serde_json::to_string(&d).unwrap().as_bytes(),
        o.stdout.trim_ascii_end()
    );
    assert_eq!(d.verdict, runner_policy::Verdict::Deny);
    assert_eq!(d.rule.as_deref(), Some("deny Bash(rm:*)"));
    assert_eq!(d.policy, Some(pol.display().to_string()));
    let sigs: Vec<String> = d.signatures.iter().map(|s| s.to_string()).collect();
    // `rm -rf /` removes everything beneath `/`.
    assert_eq!(sigs, ["Bash(git status)", "Bash(rm -rf /)", "Edit(/**)"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(
        v["signatures"][1],
        serde_json::json!({"family": "Bash", "specifier": "rm -rf /"})
    );
    // A call refused before the policy (a path outside the workspace) is a
    // Decision too, with no layer.
    let o = runner()
        .args(["check", "--policy"])
        .arg(&pol)
        .args(["read_file", r#"{"file_path":"../../etc/passwd"}"#])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["policy"], serde_json::Value::Null);
    assert_eq!(v["signatures"], serde_json::json!([]));
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("outside the workspace")
    );
    let o = runner()
        .args(["check", "--policy"])
        .arg(&pol)
        .args(["bash", r#"{"command":"git diff --stat"}"#])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let o = runner()
        .args(["check", "--policy"])
        .arg(&pol)
        .args(["bash", "{not json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn tool_command_and_tools_listing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let o = runner()
        .args([
            "tool",
            "read_file",
            r#"{"file_path":"a.txt"}"#,
            "--workspace",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "     1\thello\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("read a.txt"));
    let o = runner()
        .args([
            "tool",
            "read_file",
            r#"{"file_path":"../x"}"#,
            "--workspace",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let o = runner()
        .args(["tool", "read_file", r#"{"nope":1}"#, "--workspace"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // One call has no earlier read: edit_file and write_file work on an
    // existing file (issue 50: "has not been read in this task", always).
    std::fs::write(dir.path().join("e.txt"), "old\n").unwrap();
    for (tool, args) in [
        (
            "edit_file",
            r#"{"file_path":"e.txt","old_string":"old","new_string":"mid"}"#,
        ),
        ("write_file", r#"{"file_path":"e.txt","content":"new\n"}"#),
    ] {
        let o = runner()
            .args(["tool", tool, args, "--workspace"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{tool}: {}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("e.txt")).unwrap(),
        "new\n"
    );
    for f in ["openai", "anthropic", "gemini"] {
        let o = runner().args(["tools", "--format", f]).output().unwrap();
        assert!(o.status.success());
        let _: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    }
    for k in ["task", "policy", "transcript", "agent"] {
        let o = runner().args(["schema", k]).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["properties"].is_object(), "{k}");
    }
}

#[test]
fn grep_finds_the_same_lines_as_ripgrep() {
    // A large real tree: the cargo registry sources this project builds on.
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cargo"));
    let Some(src) = std::fs::read_dir(home.join("registry/src"))
        .ok()
        .and_then(|mut r| r.next())
        .map(|e| e.unwrap().path())
    else {
        panic!("no cargo registry sources found");
    };
    let rg = Command::new("rg")
        .args(["-n", "--no-heading", "fn main"])
        .current_dir(&src)
        .output()
        .expect("rg installed by .ci/run");
    let mut want: Vec<String> = String::from_utf8_lossy(&rg.stdout)
        .lines()
        .map(String::from)
        .collect();
    want.sort();
    assert!(want.len() > 50, "a large tree: {} matches", want.len());
    let o = runner()
        .args([
            "tool",
            "grep",
            r#"{"pattern":"fn main","limit":1000000}"#,
            "--workspace",
        ])
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success());
    let mut got: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(String::from)
        .collect();
    got.sort();
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
}

#[test]
fn tools_list_and_plan_mode_restrict_what_the_model_can_call() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/a.txt"), "a\n").unwrap();
    let script = "script:\n  - tool_calls:\n      - {name: bash, args: {command: 'touch made'}}\n      - {name: write_file, args: {file_path: b.txt, content: x}}\n      - {name: read_file, args: {file_path: a.txt}}\n  - text: done\n";
    let policy = "policy: {default: allow}\n";
    let listed = write(
        d,
        "listed.yaml",
        &format!("prompt: x\nworkspace: ws\ntools: [read_file]\n{policy}{script}"),
    );
    let plan = write(
        d,
        "plan.yaml",
        &format!("prompt: x\nworkspace: ws\nmode: plan\n{policy}{script}"),
    );
    let o = runner()
        .args(["run", "-q", "--out"])
        .arg(d.join("out"))
        .arg(&listed)
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for task in ["listed", "plan"] {
        let t = read_json(d.join(format!("out/{task}/transcript.json")));
        let calls = t["tool_calls"].as_array().unwrap();
        assert!(
            calls[0]["content"]
                .as_str()
                .unwrap()
                .contains("unknown tool `bash`"),
            "{task}: {}",
            calls[0]["content"]
        );
        assert!(
            calls[1]["content"]
                .as_str()
                .unwrap()
                .contains("unknown tool `write_file`"),
            "{task}"
        );
        assert_eq!(calls[2]["status"], "ok", "{task}");
        assert!(
            t["changes"].as_array().unwrap().is_empty(),
            "{task} changed nothing"
        );
    }
}

#[test]
fn declarations_are_valid_json_schema() {
    // Checked against the JSON Schema 2020-12 metaschema, and each tool's
    // examples (from its description) must validate against its schema.
    let check = r#"
import json, sys, jsonschema
decls = json.load(sys.stdin)
kind = sys.argv[1]
VALID = {
    "read_file": {"file_path": "a.txt", "offset": 10, "limit": 5},
    "write_file": {"file_path": "a.txt", "content": "x"},
    "edit_file": {"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": True, "match": "flexible"},
    "ls": {},
    "glob": {"pattern": "**/*.rs", "path": "src"},
    "grep": {"pattern": "fn main", "include": "*.rs"},
    "bash": {"command": "ls", "timeout": 1000, "working_directory": "src", "description": "list"},
    "save_memory": {"fact": "f"},
}
assert set(VALID) <= {d["function"]["name"] if kind == "openai" else d["name"] for d in decls}
for d in decls:
    if kind == "openai":
        name, schema = d["function"]["name"], d["function"]["parameters"]
    else:
        name, schema = d["name"], d["input_schema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    good = VALID.get(name)
    if good is not None:
        v.validate(good)
        assert not v.is_valid({**good, "surely_not_an_argument": 1}), name + " accepts unknown arguments"
    assert not v.is_valid([]), name + " accepts a non-object"
print(len(decls))
"#;
    for kind in ["openai", "anthropic"] {
        let o = runner().args(["tools", "--format", kind]).output().unwrap();
        assert!(o.status.success());
        let out = python(check, &[kind], &o.stdout);
        assert!(out.trim().parse::<usize>().unwrap() >= 8, "{kind}: {out}");
    }
}

#[test]
fn a_symlink_made_earlier_in_the_turn_is_seen_by_the_policy() {
    // One turn: bash makes `notes` point at .env (through python's inline
    // code, which the policy cannot see into, so a rule names the exact
    // command; `ln -s .env notes` itself would be denied as a read of
    // .env), then read_file reads
    // `notes`. The read is decided after the link exists, so Read(.env)
    // is among its signatures and the deny holds.
    let t = run_single(
        "t",
        r#"prompt: x
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Read(.env)"]
    - allow: ["Bash(python3 -c \"import os; os.symlink('.env', 'notes')\")"]
script:
  - tool_calls:
      - name: bash
        args:
          command: python3 -c "import os; os.symlink('.env', 'notes')"
      - {name: read_file, args: {file_path: notes}}
  - text: done
"#,
        &[(".env", "SECRET=1\n")],
    );
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["status"], "ok", "{}", calls[0]["content"]);
    assert_eq!(calls[1]["status"], "denied", "{}", calls[1]["content"]);
    assert!(!calls[1]["content"].as_str().unwrap().contains("SECRET"));
}

/// `runner policy lint` names what never matches, what is shadowed or
/// overruled and unanchored deny paths, each at its file and line;
/// `runner validate` prints the warnings and refuses a rule that never
/// matches.
#[test]
fn policy_lint_and_validate_find_rules_that_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "p.yaml",
        "default: deny\nrules:\n  - allow: [\"Bash(git:*)\", \"Bash(git status)\", \"Bash(cargo publish:*)\"]\n  - deny: [\"Bash(git status && rm -rf /)\", \"Read(.env)\", \"Bash(cargo publish:*)\"]\n",
    );
    let out = lint(d, "p.yaml", 1);
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "p.yaml:3:28: warning: `allow Bash(git status)`: shadowed by `allow Bash(git:*)` (line 3)",
        "p.yaml:3:48: warning: `allow Bash(cargo publish:*)`: never allows anything: `deny Bash(cargo publish:*)` (line 4)",
        "p.yaml:4:12: error: `deny Bash(git status && rm -rf /)`: a rule matches one simple command",
        "p.yaml:4:44: warning: `deny Read(.env)`: `.env` matches in every folder",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    let err = crate::common::validate_refuses(d, "p.yaml");
    assert!(
        err.contains("p.yaml:4:12") && err.contains("never matches"),
        "{err}"
    );
    assert!(err.contains("warning: `deny Read(.env)`"), "{err}");
    write(
        d,
        "clean.yaml",
        "default: deny\nrules:\n  - allow: [\"Bash(cargo test:*)\"]\n  - deny: [\"Read(./.env)\", \"Edit(.github/**)\"]\n",
    );
    lint(d, "clean.yaml", 0);
    crate::common::validate_accepts(d, "clean.yaml");
}

/// One loader (issue 42): a policy `runner validate` rejects never runs.
/// `run`, `check`, `replay` and `tool` load it through the same path and
/// exit 2 before anything runs, naming `file:line:column`; a task's inline
/// `policy:` is held to the same rule. A warning (a shadowed rule) stays a
/// warning: the run goes ahead.
#[test]
fn a_policy_validate_rejects_never_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "p.yaml",
        "default: allow\nrules:\n  - deny: [\"Bash(git status && ls)\"]\n",
    );
    let task = |name: &str, policy: &str| {
        write(
            d,
            name,
            &format!(
                "prompt: p\nworkspace: ws\n{policy}\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: touch ran}}}}\n  - text: done\n"
            ),
        )
    };
    let refused = |args: &[&str], want: &str| {
        let o = runner().current_dir(d).args(args).output().unwrap();
        let err = crate::common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(want) && err.contains("never matches"),
            "{args:?}: {err}"
        );
    };
    let t = task("t.yaml", "policy: p.yaml");
    let t = t.to_str().unwrap();
    refused(&["run", "-q", "--out", "out", t], "p.yaml:3:12");
    let plain = task("plain.yaml", "");
    refused(
        &[
            "run",
            "-q",
            "--out",
            "out",
            "--policy",
            "p.yaml",
            plain.to_str().unwrap(),
        ],
        "p.yaml:3:12",
    );
    let inline = task(
        "inline.yaml",
        "policy:\n  default: allow\n  rules:\n    - deny: [\"Bash(cd:*)\"]",
    );
    refused(
        &["run", "-q", "--out", "out", inline.to_str().unwrap()],
        "inline.yaml:6:14",
    );
    // Nothing ran: no command, no output folder.
    assert!(!d.join("ws/ran").exists());
    assert!(!d.join("out").exists());
    let call = r#"{"command":"git status && ls"}"#;
    refused(
        &["check", "--policy", "p.yaml", "bash", call],
        "p.yaml:3:12",
    );
    refused(
        &[
            "tool",
            "--policy",
            "p.yaml",
            "--workspace",
            "ws",
            "bash",
            call,
        ],
        "p.yaml:3:12",
    );
    write(d, "tr.json", "{}");
    refused(&["replay", "--policy", "p.yaml", "tr.json"], "p.yaml:3:12");
    crate::common::validate_refuses(d, "p.yaml");
    // A warning is no error: a shadowed rule loads and runs.
    write(
        d,
        "w.yaml",
        "default: allow\nrules:\n  - deny: [\"Bash(curl:*)\", \"Bash(curl -s:*)\"]\n",
    );
    let o = runner()
        .current_dir(d)
        .args([
            "check",
            "--policy",
            "w.yaml",
            "bash",
            r#"{"command":"echo hi"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    let w = task("w-task.yaml", "policy: w.yaml");
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out"])
        .arg(&w)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", crate::common::stderr(&o));
    assert!(d.join("out/w-task/transcript.json").exists());
}

/// `runner policy lint FILE` in `dir`, which must exit `code`.
fn lint(dir: &Path, file: &str, code: i32) -> std::process::Output {
    let out = runner()
        .current_dir(dir)
        .args(["policy", "lint", file])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        crate::common::stderr(&out)
    );
    out
}

/// The backstop behind an edit deny rule (issue 29): a script the analysis
/// cannot see into (`bash tools/w.sh`) changes a file the policy denies
/// editing and adds one; both are put back before the check runs, left out
/// of changes.diff and --apply, recorded as violations naming the rule, and
/// the task fails. The allowed change stays in the diff.
#[test]
fn changes_to_edit_denied_paths_never_leave_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/.github/workflows/ci.yml", "original\n");
    write(
        d,
        "ws/tools/w.sh",
        "echo changed > .github/workflows/ci.yml\necho new > .github/new.yml\necho ok > ok.txt\n",
    );
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Edit(.github/**)"]
      reason: CI configuration is off limits
checks:
  - run: test ! -e .github/new.yml && grep -q original .github/workflows/ci.yml && test -e ok.txt
script:
  - tool_calls:
      - {name: bash, args: {command: bash tools/w.sh}}
  - text: done
"#,
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--apply", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
    assert_eq!(t["outcome"]["status"], "failed", "{}", t["outcome"]);
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("deny Edit(.github/**)"), "{reason}");
    // The check saw the copy as the policy allows it.
    assert_eq!(t["checks"][0]["passed"], true, "{}", t["checks"]);
    let v = t["violations"].as_array().unwrap();
    let paths: Vec<&str> = v.iter().map(|x| x["path"].as_str().unwrap()).collect();
    assert_eq!(
        paths,
        [".github/new.yml", ".github/workflows/ci.yml"],
        "{v:?}"
    );
    assert_eq!(v[0]["change"], "added");
    assert_eq!(v[1]["change"], "modified");
    assert_eq!(v[1]["rule"], "deny Edit(.github/**)");
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("ok.txt") && !diff.contains(".github"),
        "{diff}"
    );
    // Nothing reached the original.
    assert_eq!(
        std::fs::read_to_string(d.join("ws/.github/workflows/ci.yml")).unwrap(),
        "original\n"
    );
    assert!(!d.join("ws/.github/new.yml").exists());
    let junit = std::fs::read_to_string(d.join("out/junit.xml")).unwrap();
    assert!(junit.contains("name=\"violations\" value=\"2\""), "{junit}");
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(summary.contains("Changes dropped"), "{summary}");
}

/// Errors that reach a user name the thing and the cause in plain words,
/// never a Rust type path (`rmcp::transport::...`): a task file that does
/// not parse, a bad glob, a provider that cannot be reached, an MCP server
/// that cannot start. (A remote MCP server's refusal: tests/it/mcp.rs.)
#[test]
fn errors_name_things_in_plain_words() {
    // The check every test's stderr goes through (common::stderr) finds
    // what rmcp used to print, and leaves plain words alone.
    let rmcp = "Transport [rmcp::transport::worker::WorkerTransport<...>] error: Auth required";
    assert_eq!(
        crate::common::rust_type_path(rmcp).as_deref(),
        Some("rmcp::transport::worker::WorkerTransport")
    );
    assert_eq!(
        crate::common::rust_type_path("deny Bash(git push:*) at http://127.0.0.1:9/v1"),
        None
    );
    let type_path = regex::Regex::new(r"\b[A-Za-z_][A-Za-z0-9_]*::[A-Za-z_<]").unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(dir.path(), "bad.yaml", "name: t\nprompt: [x\n");
    write(
        dir.path(),
        "glob.yaml",
        "name: t\nprompt: x\nworkspace: ws\npolicy:\n  rules:\n    - deny: [\"Read(a[)\"]\nscript:\n  - text: hi\n",
    );
    write(
        dir.path(),
        "conn.yaml",
        "name: conn\nprompt: x\nworkspace: ws\nmodel: openai:gpt-4.1\nmodel_options: {max_retries: 0}\n",
    );
    write(
        dir.path(),
        "mcp.yaml",
        "name: mcp\nprompt: x\nworkspace: ws\nmcp_servers:\n  gone:\n    command: /nonexistent/server\nscript:\n  - text: done\n",
    );
    let mut seen = Vec::new();
    for (file, code) in [
        ("bad.yaml", 2),
        ("glob.yaml", 2),
        // An unreachable model: resumable (75); a server that cannot start: 1.
        ("conn.yaml", 75),
        ("mcp.yaml", 1),
    ] {
        let out = runner()
            .current_dir(dir.path())
            .env("CI", "true")
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            .env("OPENAI_API_KEY", "sk-test")
            .args(["run", "--force-out", "--out", "out", file])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{file}: {}",
            crate::common::stderr(&out)
        );
        let mut text = crate::common::stderr(&out);
        let name = file.trim_end_matches(".yaml");
        let transcript = dir.path().join(format!("out/{name}/transcript.json"));
        if code != 2 {
            let t = read_json(&transcript);
            text.push_str(t["outcome"]["reason"].as_str().unwrap());
        }
        assert!(!type_path.is_match(&text), "{file}: a type path in\n{text}");
        seen.push(text);
    }
    assert!(seen[2].contains("cannot connect"), "{}", seen[2]);
    assert!(seen[3].contains("/nonexistent/server"), "{}", seen[3]);
}

/// `--out` holding an earlier run's other tasks is refused (its report
/// would mix the two runs), unless `--force-out` removes their folders; a
/// folder holding this run's tasks only is reused; the default folder
/// holds the last run.
#[test]
fn an_output_folder_with_another_runs_tasks_is_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ["a", "b"] {
        write(
            d,
            &format!("{name}.yaml"),
            &format!("name: {name}\nprompt: p\nscript:\n  - text: done\n"),
        );
    }
    let run = |args: &[&str]| {
        runner()
            .current_dir(d)
            .args(["run", "-q", "--out", "out"])
            .args(args)
            .output()
            .unwrap()
    };
    assert_eq!(run(&["a.yaml", "b.yaml"]).status.code(), Some(0));
    // The same tasks again: this run's own.
    assert_eq!(run(&["a.yaml", "b.yaml"]).status.code(), Some(0));
    let o = run(&["b.yaml"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--out out: holds an earlier run's other tasks (a)")
            && stderr(&o).contains("--force-out"),
        "{}",
        stderr(&o)
    );
    assert!(
        d.join("out/a/transcript.json").is_file(),
        "nothing was touched"
    );
    let o = run(&["--force-out", "b.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!d.join("out/a").exists());
    let report = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(report.contains("1/1 tasks passed"), "{report}");
    // The default folder (no --out) holds the last run: the earlier run's
    // other tasks are removed, and it says so.
    let default = |task: &str| {
        runner()
            .current_dir(d)
            .args(["run", "-q", task])
            .output()
            .unwrap()
    };
    assert_eq!(default("a.yaml").status.code(), Some(0));
    let o = default("b.yaml");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("runner-out: removed the earlier run's a (the default output folder holds the last run; give --out to keep runs apart)"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("runner-out/a").exists());
    assert!(d.join("runner-out/b/transcript.json").is_file());
}
