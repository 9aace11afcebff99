//! Credentials in the workspace never reach the model: what a checkout
//! leaves in `.git/config`, the credential files tools leave in a
//! repository, and token shapes and encodings wherever they appear.

use std::path::Path;
use std::process::Command;

use crate::common::{read_json, runner, stderr, write};
use serde_json::Value;

/// A token no shape matches: only the config's cleaning can hide it.
const TOKEN: &str = "tok-9f8e7d6c5b4a39281706";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn base64(s: &str) -> String {
    let out = Command::new("base64")
        .arg("-w0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(s.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// A repository as `actions/checkout` leaves it, with the token in an
/// extraheader and in a remote's URL too.
fn checkout(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    write(root, "a.txt", "a\n");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
    let header = format!(
        "AUTHORIZATION: basic {}",
        base64(&format!("x-access-token:{TOKEN}"))
    );
    git(
        root,
        &["config", "http.https://github.com/.extraheader", &header],
    );
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            &format!("https://x-access-token:{TOKEN}@github.com/o/r.git"),
        ],
    );
    git(
        root,
        &[
            "config",
            "credential.helper",
            &format!("!echo password={TOKEN}"),
        ],
    );
    git(
        root,
        &[
            "config",
            &format!("url.https://u:{TOKEN}@example.com/.insteadOf"),
            "https://example.com/",
        ],
    );
    git(root, &["config", "include.path", "/etc/runner-test-secret"]);
}

/// Every file under `dir`, as text.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for e in walk(dir) {
        out.push_str(&String::from_utf8_lossy(&std::fs::read(e).unwrap()));
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}

/// Runs the task with every event as a JSON line on stdout and every
/// call as a log line on stderr (`-v`), so that both can be searched.
fn run(dir: &Path, task: &str) -> (std::process::Output, Value) {
    let task = write(dir, "t.yaml", task);
    let o = runner()
        .args(["run", "-v", "--format", "json", "--out"])
        .arg(dir.join("out"))
        .arg(&task)
        .env("CI", "true")
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (o, t)
}

