//! What CI needs from `runner run`: parameters, `--files` for hooks,
//! sharding and merging shards, through the real binary.

use std::collections::BTreeSet;
use std::path::Path;

mod common;
use common::{read_json, runner, stderr, write};

const PARAM_TASK: &str = r#"
prompt: "Write {{greeting}} into {{target}}."
workspace: ws
policy: {default: allow}
parameters:
  target: hello.txt
  greeting:
    description: what to write
script:
  - tool_calls:
      - {name: write_file, args: {file_path: hello.txt, content: "hi\n"}}
checks:
  - run: grep -q {{greeting}} {{target}}
"#;

#[test]
fn parameters_fill_the_prompt_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    let task = write(d, "greet.yaml", PARAM_TASK);

    let o = runner()
        .args(["run", "-q", "--param", "greeting=hi", "--out"])
        .arg(d.join("out"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/greet/transcript.json"));
    assert_eq!(t["parameters"]["greeting"], "hi");
    assert_eq!(t["parameters"]["target"], "hello.txt");
    let prompt = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .to_string();
    assert!(prompt.contains("Write hi into hello.txt."), "{prompt}");
    assert_eq!(t["checks"][0]["passed"], true, "{}", t["checks"]);

    // The check really uses the value: another greeting fails it.
    let o = runner()
        .args(["run", "-q", "--param", "greeting=bye", "--out"])
        .arg(d.join("out2"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));

    // A parameter without a value is a load error at its declaration.
    let o = runner()
        .args(["run", "--out"])
        .arg(d.join("out3"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("greet.yaml:8:") && stderr(&o).contains("--param greeting=VALUE"),
        "{}",
        stderr(&o)
    );
    // validate accepts it: the value comes at run time.
    let o = runner().arg("validate").arg(&task).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    // An undeclared --param and an unknown placeholder are errors.
    let o = runner()
        .args([
            "run",
            "--param",
            "greeting=hi",
            "--param",
            "colour=red",
            "--out",
        ])
        .arg(d.join("out4"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("colour"), "{}", stderr(&o));
    let bad = write(d, "bad.yaml", "prompt: \"Fix {{targt}}\"\nscript: []\n");
    let o = runner().arg("validate").arg(&bad).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bad.yaml:1:9: prompt: `{{targt}}` is not a declared parameter"),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("out4").join("greet").exists());
}

#[test]
fn files_reach_the_prompt_and_restrict_edits() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(d, "ws/b.txt", "b\n");
    write(d, "ws/sub/a.txt", "nested\n");
    let task = write(
        d,
        "hook.yaml",
        r#"
prompt: "Fix the staged files: {{files}}"
workspace: ws
policy:
  default: deny
  rules:
    - allow: ["Edit({{files}})"]
script:
  - tool_calls:
      - {name: read_file, args: {file_path: a.txt}}
  - tool_calls:
      - {name: write_file, args: {file_path: a.txt, content: "A\n"}}
      - {name: write_file, args: {file_path: b.txt, content: "B\n"}}
      - {name: write_file, args: {file_path: sub/a.txt, content: "N\n"}}
"#,
    );
    let o = runner()
        .args(["run", "-q", "--out"])
        .arg(d.join("out"))
        .arg(&task)
        .args(["--files", "a.txt"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/hook/transcript.json"));
    let statuses: Vec<&str> = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tool"] == "write_file")
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    // Only the staged file itself, not another file of the same name.
    assert_eq!(statuses, ["ok", "denied", "denied"], "{}", t["tool_calls"]);
    assert!(
        t["messages"]
            .to_string()
            .contains("Fix the staged files: a.txt")
    );

    // Without --files the template adds no rule: every edit is denied.
    let o = runner()
        .args(["run", "-q", "--out"])
        .arg(d.join("out2"))
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out2/hook/transcript.json"));
    assert_eq!(t["counts"]["denied_calls"], 3);
}

/// The task names that ran into `out`, from its task folders.
fn ran(out: &Path) -> BTreeSet<String> {
    std::fs::read_dir(out)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .join("transcript.json")
                .is_file()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn shards_cover_every_task_once_whatever_the_order_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    let mut files = Vec::new();
    for i in 0..12 {
        // One failing task, so the merged result must carry a failure.
        let check = if i == 7 {
            "checks: [{run: \"false\"}]\n"
        } else {
            ""
        };
        files.push(write(
            d,
            &format!("t{i:02}.yaml"),
            &format!("prompt: task {i}\nworkspace: ws\nscript: []\n{check}"),
        ));
    }
    let all: BTreeSet<String> = (0..12).map(|i| format!("t{i:02}")).collect();
    let mut by_order = Vec::new();
    for reversed in [false, true] {
        let mut args = files.clone();
        if reversed {
            args.reverse();
        }
        let mut shards = Vec::new();
        for k in 1..=3 {
            let out = d.join(format!("out-{reversed}-{k}"));
            let o = runner()
                .args(["run", "-q", "--shard", &format!("{k}/3"), "--out"])
                .arg(&out)
                .args(&args)
                .output()
                .unwrap();
            assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
            shards.push(ran(&out));
        }
        let mut union = BTreeSet::new();
        for s in &shards {
            assert!(
                s.is_disjoint(&union),
                "a task ran in two shards: {shards:?}"
            );
            union.extend(s.iter().cloned());
        }
        assert_eq!(union, all);
        by_order.push(shards);
    }
    assert_eq!(
        by_order[0], by_order[1],
        "assignment depends on argument order"
    );

    // Merging the three shards gives one report with every task.
    let merged = d.join("merged");
    let o = runner()
        .args(["merge", "--out"])
        .arg(&merged)
        .args((1..=3).map(|k| d.join(format!("out-false-{k}"))))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "one task fails: {}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "11 passed, 1 failed"
    );
    assert_eq!(ran(&merged), all);
    let junit = std::fs::read_to_string(merged.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase ").count(), 12, "{junit}");
    assert!(
        junit.contains("tests=\"12\"") && junit.contains("failures=\"1\""),
        "{junit}"
    );
    // A shard given twice is refused: a task would count twice.
    let o = runner()
        .args(["merge", "--out"])
        .arg(d.join("merged2"))
        .arg(d.join("out-false-1"))
        .arg(d.join("out-false-1"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
