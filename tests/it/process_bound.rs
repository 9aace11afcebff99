//! The default bound on a task's processes (issue 41): for a user other
//! than root, each command's `RLIMIT_NPROC` is the machine's task count
//! plus 1024 (or plus `limits: {processes: N}` where no pids cgroup can be
//! made), so a fork bomb fails to fork and the runner goes on. Root is not
//! held to `RLIMIT_NPROC`: run as root, these tests run the runner as
//! `nobody`, but for root's own default, a pids cgroup. (A bomb in a pids
//! cgroup is tested in containment.rs.)

use std::os::unix::process::CommandExt;
use std::path::Path;

use serde_json::Value;

use crate::common::{
    FORK_BOMB, assert_the_bomb_failed_to_fork, bash_turns, is_root, read_json, stderr, write,
};

/// `nobody`, where the test runs as root; else the test's own user.
const NOBODY: u32 = 65534;

/// Runs `commands` in a task with `extra` settings, as a user other than
/// root: the exit, the transcript, each command's output.
fn run_as_a_user(extra: &str, commands: &[&str]) -> (std::process::Output, Value, Vec<String>) {
    run_task(extra, commands, true)
}

/// Runs `commands` in a task with `extra` settings, as a user other than
/// root when `as_a_user`, else as the test's own user.
fn run_task(
    extra: &str,
    commands: &[&str],
    as_a_user: bool,
) -> (std::process::Output, Value, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    lay_out(d, extra, commands);
    let mut runner = std::path::PathBuf::from(env!("CARGO_BIN_EXE_runner"));
    let nobody = as_a_user && is_root();
    if nobody {
        // A copy of the binary `nobody` may run, wherever the build is.
        let copy = d.join("runner");
        std::fs::copy(&runner, &copy).unwrap();
        runner = copy;
        chown_tree(d, NOBODY);
    }
    // A copy just written can be busy for a moment: another test's fork
    // may hold its descriptor until that child's exec (ETXTBSY).
    let mut tries = 0;
    let out = loop {
        let mut cmd = std::process::Command::new(&runner);
        if nobody {
            cmd.uid(NOBODY).gid(NOBODY);
        }
        match cmd
            .current_dir(d)
            .env("CI", "true")
            .env("HOME", d.join("home"))
            .args(["run", "--out", "out", "task.yaml"])
            .output()
        {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => break other.unwrap(),
        }
    };
    let t = read_json(d.join("out/t/transcript.json"));
    let results = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].as_str().unwrap().to_string())
        .collect();
    (out, t, results)
}

/// A workspace, a home and a task running `commands` with `extra`
/// settings, in `d`.
fn lay_out(d: &Path, extra: &str, commands: &[&str]) {
    write(d, "ws/a.txt", "a\n");
    std::fs::create_dir_all(d.join("home")).unwrap();
    write(
        d,
        "task.yaml",
        &format!(
            "name: t\nprompt: run things\nworkspace: ws\npolicy:\n  default: allow\n{extra}script:\n{}",
            bash_turns(commands)
        ),
    );
}

fn chown_tree(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
    if p.is_dir() && !p.is_symlink() {
        for e in std::fs::read_dir(p).unwrap() {
            chown_tree(&e.unwrap().path(), uid);
        }
    }
}

/// Every process and thread on the machine now (`/proc/loadavg`).
fn machine_tasks() -> u64 {
    tasks_in(&std::fs::read_to_string("/proc/loadavg").unwrap())
}

/// The total of a `/proc/loadavg` line's `running/total` field.
fn tasks_in(loadavg: &str) -> u64 {
    let field = loadavg.split_whitespace().nth(3).unwrap();
    field.split('/').nth(1).unwrap().parse().unwrap()
}

/// The number in the transcript's `processes: this user's at most N`.
fn limit_in(sandbox: &str) -> u64 {
    let after = sandbox
        .split("processes: this user's at most ")
        .nth(1)
        .unwrap_or_else(|| panic!("no RLIMIT_NPROC bound: {sandbox}"));
    after.split(' ').next().unwrap().parse().unwrap()
}

/// By default: the command's limit is the one the transcript names, the
/// machine's count and 1024 more.
#[test]
fn a_task_without_limits_gets_the_default_bound() {
    let (out, t, r) = run_as_a_user("", &["ulimit -Su; ulimit -Hu; cat /proc/loadavg"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("(RLIMIT_NPROC, the default: the machine's "),
        "{sandbox}"
    );
    assert!(sandbox.contains(" and 1024 more)"), "{sandbox}");
    let limit = limit_in(sandbox);
    let lines: Vec<&str> = r[0]
        .lines()
        .skip_while(|l| *l != "--- stdout ---")
        .skip(1)
        .collect();
    assert_eq!(lines[0], limit.to_string(), "{}", r[0]);
    assert_eq!(lines[1], limit.to_string(), "{}", r[0]);
    // The machine's count when the sandbox was made, and 1024 more.
    let tasks = tasks_in(lines[2]);
    let then: u64 = sandbox
        .split("the machine's ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{sandbox}"));
    assert_eq!(limit, then + 1024, "{sandbox}");
    // Other tests' processes come and go meanwhile.
    assert!(then > 0 && then.abs_diff(tasks) < 2000, "{then} {tasks}");
}

