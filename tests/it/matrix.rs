//! `runner run --models a,b`: every task under each model, set side by
//! side in `summary.md` and `report.html` (rows tasks, columns models),
//! with `--repeat` per model; two fake vendors, one whose model passes the
//! task and one whose model does not.

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{read_json, runner, stderr, write};
use serde_json::json;

/// A vendor's fake model: `writes` makes it write `done.txt` (the task's
/// check) before it answers; otherwise it only answers.
fn model(v: Vendor, writes: bool) -> FakeServer {
    FakeServer::start(move |r, _| {
        let done = !wire::tool_results(v, &r.body).is_empty();
        let t = if writes && !done {
            turn(
                "",
                vec![call(
                    "c1",
                    "write_file",
                    json!({"file_path": "done.txt", "content": "ok\n"}),
                )],
            )
        } else {
            turn("Finished.", vec![])
        };
        wire::reply(v, &t)
    })
}

#[test]
fn models_side_by_side_with_repeats_in_the_summary_and_the_report() {
    let good = model(Vendor::OpenAi, true);
    let lazy = model(Vendor::Anthropic, false);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    for name in ["one", "two"] {
        write(
            d,
            &format!("{name}.yaml"),
            &format!(
                "name: {name}\nprompt: write done.txt\nworkspace: ws\nmodel_options:\n  pricing: {{input: 1.0, cached_input: 0.5, output: 2.0}}\npolicy:\n  default: allow\nchecks:\n  - run: test -f done.txt\n"
            ),
        );
    }
    let mut cmd = runner();
    for v in wire::ALL {
        cmd.env_remove(v.key_var()).env_remove(v.url_var());
    }
    let o = cmd
        .current_dir(d)
        .env("CI", "true")
        .env("OPENAI_API_KEY", "k")
        .env("OPENAI_BASE_URL", Vendor::OpenAi.base_url(&good.url()))
        .env("ANTHROPIC_API_KEY", "k")
        .env(
            "ANTHROPIC_BASE_URL",
            Vendor::Anthropic.base_url(&lazy.url()),
        )
        .args([
            "run",
            "--models",
            "openai:fake-gpt,anthropic:fake-claude",
            "--repeat",
            "2",
        ])
        .args(["--out", "out", "one.yaml", "two.yaml"])
        .output()
        .unwrap();
    // Half the runs fail (the lazy model's): the run fails.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("4 passed, 4 failed"), "{out}");
    // Each cell's runs are tasks of their own, with the cell they are.
    let t = read_json(d.join("out/one/openai-fake-gpt/attempt-2/transcript.json"));
    assert_eq!(t["matrix"]["task"], "one");
    assert_eq!(t["matrix"]["variant"], "openai:fake-gpt");
    assert_eq!(t["model"], "openai:fake-gpt");
    assert_eq!(t["outcome"]["status"], "passed");
    let t = read_json(d.join("out/two/anthropic-fake-claude/attempt-1/transcript.json"));
    assert_eq!(t["outcome"]["status"], "failed");
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(summary.contains("### Models side by side"), "{summary}");
    assert!(
        summary.contains("| task | openai:fake-gpt | anthropic:fake-claude |"),
        "{summary}"
    );
    let row = summary.lines().find(|l| l.starts_with("| one |")).unwrap();
    assert!(
        row.contains("✅ 2/2 · $") && row.contains("❌ 0/2 · $"),
        "{row}"
    );
    let passed = summary
        .lines()
        .find(|l| l.starts_with("| **tasks passed** |"))
        .unwrap();
    assert_eq!(passed, "| **tasks passed** | 2/2 | 0/2 |");
    let per_pass = summary
        .lines()
        .find(|l| l.starts_with("| **cost per passing run** |"))
        .unwrap();
    assert!(
        per_pass.contains("| $0.0") && per_pass.ends_with("| — |"),
        "{per_pass}"
    );
    // The report, as a browser renders it.
    let report = d.join("out/report.html");
    let profile = tempfile::tempdir().unwrap();
    let dom = crate::reports::chromium_dom(profile.path(), &report);
    assert!(dom.contains("<h2>Models side by side</h2>"), "{dom}");
    assert!(
        dom.contains("<th><code>anthropic:fake-claude</code></th>"),
        "{dom}"
    );
    assert!(dom.contains("<td class=\"cell passed\">✅ 2/2"), "{dom}");
    assert!(dom.contains("<td class=\"cell failed\">❌ 0/2"), "{dom}");
}

#[test]
fn bad_model_lists_and_clashes_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: p\nworkspace: ws\nscript:\n  - text: hi\n",
    );
    for (args, says) in [
        (vec!["--models", "openai:a"], "two or more"),
        (vec!["--models", "openai:a,openai:a"], "given twice"),
        (
            vec!["--models", "openai:a,openai:b", "--model", "openai:c"],
            "cannot be used with",
        ),
        (
            vec!["--models", "openai:a,openai:b", "--apply"],
            "--models cannot go with --apply",
        ),
    ] {
        refused(d, &args, "t.yaml", says);
    }
    // `scripted` in the list needs the task's script, as --model does.
    write(
        d,
        "u.yaml",
        "name: u\nprompt: p\nworkspace: ws\nmodel: openai:a\n",
    );
    refused(
        d,
        &["--models", "scripted,openai:a"],
        "u.yaml",
        "u.yaml:4:8: script: required",
    );
}

/// `--params NAME=v1,v2` does for a task parameter what `--models` does
/// for models: each value a variant, in the prompt and checks where the
/// task says; with `--models`, their product.
#[test]
fn parameter_values_are_variants_too() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: say {{flag}}\nworkspace: ws\nparameters:\n  flag:\n    description: good or bad\nscript:\n  - text: done\nchecks:\n  - run: test {{flag}} = good\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "--params", "flag=good,bad", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let good = read_json(d.join("out/t/flag-good/transcript.json"));
    assert_eq!(good["outcome"]["status"], "passed", "{}", good["outcome"]);
    assert_eq!(good["matrix"]["variant"], "flag=good");
    assert_eq!(good["parameters"]["flag"], "good");
    let bad = read_json(d.join("out/t/flag-bad/transcript.json"));
    assert_eq!(bad["outcome"]["status"], "failed");
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("| task | flag=good | flag=bad |"),
        "{summary}"
    );
    assert!(
        summary.contains("| **tasks passed** | 1/1 | 0/1 |"),
        "{summary}"
    );
    // A name no task declares, or one --param sets too, is refused.
    for (args, says) in [
        (
            vec!["--params", "nope=a,b", "--param", "flag=good"],
            "no task declares a parameter `nope`",
        ),
        (
            vec!["--params", "flag=a,b", "--param", "flag=c"],
            "--param flag sets it too",
        ),
        (vec!["--params", "flag=a"], "two or more values"),
    ] {
        refused(d, &args, "t.yaml", says);
    }
}

/// `runner run ARGS TASK` in `d` is refused (exit 2) saying `says`, and
/// leaves no output folder.
fn refused(d: &std::path::Path, args: &[&str], task: &str, says: &str) {
    let o = runner()
        .current_dir(d)
        .args(["run", "--out", "refused-out"])
        .args(args)
        .arg(task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    assert!(!d.join("refused-out").exists(), "{args:?}");
}
