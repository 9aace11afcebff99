//! What an allowed command can reach: the scrubbed environment, redaction
//! of secrets in every output and in what the model receives, and the
//! Landlock/seccomp sandbox. Commands go through python3 so that the
//! policy cannot see the paths: only the sandbox stands in the way.

use std::path::Path;

use crate::common::fake_llm::FakeServer;
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{
    FORK_BOMB, assert_the_bomb_failed_to_fork, bash_turns, read_json, runner, stderr, write,
};
use serde_json::{Value, json};

const GH_SECRET: &str = "gh-secret-value-4242";
const PW_SECRET: &str = "pw-secret-value-9999";
const NPM_SECRET: &str = "npm-secret-value-1111";

/// A task whose scripted model runs each command with bash, under a policy
/// that allows them all.
fn task_with_commands(dir: &Path, extra: &str, commands: &[&str]) {
    // Inline python code is opaque to the policy: each command is allowed
    // by a rule naming its exact text.
    let exact: Vec<String> = commands
        .iter()
        .map(|c| serde_json::to_string(&format!("Bash({c})")).unwrap())
        .collect();
    let calls = bash_turns(commands);
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: run things\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\", {}]\n{extra}script:\n{calls}",
            exact.join(", ")
        ),
    );
}

fn run(dir: &Path) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .env("GITHUB_TOKEN", GH_SECRET)
        .env("MY_SERVICE_PASSWORD", PW_SECRET)
        .env("NPM_TOKEN", NPM_SECRET)
        .env("HOME", dir.join("home"))
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn results(t: &Value) -> Vec<String> {
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["content"].as_str().unwrap().to_string())
        .collect()
}

fn all_outputs(dir: &Path, out: &std::process::Output) -> String {
    let mut s = String::new();
    for f in [
        "out/t/transcript.json",
        "out/junit.xml",
        "out/summary.md",
        "out/t/changes.diff",
    ] {
        s.push_str(&std::fs::read_to_string(dir.join(f)).unwrap());
    }
    s.push_str(&stderr(out));
    s.push_str(&String::from_utf8_lossy(&out.stdout));
    s
}

#[test]
fn env_run_by_the_agent_shows_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    task_with_commands(
        dir.path(),
        // No decoys: no GITHUB_TOKEN at all (tests/it/canaries.rs has them).
        "canaries: false\nenv:\n  pass: [NPM_TOKEN]\n  set: {GREETING: hello}\n",
        &["env | sort"],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let env = &results(&t)[0];
    assert!(env.contains("GREETING=hello"), "{env}");
    assert!(env.contains("PATH="), "{env}");
    assert!(!env.contains("GITHUB_TOKEN"), "{env}");
    assert!(!env.contains("MY_SERVICE_PASSWORD"), "{env}");
    // Passed on by the task, but its value is still a secret in outputs.
    assert!(env.contains("NPM_TOKEN=[REDACTED]"), "{env}");
    // The command's temp folder is the task's own.
    assert!(env.contains("TMPDIR=/"), "{env}");
    let all = all_outputs(dir.path(), &out);
    for s in [GH_SECRET, PW_SECRET, NPM_SECRET] {
        assert!(!all.contains(s), "{s} leaked");
    }
}

/// The runner's own secrets are not in the environment block the kernel
/// shows other processes of its user (`/proc/PID/environ`, which a command
/// may read even inside Landlock): a command that prints its parent's,
/// reversed (past redaction), finds the secrets' names with no value, and
/// the runner's other variables as they were. (A root runner's commands,
/// which hold no capabilities, may not read it at all: the runner's are
/// not a subset of theirs.)
#[test]
fn the_runners_own_secrets_are_not_in_its_environment_block() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    task_with_commands(
        dir.path(),
        "",
        &["tr '\\0' '\\n' < /proc/$PPID/environ | grep -E '^(CI|GITHUB_TOKEN|NPM_TOKEN)=' | rev"],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let read = &results(&t)[0];
    for s in [GH_SECRET, NPM_SECRET] {
        let reversed: String = s.chars().rev().collect();
        assert!(!read.contains(&reversed), "{s} leaked: {read}");
    }
    if crate::common::is_root() && read.contains("Permission denied") {
        return;
    }
    assert!(read.contains("eurt=IC"), "{read}");
    for name in ["GITHUB_TOKEN", "NPM_TOKEN"] {
        let line = format!("\n={}\n", name.chars().rev().collect::<String>());
        assert!(read.contains(&line), "{name}: {read}");
    }
    for s in [GH_SECRET, NPM_SECRET] {
        let reversed: String = s.chars().rev().collect();
        assert!(!read.contains(&reversed), "{s} leaked: {read}");
    }
}

