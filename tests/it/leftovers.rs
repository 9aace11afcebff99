//! A run killed outright (SIGKILL: an OOM kill, a CI job past its grace
//! period) cleans nothing up; the next run removes what it left in the
//! temp folder and its partial writes in the output folder, and never what
//! a live run holds (issue 48).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{kill_processes, start_until_running, stderr, wait_until_running, write};

/// A task whose one command waits on `sleep SECONDS`.
fn slow_task(dir: &Path, name: &str, seconds: &str) -> PathBuf {
    write(
        dir,
        name,
        &format!(
            "prompt: wait\nworkspace: ws\npolicy:\n  rules:\n    - allow: [\"Bash(sleep:*)\"]\nscript:\n  - tool_calls:\n      - {{name: bash, args: {{command: \"sleep {seconds}\", timeout: 120000}}}}\n"
        ),
    )
}

/// `runner run` of `task` with `tmp` as its temp folder.
fn runner_in(tmp: &Path, out: &Path, task: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_runner"));
    c.env("TMPDIR", tmp)
        .args(["run", "--out"])
        .arg(out)
        .arg(task);
    c
}

/// The `runner-*` names in `tmp`.
fn entries(tmp: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("runner-"))
        .collect();
    v.sort();
    v
}

#[test]
fn what_a_killed_run_left_goes_with_the_next_run_and_a_live_runs_stays() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    write(d, "ws/a.txt", "a\n");
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();

    // A run killed outright in the middle of its command.
    let killed_sleep = ["sleep", "44.25"];
    let task = slow_task(d, "killed.yaml", "44.25");
    // Once its command runs, its folders are made.
    let mut killed =
        start_until_running(runner_in(&tmp, &d.join("out-killed"), &task), &killed_sleep);
    killed.kill().unwrap();
    killed.wait().unwrap();
    kill_processes(&killed_sleep);
    let left = entries(&tmp);
    // Its copy and its commands' temp folder, each with its owner file.
    assert!(
        left.iter()
            .any(|n| n.starts_with("runner-ws-") && n.ends_with(".owner"))
            && left
                .iter()
                .any(|n| n.starts_with("runner-tmp-") && n.ends_with(".owner")),
        "{left:?}"
    );
    assert!(left.iter().all(|n| tmp.join(n).exists()));

    // A run still going, with folders of its own in the same temp folder.
    let live_sleep = ["sleep", "45.75"];
    let task = slow_task(d, "live.yaml", "45.75");
    // Its log kept, to say why should it end before its time.
    let live_log = d.join("live.log");
    let mut live = runner_in(&tmp, &d.join("out-live"), &task)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&live_log).unwrap())
        .spawn()
        .unwrap();
    wait_until_running(&live_sleep);
    let live_entries: Vec<String> = entries(&tmp)
        .into_iter()
        .filter(|n| !left.contains(n))
        .collect();
    assert!(live_entries.len() >= 4, "{live_entries:?}");
    // Every owner file old enough to be judged (a fresh one is not).
    let owners: Vec<PathBuf> = entries(&tmp)
        .iter()
        .filter(|n| n.ends_with(".owner"))
        .map(|n| tmp.join(n))
        .collect();
    let touched = Command::new("touch")
        .args(["-d", "1 hour ago"])
        .args(&owners)
        .status()
        .unwrap();
    assert!(touched.success());

    // The next run removes the killed run's folders, and says so.
    let task = write(d, "next.yaml", "prompt: hi\nworkspace: ws\nscript: []\n");
    let next = runner_in(&tmp, &d.join("out-next"), &task)
        .output()
        .unwrap();
    assert!(next.status.success(), "{}", stderr(&next));
    let err = stderr(&next);
    // Each folder has its owner file (an overlay workspace's layers are
    // a folder of their own).
    let folders = left.iter().filter(|n| n.ends_with(".owner")).count();
    assert!(folders >= 3, "{left:?}");
    assert!(
        err.contains(&format!(
            "removed {folders} temporary folder(s) and file(s) left by runs that were killed"
        )),
        "{err}"
    );
    for n in &left {
        assert!(!tmp.join(n).exists(), "{n} is still there");
    }
    // The live run's are all there, and it finishes as it would have.
    let ended = live.try_wait().unwrap();
    for n in &live_entries {
        assert!(
            tmp.join(n).exists(),
            "{n} of the live run was removed (the live run {}; its log: {})",
            match ended {
                Some(s) => format!("had ended: {s}"),
                None => "was still going".to_string(),
            },
            std::fs::read_to_string(&live_log).unwrap_or_default()
        );
    }
    kill_processes(&live_sleep);
    let status = live.wait().unwrap();
    assert!(status.code().is_some(), "{status:?}");
    // It removed its own on the way out; nothing is left.
    assert_eq!(entries(&tmp), Vec::<String>::new());
}

/// A run killed in the middle of an atomic write (a transcript, a report)
/// leaves its temporary file in the output folder; the next run there
/// removes it once it is old enough to be nobody's write in progress, and
/// touches nothing else.
#[test]
fn a_killed_runs_partial_writes_in_the_output_folder_go() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    let out = d.join("out");
    let old = [
        out.join(".runner-tmp-Ab12Cd"),
        out.join("t/.runner-tmp-Ef34Gh"),
    ];
    let fresh = out.join("t/.runner-tmp-Ij56Kl");
    let theirs = [out.join("t/notes.txt"), out.join(".runner-tmp-dir/x")];
    for f in old.iter().chain([&fresh]).chain(&theirs) {
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, "{\"partial\": ").unwrap();
    }
    let touched = Command::new("touch")
        .args(["-d", "1 hour ago"])
        .args(&old)
        .arg(&theirs[0])
        .status()
        .unwrap();
    assert!(touched.success());
    let task = write(d, "t.yaml", "prompt: hi\nworkspace: ws\nscript: []\n");
    std::fs::create_dir(d.join("tmp")).unwrap();
    let run = runner_in(&d.join("tmp"), &out, &task).output().unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    for f in &old {
        assert!(!f.exists(), "{} is still there", f.display());
    }
    assert!(
        fresh.exists(),
        "a write that may be in progress was removed"
    );
    for f in &theirs {
        assert!(f.exists(), "{} is not the runner's to remove", f.display());
    }
    assert!(
        stderr(&run).contains("file(s) left by runs that were killed"),
        "{}",
        stderr(&run)
    );
}

/// A temp folder that is not there is one clear error before anything
/// runs (exit 2), not a failure of every task's copy.
#[test]
fn a_temp_folder_that_is_not_there_is_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    let task = write(d, "t.yaml", "prompt: hi\nworkspace: ws\nscript: []\n");
    let run = runner_in(&d.join("no-such-tmp"), &d.join("out"), &task)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("no-such-tmp is not a folder that exists (TMPDIR)"),
        "{err}"
    );
    assert!(!d.join("out/t").exists());
}
