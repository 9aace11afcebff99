//! `runner run --repeat N` (issue 75): every task N times, each attempt in
//! a copy of its own; pass rate, pass@k and flakiness in the summary and
//! JUnit; `scripts:` make a scripted model vary by attempt.

use std::path::Path;

use crate::common::{python, read_json, runner, stderr, validate_refuses, write};

/// A task whose check passes when its script writes ok.txt: `scripts`
/// says which attempts do (round the list).
fn task(d: &Path, name: &str, writes: &[bool]) {
    let scripts: String = writes
        .iter()
        .map(|w| {
            if *w {
                "  - [{tool_calls: [{name: write_file, args: {file_path: ok.txt, content: \"ok\\n\"}}]}, {text: wrote}]\n"
            } else {
                "  - [{text: nothing}]\n"
            }
        })
        .collect();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        &format!("{name}.yaml"),
        &format!(
            "name: {name}\nprompt: p\nworkspace: ws\npolicy: {{default: allow}}\nchecks:\n  - run: test -f ok.txt\nscripts:\n{scripts}"
        ),
    );
}

fn run(d: &Path, out: &str, args: &[&str]) -> std::process::Output {
    runner()
        .current_dir(d)
        .args(["run", "-q", "--out", out])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn four_attempts_give_the_pass_rate_pass_at_k_and_flaky_junit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d, "t", &[false, true, false, true]);
    let o = run(d, "out", &["--repeat", "4", "t.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Each attempt its own outputs.
    for k in 1..=4 {
        let t = read_json(d.join(format!("out/t/attempt-{k}/transcript.json")));
        let want = if k % 2 == 0 { "passed" } else { "failed" };
        assert_eq!(t["outcome"]["status"], want, "attempt {k}");
    }
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("| t | 2/4 | 0.50 | 0.50 | 0.83 | 1.00 | 1.00 | yes | ❌✅❌✅ |"),
        "{summary}"
    );
    // JUnit as junitparser reads it: one case, passed, with the two failed
    // attempts as flakyFailure elements; valid against the Jenkins schema.
    let junit = d.join("out/junit.xml");
    let read = python(
        "import sys, junitparser\nx = junitparser.JUnitXml.fromfile(sys.argv[1])\nfor s in x:\n    props = {p.name: p.value for p in s.properties()}\n    for c in s:\n        print(c.name, c.is_passed, [e.tag for e in c._elem if e.tag.startswith('flaky')], props['pass_rate'], props['pass_at_1'], props['pass_at_2'], props['flaky'])\n",
        &[junit.to_str().unwrap()],
        b"",
    );
    assert_eq!(
        read.trim(),
        "t True ['flakyFailure', 'flakyFailure'] 0.5000 0.5000 0.8333 true"
    );
    let xsd = crate::common::repo().join("tests/fixtures/junit-10.xsd");
    let lint = std::process::Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&xsd)
        .arg(&junit)
        .output()
        .expect("xmllint (scripts/install-test-deps installs it)");
    assert!(lint.status.success(), "{}", stderr(&lint));
    // report.html, as a browser renders it: the same table, each attempt
    // a mark linking to its section.
    let profile = tempfile::tempdir().unwrap();
    let dom = crate::reports::chromium_dom(profile.path(), &d.join("out/report.html"));
    assert!(dom.contains("<h2>Repeated tasks</h2>"), "{dom}");
    assert!(
        dom.contains("<tr class=\"flaky\"><td>t</td><td class=\"n\">2/4</td><td class=\"n\">0.50</td><td class=\"n\">0.50</td><td class=\"n\">0.83</td>"),
        "{dom}"
    );
    let marks = dom
        .split("<td class=\"marks\">")
        .nth(1)
        .and_then(|m| m.split("</td>").next())
        .unwrap_or_default();
    let links: Vec<&str> = marks
        .split("href=\"#")
        .skip(1)
        .map(|l| l.split('"').next().unwrap())
        .collect();
    assert_eq!(links.len(), 4, "{marks}");
    for (k, id) in links.iter().enumerate() {
        let section = dom
            .split(&format!("id=\"{id}\""))
            .nth(1)
            .unwrap_or_default();
        assert!(
            section.starts_with(&format!("><h2>t/attempt-{} ", k + 1)),
            "mark {k} links to {id}: {}",
            &section[..section.len().min(80)]
        );
    }
    assert_eq!(marks.matches('✅').count(), 2, "{marks}");
}

#[test]
fn a_task_no_attempt_of_which_passes_fails_with_its_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d, "t", &[false]);
    let o = run(d, "out", &["--repeat", "3", "t.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    let junit = std::fs::read_to_string(d.join("out/junit.xml")).unwrap();
    assert!(junit.contains("no attempt of 3 passed"), "{junit}");
    assert_eq!(junit.matches("<rerunFailure").count(), 2, "{junit}");
}

/// The base passes 4 of 4, the new run 2 of 4: `runner compare` says the
/// counts cannot tell them apart (p = 0.43), and exits 0.
#[test]
fn repeats_feed_runner_compare() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d, "t", &[true]);
    assert_eq!(
        run(d, "base", &["--repeat", "4", "t.yaml"]).status.code(),
        Some(0)
    );
    task(d, "t", &[false, true]);
    assert_eq!(
        run(d, "new", &["--repeat", "4", "t.yaml"]).status.code(),
        Some(1)
    );
    let o = runner()
        .current_dir(d)
        .args(["compare", "base", "new"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("| t | 4/4 | 2/4 | -50% | 0.429 |"), "{md}");
    assert!(
        md.contains("the counts cannot tell the rates apart"),
        "{md}"
    );
}