/// The runner cannot clear the block of the process that started it: it
/// says when that process holds one of its secrets (a shell that got it
/// from its own parent), and is silent when started with `exec`.
#[test]
fn a_parent_holding_the_runners_secret_is_named_and_exec_is_not() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    task_with_commands(dir.path(), "", &["true"]);
    let exe = assert_cmd::cargo::cargo_bin("runner");
    for (how, warned) in [("", true), ("exec ", false)] {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{how}\"$0\" run -q --out out task.yaml"))
            .arg(&exe)
            .current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .env("NPM_TOKEN", NPM_SECRET)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(
            err.contains("the process that started runner holds NPM_TOKEN"),
            warned,
            "{how}: {err}"
        );
        assert!(!err.contains(NPM_SECRET), "{err}");
    }
}

#[test]
fn a_secret_printed_by_a_command_is_redacted_in_outputs_and_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    // A file that happens to hold the CI token and a key-shaped string.
    let shaped = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    write(
        dir.path(),
        "ws/notes.txt",
        &format!("token: {GH_SECRET}\nold key: {shaped}\n"),
    );
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: show the notes\nmodel: openai:fake\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\"]\n",
    );
    let server = FakeServer::queue(vec![
        wire::reply(
            Vendor::OpenAi,
            &turn(
                "",
                vec![
                    call("c1", "bash", json!({"command": "cat notes.txt"})),
                    call("c2", "read_file", json!({"file_path": "notes.txt"})),
                ],
            ),
        ),
        wire::reply(Vendor::OpenAi, &turn("Done.", vec![])),
    ]);
    let out = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .env("GITHUB_TOKEN", GH_SECRET)
        .env("HOME", dir.path().join("home"))
        .env("OPENAI_API_KEY", "sk-test-redaction-key-000")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .args(["run", "-v", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    for r in results(&t) {
        assert_eq!(r.matches("[REDACTED]").count(), 2, "{r}");
    }
    let sent = server.requests()[1].body.to_string();
    assert!(sent.contains("[REDACTED]"), "{sent}");
    assert!(
        !sent.contains(GH_SECRET) && !sent.contains(shaped),
        "the model saw a secret"
    );
    let all = all_outputs(dir.path(), &out);
    assert!(!all.contains(GH_SECRET) && !all.contains(shaped));
}

/// The file in /etc a case tries to write: one per case, so that the case
/// whose sandbox is off (and writes it) cannot be seen by the other.
fn etc_probe(outside: &Path) -> std::path::PathBuf {
    let case = outside
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Path::new("/etc").join(format!("runner-sandbox-test{case}"))
}

/// Commands that write outside the workspace, each through python3 so the
/// policy sees no path.
fn escape_attempts(outside: &Path) -> Vec<String> {
    let py = |code: &str| format!("python3 -c \"{code}\"");
    vec![
        py("import os; open(os.path.expanduser('~/x'), 'w').write('x')"),
        py(&format!(
            "open('{}', 'w').write('x')",
            etc_probe(outside).display()
        )),
        py("open('../outside.txt', 'w').write('x')"),
        py("open('link/x', 'w').write('x')"),
        py(&format!(
            "open('{}/abs.txt', 'w').write('x')",
            outside.display()
        )),
        py("open('inside.txt', 'w').write('inside')"),
        py(
            "import tempfile; f = tempfile.NamedTemporaryFile(delete=False); f.write(b'ok'); print('tmp ok')",
        ),
    ]
}

fn sandbox_case(mode: &str) -> (tempfile::TempDir, std::process::Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside-dir");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::os::unix::fs::symlink(&outside, dir.path().join("ws/link")).unwrap();
    let cmds = escape_attempts(&outside);
    let cmds: Vec<&str> = cmds.iter().map(String::as_str).collect();
    // The machine's /tmp (where the test's folders are): a private one
    // would hide the targets, and Landlock's refusal is what is tested.
    task_with_commands(
        dir.path(),
        // No decoys: `~` is the runner's home (with them, the task's own).
        &format!("canaries: false\nsandbox: {{mode: \"{mode}\", private_tmp: false}}\n"),
        &cmds,
    );
    let (out, t) = run(dir.path());
    (dir, out, t)
}

#[test]
fn with_the_sandbox_writes_outside_the_workspace_fail_and_inside_succeed() {
    let (dir, out, t) = sandbox_case("required");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        t["sandbox"].as_str().unwrap().starts_with("landlock"),
        "{}",
        t["sandbox"]
    );
    let r = results(&t);
    for (i, what) in ["~/x", "/etc", "..", "a symlink", "an absolute path"]
        .iter()
        .enumerate()
    {
        assert!(
            r[i].contains("PermissionError"),
            "writing through {what} was not refused: {}",
            r[i]
        );
    }
    assert!(!dir.path().join("home/x").exists());
    assert!(!etc_probe(&dir.path().join("outside-dir")).exists());
    assert!(!dir.path().join("outside.txt").exists());
    assert!(!dir.path().join("outside-dir/x").exists());
    assert!(!dir.path().join("outside-dir/abs.txt").exists());
    assert!(!r[5].contains("Error"), "{}", r[5]);
    assert!(r[6].contains("tmp ok"), "{}", r[6]);
    let diff = std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap();
    assert!(diff.contains("+inside"), "{diff}");
}