/// A bomb under `limits: {processes: 64}` where no pids cgroup can be
/// made (a user's): forks past the bound fail, the command ends at its
/// timeout, and the next one runs.
#[test]
fn a_fork_bomb_fails_to_fork_under_rlimit_nproc() {
    // Set off only under a limit near the one asked for: were the bound
    // broken (a mutant, a regression), the bomb would take the machine.
    let most = machine_tasks() + 64 + 500;
    let guarded = format!(
        "l=$(ulimit -u); case $l in *[!0-9]*|'') l=0;; esac; if [ $l -eq 0 ] || [ $l -gt {most} ]; then echo \"not set off: ulimit -u is $(ulimit -u)\"; exit 1; fi; {}",
        FORK_BOMB[0]
    );
    let commands = [guarded.as_str(), FORK_BOMB[1]];
    let (out, t, r) = run_as_a_user("limits: {processes: 64}\n", &commands);
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    if sandbox.contains("at most 64 (pids cgroup)") {
        eprintln!("this user may make a pids cgroup: the cgroup holds ({sandbox})");
    } else {
        assert!(
            sandbox.contains("RLIMIT_NPROC: the machine's "),
            "{sandbox}"
        );
        assert!(
            sandbox.contains(" and 64 more; no pids cgroup: "),
            "{sandbox}"
        );
    }
    assert_the_bomb_failed_to_fork(&r);
}

/// `sandbox: off` confines nothing, but limits a task asks for still hold
/// in each command: the process bound (here `RLIMIT_NPROC`, a user's) and
/// memory.
#[test]
fn asked_limits_hold_with_the_sandbox_off() {
    let (out, t, r) = run_as_a_user(
        "sandbox: off\nlimits: {processes: 64, memory_mb: 256}\n",
        &["ulimit -Su; ulimit -v"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(sandbox.starts_with("off"), "{sandbox}");
    let lines: Vec<&str> = r[0]
        .lines()
        .skip_while(|l| *l != "--- stdout ---")
        .skip(1)
        .collect();
    assert_eq!(lines[1], (256 * 1024).to_string(), "{}", r[0]);
    if sandbox.contains("at most 64 (pids cgroup)") {
        return;
    }
    assert_eq!(lines[0], limit_in(sandbox).to_string(), "{}", r[0]);
}

/// Root is not held to `RLIMIT_NPROC`: a run as root gets, by default, a
/// pids cgroup of 1024 where its commands can start in it without joining
/// it (cgroup v1: a thread of the runner in the cgroup forks them), and
/// otherwise no default bound, which the transcript says, with why.
#[test]
fn as_root_the_default_bound_is_a_cgroup_the_commands_start_in() {
    if !is_root() {
        eprintln!("not root: RLIMIT_NPROC holds (checked above)");
        return;
    }
    // The runner is the command's parent: it stays outside the cgroup.
    let probe = "grep pids: /proc/self/cgroup; grep pids: /proc/$PPID/cgroup; d=/sys/fs/cgroup/pids$(grep pids: /proc/self/cgroup | cut -d: -f3); cat $d/pids.max";
    let (out, t, r) = run_task(
        "  rules: [{allow: [\"Read(/proc/**)\", \"Read(/sys/**)\"]}]\n",
        &[probe],
        false,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    // Where the machine has a cgroup v1 pids hierarchy over the runner's
    // cgroup (a `tasks` file: threads move), the default must be there:
    // the transcript's own word that it is not would hide a lost bound.
    let v1 = crate::common::pids_cgroup_v1();
    if !sandbox.contains("; processes: at most 1024 (pids cgroup, the default)") {
        assert!(
            !v1,
            "a cgroup v1 pids hierarchy, but no default bound: {sandbox}"
        );
        assert!(
            sandbox.contains(
                "; processes: not bounded by default (root is not held to RLIMIT_NPROC; no pids cgroup without a cost a command: "
            ),
            "{sandbox}"
        );
        eprintln!("no cgroup v1 pids hierarchy open to the runner here: {sandbox}");
        return;
    }
    let lines: Vec<&str> = r[0]
        .lines()
        .skip_while(|l| *l != "--- stdout ---")
        .skip(1)
        .collect();
    let (own, runners) = (lines[0], lines[1]);
    let name = own.rsplit('/').next().unwrap();
    assert!(name.starts_with("runner-"), "{}", r[0]);
    assert!(!runners.ends_with(&format!("/{name}")), "{}", r[0]);
    // 1024, and the runner's thread that forks the commands.
    assert_eq!(lines[2], "1025", "{}", r[0]);
    let dir = format!("/sys/fs/cgroup/pids{}", own.splitn(3, ':').nth(2).unwrap());
    assert!(!std::path::Path::new(&dir).exists(), "{dir} left behind");
}