fn contents(t: &Value) -> Vec<String> {
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_checkouts_token_never_reaches_the_model_or_an_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    checkout(&root);
    let before = std::fs::read(root.join(".git/config")).unwrap();
    let commands = [
        "cat .git/config",
        "git config --list",
        "git remote -v",
        "grep -r x-access-token .git || echo no-such-line",
        // The original's config through the copy's alternates: the
        // original is unreadable to commands.
        "cat \"$(cat .git/objects/info/alternates)/../config\" || echo unreadable",
        "git status --porcelain && echo b > b.txt && git add b.txt && git -c user.name=a -c user.email=a@b commit -qm second && git log --oneline | wc -l",
    ];
    let mut script = String::new();
    for c in commands {
        script.push_str(&format!(
            "  - tool_calls:\n      - {{name: bash, args: {{command: {}}}}}\n",
            serde_json::to_string(c).unwrap()
        ));
    }
    script.push_str("  - tool_calls:\n      - {name: read_file, args: {file_path: .git/config}}\n");
    let (o, t) = run(
        dir.path(),
        &format!(
            "name: t\nprompt: x\nworkspace: repo\npolicy:\n  default: allow\nscript:\n{script}  - text: done\n"
        ),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let results = contents(&t);
    assert_eq!(results.len(), commands.len() + 1);
    let encoded = base64(&format!("x-access-token:{TOKEN}"));
    for (i, r) in results.iter().enumerate() {
        assert!(!r.contains(TOKEN), "call {i} shows the token: {r}");
        assert!(!r.contains(&encoded), "call {i} shows it encoded: {r}");
        assert!(!r.contains("extraheader"), "call {i}: {r}");
    }
    // The config still works: the remote is there, without the token.
    assert!(
        results[2].contains("https://github.com/o/r.git"),
        "{}",
        results[2]
    );
    assert!(results[3].contains("no-such-line"), "{}", results[3]);
    assert!(results[4].contains("unreadable"), "{}", results[4]);
    // git works in the copy: status, add and commit.
    assert!(results[5].trim_end().ends_with('2'), "{}", results[5]);
    // The original is untouched.
    assert_eq!(std::fs::read(root.join(".git/config")).unwrap(), before);
    assert_eq!(git(&root, &["log", "--oneline"]).lines().count(), 1);
    // No output file, event or log line holds it, in either form.
    let events = crate::common::events(&o);
    assert!(events.len() > 10, "{events:?}");
    let outputs = all_text(&dir.path().join("out"));
    let logs = format!("{}{}", stderr(&o), String::from_utf8_lossy(&o.stdout));
    for text in [&outputs, &logs] {
        assert!(!text.contains(TOKEN));
        assert!(!text.contains(&encoded));
    }
    // What was removed is listed by key, never by value.
    let removed: Vec<&str> = t["credentials_removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for key in [
        ".git/config http.https://github.com/.extraheader",
        ".git/config remote.origin.url",
        ".git/config credential.helper",
        ".git/config url.https://example.com/.insteadof",
        ".git/config include.path",
    ] {
        assert!(
            removed.iter().any(|r| r.starts_with(key)),
            "{key} not in {removed:?}"
        );
    }
}

/// One file of each kind the built-in credentials layer covers.
const CREDENTIAL_FILES: &[(&str, &str)] = &[
    (".git-credentials", "https://u:SECRET-1@github.com\n"),
    (".netrc", "machine h login u password SECRET-2\n"),
    (
        ".npmrc",
        "registry=https://r.example/\n//r.example/:_authToken=SECRET-3\n",
    ),
    (".yarnrc.yml", "npmAuthToken: SECRET-4\n"),
    (".pypirc", "[pypi]\npassword = SECRET-5\n"),
    (
        ".docker/config.json",
        "{\"auths\": {\"h\": {\"auth\": \"SECRET-6\"}}}\n",
    ),
    ("certs/server.pem", "SECRET-7\n"),
    ("deploy.key", "SECRET-8\n"),
];

fn workspace_with_credentials(dir: &Path) {
    write(dir, "ws/a.txt", "a\n");
    for (path, text) in CREDENTIAL_FILES {
        write(dir, &format!("ws/{path}"), text);
    }
}

#[test]
fn credential_files_are_absent_for_the_agent_and_back_for_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    workspace_with_credentials(dir.path());
    let mut script = String::from(
        "  - tool_calls:\n      - {name: bash, args: {command: \"ls -aR; grep -r SECRET . || echo none; python3 -c 'import pathlib; [print(p, p.read_text()) for p in pathlib.Path(\\\".\\\").rglob(\\\"*\\\") if p.is_file()]'\"}}\n",
    );
    for (path, _) in CREDENTIAL_FILES {
        script.push_str(&format!(
            "  - tool_calls:\n      - {{name: read_file, args: {{file_path: {path}}}}}\n"
        ));
    }
    let (o, t) = run(
        dir.path(),
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nchecks:\n  - run: grep -q SECRET-3 .npmrc && grep -q SECRET-7 certs/server.pem\nscript:\n{script}  - text: done\n"
        ),
    );
    // The checks see the files: the task passes.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let calls = t["tool_calls"].as_array().unwrap();
    let listing = calls[0]["content"].as_str().unwrap();
    assert!(!listing.contains("SECRET"), "{listing}");
    assert!(listing.contains("a.txt"), "{listing}");
    for (call, (path, _)) in calls[1..].iter().zip(CREDENTIAL_FILES) {
        assert_eq!(call["status"], "denied", "{path}: {call}");
        assert_eq!(
            call["decision"]["policy"], "built-in: credentials",
            "{path}"
        );
    }
    let removed = t["credentials_removed"].to_string();
    for (path, _) in CREDENTIAL_FILES {
        let shown = path.split('/').next().unwrap();
        assert!(removed.contains(shown), "{path} not in {removed}");
    }
    // The original keeps them.
    assert!(dir.path().join("ws/.npmrc").exists());
}