#[test]
fn with_the_sandbox_off_the_same_writes_succeed() {
    // The control case: the test above can fail.
    let (dir, out, t) = sandbox_case("off");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t["sandbox"], "off");
    assert!(dir.path().join("home/x").exists());
    assert!(dir.path().join("outside-dir/abs.txt").exists());
    let probe = etc_probe(&dir.path().join("outside-dir"));
    let written = probe.exists();
    let _ = std::fs::remove_file(&probe);
    assert!(
        written,
        "{} was not written with the sandbox off",
        probe.display()
    );
}

#[test]
fn network_off_refuses_inet_sockets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    task_with_commands(
        dir.path(),
        "sandbox: {mode: required, network: false}\n",
        &[
            "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)\"",
            "python3 -c \"import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\"",
            "python3 -c \"import socket; socket.socket(socket.AF_UNIX); print('unix ok')\"",
        ],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = results(&t);
    assert!(r[0].contains("PermissionError"), "{}", r[0]);
    assert!(r[1].contains("PermissionError"), "{}", r[1]);
    assert!(r[2].contains("unix ok"), "{}", r[2]);
    assert!(t["sandbox"].as_str().unwrap().contains("network off"));
}

#[test]
fn limits_bound_cpu_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    task_with_commands(
        dir.path(),
        "limits: {cpu_seconds: 1, memory_mb: 200}\n",
        &[
            "python3 -c \"b = bytearray(400 * 1024 * 1024)\"; echo exit=$?",
            "python3 -c \"b = bytearray(50 * 1024 * 1024); print('small ok')\"",
            "timeout 20 bash -c 'while :; do :; done'; echo exit=$?",
        ],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = results(&t);
    assert!(
        r[0].contains("MemoryError") && r[0].contains("exit=1"),
        "{}",
        r[0]
    );
    assert!(r[1].contains("small ok"), "{}", r[1]);
    // SIGXCPU after one CPU second: 128 + 24, long before `timeout`.
    assert!(r[2].contains("exit=152"), "{}", r[2]);
}

