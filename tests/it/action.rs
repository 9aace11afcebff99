//! The GitHub Action's own step scripts, run as GitHub runs them (issue
//! 74): globs reach runner as written, a prompt runs `runner exec` with a
//! key given as an input, and the comment step posts the summary.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::Vendor;
use crate::common::{stderr, write};

/// The inputs a step gets when a workflow sets none (the action's
/// defaults), with `INPUT_OUT` in `cwd`.
fn defaults(cwd: &Path) -> Vec<(String, String)> {
    [
        ("INPUT_TASKS", "tasks/*.yaml"),
        ("INPUT_PROMPT", ""),
        ("INPUT_POLICY", ""),
        ("INPUT_OPENAI_API_KEY", ""),
        ("INPUT_ANTHROPIC_API_KEY", ""),
        ("INPUT_GEMINI_API_KEY", ""),
        ("INPUT_MODEL", ""),
        ("INPUT_JOBS", "1"),
        ("INPUT_SHARD", ""),
        ("INPUT_REPEAT", ""),
        ("INPUT_PARAMS", ""),
        ("INPUT_APPLY", "false"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .chain([("INPUT_OUT".into(), cwd.join("out").display().to_string())])
    .collect()
}

/// The action's step `id` (or, for a step without one, named `id`), as
/// bash runs it on GitHub, in `cwd`, with `env` over the defaults and
/// `GITHUB_OUTPUT` in `cwd/github-output`; the runner built for the tests
/// first on `PATH`.
pub fn run_step(id: &str, cwd: &Path, env: &[(&str, &str)]) -> std::process::Output {
    run_step_of(&crate::common::repo().join("action.yml"), id, cwd, env)
}

/// [`run_step`] of the action file `action` (a copy `runner init`
/// vendored, say).
pub fn run_step_of(
    action: &Path,
    id: &str,
    cwd: &Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    let action: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(action).unwrap()).unwrap();
    let step = action["runs"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id || s["name"] == id)
        .unwrap_or_else(|| panic!("no step {id}"));
    // A file run as GitHub runs a step's script (bash runs the last
    // command of `-c` in its own process, but not of a file).
    let script = cwd.with_extension(format!("{}.sh", id.replace(' ', "-")));
    std::fs::write(&script, step["run"].as_str().unwrap()).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_runner")).parent().unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&script)
        .current_dir(cwd)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env("GITHUB_OUTPUT", cwd.join("github-output"))
        .env("RUNNER_TEMP", cwd);
    for (k, v) in defaults(cwd) {
        cmd.env(k, v);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A scripted task named `name` that passes.
fn task(name: &str) -> String {
    format!("name: {name}\nprompt: p\nworkspace: ../..\nscript:\n  - text: {name} done\n")
}

#[test]
fn globs_reach_the_runner_as_written_and_it_expands_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(
        &root,
        "tasks/example.yaml",
        &task("example").replace("../..", ".."),
    );
    write(&root, "tasks/deep/mid.yaml", &task("mid"));
    write(
        &root,
        "tasks/deep/er/inner.yaml",
        &task("inner").replace("../..", "../../.."),
    );
    write(&root, "policies/a.yaml", "default: allow\n");
    write(
        &root,
        "policies/team/b.yaml",
        "default: allow\nrules:\n  - deny: [\"Bash(rm:*)\"]\n",
    );
    let o = run_step(
        "run",
        &root,
        &[
            ("INPUT_TASKS", "tasks/**/*.yaml"),
            ("INPUT_POLICY", "policies/**/*.yaml"),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(root.join("github-output")).unwrap();
    assert!(
        written.starts_with("exit-code=0\nconclusion=passed\n"),
        "{written}"
    );
    // Every task ran (bash's `**` without globstar is `*`: it would have
    // run tasks/deep/mid.yaml alone, under policies/team/b.yaml alone).
    for t in ["example", "mid", "inner"] {
        let tr = crate::common::read_json(root.join(format!("out/{t}/transcript.json")));
        assert_eq!(tr["outcome"]["status"], "passed", "{t}");
        let layers = tr["policies"].to_string();
        assert!(
            layers.contains("policies/a.yaml") && layers.contains("policies/team/b.yaml"),
            "{layers}"
        );
    }
    // The last task by name gives `last-message`.
    assert!(
        written.contains("last-message<<RUNNER_EOF_0\nmid done\nRUNNER_EOF_0\n"),
        "{written}"
    );
}

#[test]
fn a_prompt_runs_runner_exec_with_the_key_given_as_an_input() {
    let server = FakeServer::start(|_, _| {
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": "Two files.\nBoth fine."},
                "finish_reason": "stop"}]}),
        )
    });
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(&root, "a.txt", "a\n");
    let key = "sk-input-key-4711";
    let o = run_step(
        "run",
        &root,
        &[
            ("INPUT_PROMPT", "say what the files are"),
            ("INPUT_MODEL", Vendor::OpenAi.model()),
            ("INPUT_OPENAI_API_KEY", key),
            ("OPENAI_BASE_URL", &Vendor::OpenAi.base_url(&server.url())),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(&format!("::add-mask::{key}")), "{stdout}");
    // The key reached the runner, as its vendor's variable.
    let asked = server.requests();
    assert_eq!(
        asked[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    let written = std::fs::read_to_string(root.join("github-output")).unwrap();
    assert!(
        written.starts_with("exit-code=0\nconclusion=passed\n"),
        "{written}"
    );
    assert!(
        written.contains("last-message<<RUNNER_EOF_0\nTwo files.\nBoth fine.\nRUNNER_EOF_0\n"),
        "{written}"
    );
    assert!(root.join("out/exec.yaml").is_file());
}

#[test]
fn the_comment_step_posts_the_summary_with_a_token_the_runner_never_held() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(&root, "out/summary.md", "## runner: 1/1 tasks passed\n");
    // A `gh` that says what it was asked.
    let bin = dir.path().join("bin");
    write(
        &bin,
        "gh",
        "#!/bin/sh\necho \"gh $* token=$GH_TOKEN\" > \"$RUNNER_TEMP/gh-called\"\ncat \"$5\" >> \"$RUNNER_TEMP/gh-called\"\n",
    );
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(bin.join("gh"))
        .status()
        .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = run_step(
        "Comment on the pull request",
        &root,
        &[
            ("PATH", &path),
            ("GH_TOKEN", "ghs_job_token"),
            ("PR", "7"),
            (
                "SUMMARY",
                &root.join("out/summary.md").display().to_string(),
            ),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let called = std::fs::read_to_string(root.join("gh-called")).unwrap();
    assert!(
        called.starts_with("gh pr comment 7 --body-file "),
        "{called}"
    );
    assert!(called.contains("token=ghs_job_token"), "{called}");
    assert!(called.contains("## runner: 1/1 tasks passed"), "{called}");
    // The token is in that step's environment only: not the runner's.
    let action = std::fs::read_to_string(crate::common::repo().join("action.yml")).unwrap();
    let run_step_text = &action
        [action.find("- name: Run tasks").unwrap()..action.find("- name: Upload outputs").unwrap()];
    assert!(!run_step_text.contains("github.token") && !run_step_text.contains("GH_TOKEN"));
}

#[test]
fn the_repeat_input_runs_every_task_that_many_times() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    write(&root, "tasks/t.yaml", &task("t").replace("../..", ".."));
    let o = run_step("run", &root, &[("INPUT_REPEAT", "2")]);
    assert!(o.status.success(), "{}", stderr(&o));
    for k in [1, 2] {
        assert!(
            root.join(format!("out/t/attempt-{k}/transcript.json"))
                .is_file(),
            "attempt {k}"
        );
    }
    let junit = std::fs::read_to_string(root.join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("<property name=\"attempts\" value=\"2\"/>"),
        "{junit}"
    );
}