#[test]
fn an_explicit_allow_with_a_reason_gives_a_file_back() {
    let dir = tempfile::tempdir().unwrap();
    workspace_with_credentials(dir.path());
    let policy = "default: allow\n  rules:\n    - allow: [\"Read(./.npmrc)\"]\n      reason: the build reads the registry from it\n    - allow: [\"Read(./.netrc)\"]\n";
    let (o, t) = run(
        dir.path(),
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy:\n  {policy}script:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"python3 -c 'print(open(\\\".npmrc\\\").read())'; python3 -c 'print(open(\\\".netrc\\\").read())' || echo gone\"}}}}\n  - text: done\n"
        ),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let content = t["tool_calls"][0]["content"].as_str().unwrap();
    assert!(content.contains("SECRET-3"), "{content}");
    // Without a reason, no: .netrc stays out.
    assert!(!content.contains("SECRET-2"), "{content}");
    assert!(content.contains("gone"), "{content}");
}

#[test]
fn lint_shows_the_layer_and_what_gives_a_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "p.yaml",
        "default: deny\nrules:\n  - allow: [\"Read(./.npmrc)\"]\n    reason: the registry\n  - allow: [\"Read(.pypirc)\"]\n",
    );
    let o = runner().args(["policy", "lint"]).arg(&p).output().unwrap();
    let err = stderr(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(err.contains("built-in: credentials"), "{err}");
    assert!(err.contains("deny Read(.git-credentials)"), "{err}");
    assert!(
        err.contains("p.yaml:3: `allow Read(./.npmrc)` gives back"),
        "{err}"
    );
    // The allow without a reason gives nothing back, and lint says so.
    assert!(out.contains("p.yaml:5:"), "{out}");
    assert!(out.contains("names `.pypirc`"), "{out}");
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn token_shapes_and_encodings_are_redacted_in_commands_files_and_mcp_results() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "env-secret-value-4242";
    let tokens = [
        "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "npm_abcdefghijklmnopqrstuvwxyz0123456789",
        "pypi-AgEIcHlwaS5vcmcCJGE0ZDY1ZjM0LTk0ZDEtNDc0Ny1iYmRjLWY4ZmQ0ZDRkMzM2NgAC",
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-123456789012-abcdefghijkl",
    ];
    // The runner knows the value from its environment (commands do not
    // get it: the variable is scrubbed); here it comes in a file and in
    // the command's words, plain and encoded.
    let encoded = [
        base64(secret),
        base64(&format!("x-access-token:{secret}")),
        secret.to_string(),
    ];
    let all = tokens.join(" ");
    write(
        dir.path(),
        "ws/notes.txt",
        &format!("{all}\n{}\n", encoded[1]),
    );
    let server = crate::common::repo().join("tests/fixtures/mcp_test_server.py");
    let task = format!(
        "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nmcp_servers:\n  t:\n    command: python3\n    args: [\"{}\", \"redact-marker\"]\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"echo {all} {}\"}}}}\n  - tool_calls:\n      - {{name: read_file, args: {{file_path: notes.txt}}}}\n  - tool_calls:\n      - {{name: t__echo, args: {{text: \"{all} {}\"}}}}\n  - text: done\n",
        server.display(),
        encoded.join(" "),
        encoded[0]
    );
    let task = write(dir.path(), "t.yaml", &task);
    let o = runner()
        .args(["run", "--out"])
        .arg(dir.path().join("out"))
        .arg(&task)
        .env("CI", "true")
        .env("MY_TOKEN", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3, "{calls:?}");
    for c in calls {
        assert_eq!(c["status"], "ok", "{c}");
        let content = c["content"].as_str().unwrap();
        assert!(content.contains("[REDACTED]"), "{content}");
        for token in tokens.iter().map(|t| t.to_string()).chain(encoded.clone()) {
            assert!(!content.contains(&token), "{token} in {content}");
        }
    }
    let outputs = all_text(&dir.path().join("out"));
    for token in tokens.iter().map(|t| t.to_string()).chain(encoded) {
        assert!(!outputs.contains(&token), "{token} in an output");
    }
}