#[test]
fn bad_repeats_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d, "t", &[true]);
    for (args, says) in [
        (&["--repeat", "0", "t.yaml"][..], "--repeat 0"),
        (
            &["--repeat", "2", "--apply", "t.yaml"][..],
            "--repeat cannot go with --apply",
        ),
    ] {
        let o = run(d, "out", args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    write(
        d,
        "both.yaml",
        "name: both\nprompt: p\nscript:\n  - text: a\nscripts:\n  - [{text: b}]\n",
    );
    let e = validate_refuses(d, "both.yaml");
    assert!(e.contains("give `script:` (one) or `scripts:`"), "{e}");
}

/// A task whose scripts, by attempt, write `files` (name and lines) and
/// ok.txt, or nothing (an empty list: its check fails).
fn best_of_task(d: &Path, attempts: &[&[(&str, usize)]]) {
    let scripts: String = attempts
        .iter()
        .map(|files| {
            if files.is_empty() {
                return "  - [{text: nothing}]\n".to_string();
            }
            let calls: String = files
                .iter()
                .map(|(f, n)| {
                    format!(
                        "{{name: write_file, args: {{file_path: {f}, content: {}}}}}, ",
                        serde_json::to_string(&"x\n".repeat(*n)).unwrap()
                    )
                })
                .collect();
            format!("  - [{{tool_calls: [{calls}]}}, {{text: wrote}}]\n")
        })
        .collect();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        &format!(
            "name: t\nprompt: p\nworkspace: ws\npolicy: {{default: allow}}\nchecks:\n  - run: test -f ok.txt\nscripts:\n{scripts}"
        ),
    );
}

#[test]
fn best_of_n_keeps_the_first_pass_and_applies_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    best_of_task(
        d,
        &[
            &[],
            &[("ok.txt", 1)],
            &[],
            &[("ok.txt", 1), ("other.txt", 1)],
        ],
    );
    let o = run(d, "out", &["--attempts", "4", "--apply", "t.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "1 passed, 0 failed (best of 4 attempts)\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("out/t/kept")).unwrap(),
        "attempt-2\n"
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("+++ b/ok.txt") && !diff.contains("other.txt"),
        "{diff}"
    );
    // Attempts 3 and 4 were not started once attempt 2 passed.
    for k in [3, 4] {
        let t = read_json(d.join(format!("out/t/attempt-{k}/transcript.json")));
        assert_eq!(t["outcome"]["status"], "skipped", "attempt {k}");
        assert_eq!(t["counts"]["turns"], 0);
    }
    assert!(
        d.join("ws/ok.txt").is_file(),
        "the kept attempt was applied"
    );
    assert!(!d.join("ws/other.txt").exists());
}

#[test]
fn keep_smallest_picks_the_smaller_of_two_passing_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    best_of_task(d, &[&[("ok.txt", 1), ("big.txt", 200)], &[("ok.txt", 1)]]);
    let o = run(
        d,
        "out",
        &["--attempts", "2", "--keep", "smallest", "--apply", "t.yaml"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.join("out/t/kept")).unwrap(),
        "attempt-2\n"
    );
    assert!(
        stderr(&o).contains("t: kept attempt-2 (--keep smallest)"),
        "{}",
        stderr(&o)
    );
    assert!(d.join("ws/ok.txt").is_file() && !d.join("ws/big.txt").exists());
    // No attempt passing: the task fails, every attempt's reason kept.
    std::fs::remove_file(d.join("ws/ok.txt")).unwrap();
    best_of_task(d, &[&[]]);
    let o = run(d, "out", &["--attempts", "2", "t.yaml"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0 passed, 1 failed (best of 2 attempts)\n"
    );
    assert!(!d.join("out/t/kept").exists());
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(summary.matches("check(s) failed").count() >= 2, "{summary}");
}

#[test]
fn bad_attempts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    best_of_task(d, &[&[("ok.txt", 1)]]);
    for (args, says) in [
        (&["--attempts", "0", "t.yaml"][..], "--attempts 0"),
        (
            &["--attempts", "2", "--repeat", "2", "t.yaml"][..],
            "cannot be used with",
        ),
        (&["--keep", "smallest", "t.yaml"][..], "--attempts"),
    ] {
        let o = run(d, "out", args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
}

/// Shards of a repeated run merge into one (attempts and all), which
/// `runner compare` reads as it reads one run.
#[test]
fn shards_of_a_repeated_run_merge_with_their_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    task(d, "a", &[true]);
    task(d, "b", &[false, true]);
    for (shard, out) in [("1/2", "s1"), ("2/2", "s2")] {
        let o = run(
            d,
            out,
            &["--repeat", "2", "--shard", shard, "a.yaml", "b.yaml"],
        );
        assert!(o.status.code().is_some(), "{}", stderr(&o));
    }
    let o = runner()
        .current_dir(d)
        .args(["merge", "--out", "merged", "s1", "s2"])
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    for t in ["a/attempt-1", "a/attempt-2", "b/attempt-1", "b/attempt-2"] {
        assert!(
            d.join("merged").join(t).join("transcript.json").is_file(),
            "{t}: {}",
            stderr(&o)
        );
    }
    let summary = std::fs::read_to_string(d.join("merged/summary.md")).unwrap();
    assert!(summary.contains("| b | 1/2 |"), "{summary}");
    let o = runner()
        .current_dir(d)
        .args(["compare", "merged", "merged", "--format", "json"])
        .output()
        .unwrap();
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["tasks"].as_array().unwrap().len(), 2, "{c}");
}
