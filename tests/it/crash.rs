//! Runs that survive a crash (issue 48): a run killed with SIGKILL (an OOM
//! kill, a preempted machine, a CI job past its grace period) writes
//! nothing on its way out; the task's journal, appended at each turn's
//! end, lets `--resume` go on from its last durable turn.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{
    kill_processes, read_json, runner, start_until_running, stderr, turn_numbers, write,
};

/// Starts `cmd`, waits until `sleeper` runs, and kills the runner with
/// SIGKILL (and the sleeper, which an outright kill leaves running).
fn kill_while(cmd: Command, sleeper: [&str; 2]) {
    let mut child = start_until_running(cmd, &sleeper);
    child.kill().unwrap();
    child.wait().unwrap();
    kill_processes(&sleeper);
}

/// A six-turn task whose fourth turn waits on `sleep SECONDS` until the
/// file `flag` exists. Turn 1 appends (run twice, it would show).
fn six_turns(dir: &Path, flag: &Path, seconds: &str) {
    write(dir, "ws/a.txt", "a\n");
    write(
        dir,
        "t.yaml",
        &format!(
            r#"name: t
prompt: Do six things.
workspace: ws
policy:
  default: allow
script:
  - tool_calls:
      - {{name: bash, args: {{command: "echo one >> one.txt"}}}}
  - tool_calls:
      - {{name: read_file, args: {{file_path: a.txt}}}}
  - tool_calls:
      - {{name: write_file, args: {{file_path: three.txt, content: "three\n"}}}}
  - tool_calls:
      - {{name: bash, args: {{command: "[ -e {flag} ] || sleep {seconds}; echo four > four.txt", timeout: 120000}}}}
  - tool_calls:
      - {{name: bash, args: {{command: "echo five >> a.txt"}}}}
  - text: Done.
"#,
            flag = flag.display()
        ),
    );
}

