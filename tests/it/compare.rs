//! `runner compare BASE NEW` (issue 75): pass rates told apart by
//! Fisher's exact test, cost, turns and new denials, exit 1 on a
//! regression.

use std::path::Path;

use crate::common::{runner, stderr, write};

/// A real transcript of a scripted task that passes (`passing`) or fails
/// its check, with one denied call.
fn transcript(scratch: &Path, passing: bool) -> String {
    let name = if passing { "p" } else { "f" };
    write(
        scratch,
        &format!("{name}.yaml"),
        &format!(
            "name: {name}\nprompt: p\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(rm:*)\"]\nchecks:\n  - run: {}\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: rm x}}}}\n  - text: done\n",
            if passing { "\"true\"" } else { "\"false\"" }
        ),
    );
    let o = runner()
        .current_dir(scratch)
        .args([
            "run",
            "-q",
            "--out",
            &format!("out-{name}"),
            &format!("{name}.yaml"),
        ])
        .output()
        .unwrap();
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    std::fs::read_to_string(scratch.join(format!("out-{name}/{name}/transcript.json"))).unwrap()
}

/// Task `task` of the run in `out`: `passed` of `runs` attempts passing.
fn attempts(out: &Path, task: &str, passed: usize, runs: usize, pass: &str, fail: &str) {
    for k in 1..=runs {
        let t = if k <= passed { pass } else { fail };
        write(out, &format!("{task}/attempt-{k}/transcript.json"), t);
    }
}

#[test]
fn a_drop_the_counts_can_tell_apart_fails_and_one_they_cannot_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pass, fail) = (transcript(d, true), transcript(d, false));
    let (base, new) = (d.join("base"), d.join("new"));
    attempts(&base, "drops", 8, 8, &pass, &fail);
    attempts(&new, "drops", 2, 8, &pass, &fail);
    attempts(&base, "wobbles", 8, 8, &pass, &fail);
    attempts(&new, "wobbles", 7, 8, &pass, &fail);
    attempts(&base, "gone", 1, 1, &pass, &fail);
    attempts(&new, "added", 1, 1, &pass, &fail);
    let compare = |args: &[&str]| {
        runner()
            .current_dir(d)
            .args(["compare", "base", "new"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = compare(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(
        md.starts_with("## runner compare: 2 task(s), 1 regression(s)"),
        "{md}"
    );
    assert!(
        md.contains("| drops ⚠ | 8/8 | 2/8 | -75% | 0.007 |"),
        "{md}"
    );
    assert!(
        md.contains("- drops: the pass rate fell from 1.00 to 0.25 (8/8 → 2/8, p = 0.007)"),
        "{md}"
    );
    assert!(
        md.contains("the counts cannot tell the rates apart")
            && md.contains("- wobbles: 8/8 → 7/8 (p = 1.000)"),
        "{md}"
    );
    assert!(
        md.contains("Only in the base: gone") && md.contains("Only in the new run: added"),
        "{md}"
    );
    // JSON, as its schema says.
    let o = compare(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["version"], 1);
    let drops = c["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == "drops")
        .unwrap();
    assert_eq!(drops["significant"], true);
    assert_eq!(drops["base"]["passed"], 8);
    assert_eq!(drops["new"]["runs"], 8);
    let schema = runner().args(["schema", "compare"]).output().unwrap();
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    for field in ["tasks", "regressions", "only_in_base"] {
        assert!(
            schema["properties"].get(field).is_some(),
            "{field}: {schema}"
        );
    }
    // A tolerance wide enough lets the drop through.
    assert_eq!(compare(&["--tolerance", "0.8"]).status.code(), Some(0));
    // Only the wobble: no regression, exit 0.
    std::fs::remove_dir_all(new.join("drops")).unwrap();
    assert_eq!(compare(&[]).status.code(), Some(0));
}

#[test]
fn new_denials_are_listed_and_a_cost_beyond_its_tolerance_fails() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pass = transcript(d, true);
    let mut quiet: serde_json::Value = serde_json::from_str(&pass).unwrap();
    quiet["tool_calls"] = serde_json::json!([]);
    quiet["usage"]["cost_usd"] = serde_json::json!(0.10);
    let mut costly: serde_json::Value = serde_json::from_str(&pass).unwrap();
    costly["usage"]["cost_usd"] = serde_json::json!(0.15);
    write(d, "base/t/transcript.json", &quiet.to_string());
    write(d, "new/t/transcript.json", &costly.to_string());
    let o = runner()
        .current_dir(d)
        .args(["compare", "base", "new", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &c["tasks"][0];
    assert_eq!(
        t["new_denials"],
        serde_json::json!(["bash: deny Bash(rm:*)"]),
        "{t}"
    );
    assert!(
        (t["cost_change"].as_f64().unwrap() - 0.5).abs() < 1e-9,
        "{t}"
    );
    let o = runner()
        .current_dir(d)
        .args(["compare", "base", "new", "--cost-tolerance", "0.2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("- t: the median cost grew by 50% (more than 20%)"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn bad_input_exits_2_naming_the_folder_or_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pass = transcript(d, true);
    write(d, "base/t/transcript.json", &pass);
    let mut later: serde_json::Value = serde_json::from_str(&pass).unwrap();
    later["version"] = serde_json::json!(2);
    write(d, "new/t/transcript.json", &later.to_string());
    let run = |a: &str, b: &str| {
        runner()
            .current_dir(d)
            .args(["compare", a, b])
            .output()
            .unwrap()
    };
    let o = run("base", "new");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the field `version` is 2"),
        "{}",
        stderr(&o)
    );
    let o = run("base", "missing");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("missing: not an output folder"),
        "{}",
        stderr(&o)
    );
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let o = run("base", "empty");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds no task's transcript"),
        "{}",
        stderr(&o)
    );
}
