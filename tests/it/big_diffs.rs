//! Outputs with bounds (issue 72): a 100 MB file written in the workspace
//! makes a `changes.diff` within `--max-diff-bytes` (default 10 MB) that
//! keeps the file's header and says what it left out; the summary and the
//! report say so; `--apply` applies the whole change from the copy.

use std::path::Path;
use std::process::Command;

use crate::common::{read_json, runner, stderr, write};

fn run(d: &Path, extra: &[&str]) -> (std::process::Output, serde_json::Value) {
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "--apply"])
        .args(extra)
        .arg("t.yaml")
        .output()
        .unwrap();
    let t = read_json(d.join("out/t/transcript.json"));
    (o, t)
}

#[test]
fn a_100_mb_file_gives_a_bounded_diff_and_a_whole_apply() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/README.md", "readme\n");
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(d.join("ws"))
        .status()
        .unwrap();
    assert!(ok.success());
    write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
policy:
  default: allow
script:
  - tool_calls:
      - {name: bash, args: {command: "python3 -c \"import sys; f=open('big.log','w'); [f.write('line %08d of a generated log\\n' % i) for i in range(3500000)]\" && echo more >> README.md && ls -l big.log"}}
  - text: done
"#,
    );
    let (o, t) = run(d, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let big = std::fs::metadata(d.join("ws/big.log")).unwrap().len();
    assert!(big > 100_000_000, "{big}");
    // The diff: within the bound, README whole, big.log by its header.
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(diff.len() < 10 * 1024 * 1024, "{}", diff.len());
    assert!(diff.len() < 10_000, "{}", diff.len());
    assert!(diff.contains("+more"), "{diff}");
    assert!(diff.contains("# diff --git a/big.log b/big.log"), "{diff}");
    assert!(
        diff.contains("left out (large; --max-diff-bytes 10485760)"),
        "{diff}"
    );
    let cut = &t["diff_cut"];
    assert_eq!(cut["files"][0]["path"], "big.log", "{cut}");
    assert_eq!(cut["files"][0]["why"], "large", "{cut}");
    assert_eq!(cut["limit_bytes"], 10485760, "{cut}");
    // Summary and report say so.
    let summary = std::fs::read_to_string(d.join("out/summary.md")).unwrap();
    assert!(
        summary.contains("changes.diff was cut to --max-diff-bytes"),
        "{summary}"
    );
    let report = std::fs::read_to_string(d.join("out/report.html")).unwrap();
    assert!(report.contains("changes.diff was cut to --max-diff-bytes"));
    // --apply wrote the whole file (the original is the workspace).
    let first = std::fs::read_to_string(d.join("ws/README.md")).unwrap();
    assert_eq!(first, "readme\nmore\n");
    let text = std::fs::read_to_string(d.join("ws/big.log")).unwrap();
    assert!(text.starts_with("line 00000000 of a generated log\n"));
    assert!(text.ends_with("line 03499999 of a generated log\n"));
}

/// `--max-diff-bytes` sets the bound: a small diff over a smaller bound
/// is cut too, and `--apply` still applies it whole.
#[test]
fn the_bound_is_the_runs_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/README.md", "readme\n");
    write(
        d,
        "t.yaml",
        "prompt: p\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: \"seq 1 2000 > numbers.txt\"}}\n  - text: done\n",
    );
    let (o, t) = run(d, &["--max-diff-bytes", "1000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        t["diff_cut"]["files"][0]["path"], "numbers.txt",
        "{}",
        t["diff_cut"]
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(diff.len() < 1000, "{diff}");
    let numbers = std::fs::read_to_string(d.join("ws/numbers.txt")).unwrap();
    assert_eq!(numbers.lines().count(), 2000);
}