#[test]
fn a_run_killed_in_turn_4_resumes_there_with_the_diff_of_an_uninterrupted_run() {
    // The uninterrupted run.
    let reference = tempfile::tempdir().unwrap();
    let flag = reference.path().join("flag");
    std::fs::write(&flag, "").unwrap();
    six_turns(reference.path(), &flag, "51.25");
    let out = runner()
        .current_dir(reference.path())
        .args(["run", "-q", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let want = std::fs::read_to_string(reference.path().join("out/t/changes.diff")).unwrap();
    let whole = read_json(reference.path().join("out/t/transcript.json"));
    assert!(want.contains("+five") && want.contains("+four"), "{want}");

    // Killed in turn 4: nothing but the journal is left.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flag = d.join("flag");
    six_turns(d, &flag, "51.25");
    let mut cmd = runner();
    cmd.current_dir(d)
        .args(["run", "-q", "--out", "out", "t.yaml"]);
    kill_while(cmd, ["sleep", "51.25"]);
    let task = d.join("out/t");
    assert!(!task.join("transcript.json").exists());
    let journal = std::fs::read_to_string(task.join("journal.jsonl")).unwrap();
    assert_eq!(journal.lines().count(), 4, "start and turns 1-3: {journal}");
    // The kill tore a last record (as one in the middle of a write would).
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(task.join("journal.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"turn\":{\"turn\":4,\"elapsed_ms\":9,\"mess").unwrap();

    std::fs::write(&flag, "").unwrap();
    let out = runner()
        .current_dir(d)
        .args(["run", "--resume", "out", "t.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    // Turns 1-3 are not played again: turn 4 is the first to run.
    assert!(!err.contains("echo one"), "{err}");
    assert!(err.contains("echo four"), "{err}");
    let got = std::fs::read_to_string(task.join("changes.diff")).unwrap();
    assert_eq!(got, want);
    assert!(!task.join("journal.jsonl").exists());
    let t = read_json(task.join("transcript.json"));
    assert_eq!(t["outcome"]["status"], "passed", "{}", t["outcome"]);
    assert_eq!(t["resumes"], 1);
    assert_eq!(t["counts"]["turns"], 6);
    assert_eq!(t["counts"]["tool_calls"], 5);
    // The same conversation as the uninterrupted run's (its flag aside).
    assert_eq!(
        t["messages"].to_string(),
        whole["messages"].to_string().replace(
            &reference.path().display().to_string(),
            &d.display().to_string()
        )
    );
    assert_eq!(turn_numbers(&t), [1, 2, 3, 4, 5, 6]);
}

/// How many tool results a request carries: which turn it asks for.
fn results_in(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count())
}

#[test]
fn no_completed_turn_is_asked_again_after_a_kill() {
    let v = Vendor::OpenAi;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flag = d.join("flag");
    write(d, "ws/a.txt", "alpha\n");
    write(
        d,
        "task.yaml",
        &format!(
            "name: t\nprompt: Two commands, then done.\nmodel: {}\nworkspace: ws\npolicy:\n  default: allow\nmodel_options: {{pricing: {{input: 1.0, output: 2.0}}}}\n",
            v.model()
        ),
    );
    let replies = [
        wire::reply(
            v,
            &turn(
                "",
                vec![call(
                    "c1",
                    "bash",
                    json!({"command": "echo one >> one.txt"}),
                )],
            ),
        ),
        wire::reply(
            v,
            &turn(
                "",
                vec![call(
                    "c2",
                    "bash",
                    // It writes, so it waits for turn 1's line (a call
                    // that only reads may start before it is written).
                    json!({"command": format!("echo two > two.txt; [ -e {} ] || sleep 52.75", flag.display()), "timeout": 120000}),
                )],
            ),
        ),
        wire::reply(v, &turn("Done.", vec![])),
    ];
    // Each request is answered by how far its conversation has got.
    let server = FakeServer::start(move |r, _| replies[results_in(&r.body).min(2)].clone());
    let mut cmd = wire::runner_for(v, &server.url(), "sk-test-crash");
    cmd.current_dir(d)
        .args(["run", "--out", "out", "task.yaml"]);
    kill_while(cmd, ["sleep", "52.75"]);
    assert_eq!(server.requests().len(), 2);

    std::fs::write(&flag, "").unwrap();
    let out = wire::runner_for(v, &server.url(), "sk-test-crash")
        .current_dir(d)
        .args(["run", "--resume", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    let asked: Vec<usize> = reqs.iter().map(|r| results_in(&r.body)).collect();
    // Turn 1 was asked once; turn 2, which the kill cut short, again, with
    // the same request byte for byte; then turn 3.
    assert_eq!(asked, [0, 1, 1, 2]);
    assert_eq!(reqs[1].body, reqs[2].body);
    assert_eq!(
        std::fs::read_to_string(d.join("out/t/changes.diff"))
            .unwrap()
            .matches("+one")
            .count(),
        1
    );
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(t["counts"]["turns"], 3);
    // The cost of the killed run's completed turn carries over.
    let cost = t["usage"]["cost_usd"].as_f64().unwrap();
    let each = t["turns"][2]["usage"]["cost_usd"]
        .as_f64()
        .unwrap_or_default();
    assert!(cost > each, "{cost}");
}

#[test]
fn kills_in_checks_and_between_tasks_leave_nothing_to_do_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flag = d.join("flag");
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "a.yaml",
        "name: a\nprompt: Write a.\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: write_file, args: {file_path: from-a.txt, content: \"a\\n\"}}\n  - text: Written.\n",
    );
    write(
        d,
        "b.yaml",
        &format!(
            r#"name: b
prompt: Write b, then say so.
workspace: ws
policy:
  default: allow
script:
  - tool_calls:
      - {{name: bash, args: {{command: "echo b >> b.txt"}}}}
  - text: Written.
  - text: Written, as said.
checks:
  - run: "[ -e {} ] || sleep 53.25"
"#,
            flag.display()
        ),
    );
    write(
        d,
        "c.yaml",
        "name: c\nprompt: Nothing.\nworkspace: ws\nscript:\n  - text: Nothing here either.\n",
    );
    let mut cmd = runner();
    cmd.current_dir(d).args([
        "run", "-q", "--apply", "--jobs", "1", "--out", "out", "a.yaml", "b.yaml", "c.yaml",
    ]);
    kill_while(cmd, ["sleep", "53.25"]);
    let out = d.join("out");
    let a_before = std::fs::read_to_string(out.join("a/transcript.json")).unwrap();
    assert!(out.join("b/journal.jsonl").exists());
    assert!(!out.join("b/transcript.json").exists());
    assert!(!out.join("c").exists());

    std::fs::write(&flag, "").unwrap();
    let run = runner()
        .current_dir(d)
        .args([
            "run", "--apply", "--jobs", "1", "--resume", "out", "a.yaml", "b.yaml", "c.yaml",
        ])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    // a ended before the kill: kept as it was.
    assert_eq!(
        std::fs::read_to_string(out.join("a/transcript.json")).unwrap(),
        a_before
    );
    // b went on from its final answer: asked again, checked, not redone.
    let b = read_json(out.join("b/transcript.json"));
    assert_eq!(b["outcome"]["status"], "passed", "{}", b["outcome"]);
    assert_eq!(b["resumes"], 1);
    assert_eq!(b["counts"]["tool_calls"], 1);
    assert_eq!(b["final_answer"], "Written, as said.");
    let diff = std::fs::read_to_string(out.join("b/changes.diff")).unwrap();
    assert_eq!(diff.matches("+b").count(), 1, "{diff}");
    // Applied once each: b by the run that finished it, a (the killed run
    // never got to its --apply) from its changes.diff by the resume.
    assert_eq!(std::fs::read_to_string(d.join("ws/b.txt")).unwrap(), "b\n");
    assert!(out.join("b/applied").exists());
    assert_eq!(
        std::fs::read_to_string(d.join("ws/from-a.txt")).unwrap(),
        "a\n"
    );
    assert!(out.join("a/applied").exists());
    let err = stderr(&run);
    assert!(
        err.contains("[a] applied its changes from an earlier run"),
        "{err}"
    );
    assert!(
        !err.contains("[b] applied its changes from an earlier run"),
        "{err}"
    );
    // c never started: it ran now.
    assert_eq!(
        read_json(out.join("c/transcript.json"))["outcome"]["status"],
        "passed"
    );
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase").count(), 3, "{junit}");
}

/// A shard killed outright merges (its task cut short, from its journal)
/// and the merged folder resumes it.
#[test]
fn a_shard_killed_outright_merges_and_resumes_from_its_journal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let flag = d.join("flag");
    six_turns(d, &flag, "54.75");
    write(
        d,
        "ok.yaml",
        "name: ok\nprompt: x\nworkspace: ws\nscript:\n  - text: done\n",
    );
    let o = runner()
        .current_dir(d)
        .args(["run", "-q", "--out", "a", "ok.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut cmd = runner();
    cmd.current_dir(d)
        .args(["run", "-q", "--out", "b", "t.yaml"]);
    kill_while(cmd, ["sleep", "54.75"]);
    let o = runner()
        .current_dir(d)
        .args(["merge", "--out", "merged", "a", "b"])
        .output()
        .unwrap();
    // Cut short: try again.
    assert_eq!(o.status.code(), Some(75), "{}", stderr(&o));
    let junit = std::fs::read_to_string(d.join("merged/junit.xml")).unwrap();
    assert_eq!(junit.matches("<testcase").count(), 2, "{junit}");
    assert!(junit.contains("cancelled"), "{junit}");
    assert!(d.join("merged/t/journal.jsonl").exists());

    std::fs::write(&flag, "").unwrap();
    let o = runner()
        .current_dir(d)
        .args(["run", "--resume", "merged", "ok.yaml", "t.yaml"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("echo one"), "{}", stderr(&o));
    let t = read_json(d.join("merged/t/transcript.json"));
    assert_eq!(t["outcome"]["status"], "passed", "{}", t["outcome"]);
    assert_eq!(turn_numbers(&t), [1, 2, 3, 4, 5, 6]);
}

/// `--resume --apply` applies a kept task's changes no run applied (here:
/// its run had no `--apply`) from its `changes.diff`, once: a second
/// resume applies nothing; a diff that no longer applies to the original
/// makes the task a conflict, the original untouched.
#[test]
fn a_kept_tasks_changes_are_applied_once_from_its_diff() {
    for edited in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "ws/a.txt", "one\ntwo\nthree\n");
        write(
            d,
            "t.yaml",
            "name: t\nprompt: Edit.\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: read_file, args: {file_path: a.txt}}\n  - tool_calls:\n      - {name: edit_file, args: {file_path: a.txt, old_string: two, new_string: TWO}}\n  - text: Edited.\n",
        );
        let first = runner()
            .current_dir(d)
            .args(["run", "-q", "--out", "out", "t.yaml"])
            .output()
            .unwrap();
        assert!(first.status.success(), "{}", stderr(&first));
        assert_eq!(
            std::fs::read_to_string(d.join("ws/a.txt")).unwrap(),
            "one\ntwo\nthree\n"
        );
        if edited {
            write(d, "ws/a.txt", "one\n2\nthree\n");
        }
        let resume = || {
            runner()
                .current_dir(d)
                .args(["run", "--apply", "--resume", "out", "t.yaml"])
                .output()
                .unwrap()
        };
        let run = resume();
        let t = read_json(d.join("out/t/transcript.json"));
        let now = std::fs::read_to_string(d.join("ws/a.txt")).unwrap();
        if edited {
            assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
            assert_eq!(t["outcome"]["status"], "conflict", "{}", t["outcome"]);
            assert!(
                t["outcome"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("no longer apply"),
                "{}",
                t["outcome"]
            );
            assert_eq!(now, "one\n2\nthree\n");
            assert!(!d.join("out/t/applied").exists());
            continue;
        }
        assert!(run.status.success(), "{}", stderr(&run));
        assert_eq!(now, "one\nTWO\nthree\n");
        assert!(stderr(&run).contains("[t] applied its changes from an earlier run"));
        // Once: the next resume leaves the tree as it is.
        let again = resume();
        assert!(again.status.success(), "{}", stderr(&again));
        assert!(
            !stderr(&again).contains("applied its changes"),
            "{}",
            stderr(&again)
        );
        assert_eq!(std::fs::read_to_string(d.join("ws/a.txt")).unwrap(), now);
    }
}

/// What a machine crash must not lose reaches the disk: the journal is
/// flushed (`fdatasync`) at its start and after turns, and each output is
/// flushed before its rename, with its folder after it. Seen with strace,
/// each call with the path of its descriptor.
#[test]
fn the_journal_and_the_outputs_are_flushed_to_the_disk() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "t.yaml",
        "name: t\nprompt: Look.\nworkspace: ws\nscript:\n  - tool_calls:\n      - {name: ls, args: {}}\n  - tool_calls:\n      - {name: read_file, args: {file_path: a.txt}}\n  - text: Seen.\n",
    );
    let trace = d.join("trace");
    let run = Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", "trace=fdatasync,fsync", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_runner"))
        .current_dir(d)
        .args(["run", "-q", "--out", "out", "t.yaml"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let text = std::fs::read_to_string(&trace).unwrap();
    let task = d.join("out/t").canonicalize().unwrap();
    let count = |call: &str, path: &str| {
        let what = format!("{call}(");
        let of = format!("<{path}>");
        text.lines()
            .filter(|l| l.contains(&what) && l.contains(&of))
            .count()
    };
    let task = task.display().to_string();
    // The start, then at least one flush after a turn's line.
    assert!(
        count("fdatasync", &format!("{task}/journal.jsonl")) >= 2,
        "{text}"
    );
    // transcript.json and changes.diff, each through a temporary file.
    let tmp_flushes = text
        .lines()
        .filter(|l| l.contains("fdatasync(") && l.contains(&format!("<{task}/.runner-tmp-")))
        .count();
    assert!(tmp_flushes >= 2, "{text}");
    // The folder's entries: the journal's and the two outputs'.
    assert!(count("fsync", &task) >= 3, "{text}");
}
