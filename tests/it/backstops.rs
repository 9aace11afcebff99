//! The physical walls behind the policy's deny rules (issue 29): what the
//! policy denies reading is not in the agent's copy and cannot be read in
//! the original, whoever asks (a script the analysis cannot see into,
//! inline interpreter code, an MCP server, a hook), yet the checks see the
//! workspace as it is.

use std::path::Path;
use std::process::Command;

use crate::common::{git, read_json, run_task as run, runner, stderr, write};

/// A repository with a `.env` and a `secrets/key.txt` the policy denies
/// reading, both committed when `tracked`.
fn workspace(d: &Path, tracked: bool) -> std::path::PathBuf {
    let ws = d.join("ws");
    write(d, "ws/README.md", "readme\n");
    write(d, "ws/src/lib.rs", "// lib\n");
    let secrets = |d: &Path| {
        write(d, "ws/secrets/key.txt", "KEY-4711\n");
        write(d, "ws/.env", "TOKEN=SECRET-0815\n");
    };
    if tracked {
        secrets(d);
    }
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    secrets(d);
    ws.canonicalize().unwrap()
}

#[test]
fn read_denied_files_are_absent_for_the_agent_and_present_for_the_checks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ws = workspace(d, false);
    let orig = ws.display();
    // Every way of reading: through the copy, through the original's
    // absolute path, by shell and by inline Python.
    write(
        d,
        "ws/tools/r.sh",
        &format!(
            "exec > seen.txt 2>&1\ncat .env secrets/key.txt\npython3 -c \"print(open('.env').read())\"\ncat {orig}/.env {orig}/secrets/key.txt\npython3 -c \"print(open('{orig}/secrets/key.txt').read())\"\ngit status --porcelain\necho end\n"
        ),
    );
    let task = write(
        d,
        "t.yaml",
        &format!(
            r#"prompt: p
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Read(.env)", "Read(secrets/**)"]
hooks:
  post_tool:
    - match: ["Bash(grep:*)"]
      run: cat .env secrets/key.txt {orig}/.env > hook-seen.txt 2>&1; exit 0
mcp_servers:
  fs:
    command: node
    args: ["{}", "."]
    tools: [read_text_file]
checks:
  - run: grep -q SECRET-0815 .env && grep -q KEY-4711 secrets/key.txt
script:
  - tool_calls:
      - {{name: bash, args: {{command: grep -rn . .}}}}
  - tool_calls:
      - {{name: bash, args: {{command: bash tools/r.sh}}}}
      - {{name: fs__read_text_file, args: {{path: .env}}}}
  - text: done
"#,
            crate::mcp::fs_server().display()
        ),
    );
    let t = run(d, &task, &[], 0);
    let calls = t["tool_calls"].as_array().unwrap();
    // The recursive grep runs (the folder is allowed) and shows no line
    // of a hidden file.
    assert_eq!(calls[0]["status"], "ok", "{}", calls[0]);
    let grep = calls[0]["result"].as_str().unwrap_or_default().to_string() + &calls[0].to_string();
    assert!(grep.contains("README.md:1:readme"), "{grep}");
    assert!(
        !grep.contains("SECRET") && !grep.contains("KEY-4711"),
        "{grep}"
    );
    assert_eq!(calls[1]["status"], "ok", "{}", calls[1]);
    // The MCP server finds no such file.
    let mcp = calls[2].to_string();
    assert!(!mcp.contains("SECRET"), "{mcp}");
    assert!(
        mcp.contains("ENOENT") || mcp.contains("no such file"),
        "{mcp}"
    );
    // The checks saw both files.
    assert_eq!(t["checks"][0]["passed"], true, "{}", t["checks"]);
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("2 path(s) the policy denies reading left out of the copy")
            && sandbox.contains(&format!("{orig} unreadable")),
        "{sandbox}"
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        !diff.contains("SECRET") && !diff.contains("KEY-4711"),
        "{diff}"
    );
    // The diff holds what the script and the hook saw, and never the
    // hidden files themselves.
    assert!(
        diff.contains("+++ b/seen.txt") && diff.contains("+end"),
        "{diff}"
    );
    assert!(diff.contains("+++ b/hook-seen.txt"), "{diff}");
    assert!(
        !diff.contains("b/.env") && !diff.contains("b/secrets"),
        "{diff}"
    );
    // git in the copy has nothing to report.
    let seen = diff
        .split("+++ b/seen.txt")
        .nth(1)
        .unwrap()
        .split("diff --git")
        .next()
        .unwrap();
    assert!(seen.contains("+?? seen.txt"), "{seen}");
    assert!(
        !seen.lines().any(|l| l.starts_with("+ D")
            || (l.starts_with("+??") && (l.contains("secrets") || l.contains(".env")))),
        "{seen}"
    );
    assert!(
        t["violations"].as_array().is_none_or(|v| v.is_empty()),
        "{}",
        t["violations"]
    );
    // The original is as it was.
    assert_eq!(
        std::fs::read_to_string(ws.join(".env")).unwrap(),
        "TOKEN=SECRET-0815\n"
    );
}

/// A tracked file the policy denies reading is left out of the copy too,
/// and git there does not call it deleted. Its content was in the object
/// store the copy's git view read; now the view's history is cut to HEAD's
/// tree without it (issue 72), so the read backstop holds: a recursive
/// read and inline code run, and none of them, nor any object of the
/// copy's store, shows the file.
#[test]
fn a_tracked_read_denied_file_is_hidden_and_cut_from_the_copys_history() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    workspace(d, true);
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
sandbox: {network: false}
policy:
  default: allow
  rules:
    - deny: ["Read(.env)", "Read(secrets/**)"]
script:
  - tool_calls:
      - {name: bash, args: {command: git status --porcelain}}
      - {name: bash, args: {command: cat secrets/key.txt}}
      - {name: bash, args: {command: grep -rn --exclude-dir=.git . .}}
      - {name: bash, args: {command: "python3 -c 'print(1)'"}}
      - {name: bash, args: {command: "git cat-file --batch-all-objects --batch"}}
  - text: done
"#,
    );
    let t = run(d, &task, &[], 0);
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["status"], "ok", "{}", calls[0]);
    let status = calls[0]["content"].as_str().unwrap();
    assert!(
        !status.contains("secrets") && !status.contains(".env"),
        "{status}"
    );
    assert_eq!(calls[1]["status"], "denied", "{}", calls[1]);
    for c in &calls[2..] {
        assert_eq!(c["status"], "ok", "{c}");
        let text = c.to_string();
        assert!(
            !text.contains("SECRET-0815") && !text.contains("KEY-4711"),
            "{text}"
        );
    }
    assert_eq!(t["backstops"]["reads"], true, "{}", t["backstops"]);
}

/// With a backstop behind every deny rule, code the analysis cannot see
/// into runs under `default: allow`, and what it does to a path denied
/// editing is reverted on the result: absent from the diff and `--apply`,
/// a violation naming the rule, and the task fails.
#[test]
fn inline_code_runs_under_backstops_and_its_denied_writes_never_leave_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ws = workspace(d, false);
    write(d, "ws/.github/ci.yml", "original\n");
    write(
        d,
        "p.yaml",
        "default: allow\nrules:\n  - deny: [\"Edit(.github/**)\"]\n    reason: CI configuration is off limits\n",
    );
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
policy: p.yaml
script:
  - tool_calls:
      - {name: bash, args: {command: "python3 -c \"open('.github/ci.yml','w').write('owned'); open('ok.txt','w').write('fine')\""}}
      - {name: bash, args: {command: "git -c user.email=a@b -c user.name=n commit -qm wip --allow-empty && git log --format=%ae -1"}}
  - text: done
"#,
    );
    let t = run(d, &task, &["--apply"], 1);
    let calls = t["tool_calls"].as_array().unwrap();
    assert_eq!(calls[0]["status"], "ok", "{}", calls[0]);
    let reason = calls[0]["decision"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("every deny rule has a backstop"),
        "{reason}"
    );
    assert_eq!(calls[1]["status"], "ok", "{}", calls[1]);
    assert!(
        calls[1]["content"].as_str().unwrap().contains("a@b"),
        "{}",
        calls[1]
    );
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("deny Edit(.github/**)"), "{reason}");
    assert_eq!(
        t["violations"][0]["path"], ".github/ci.yml",
        "{}",
        t["violations"]
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(
        diff.contains("ok.txt") && !diff.contains(".github"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".github/ci.yml")).unwrap(),
        "original\n"
    );
    // Replayed, the calls are decided with the backstops the run held (and
    // the inline code would be refused without them).
    assert_eq!(t["backstops"]["confined"], true, "{}", t["backstops"]);
    let replay = |transcript: &str| {
        runner()
            .current_dir(d)
            .args(["replay", "--policy", "p.yaml", transcript])
            .output()
            .unwrap()
    };
    let o = replay("out/t/transcript.json");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let mut without = t.clone();
    without.as_object_mut().unwrap().remove("backstops");
    std::fs::write(d.join("without.json"), without.to_string()).unwrap();
    let o = replay("without.json");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let html = std::fs::read_to_string(d.join("out/report.html")).unwrap();
    assert!(
        html.contains("Changes dropped (1)")
            && html.contains("<code>.github/ci.yml</code> (modified)"),
        "{html}"
    );
}

/// A path denied to reading is denied to editing too: inline code that
/// writes it (here `.env`, absent from the copy, created anew) has its
/// change reverted, recorded as a violation of the read rule, and the task
/// fails. (Only `Edit` denies were tested here, and the read half of the
/// edit backstop could break unnoticed.)
#[test]
fn a_read_denied_path_written_by_inline_code_is_reverted_as_a_violation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ws = workspace(d, false);
    write(
        d,
        "p.yaml",
        "default: allow\nrules:\n  - deny: [\"Read(./.env)\"]\n    reason: secrets\n",
    );
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
policy: p.yaml
script:
  - tool_calls:
      - {name: bash, args: {command: "python3 -c \"open('.env','a').write('TOKEN=evil'); open('ok.txt','w').write('fine')\""}}
  - text: done
"#,
    );
    let t = run(d, &task, &["--apply"], 1);
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
    assert_eq!(t["violations"][0]["path"], ".env", "{}", t["violations"]);
    assert_eq!(t["violations"][0]["rule"], "deny Read(./.env)");
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(reason.contains("deny Read(./.env)"), "{reason}");
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(diff.contains("ok.txt") && !diff.contains("evil"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".env")).unwrap(),
        "TOKEN=SECRET-0815\n"
    );
}

/// `runner check --backstops` decides as a run holding them does; without
/// it, as a run holding none (never looser than a run).
#[test]
fn runner_check_decides_with_the_backstops_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "p.yaml",
        "default: deny\nrules:\n  - allow: [\"Bash(python3:*)\"]\n  - deny: [\"Read(.env)\"]\n",
    );
    let check = |extra: &[&str]| {
        runner()
            .current_dir(d)
            .args(["check", "--policy", "p.yaml"])
            .args(extra)
            .args([
                "bash",
                r#"{"command": "python3 -c 'import os; print(os.getcwd())'"}"#,
            ])
            .output()
            .unwrap()
    };
    let o = check(&[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = check(&["--backstops", "all"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(d["rule"], "allow Bash(python3:*)");
    assert_eq!(d["line"], 3);
    // Confined but the read deny without its backstop: the exact text again.
    let o = check(&["--backstops", "edits,confined"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("`deny Read(.env)` has no backstop"));
    let o = check(&["--backstops", "walls"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown backstop `walls`"),
        "{}",
        stderr(&o)
    );
}

/// A daemon at any path outside the task (here one that `DOCKER_HOST`
/// names) is unreachable: the supervisor decides every Unix-socket
/// connect, so the run keeps its backstops and inline code runs. A socket
/// a command makes inside its copy still works, by any path the command
/// would name it by (`/proc/self` is the command's, not the runner's); a
/// symlink in the copy to the daemon's socket does not, and is refused
/// itself when the agent stops (a link out of the workspace).
#[test]
fn a_daemon_socket_outside_the_task_is_unreachable_and_the_run_stays_confined() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let sock = d.join("elsewhere/docker.sock");
    std::fs::create_dir_all(sock.parent().unwrap()).unwrap();
    let daemon = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    daemon.set_nonblocking(true).unwrap();
    let connect = |path: &str| {
        format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('{path}'); print('connected')\""
        )
    };
    // A socket of the command's own, reached by a path that names it as
    // the command sees it: absolute, relative, through its own folder in
    // /proc, and through a descriptor of that folder.
    let own = |to: &str, says: &str| {
        format!(
            "mkdir -p sub && (cd sub && rm -f own.sock && python3 -c \"import socket, os; srv = socket.socket(socket.AF_UNIX); srv.bind('own.sock'); srv.listen(); c = socket.socket(socket.AF_UNIX); fd = os.open('.', os.O_RDONLY); c.connect({to}); print('{says} ok')\")"
        )
    };
    let inside = [
        own("os.path.abspath('own.sock')", "absolute"),
        own("'own.sock'", "relative"),
        own("'/proc/self/cwd/own.sock'", "cwd"),
        own("f'/dev/fd/{fd}/own.sock'", "fd"),
    ]
    .join(" && ");
    let commands = [
        connect(&sock.display().to_string()),
        format!(
            "ln -s {} link.sock && {}",
            sock.display(),
            connect("link.sock")
        ),
        inside,
        "curl -sS --unix-socket \"${DOCKER_HOST#unix://}\" http://x/_ping".to_string(),
    ];
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy: {{default: allow}}\nscript:\n{}  - text: done\n",
            crate::common::bash_turns(&commands.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    );
    let o = runner()
        .current_dir(d)
        .env("DOCKER_HOST", format!("unix://{}", sock.display()))
        .args(["run", "-q", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    // The link out of the workspace is itself refused at the end (issue
    // 72): reverted, and the task fails naming it.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(
        t["violations"][0]["path"], "link.sock",
        "{}",
        t["violations"]
    );
    let rule = t["violations"][0]["rule"].as_str().unwrap();
    assert!(rule.contains("outside the workspace"), "{rule}");
    assert_eq!(t["backstops"]["confined"], true, "{}", t["backstops"]);
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(sandbox.contains("supervisor"), "{sandbox}");
    let calls = t["tool_calls"].as_array().unwrap();
    let content = |i: usize| calls[i]["content"].as_str().unwrap().to_string();
    for i in [0, 1, 3] {
        // Decided allowed (inline code under backstops), refused by the
        // supervisor.
        assert_eq!(calls[i]["decision"]["decision"], "allow", "{}", calls[i]);
        assert!(!content(i).contains("connected"), "{}", content(i));
    }
    assert!(
        content(0).contains("Operation not permitted"),
        "{}",
        content(0)
    );
    assert!(
        content(1).contains("Operation not permitted"),
        "{}",
        content(1)
    );
    for says in ["absolute", "relative", "cwd", "fd"] {
        assert!(content(2).contains(&format!("{says} ok")), "{}", content(2));
    }
    // The daemon never saw a connection.
    assert!(daemon.accept().is_err());
    // Each refusal is in the task's connections (the command's own socket
    // is not: it was allowed).
    let refused: Vec<&serde_json::Value> = t["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["via"] == "sandbox")
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    for c in &refused {
        let host = c["host"].as_str().unwrap();
        assert!(
            host.ends_with("docker.sock") || host.ends_with("link.sock"),
            "{c}"
        );
        assert_eq!(c["port"], 0, "{c}");
        assert_eq!(c["allowed"], false, "{c}");
    }
}

/// Without the supervisor (simulated: seccomp user notification missing),
/// a reachable daemon socket (one `DOCKER_HOST` names) takes the backstops
/// away: inline code needs its exact text again, and the transcript says
/// why.
#[test]
fn without_the_supervisor_a_reachable_daemon_socket_leaves_the_analysis_in_charge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let sock = d.join("docker.sock");
    let _daemon = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let task = write(
        d,
        "t.yaml",
        r#"prompt: p
workspace: ws
policy: {default: allow}
script:
  - tool_calls:
      - {name: bash, args: {command: "python3 -c 'print(1)'"}}
  - text: done
"#,
    );
    let o = runner()
        .current_dir(d)
        .env("RUNNER_SIMULATE_NO_SUPERVISOR", "1")
        .env("DOCKER_HOST", format!("unix://{}", sock.display()))
        .args(["run", "-q", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    assert_eq!(
        t["tool_calls"][0]["status"], "denied",
        "{}",
        t["tool_calls"][0]
    );
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("a daemon that acts outside the sandbox")
            && sandbox.contains("docker.sock")
            && sandbox.contains("no supervisor"),
        "{sandbox}"
    );
    // The same task without the daemon runs the code.
    let o = runner()
        .current_dir(d)
        .env("RUNNER_SIMULATE_NO_SUPERVISOR", "1")
        .env_remove("DOCKER_HOST")
        .args(["run", "-q", "--out", "out2"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out2/t/transcript.json"));
    assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
}

/// A repository whose `origin` is a bare repository the sandbox lets
/// commands write (`sandbox: write:`), so that only the exec wall stands
/// between a push and the remote.
fn repo_with_writable_remote(d: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let ws = d.join("ws");
    let remote = d.join("remote.git");
    write(d, "ws/a.txt", "a\n");
    write(
        d,
        "ws/Makefile",
        "publish:\n\tgit push -q origin HEAD:refs/heads/pushed\n",
    );
    git(d, &["init", "-q", "--bare", "remote.git"]);
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "init"]);
    git(
        &ws,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    (ws.canonicalize().unwrap(), remote.canonicalize().unwrap())
}

/// Whether the remote got the branch the commands push.
fn pushed(remote: &Path) -> bool {
    Command::new("git")
        .args(["--git-dir"])
        .arg(remote)
        .args(["rev-parse", "--verify", "-q", "refs/heads/pushed"])
        .output()
        .unwrap()
        .status
        .success()
}

/// Ways to push that the gate cannot see into (each run under
/// `deny Bash(git push:*)` and, as a control, without it).
fn pushes() -> Vec<String> {
    let by_fd = |exec: &str| {
        format!(
            "python3 -c \"import os, shutil; fd = os.open(shutil.which('git'), os.O_RDONLY); {exec}\""
        )
    };
    vec![
        "python3 -c \"import subprocess; subprocess.run(['git', 'push', '-q', 'origin', 'HEAD:refs/heads/pushed'], check=True)\"".into(),
        "make -s publish".into(),
        "cp \"$(command -v git)\" \"$TMPDIR/mygit\" && \"$TMPDIR/mygit\" push -q origin HEAD:refs/heads/pushed".into(),
        // git by a descriptor, under another argv[0]: through `/proc/self`
        // and `/dev/fd` (which the supervisor must read as the process's,
        // not its own), and by `fexecve` (`execveat` with `AT_EMPTY_PATH`).
        by_fd("os.execv('/proc/self/fd/%d' % fd, ['x', 'push', '-q', 'origin', 'HEAD:refs/heads/pushed'])"),
        by_fd("os.execv('/dev/fd/%d' % fd, ['x', 'push', '-q', 'origin', 'HEAD:refs/heads/pushed'])"),
        by_fd("os.execve(fd, ['x', 'push', '-q', 'origin', 'HEAD:refs/heads/pushed'], dict(os.environ))"),
        // `execveat(folder, "git", AT_EMPTY_PATH)`: the flag means nothing
        // with a path, so git in that folder runs.
        execveat_git_push("os.open(os.path.dirname(git), os.O_RDONLY)", "b'git'", "0x1000"),
    ]
}

/// `execveat(DIRFD, PATH, argv, envp, FLAGS)` of a git push by
/// `syscall(2)` (Python has no call for it), with `argv[0]` `x` and the
/// three given as Python expressions (`git` is git's path); prints the
/// errno when the call returns.
fn execveat_git_push(dirfd: &str, path: &str, flags: &str) -> String {
    format!(
        "python3 -c \"import ctypes, os, shutil, platform; libc = ctypes.CDLL(None, use_errno=True); git = shutil.which('git'); a = [b'x', b'push', b'-q', b'origin', b'HEAD:refs/heads/pushed']; argv = (ctypes.c_char_p * 6)(*a, None); env = [('%s=%s' % kv).encode() for kv in os.environ.items()]; envp = (ctypes.c_char_p * (len(env) + 1))(*env, None); nr = {{'x86_64': 322, 'aarch64': 281}}[platform.machine()]; libc.syscall(nr, {dirfd}, {path}, argv, envp, {flags}); print('execveat errno', ctypes.get_errno())\""
    )
}

fn push_task(d: &Path, remote: &Path, policy: &str, command: &str) -> std::path::PathBuf {
    write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy:\n{policy}sandbox: {{write: [\"{}\"]}}\nscript:\n{}  - text: done\n",
            remote.display(),
            crate::common::bash_turns(&[command])
        ),
    )
}

/// `deny Bash(git push:*)` holds whatever starts git: inline Python, a
/// Makefile recipe, a copy of the git binary under another name. Each call
/// runs (the gate cannot see the push in them), the push never lands, and
/// the call's record names the rule. Without the deny rule, the same
/// commands push (the control: only the exec wall stood in the way).
#[test]
fn a_program_deny_rule_holds_behind_inline_code_make_and_a_copied_binary() {
    let deny = "  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\n      reason: no pushing\n";
    for command in &pushes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (_, remote) = repo_with_writable_remote(d);
        let task = push_task(d, &remote, deny, command);
        let t = run(d, &task, &[], 0);
        let call = &t["tool_calls"][0];
        assert_eq!(call["decision"]["decision"], "allow", "{command}: {call}");
        assert!(!pushed(&remote), "{command}: the push landed");
        let refusal = &call["metadata"]["sandbox_refusals"][0];
        assert_eq!(
            refusal["rule"], "deny Bash(git push:*)",
            "{command}: {call}"
        );
        assert!(
            refusal["argv"].to_string().contains("push"),
            "{command}: {refusal}"
        );
        let content = call["content"].as_str().unwrap();
        assert!(
            content.contains("refused by the sandbox") && content.contains("deny Bash(git push:*)"),
            "{command}: {content}"
        );
        assert_eq!(t["counts"]["denied_calls"], 1, "{command}");
        assert_eq!(t["backstops"]["exec"], true, "{}", t["backstops"]);
        // fail_on_denial applies as to any denial.
        let strict = std::fs::read_to_string(&task)
            .unwrap()
            .replace("prompt: p\n", "prompt: p\nfail_on_denial: true\n");
        std::fs::write(&task, strict).unwrap();
        let t = run(d, &task, &[], 1);
        assert!(
            t["outcome"]["reason"]
                .as_str()
                .unwrap()
                .contains("fail_on_denial"),
            "{}",
            t["outcome"]
        );
    }
    // The control: no deny rule, and each command pushes.
    for command in &pushes() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (_, remote) = repo_with_writable_remote(d);
        let task = push_task(d, &remote, "  default: allow\n", command);
        // fail_on_denial fails a task only for a denial: here there is none.
        let strict = std::fs::read_to_string(&task)
            .unwrap()
            .replace("prompt: p\n", "prompt: p\nfail_on_denial: true\n");
        std::fs::write(&task, strict).unwrap();
        let t = run(d, &task, &[], 0);
        assert_eq!(t["tool_calls"][0]["status"], "ok", "{}", t["tool_calls"][0]);
        assert_eq!(t["counts"]["denied_calls"], 0, "{command}");
        assert!(pushed(&remote), "{command}: the control did not push");
    }
}

/// Inline code runs under program deny rules: under `default: allow`,
/// and under `default: deny` with the program's allow rule. The
/// supervisor decides execs only for deny rules with no wall of their
/// own: `sudo` has `no_new_privs`, `curl` and `git push` under `network:
/// false` no network; with only those, execs cost nothing.
#[test]
fn inline_code_runs_under_program_deny_rules() {
    for (settings, policy, decided) in [
        (
            "",
            "  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\", \"Bash(curl:*)\", \"Bash(rm -rf /:*)\"]\n",
            true,
        ),
        (
            "",
            "  default: deny\n  rules:\n    - allow: [\"Bash(python3:*)\"]\n    - deny: [\"Bash(git push:*)\"]\n",
            true,
        ),
        (
            "sandbox: {network: false}\n",
            "  default: allow\n  rules:\n    - deny: [\"Bash(sudo:*)\", \"Bash(curl:*)\", \"Bash(git push:*)\"]\n",
            false,
        ),
        (
            "sandbox: {network: false}\n",
            "  default: allow\n  rules:\n    - deny: [\"Bash(sudo:*)\", \"Bash(curl:*)\", \"Bash(make:*)\"]\n",
            true,
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "ws/a.txt", "a\n");
        let task = write(
            d,
            "t.yaml",
            &format!(
                "prompt: p\nworkspace: ws\n{settings}policy:\n{policy}script:\n{}  - text: done\n",
                crate::common::bash_turns(&["python3 -c 'print(6*7)'"])
            ),
        );
        let t = run(d, &task, &[], 0);
        let call = &t["tool_calls"][0];
        assert_eq!(call["status"], "ok", "{policy}: {call}");
        assert!(call["content"].as_str().unwrap().contains("42"), "{call}");
        let sandbox = t["sandbox"].as_str().unwrap();
        assert_eq!(
            sandbox.contains("execs decided against the policy's program denies"),
            decided,
            "{policy}: {sandbox}"
        );
        assert_eq!(t["backstops"]["exec"], decided, "{}", t["backstops"]);
    }
}

/// Without the supervisor (simulated), program deny rules have no wall:
/// inline code is refused as before, and the transcript says why.
#[test]
fn without_the_supervisor_inline_code_under_a_program_deny_stays_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\nscript:\n{}  - text: done\n",
            crate::common::bash_turns(&["python3 -c 'print(6*7)'"])
        ),
    );
    let o = runner()
        .current_dir(d)
        .env("RUNNER_SIMULATE_NO_SUPERVISOR", "1")
        .args(["run", "-q", "--out", "out"])
        .arg(&task)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = read_json(d.join("out/t/transcript.json"));
    let call = &t["tool_calls"][0];
    assert_eq!(call["status"], "denied", "{call}");
    let reason = call["decision"]["reason"].as_str().unwrap();
    assert!(reason.contains("deny Bash(git push:*)"), "{reason}");
    assert_eq!(t["backstops"]["exec"], false, "{}", t["backstops"]);
    assert!(
        t["sandbox"].as_str().unwrap().contains("no supervisor"),
        "{}",
        t["sandbox"]
    );
}

/// What the supervisor answers for a call it lets through or makes is
/// what the kernel would have: a stale socket in the copy refuses, an
/// address too short for its family is invalid, `AF_UNSPEC` (which
/// dissolves an association) succeeds, and an exec with an empty path
/// finds no file though its descriptor is a denied program's.
#[test]
fn the_supervisor_answers_as_the_kernel_would() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    let commands: [&str; 3] = [
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.bind('stale.sock'); s.close(); c = socket.socket(socket.AF_UNIX)\ntry:\n    c.connect('stale.sock'); print('stale connected')\nexcept OSError as e:\n    print('stale refused', e.errno)\"",
        "python3 -c \"import ctypes, socket; libc = ctypes.CDLL(None, use_errno=True); s = socket.socket(); b = ctypes.create_string_buffer(16); r = libc.connect(s.fileno(), b, 1); print('short', r, ctypes.get_errno()); r = libc.connect(s.fileno(), b, 2); print('unspec', r)\"",
        // A descriptor of git and an empty path without `AT_EMPTY_PATH`:
        // no such file (ENOENT), not a refusal.
        &execveat_git_push("os.open(git, os.O_RDONLY)", "b''", "0"),
    ];
    let task = write(
        d,
        "t.yaml",
        &format!(
            "prompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Bash(git push:*)\"]\nscript:\n{}  - text: done\n",
            crate::common::bash_turns(&commands)
        ),
    );
    let t = run(d, &task, &[], 0);
    assert!(
        t["sandbox"].as_str().unwrap().contains("supervisor"),
        "{}",
        t["sandbox"]
    );
    let calls = t["tool_calls"].as_array().unwrap();
    let content = |i: usize| calls[i]["content"].as_str().unwrap().to_string();
    assert!(content(0).contains("stale refused 111"), "{}", content(0));
    assert!(content(1).contains("short -1 22"), "{}", content(1));
    assert!(content(1).contains("unspec 0"), "{}", content(1));
    assert!(content(2).contains("execveat errno 2"), "{}", content(2));
}

/// A folder the policy denies reading is revealed to the checks as the
/// original has it, and removed again after them: nothing of it reaches
/// the diff, though the checks wrote into it too.
#[test]
fn a_hidden_folder_is_revealed_to_the_checks_and_removed_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "ws/a.txt", "a\n");
    write(d, "ws/secrets/key.txt", "KEY-4711\n");
    write(d, "ws/secrets/sub/b.txt", "B-0815\n");
    let task = write(
        d,
        "t.yaml",
        "prompt: p\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - deny: [\"Read(secrets)\"]\nchecks:\n  - run: grep -q KEY-4711 secrets/key.txt && grep -q B-0815 secrets/sub/b.txt && echo more > secrets/sub/c.txt\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: echo x > a.txt}}\n  - text: done\n",
    );
    let t = run(d, &task, &[], 0);
    assert_eq!(t["checks"][0]["passed"], true, "{}", t["checks"]);
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("1 path(s) the policy denies reading left out of the copy"),
        "{sandbox}"
    );
    let diff = std::fs::read_to_string(d.join("out/t/changes.diff")).unwrap();
    assert!(diff.contains("+++ b/a.txt"), "{diff}");
    assert!(!diff.contains("secrets"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(d.join("ws/secrets/sub/b.txt")).unwrap(),
        "B-0815\n"
    );
}
