//! Each way to send a signal, as the supervisor decides it where Landlock
//! cannot scope signals (ABI 5, simulated): what a command may signal (its
//! own processes: itself, its siblings, a group or session of its own,
//! every one of them with `kill(-1)`) reaches them, sent by the runner or
//! let through to the kernel; what it may not (the runner) fails with
//! `EPERM`, whichever call names it. `containment.rs` holds the attacks
//! on the runner under both mechanisms; these are the shapes of each call.

use crate::common::{bash_turns, read_json, runner, stderr, write};

/// (command, what its output must hold).
const CASES: &[(&str, &str)] = &[
    // Signal 0 only asks whether a process exists: let through.
    ("kill -0 $PPID; echo probe=$?", "probe=0"),
    (
        "python3 -c \"import ctypes; c=ctypes.CDLL(None, use_errno=True); print('tg0', c.tgkill($PPID, $PPID, 0))\"",
        "tg0 0",
    ),
    // tkill, named by the runner's thread: refused (SIGWINCH: were it
    // let through, the runner would ignore it and the test still tell).
    (
        "python3 -c \"import ctypes, platform; c=ctypes.CDLL(None, use_errno=True); nr={'x86_64': 200, 'aarch64': 130}[platform.machine()]; print('tkill', c.syscall(nr, $PPID, 28), ctypes.get_errno())\"",
        "tkill -1 1",
    ),
    // The caller's own group: it gets the signal itself (after the
    // answer).
    (
        "python3 -c \"import os, signal, time; got=[]; signal.signal(signal.SIGUSR1, lambda *a: got.append(1)); r=os.kill(0, signal.SIGUSR1); time.sleep(0.2); print('group0', r, len(got))\"",
        "group0 None 1",
    ),
    // Every process it may signal (`kill(-1)`): its sibling dies, the
    // caller and the shell (which traps it) go on. Sent only once a
    // signal to the runner is seen refused: were the wall down (a broken
    // build, a mutant), `kill(-1)` from root would reach every process
    // on the machine; the row then fails on `unguarded` instead.
    (
        "kill -WINCH $PPID 2>/dev/null && { echo unguarded; exit 0; }; trap 'true' USR1; sleep 30 & S=$!; python3 -c \"import os, signal; os.kill(-1, signal.SIGUSR1); print('all-sent')\"; sleep 0.3; kill -0 $S 2>/dev/null; echo sibling_alive=$?",
        "all-sent\nsibling_alive=1",
    ),
    // A process group of its own, by `killpg`: that group only (a sibling
    // outside it lives on).
    (
        "sleep 30 & S=$!; python3 -c \"import os, signal, subprocess; p=subprocess.Popen(['sleep', '30'], start_new_session=True); os.killpg(p.pid, signal.SIGTERM); print('pg', p.wait())\"; kill -0 $S; echo other_alive=$?; kill $S",
        "pg -15\nother_alive=0",
    ),
    // A pidfd of a sibling, and of its own process (which gets the
    // signal after the answer).
    (
        "sleep 30 & S=$!; python3 -c \"import os, signal; signal.pidfd_send_signal(os.pidfd_open($S), signal.SIGTERM); print('pidfd-sent')\"; wait $S; echo pidfd_sibling=$?",
        "pidfd-sent\npidfd_sibling=143",
    ),
    (
        "python3 -c \"import os, signal, time; got=[]; signal.signal(signal.SIGUSR1, lambda *a: got.append(1)); signal.pidfd_send_signal(os.pidfd_open(os.getpid()), signal.SIGUSR1); time.sleep(0.2); print('pidfd-own', len(got))\"",
        "pidfd-own 1",
    ),
    // SIGIO's owner: a sibling (then none again), or a group of its own
    // (every member the command's).
    (
        "sleep 30 & S=$!; python3 -c \"import fcntl, os; r, w = os.pipe(); print('owner', fcntl.fcntl(r, fcntl.F_SETOWN, $S), fcntl.fcntl(r, fcntl.F_SETOWN, 0))\"; kill $S",
        "owner 0 0",
    ),
    (
        "python3 -c \"import fcntl, os, subprocess; p=subprocess.Popen(['sleep', '30'], start_new_session=True); r, w = os.pipe(); print('owner-group', fcntl.fcntl(r, fcntl.F_SETOWN, -p.pid)); p.kill()\"",
        "owner-group 0",
    ),
    // A group with no process at all: refused as one outside the command.
    (
        "python3 -c \"import ctypes, os; c=ctypes.CDLL(None, use_errno=True); r, w = os.pipe(); print('owner-none', c.fcntl(r, 8, -4000000), ctypes.get_errno())\"",
        "owner-none -1 1",
    ),
    // `kill(-1)` with no other process of its own to reach: `ESRCH`.
    (
        "kill -WINCH $PPID 2>/dev/null && { echo unguarded; exit 0; }; exec python3 -c \"import ctypes; c=ctypes.CDLL(None, use_errno=True); print('alone', c.kill(-1, 10), ctypes.get_errno())\"",
        "alone -1 3",
    ),
    // sigqueue to a sibling: sent by the runner.
    (
        "sleep 30 & S=$!; python3 -c \"import ctypes; c=ctypes.CDLL(None, use_errno=True); print('queued', c.sigqueue($S, 15, None))\"; wait $S; echo sibling=$?",
        "queued 0\nsibling=143",
    ),
    // sigqueue to another thread's number of its own process: refused
    // (by the process's number only).
    (
        "python3 -c \"import ctypes, threading, time; c=ctypes.CDLL(None, use_errno=True); t=threading.Thread(target=time.sleep, args=(0.5,)); t.start(); print('own-queue', c.sigqueue(t.native_id, 10, None), ctypes.get_errno())\"",
        "own-queue -1 1",
    ),
];

#[test]
fn the_supervisor_decides_each_way_to_signal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    std::fs::create_dir_all(d.join("home")).unwrap();
    let commands: Vec<&str> = CASES.iter().map(|(c, _)| *c).collect();
    write(
        d,
        "task.yaml",
        &format!(
            "name: t\nprompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\"]\nscript:\n{}",
            bash_turns(&commands)
        ),
    );
    // A process group of its own: were a wall to fail, a signal to the
    // runner's group would not reach the test harness.
    let mut cmd = runner();
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let out = cmd
        .current_dir(d)
        .env("CI", "true")
        .env("HOME", d.join("home"))
        .env("RUNNER_SIMULATE_LANDLOCK_ABI", "5")
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(d.join("out/t/transcript.json"));
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(sandbox.contains("runner's supervisor"), "{sandbox}");
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), CASES.len());
    let mut wrong = Vec::new();
    for ((command, want), call) in CASES.iter().zip(calls) {
        let got = call["content"].as_str().unwrap_or_default();
        if !got.contains(want) {
            wrong.push(format!("{command}\n  wanted {want:?}\n  got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
