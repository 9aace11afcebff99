//! A command that prints gigabytes: the runner keeps the head and tail of
//! its output and counts the rest, in bounded memory. This file holds one
//! test so that the peak resident size of this process's children is the
//! runner's (and the small commands it ran).

#[path = "it/common/mod.rs"]
mod common;

use common::{read_json, runner, stderr, write};

#[test]
fn gigabytes_of_output_keep_the_runner_small() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        r#"name: t
prompt: print a lot
workspace: ws
policy:
  default: allow
  rules:
    - allow: ["Bash(*)"]
script:
  - tool_calls:
      - {name: bash, args: {command: "yes | head -c 3000000000; echo; echo the end"}}
"#,
    );
    let out = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    let content = t["tool_calls"][0]["content"].as_str().unwrap();
    // The kept output (a megabyte) is itself spilled to a file for the model.
    assert!(content.contains("saved in full"), "{content}");
    let kept = std::fs::read_to_string(dir.path().join("out/t/tool-results/bash-1.txt")).unwrap();
    assert!(kept.contains("bytes omitted"));
    assert!(kept.trim_end().ends_with("the end"));
    assert!(kept.len() < 2 * 1024 * 1024);
    // SAFETY: getrusage on a zeroed struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    let peak_mib = usage.ru_maxrss / 1024;
    eprintln!("peak resident size of the runner: {peak_mib} MiB for 3 GB of output");
    assert!(peak_mib < 100, "the runner grew to {peak_mib} MiB");
}