#[test]
fn runner_tool_bash_gets_the_same_environment_and_sandbox_as_a_run() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    // A script file, not inline code: the policy can see what runs.
    write(
        dir.path(),
        "ws/escape.py",
        "import os\nopen(os.path.expanduser('~/../runner-tool-escape'), 'w')\n",
    );
    // HOME in the temp folder: were the sandbox broken, the escape would
    // land there (next to `home`), never in `/`.
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let out = runner()
        .env("GITHUB_TOKEN", GH_SECRET)
        .env("HOME", dir.path().join("home"))
        .args([
            "tool",
            "bash",
            r#"{"command": "env | grep -c GITHUB_TOKEN; python3 escape.py 2>&1 | tail -1; echo inside > b.txt"}"#,
            "--workspace",
        ])
        .arg(dir.path().join("ws"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--- stdout ---\n0\n"), "{text}");
    // Refused by Landlock, or not there at all (the test's folder is in
    // the machine's /tmp, and commands have a /tmp of their own).
    assert!(
        text.contains("PermissionError") || text.contains("FileNotFoundError"),
        "{text}"
    );
    assert!(!dir.path().join("runner-tool-escape").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/b.txt")).unwrap(),
        "inside\n"
    );
}

#[test]
fn without_landlock_best_effort_goes_on_and_says_so_while_required_fails() {
    for mode in ["best-effort", "required"] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        task_with_commands(dir.path(), &format!("sandbox: {mode}\n"), &["echo ran"]);
        let out = runner()
            .current_dir(dir.path())
            .env("CI", "true")
            .env("RUNNER_SIMULATE_NO_LANDLOCK", "1")
            .args(["run", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        let t = read_json(dir.path().join("out/t/transcript.json"));
        if mode == "best-effort" {
            assert!(out.status.success(), "{}", stderr(&out));
            let note = t["sandbox"].as_str().unwrap();
            assert!(
                note.contains("unavailable") && note.contains("writes and reads not confined"),
                "{note}"
            );
            // The supervisor holds without Landlock.
            assert!(
                note.contains("connections decided by the runner's supervisor"),
                "{note}"
            );
            assert!(results(&t)[0].contains("ran"));
            // Limits still confine the commands, but no write: no
            // backstop but the revert of edits.
            let b = &t["backstops"];
            for held in ["reads", "confined", "network_off", "exec"] {
                assert_eq!(b[held], false, "{held}: {b}");
            }
            assert_eq!(b["edits"], true, "{b}");
        } else {
            assert_eq!(out.status.code(), Some(1));
            assert_eq!(t["outcome"]["status"], "error");
            let reason = t["outcome"]["reason"].as_str().unwrap();
            assert!(reason.contains("sandbox: required"), "{reason}");
            assert!(t["tool_calls"].as_array().unwrap().is_empty());
        }
    }
}

/// Commands that try every way to signal the runner, and one that signals
/// its own child.
const SIGNAL_THE_RUNNER: &[&str] = &[
    "echo runner=$PPID; kill -9 $PPID; echo kill=$?",
    "kill -9 -$(awk '{print $5}' /proc/$PPID/stat); echo group=$?",
    "kill -TERM $PPID; echo term=$?",
    "sleep 30 & kill $!; wait $!; echo child=$?",
    // Joins the runner's process group, then signals its own group: only
    // the command itself may get it.
    "python3 -c \"import os,signal; os.setpgid(0, os.getpgid($PPID)); os.kill(0, signal.SIGTERM)\"; echo joined=$?",
    "python3 -c \"import os,signal; signal.pidfd_send_signal(os.pidfd_open($PPID), signal.SIGKILL)\"; echo pidfd=$?",
    "python3 -c \"import ctypes; c=ctypes.CDLL(None, use_errno=True); print('tgkill', c.tgkill($PPID, $PPID, 9), ctypes.get_errno()); print('sigqueue', c.sigqueue($PPID, 15, None), ctypes.get_errno())\"",
    // Its own process, named by another thread's number: it gets it.
    "python3 -c \"import os,signal,threading,time; got=list(); signal.signal(signal.SIGUSR1, lambda *a: got.append(1)); t=threading.Thread(target=time.sleep, args=(0.5,)); t.start(); os.kill(t.native_id, signal.SIGUSR1); time.sleep(0.2); print('own-thread', len(got))\"",
    // SIGIO, whose default is to end the process it goes to.
    "python3 -c \"import fcntl,os; r,w=os.pipe(); fcntl.fcntl(r, fcntl.F_SETOWN, $PPID); fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC); os.write(w, b'x')\"; echo sigio=$?",
    // The same with the runner's process group as the owner.
    "python3 -c \"import fcntl,os; r,w=os.pipe(); fcntl.fcntl(r, fcntl.F_SETOWN, -os.getpgid($PPID)); fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC); os.write(w, b'x')\"; echo sigio_group=$?",
    // A process of the same command but no descendant of the one that
    // signals it (a sibling, both children of the command's shell).
    "sleep 30 & python3 -c \"import os,signal; os.kill($!, signal.SIGTERM)\"; wait $!; echo sibling=$?",
    // Names the runner (its group's first process) as a group to make:
    // the kernel moves only the caller or its child, and the runner must
    // not record the runner's group as one the command made (it kills
    // those when the command ends).
    "python3 -c \"import os; os.setpgid($PPID, $PPID)\"; echo setpgid=$?",
];

/// Runs the task in `dir` with `env`, in a process group of its own (were
/// a wall to fail, what a command sends the runner's group does not reach
/// the test harness), and checks that the run finished with its outputs
/// whole: exit 0 and junit.xml; its transcript.
fn run_whole(dir: &Path, env: &[(&str, &str)]) -> Value {
    let mut cmd = runner();
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.current_dir(dir)
        .env("CI", "true")
        .env("HOME", dir.join("home"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{env:?}: {}", stderr(&out));
    assert!(dir.join("out/junit.xml").exists(), "{env:?}");
    read_json(dir.join("out/t/transcript.json"))
}

/// Runs [`SIGNAL_THE_RUNNER`] with `env` and checks that the runner went
/// on, each signal to it failed, and the child's and a sibling's
/// succeeded; the transcript's `sandbox`.
fn signals_cannot_reach_the_runner(env: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    task_with_commands(dir.path(), "", SIGNAL_THE_RUNNER);
    let t = run_whole(dir.path(), env);
    let r = results(&t);
    assert_eq!(r.len(), SIGNAL_THE_RUNNER.len());
    let runner_pid = r[0]
        .split("runner=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap();
    assert!(runner_pid.parse::<u32>().unwrap() > 1, "{}", r[0]);
    for (i, word) in ["kill=1", "group=1", "term=1"].iter().enumerate() {
        assert!(r[i].contains(word), "{}", r[i]);
        assert!(r[i].contains("Operation not permitted"), "{}", r[i]);
    }
    // 143: the child died of the SIGTERM its parent sent.
    assert!(r[3].contains("child=143"), "{}", r[3]);
    // A command may not join the runner's process group (nor any group
    // it did not make): refused by the supervisor.
    assert!(r[4].contains("joined=1"), "{}", r[4]);
    assert!(r[4].contains("PermissionError"), "{}", r[4]);
    assert!(r[5].contains("pidfd=1"), "{}", r[5]);
    assert!(r[5].contains("Operation not permitted"), "{}", r[5]);
    // -1 and EPERM (1), for each.
    assert!(r[6].contains("tgkill -1 1"), "{}", r[6]);
    assert!(r[6].contains("sigqueue -1 1"), "{}", r[6]);
    assert!(r[7].contains("own-thread 1"), "{}", r[7]);
    assert!(r[10].contains("sibling=143"), "{}", r[10]);
    assert!(r[11].contains("setpgid=1"), "{}", r[11]);
    t["sandbox"].as_str().unwrap().to_string()
}

/// A command cannot signal the runner (Landlock's signal scope, ABI 6):
/// by `kill -9 $PPID`, a kill of the runner's process group, a SIGTERM,
/// a pidfd, `tgkill`, `sigqueue`, a group it joined, or a SIGIO it made
/// the runner the owner of; the run finishes with its transcript and
/// junit.xml. Its own children it may still signal.
#[test]
fn a_command_cannot_kill_the_runner() {
    let sandbox = signals_cannot_reach_the_runner(&[]);
    assert!(sandbox.contains("no signal"), "{sandbox}");
}

/// What leaves a command's process group ends with the command, where
/// the supervisor sees it go: a `setsid` in the background (its first
/// process alive: the group is killed whole), a daemon's fork, `setsid`
/// and fork again (its first process gone: its members are killed one by
/// one), and `timeout`, which makes a group of its own. The next command
/// finds none of them, and the first one's output is whole (a process
/// holding the pipe would have kept it open past the grace period).
#[test]
fn what_leaves_the_commands_group_ends_with_the_command() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let markers = [["sleep", "43.61"], ["sleep", "43.62"], ["sleep", "43.63"]];
    // Each waits until what it starts has left its group (the file is
    // written after), or the command's own group kill would end it first.
    let wait = |f: &str| format!("until [ -s {f} ]; do sleep 0.05; done");
    let commands = [
        format!(
            "setsid sh -c 'echo $$ > s1; exec sleep 43.61' & {}; echo started",
            wait("s1")
        ),
        format!(
            "python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        open('s2', 'w').write('x')\n        os.execvp('sleep', ['sleep', '43.62'])\n    os._exit(0)\nprint('forked')\"; {}",
            wait("s2")
        ),
        format!(
            "timeout 300 sh -c 'echo $$ > s3; exec sleep 43.63' & {}; echo timed",
            wait("s3")
        ),
        "echo left=$(ps -eo args | grep -c '^sleep 43\\.6[123]$')".to_string(),
        // Making a session or a group works as it would (recorded, not
        // refused).
        "python3 -c \"import os\npid = os.fork()\nif pid == 0:\n    os.setsid()\n    print('session', os.getsid(0) == os.getpid(), flush=True)\n    os._exit(0)\nos.waitpid(pid, 0)\nos.setpgid(0, 0)\nprint('group', os.getpgid(0) == os.getpid())\"".to_string(),
        // No pid namespace of its own (no command makes a namespace): the
        // group a process there would make, named by a number the runner
        // cannot read, is never made.
        "unshare --pid --fork python3 -c \"import os\nos.setpgid(0, 0)\nprint('zero ok')\ntry:\n    os.setpgid(os.getpid(), os.getpid())\n    print('named ok')\nexcept OSError as e:\n    print('named', e.errno)\" || echo no-namespace".to_string(),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    task_with_commands(dir.path(), "", &commands);
    let (out, t) = run(dir.path());
    for m in &markers {
        crate::common::kill_processes(m);
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        t["sandbox"]
            .as_str()
            .unwrap()
            .contains("connections decided by the runner's supervisor"),
        "{}",
        t["sandbox"]
    );
    let r = results(&t);
    assert!(r[0].contains("started"), "{}", r[0]);
    assert!(r[1].contains("forked"), "{}", r[1]);
    assert!(r[2].contains("timed"), "{}", r[2]);
    assert!(r[3].contains("left=0"), "{}", r[3]);
    assert!(r[4].contains("session True\ngroup True"), "{}", r[4]);
    assert!(
        r[5].contains("no-namespace") && r[5].contains("refused by the sandbox: unshare"),
        "{}",
        r[5]
    );
}

/// The same where Landlock cannot scope signals (ABI 5, simulated): the
/// runner's supervisor decides every signal instead, and the transcript
/// says so. (Under Landlock the SIGIO owner is refused at delivery; under
/// the supervisor, when it is named.)
#[test]
fn without_landlock_scopes_the_supervisor_keeps_signals_in_the_task() {
    let sandbox = signals_cannot_reach_the_runner(&[("RUNNER_SIMULATE_LANDLOCK_ABI", "5")]);
    assert!(sandbox.contains("ABI 5"), "{sandbox}");
    assert!(
        sandbox.contains("no signal outside the command's own processes (the runner's supervisor"),
        "{sandbox}"
    );
}

/// The same without Landlock at all (simulated; `best-effort`): commands
/// may write anywhere, but the supervisor still keeps their signals in the
/// task, so `kill -9 $PPID` leaves the run going and its outputs whole.
#[test]
fn without_landlock_the_supervisor_still_keeps_signals_in_the_task() {
    let sandbox = signals_cannot_reach_the_runner(&[("RUNNER_SIMULATE_NO_LANDLOCK", "1")]);
    assert!(sandbox.contains("unavailable"), "{sandbox}");
    assert!(
        sandbox.contains("no signal outside the command's own processes"),
        "{sandbox}"
    );
    assert!(
        sandbox.contains("no command may trace the runner"),
        "{sandbox}"
    );
}

/// Without Landlock (simulated), with or without the supervisor, no
/// command gets into the runner's memory: the runner is not dumpable and
/// commands lack `CAP_SYS_PTRACE`, so opening `/proc/$PPID/mem` and a
/// `ptrace` attach are refused, as Landlock would refuse them. (The
/// attach is `PTRACE_SEIZE`, which does not stop the runner: were the
/// wall to fail, the test fails rather than hangs.)
#[test]
fn without_landlock_no_command_reaches_the_runners_memory() {
    let commands = [
        "python3 -c \"open('/proc/$PPID/mem', 'rb'); print('mem opened')\" 2>&1 | tail -1",
        "python3 -c \"import ctypes; c = ctypes.CDLL(None, use_errno=True); print('attach', c.ptrace(0x4206, $PPID, 0, 0), ctypes.get_errno())\"",
        "python3 -c \"print(next(l for l in open('/proc/self/status') if l.startswith('CapEff')))\"",
    ];
    for supervisor in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        task_with_commands(dir.path(), "", &commands);
        let mut cmd = runner();
        cmd.current_dir(dir.path())
            .env("HOME", dir.path().join("home"))
            .env("RUNNER_SIMULATE_NO_LANDLOCK", "1");
        if !supervisor {
            cmd.env("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
        }
        let out = cmd
            .args(["run", "-q", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let t = read_json(dir.path().join("out/t/transcript.json"));
        let sandbox = t["sandbox"].as_str().unwrap();
        assert!(
            sandbox.contains("no command may trace the runner"),
            "{sandbox}"
        );
        // No `network:` rules and no `network: false`: the network stays.
        assert!(!sandbox.contains("network off"), "{sandbox}");
        let r = results(&t);
        assert!(r[0].contains("PermissionError"), "{supervisor}: {}", r[0]);
        assert!(!r[0].contains("mem opened"), "{supervisor}: {}", r[0]);
        assert!(r[1].contains("attach -1 1"), "{supervisor}: {}", r[1]);
        let eff = r[2]
            .split("CapEff:")
            .nth(1)
            .unwrap_or_else(|| panic!("{supervisor}: {}", r[2]))
            .split_whitespace()
            .next()
            .unwrap();
        let eff = u64::from_str_radix(eff, 16).unwrap();
        assert_eq!(eff & (1 << 19), 0, "{supervisor}: {}", r[2]);
    }
}

/// Where Landlock has no scopes (ABI 5, simulated) and the kernel refuses
/// the supervisor (simulated), and where there is no Landlock at all
/// either: the runner's own signal wall (a fixed seccomp filter with its
/// numbers) still keeps every signal above from it, `kill -9 $PPID` and a
/// kill of its group included, so the run finishes with its outputs; the
/// transcript says which wall holds and that other signals outside the
/// task are not scoped.
#[test]
fn without_landlock_scopes_or_supervisor_the_runners_own_wall_keeps_signals_from_it() {
    let no_supervisor = ("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
    let sandbox =
        signals_cannot_reach_the_runner(&[("RUNNER_SIMULATE_LANDLOCK_ABI", "5"), no_supervisor]);
    assert!(sandbox.contains("ABI 5"), "{sandbox}");
    assert!(sandbox.contains("not scoped"), "{sandbox}");
    assert!(
        sandbox.contains("a process that leaves a command's group outlives it"),
        "{sandbox}"
    );
    assert!(
        sandbox.contains("no signal to the runner (a fixed seccomp filter"),
        "{sandbox}"
    );
    let sandbox =
        signals_cannot_reach_the_runner(&[("RUNNER_SIMULATE_NO_LANDLOCK", "1"), no_supervisor]);
    assert!(sandbox.contains("ran unsandboxed"), "{sandbox}");
    assert!(
        sandbox.contains("no signal to the runner (a fixed seccomp filter"),
        "{sandbox}"
    );
}

/// Commands that try to end or starve the runner without a signal: its
/// limits (`prlimit`: no descriptors left to write its outputs with, a
/// CPU second and then death), its scheduling (`renice`, `chrt --idle`,
/// `taskset`, `ionice`) and every process of a user at once
/// (`PRIO_USER`, of a user with no process: refused before the kernel
/// looks).
const STARVE_THE_RUNNER: &[&str] = &[
    "prlimit --pid $PPID --nofile=3:3; echo nofile=$?",
    "prlimit --pid $PPID --cpu=1:1; echo cpu=$?",
    "renice -n 19 -p $PPID; echo renice=$?",
    "chrt --idle -p 0 $PPID; echo chrt=$?",
    "taskset -p 1 $PPID; echo taskset=$?",
    "ionice -c 3 -p $PPID; echo ionice=$?",
    "python3 -c 'import os; os.setpriority(os.PRIO_USER, 54321, 19)'; echo renice_user=$?",
    "prlimit --nofile=64:64 sh -c 'ulimit -n'; echo own=$?",
];

/// Under every sandbox (Landlock and the supervisor, Landlock without
/// scopes or supervisor, the supervisor without Landlock, neither), no
/// command changes the runner's limits or scheduling: each call fails
/// with `EPERM`, the run finishes with its transcript and junit.xml, and
/// a command's own limit still applies to it. (Landlock does not scope
/// these calls, nor does the supervisor decide them: the runner's own
/// wall does.)
#[test]
fn no_command_changes_the_runners_limits_or_scheduling() {
    let no_supervisor = ("RUNNER_SIMULATE_NO_SUPERVISOR", "1");
    let no_landlock = ("RUNNER_SIMULATE_NO_LANDLOCK", "1");
    for env in [
        vec![],
        vec![("RUNNER_SIMULATE_LANDLOCK_ABI", "5"), no_supervisor],
        vec![no_landlock],
        vec![no_landlock, no_supervisor],
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        task_with_commands(dir.path(), "", STARVE_THE_RUNNER);
        let t = run_whole(dir.path(), &env);
        let sandbox = t["sandbox"].as_str().unwrap();
        assert!(
            sandbox.contains("the runner's limits and scheduling out of reach"),
            "{env:?}: {sandbox}"
        );
        let r = results(&t);
        assert_eq!(r.len(), STARVE_THE_RUNNER.len(), "{env:?}");
        for (i, word) in [
            "nofile=1",
            "cpu=1",
            "renice=1",
            "chrt=1",
            "taskset=1",
            "ionice=1",
            "renice_user=1",
        ]
        .iter()
        .enumerate()
        {
            assert!(r[i].contains(word), "{env:?}: {}", r[i]);
            assert!(
                r[i].contains("Operation not permitted") || r[i].contains("Permission denied"),
                "{env:?}: {}",
                r[i]
            );
        }
        assert!(
            r[7].contains("64") && r[7].contains("own=0"),
            "{env:?}: {}",
            r[7]
        );
    }
}

/// Where the supervisor runs, a command changes the limits and scheduling
/// of its own processes only: its child may be reniced, pinned and
/// re-limited; a process of the same user outside the task (here one the
/// test started) may not, and is left as it was.
#[test]
fn the_supervisor_keeps_limits_and_scheduling_changes_to_the_commands_own_processes() {
    // In a group of its own, so that a group change reaches only it.
    let mut outsider = std::process::Command::new("sleep");
    std::os::unix::process::CommandExt::process_group(&mut outsider, 0);
    let mut outsider = outsider.arg("60").spawn().unwrap();
    let o = outsider.id();
    let own = "sleep 30 & C=$!; G=$(awk '{print $5}' /proc/$$/stat); \
        renice -n 5 -p $C >/dev/null; echo child_renice=$?; \
        taskset -p 1 $C >/dev/null; echo child_taskset=$?; \
        prlimit --pid $C --nofile=64:64; echo child_prlimit=$?; \
        ionice -c 3 -p $C; echo child_ionice=$?; \
        renice -n 6 -g $G >/dev/null; echo group_renice=$?; \
        ionice -c 2 -n 7 -P $G; echo group_ionice=$?; kill $C"
        .to_string();
    let commands = [
        own,
        format!("renice -n 5 -p {o}; echo renice=$?"),
        format!("taskset -p 1 {o}; echo taskset=$?"),
        format!("prlimit --pid {o} --nofile=64:64; echo prlimit=$?"),
        format!("ionice -c 3 -p {o}; echo ionice=$?"),
        format!("chrt --batch -p 0 {o}; echo chrt=$?"),
        format!("renice -n 5 -g {o}; echo renice_group=$?"),
        format!("ionice -c 3 -P {o}; echo ionice_group=$?"),
    ];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    task_with_commands(dir.path(), "", &commands);
    let (out, t) = run(dir.path());
    let nice = std::fs::read_to_string(format!("/proc/{o}/stat")).unwrap();
    let _ = outsider.kill();
    let _ = outsider.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(sandbox.contains("runner's supervisor"), "{sandbox}");
    let r = results(&t);
    for word in [
        "child_renice=0",
        "child_taskset=0",
        "child_prlimit=0",
        "child_ionice=0",
        "group_renice=0",
        "group_ionice=0",
    ] {
        assert!(r[0].contains(word), "{}", r[0]);
    }
    for (i, word) in [
        "renice=1",
        "taskset=1",
        "prlimit=1",
        "ionice=1",
        "chrt=1",
        "renice_group=1",
        "ionice_group=1",
    ]
    .iter()
    .enumerate()
    {
        let r = &r[i + 1];
        assert!(r.contains(word), "{r}");
        assert!(r.contains("Operation not permitted"), "{r}");
    }
    // The outsider's nice value (the 19th field) is still 0.
    let after_name = nice.rsplit(')').next().unwrap();
    assert_eq!(after_name.split_whitespace().nth(16), Some("0"), "{nice}");
}

/// A fork bomb in a command stays bounded (issue 41): the task's commands
/// share a pids cgroup of at most `limits: {processes: N}`, so forks past
/// it fail, the command ends at its timeout, the runner kills its process
/// group and goes on, and the next command runs. Where this machine lets
/// the runner make no pids cgroup, the transcript says the bound is not
/// there, and the bomb is not set off (it would take the machine down).
#[test]
fn a_fork_bomb_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let probe = ["echo probe"];
    task_with_commands(dir.path(), "limits: {processes: 64}\n", &probe);
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap().to_string();
    if !sandbox.contains("processes: at most 64 (pids cgroup)") {
        assert!(sandbox.contains("processes: not bounded ("), "{sandbox}");
        eprintln!("no pids cgroup on this machine: {sandbox}");
        return;
    }
    let commands = FORK_BOMB;
    let _ = std::fs::remove_dir_all(dir.path().join("out"));
    task_with_commands(dir.path(), "limits: {processes: 64}\n", &commands);
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(dir.path().join("out/junit.xml").exists());
    let r = results(&t);
    assert_the_bomb_failed_to_fork(&r);
}