/// The action's "Run tasks" step, as bash runs it on GitHub, in `cwd`,
/// with the job's secret `NPM_TOKEN` in its environment.
fn run_action_step(cwd: &Path, tasks: &str) -> std::process::Output {
    crate::action::run_step(
        "run",
        cwd,
        &[
            ("INPUT_TASKS", tasks),
            ("NPM_TOKEN", "npm-secret-of-the-job-4242"),
        ],
    )
}

/// The action's step execs the runner (no shell holding the job's secrets
/// stays beside it: the runner does not warn of one) and the runner
/// writes the step's outputs: the exit code of a failing task, whose step
/// still succeeds, and the outputs' paths.
#[test]
fn the_action_execs_the_runner_which_writes_the_steps_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    let task = write(
        dir.path(),
        "t.yaml",
        "name: t\nprompt: x\noutput_schema: {type: object, required: [ok]}\nchecks:\n  - run: \"false\"\nscript:\n  - text: '{\"ok\": true}'\n",
    );
    let o = run_action_step(&root, &task.display().to_string());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("the process that started runner holds"),
        "{}",
        stderr(&o)
    );
    let written = std::fs::read_to_string(root.join("github-output")).unwrap();
    let out = root.join("out");
    let want = format!(
        "exit-code=1\nconclusion=failed\njunit={}\nreport={}\nlast-message<<RUNNER_EOF_0\n{{\"ok\": true}}\nRUNNER_EOF_0\noutput={}\nstructured-output={{\"ok\":true}}\n",
        out.join("junit.xml").display(),
        out.join("report.html").display(),
        out.join("t/output.json").display()
    );
    assert!(
        out.join("t/output.json").is_file(),
        "{written}: no output.json"
    );
    assert_eq!(written, want);
}

/// With `--github-output`, a run that cannot even start (bad input, 2)
/// still writes its code for the next step, and exits 0.
#[test]
fn github_output_gets_the_code_of_a_run_that_cannot_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("github-output");
    let o = runner()
        .current_dir(dir.path())
        .args(["run", "--out", "out", "--github-output"])
        .arg(&file)
        .arg("missing.yaml")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.yaml"), "{}", stderr(&o));
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.starts_with("exit-code=2\nconclusion=invalid\n"),
        "{written}"
    );
    assert!(!written.contains("output="), "{written}");
}

#[test]
fn the_action_warns_of_a_persisted_checkout_credential_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    checkout(&root);
    let outside = tempfile::tempdir().unwrap();
    let task = write(
        outside.path(),
        "t.yaml",
        "name: t\nprompt: x\nscript:\n  - text: done\n",
    );
    let o = run_action_step(&root, &task.display().to_string());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", stderr(&o));
    assert!(
        stdout.contains("::warning::the checkout persisted a credential"),
        "{stdout}"
    );
    assert!(stdout.contains("persist-credentials: false"), "{stdout}");
    assert!(!stdout.contains(TOKEN) && !stderr(&o).contains(TOKEN));
    // A checkout without one: no warning.
    let clean = dir.path().join("clean");
    std::fs::create_dir_all(&clean).unwrap();
    git(&clean, &["init", "-q"]);
    git(
        &clean,
        &["remote", "add", "origin", "https://github.com/o/r.git"],
    );
    let o = run_action_step(&clean, &task.display().to_string());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("::warning::"));
}
