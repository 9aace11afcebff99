//! What a sandboxed command may not do to the machine (issue 71): it
//! holds no capabilities (a root runner's commands held every one), it
//! cannot build a world the walls cannot see into (chroot, mounts,
//! namespaces), no datagram Unix socket opens, and each call the sandbox
//! refuses with nothing to decide is recorded on the call, with the
//! command that made it.

use std::os::unix::net::UnixDatagram;

use crate::common::write;
use crate::exec_wall::{run_passing_with, without_supervisor};

/// Whether the test runs as root (whose commands would hold capabilities).
fn root() -> bool {
    // SAFETY: a plain system call.
    unsafe { libc::geteuid() == 0 }
}

/// One task's bash calls in `d/ws` under the default sandbox plus
/// `sandbox`; its transcript.
fn run(d: &std::path::Path, sandbox: &str, commands: &[&str]) -> serde_json::Value {
    write(d, "ws/a.txt", "a\n");
    let settings = format!("max_turns: 20\nworkspace: ws\npolicy:\n  default: allow\n{sandbox}");
    run_passing_with(d, &settings, commands, &[])
}

/// The refused calls recorded on call `i`, as `call` strings.
fn refused(t: &serde_json::Value, i: usize) -> Vec<String> {
    t["tool_calls"][i]["metadata"]["refused_calls"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| r["call"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn content(t: &serde_json::Value, i: usize) -> String {
    t["tool_calls"][i]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn commands_hold_no_capabilities_and_cannot_chroot_mount_or_unshare() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = run(
        d,
        "",
        &[
            "python3 -c \"print(open('/proc/self/status').read())\"",
            "python3 -c \"import os; os.chroot('.')\"",
            "ip addr add 127.0.0.77/8 dev lo",
            "unshare -r true",
            "python3 -c \"import ctypes; c = ctypes.CDLL(None, use_errno=True); print('mount', c.mount(b'none', b'.', b'tmpfs', 0, None), ctypes.get_errno())\"",
        ],
    );
    // Every set is empty, root or not.
    let caps = content(&t, 0);
    let lines: Vec<&str> = caps.lines().filter(|l| l.starts_with("Cap")).collect();
    assert_eq!(lines.len(), 5, "{caps}");
    for l in lines {
        assert!(l.ends_with("0000000000000000"), "{l}");
    }
    if without_supervisor(&t) {
        return;
    }
    assert!(
        content(&t, 1).contains("PermissionError"),
        "{}",
        content(&t, 1)
    );
    assert_eq!(refused(&t, 1), ["chroot"]);
    // ip's netlink request is refused by the kernel: no CAP_NET_ADMIN.
    assert!(
        content(&t, 2).contains("Operation not permitted"),
        "{}",
        content(&t, 2)
    );
    let lo = std::process::Command::new("ip")
        .args(["addr", "show", "dev", "lo"])
        .output()
        .unwrap();
    let lo = String::from_utf8_lossy(&lo.stdout);
    if lo.contains("127.0.0.77") {
        // Today's code as root: put the machine back, then fail.
        let _ = std::process::Command::new("ip")
            .args(["addr", "del", "127.0.0.77/8", "dev", "lo"])
            .status();
        panic!("a command added an address to the host's lo");
    }
    assert_eq!(refused(&t, 3), ["unshare (a new namespace)"]);
    assert!(content(&t, 4).contains(&format!("mount -1 {}", libc::EPERM)));
    assert_eq!(refused(&t, 4), ["mount"]);
    // Each counts as a denied call, and the model read which call.
    assert!(
        t["counts"]["denied_calls"].as_u64() >= Some(3),
        "{}",
        t["counts"]
    );
    // The summary and the report list them with the denials.
    for page in ["out/summary.md", "out/report.html"] {
        let text = std::fs::read_to_string(d.join(page)).unwrap();
        assert!(
            text.contains("Refused by the sandbox (") && text.contains("chroot by"),
            "{page}"
        );
    }
    let said = content(&t, 1);
    assert!(
        said.contains("refused by the sandbox: chroot by `")
            && said.contains("python3 -c import os"),
        "{said}"
    );
}

/// A task may keep a named capability, with its reason: as root its
/// commands then hold that one, and the transcript says so.
#[test]
fn a_task_keeps_a_named_capability_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = run(
        d,
        "sandbox: {capabilities: [{name: CAP_NET_ADMIN, reason: the tests add an address to lo}]}\n",
        &["python3 -c \"print(open('/proc/self/status').read())\""],
    );
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("no capabilities but NET_ADMIN (the tests add an address to lo)"),
        "{sandbox}"
    );
    let want = if root() {
        "0000000000001000"
    } else {
        "0000000000000000"
    };
    assert!(content(&t, 0).contains(want), "{}", content(&t, 0));
}

/// A capability that does not exist, or one the walls need dropped, or a
/// keep without a reason: the task file is refused, naming it.
#[test]
fn a_capability_the_walls_need_or_without_a_reason_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (caps, says) in [
        (
            "[{name: NET_ADMN, reason: x}]",
            "unknown capability `NET_ADMN` (did you mean",
        ),
        (
            "[{name: SYS_PTRACE, reason: x}]",
            "`SYS_PTRACE` cannot be kept",
        ),
        (
            "[{name: NET_ADMIN, reason: \"\"}]",
            "`NET_ADMIN` needs a reason",
        ),
        ("[{name: NET_ADMIN}]", "`NET_ADMIN` needs a reason"),
    ] {
        let task = write(
            d,
            "t.yaml",
            &format!("prompt: p\nsandbox: {{capabilities: {caps}}}\nscript:\n  - text: done\n"),
        );
        let o = crate::common::runner()
            .arg("validate")
            .arg(&task)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{caps}: {err}");
        assert!(
            err.contains(says) && err.contains("t.yaml:2:"),
            "{caps}: {err}"
        );
    }
}

/// No datagram Unix socket opens, from `socket` (`SOCK_RAW` is made one
/// by the kernel) or `socketpair`, so none sends to a listener outside
/// the task; streams still work, and io_uring and a foreign ABI's calls
/// are refused, each refusal recorded.
#[test]
fn no_datagram_reaches_a_listener_outside_and_silent_refusals_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = d.join("outside.sock");
    let listener = UnixDatagram::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let send = |how: &str| {
        format!(
            "python3 -c \"import socket; s = {how}; s.sendto(b'leak', '{}'); print('SENT-OK')\"",
            path.display()
        )
    };
    let pair = send("socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0]");
    let raw = send("socket.socket(socket.AF_UNIX, socket.SOCK_RAW)");
    let stream = "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'x'); print('stream', b.recv(1))\"";
    let uring = "python3 -c \"import ctypes; c = ctypes.CDLL(None, use_errno=True); print('uring', c.syscall(425, 1, ctypes.create_string_buffer(128)), ctypes.get_errno())\"";
    let t = run(d, "", &[&pair, &raw, stream, uring]);
    let mut buf = [0u8; 16];
    assert!(
        listener.recv(&mut buf).is_err(),
        "a datagram reached the listener"
    );
    for i in 0..2 {
        // (The record quotes the command line, its print among it.)
        assert!(!content(&t, i).contains("\nSENT-OK"), "{}", content(&t, i));
        assert!(
            content(&t, i).contains("PermissionError"),
            "{}",
            content(&t, i)
        );
    }
    assert!(content(&t, 2).contains("stream b'x'"), "{}", content(&t, 2));
    assert!(
        content(&t, 3).contains(&format!("uring -1 {}", libc::EPERM)),
        "{}",
        content(&t, 3)
    );
    if without_supervisor(&t) {
        return;
    }
    assert_eq!(refused(&t, 0), ["socketpair(AF_UNIX, SOCK_DGRAM)"]);
    assert_eq!(refused(&t, 1), ["socket(AF_UNIX, SOCK_RAW)"]);
    assert!(refused(&t, 2).is_empty());
    assert_eq!(refused(&t, 3).len(), 1);
    assert!(refused(&t, 3)[0].starts_with("io_uring_setup"));
}

/// A foreign ABI's call (i386's `int 0x80`) is refused and recorded.
#[test]
fn a_foreign_abis_call_is_refused_and_recorded() {
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let src = write(
        d,
        "i386.c",
        "#include <stdio.h>\nint main(void) {\n    long r;\n    /* getpid (20) through i386's gate */\n    __asm__ volatile (\"int $0x80\" : \"=a\"(r) : \"a\"(20L) : \"memory\");\n    printf(\"i386 %ld\\n\", r);\n    return 0;\n}\n",
    );
    std::fs::create_dir_all(d.join("ws")).unwrap();
    crate::common::compile_c(&src, &d.join("ws/i386"), &[]);
    let t = run(d, "", &["./i386"]);
    assert!(
        content(&t, 0).contains(&format!("i386 -{}", libc::EPERM)),
        "{}",
        content(&t, 0)
    );
    if without_supervisor(&t) {
        return;
    }
    let got = refused(&t, 0);
    assert!(
        got.len() == 1 && got[0].starts_with("a system call of a foreign ABI"),
        "{got:?}"
    );
}
