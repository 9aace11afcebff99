//! MCP servers as tool sources, with real server processes: the reference
//! filesystem server from npm (installed by .ci/run under
//! target/mcp-servers) and a small server on the Python `mcp` package
//! (tests/fixtures/mcp_test_server.py).

use std::path::{Path, PathBuf};

use crate::common::{read_json, repo, runner, stderr, validate_refuses, write};
use serde_json::Value;

/// The filesystem server's entry point.
pub(crate) fn fs_server() -> PathBuf {
    let p = repo().join(
        "target/mcp-servers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
    );
    assert!(
        p.exists(),
        "{} is missing: run .ci/run, or npm install --prefix target/mcp-servers @modelcontextprotocol/server-filesystem",
        p.display()
    );
    p
}

fn test_server() -> PathBuf {
    repo().join("tests/fixtures/mcp_test_server.py")
}

/// A task whose server `t` is the Python test server (started with
/// `marker` in its arguments), with a policy and one scripted call per turn.
fn task_with_test_server(dir: &Path, marker: &str, policy: &str, server: &str, calls: &[&str]) {
    write(dir, "ws/a.txt", "a\n");
    let turns: String = calls
        .iter()
        .map(|c| format!("  - tool_calls:\n      - {c}\n"))
        .collect();
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy: {policy}\nmcp_servers:\n  t:\n    command: python3\n    args: [\"{}\", \"{marker}\"]\n{server}script:\n{turns}",
            test_server().display()
        ),
    );
}

fn run(dir: &Path) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .env("OPENAI_API_KEY", "sk-runner-test-key-not-for-servers")
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn calls(t: &Value) -> Vec<(String, String, String)> {
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["tool"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_filesystem_server_under_allow_and_deny_rules() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "alpha from the workspace\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: use the filesystem server
workspace: ws
policy:
  default: deny
  rules:
    - allow: ["Mcp(fs/read_text_file)", "Mcp(fs/list_directory)"]
    - deny: ["Mcp(fs/write_file)"]
      reason: the server may not write
mcp_servers:
  fs:
    command: node
    args: ["{}", "."]
    tools: [read_text_file, list_directory, write_file]
script:
  - tool_calls:
      - {{name: fs__read_text_file, args: {{path: a.txt}}}}
      - {{name: fs__list_directory, args: {{path: .}}}}
  - tool_calls:
      - {{name: fs__write_file, args: {{path: b.txt, content: written}}}}
  - tool_calls:
      - {{name: fs__create_directory, args: {{path: newdir}}}}
"#,
            fs_server().display()
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let c = calls(&t);
    assert_eq!(c[0].1, "ok", "{c:?}");
    assert!(c[0].2.contains("alpha from the workspace"), "{c:?}");
    assert_eq!(c[1].1, "ok");
    assert!(c[1].2.contains("a.txt"), "{c:?}");
    // Denied by the Mcp rule, before the server is asked.
    assert_eq!(c[2].1, "denied", "{c:?}");
    assert!(c[2].2.contains("the server may not write"), "{c:?}");
    let d = &t["tool_calls"][2]["decision"];
    assert_eq!(
        d["signatures"][0],
        serde_json::json!({"family": "Mcp", "specifier": "fs/write_file"}),
        "{d}"
    );
    // Left off the allowlist: never registered.
    assert_eq!(c[3].1, "error");
    assert!(
        c[3].2.contains("unknown tool `fs__create_directory`"),
        "{c:?}"
    );
    assert!(!dir.path().join("ws/b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/t/changes.diff")).unwrap(),
        ""
    );
    // The server's whole result is kept in the transcript.
    assert!(t["tool_calls"][0]["metadata"]["content"].is_array());
}

#[test]
fn runner_tools_lists_a_tasks_mcp_tools() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "prompt: x\nworkspace: ws\nmcp_servers:\n  fs:\n    command: node\n    args: [\"{}\", \".\"]\n    tools: [read_text_file]\nscript: []\n",
            fs_server().display()
        ),
    );
    let out = runner()
        .current_dir(dir.path())
        .args(["tools", "--task", "task.yaml", "--format", "gemini"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let decls: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = decls[0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file") && names.contains(&"fs__read_text_file"));
    assert!(!names.contains(&"fs__write_file"));
    // Gemini's dialect: no JSON Schema keywords it rejects.
    let text = out.stdout.iter().map(|&b| b as char).collect::<String>();
    assert!(!text.contains("$schema") && !text.contains("additionalProperties"));
}

#[test]
fn a_server_command_that_does_not_exist() {
    for required in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        write(
            dir.path(),
            "task.yaml",
            &format!(
                "name: t\nprompt: x\nworkspace: ws\nmcp_servers:\n  ghost:\n    command: no-such-mcp-server-xyz\n    required: {required}\nscript:\n  - tool_calls:\n      - {{name: ls, args: {{}}}}\n"
            ),
        );
        let (out, t) = run(dir.path());
        let status = t["outcome"]["status"].as_str().unwrap();
        if required {
            assert_eq!(out.status.code(), Some(1));
            assert_eq!(status, "error");
            let reason = t["outcome"]["reason"].as_str().unwrap();
            assert!(
                reason.contains("`ghost`") && reason.contains("no-such-mcp-server-xyz"),
                "{reason}"
            );
        } else {
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(status, "passed");
            let w = t["warnings"][0].as_str().unwrap();
            assert!(w.contains("`ghost`") && w.contains("skipped"), "{w}");
            assert_eq!(t["tool_calls"][0]["status"], "ok");
        }
    }
}

fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .filter(|c| String::from_utf8_lossy(c).contains(marker))
        .count()
}

#[test]
fn a_server_that_exits_mid_run_turns_its_calls_into_errors() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("runner-mcp-marker-{}", std::process::id());
    task_with_test_server(
        dir.path(),
        &marker,
        r#"{default: deny, rules: [{allow: ["Mcp(t/*)"]}]}"#,
        "    env: {GREETING: hello}\n",
        &[
            "{name: t__echo, args: {text: hi there}}",
            "{name: t__env_names, args: {}}",
            "{name: t__crash, args: {}}",
            "{name: t__echo, args: {text: still there?}}",
            "{name: ls, args: {}}",
        ],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let c = calls(&t);
    assert_eq!((c[0].1.as_str(), c[0].2.as_str()), ("ok", "hi there"));
    // The server's environment: the safe set and its own env, no keys.
    let names: Vec<&str> = c[1].2.lines().collect();
    assert!(
        names.contains(&"PATH") && names.contains(&"GREETING"),
        "{names:?}"
    );
    assert!(
        !names.contains(&"OPENAI_API_KEY") && !names.contains(&"CI"),
        "{names:?}"
    );
    assert_eq!(c[2].1, "error", "{c:?}");
    assert_eq!(c[3].1, "error", "{c:?}");
    assert!(c[3].2.contains("MCP server `t`"), "{c:?}");
    // The run went on.
    assert_eq!(c[4].1, "ok");
    assert_eq!(t["outcome"]["status"], "passed");
    // Its stderr went to the task's log, not to ours.
    let log = std::fs::read_to_string(dir.path().join("out/t/mcp-t.log")).unwrap();
    assert!(log.contains("testserver starting"), "{log}");
    assert!(!stderr(&out).contains("testserver starting"));
    // The server's process group is gone with it.
    assert_eq!(
        processes_with(&marker),
        0,
        "a server process outlived the task"
    );
}

#[test]
fn the_process_group_of_a_healthy_server_is_stopped_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("runner-mcp-healthy-{}", std::process::id());
    task_with_test_server(
        dir.path(),
        &marker,
        "{default: allow}",
        "",
        &["{name: t__echo, args: {text: one}}"],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t["tool_calls"][0]["content"], "one");
    assert_eq!(
        processes_with(&marker),
        0,
        "a server process outlived the task"
    );
}

#[test]
fn plan_mode_starts_no_server() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    // Required and impossible to start: a plan task never tries.
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: x\nworkspace: ws\nmode: plan\nmcp_servers:\n  ghost:\n    command: no-such-mcp-server-xyz\nscript:\n  - tool_calls:\n      - {name: ls, args: {}}\n",
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let w = t["warnings"][0].as_str().unwrap();
    assert!(w.contains("plan mode") && w.contains("not started"), "{w}");
    assert!(!dir.path().join("out/t/mcp-ghost.log").exists());
}

#[test]
fn a_large_result_is_spilled_as_for_built_in_tools() {
    let dir = tempfile::tempdir().unwrap();
    task_with_test_server(
        dir.path(),
        "runner-mcp-big",
        "{default: allow}",
        "",
        &["{name: t__big, args: {lines: 5000}}"],
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let content = t["tool_calls"][0]["content"].as_str().unwrap();
    assert!(content.contains("saved in full"), "{content}");
    let spilled = std::fs::read_dir(dir.path().join("out/t/tool-results"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(spilled).unwrap();
    assert!(text.contains("line 4999 of a long result"));
}

/// A stdio server is confined as commands are: it cannot write outside the
/// workspace copy (it can with `sandbox: off`), and `network: false` takes
/// its internet sockets away. The transcript says what was enforced.
#[test]
fn servers_are_confined_like_commands() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    let run_with = |sandbox: &str| {
        let dir = tempfile::tempdir().unwrap();
        task_with_test_server(
            dir.path(),
            "confined",
            "{default: allow}",
            sandbox,
            &[
                &format!(
                    "{{name: t__write_to, args: {{path: \"{}\"}}}}",
                    target.display()
                ),
                "{name: t__write_to, args: {path: inside.txt}}",
                "{name: t__inet_socket, args: {}}",
            ],
        );
        let (out, t) = run(dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        let c = calls(&t);
        (c, t["mcp_sandbox"]["t"].as_str().unwrap_or("").to_string())
    };
    let (c, note) = run_with("    sandbox: {network: false}\n");
    if note.contains("landlock") {
        assert!(c[0].2.contains("refused"), "{:?}", c[0]);
        assert!(!target.exists(), "the server wrote outside the workspace");
        assert!(c[1].2.contains("written"), "{:?}", c[1]);
        assert!(c[2].2.contains("refused"), "{:?}", c[2]);
        assert!(note.contains("network off"), "{note}");
    } else {
        panic!("no Landlock on this machine: {note}");
    }
    let (c, note) = run_with("    sandbox: off\n");
    assert_eq!(note, "off");
    assert!(c[0].2.contains("written"), "{:?}", c[0]);
    assert!(target.exists());
    assert!(c[2].2.contains("inet ok"), "{:?}", c[2]);
}

/// A remote server (streamable HTTP on 127.0.0.1) that demands a bearer
/// token, started for one test and stopped when it ends.
pub(crate) struct RemoteServer {
    child: std::process::Child,
    pub(crate) url: String,
}

impl RemoteServer {
    pub(crate) fn start(token: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("python3")
            .arg(repo().join("tests/fixtures/mcp_http_server.py"))
            .arg(port.to_string())
            .arg(token)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the remote server did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for RemoteServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a task against a remote server with `token` in the environment as
/// MCP_AUTH (a name the redactor would not guess).
fn run_remote(server: &RemoteServer, token: &str) -> (tempfile::TempDir, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: x
workspace: ws
policy:
  default: deny
  rules:
    - allow: ["Mcp(remote/echo)"]
    - deny: ["Mcp(remote/secret_tool)"]
      reason: not this one
mcp_servers:
  remote:
    url: {}
    headers: {{Authorization: "Bearer ${{MCP_AUTH}}"}}
script:
  - tool_calls:
      - {{name: remote__echo, args: {{text: hello from afar}}}}
      - {{name: remote__secret_tool, args: {{}}}}
  - text: done
"#,
            server.url
        ),
    );
    let out = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .env("MCP_AUTH", token)
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    (dir, out)
}

#[test]
fn a_remote_server_with_a_bearer_token() {
    let token = "remote-token-5c1d2e3f";
    let server = RemoteServer::start(token);
    let (dir, out) = run_remote(&server, token);
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    let c = calls(&t);
    assert_eq!(
        (c[0].1.as_str(), c[0].2.contains("hello from afar")),
        ("ok", true),
        "{:?}",
        c[0]
    );
    assert_eq!(c[1].1, "denied", "{:?}", c[1]);
    assert!(c[1].2.contains("not this one"), "{:?}", c[1]);
    assert_eq!(t["mcp_sandbox"]["remote"], "remote");
    // The token appears in no output.
    for f in ["out/t/transcript.json", "out/junit.xml", "out/summary.md"] {
        let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
        assert!(!text.contains(token), "the token leaked into {f}");
    }
    assert!(!stderr(&out).contains(token));

    // A wrong token: the required server cannot start, and the task says why.
    let (dir, out) = run_remote(&server, "wrong-token-0000000");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/t/transcript.json"));
    let reason = t["outcome"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("remote") && reason.contains("401"),
        "{reason}"
    );
    // It says what to check, in plain words: the header and its variable.
    assert!(
        reason.contains("`Authorization` from $MCP_AUTH"),
        "{reason}"
    );
    assert!(!reason.contains("::"), "a type path in: {reason}");
    assert!(!reason.contains("wrong-token-0000000"), "{reason}");
    assert!(!stderr(&out).contains("::"), "{}", stderr(&out));
}

#[test]
fn a_server_is_a_command_or_a_url_never_both() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        "prompt: x\nworkspace: ws\nmcp_servers:\n  both:\n    command: python3\n    url: http://127.0.0.1:1/mcp\n  neither:\n    required: true\n  remote:\n    url: ftp://example.com\n    sandbox: off\n",
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    for want in [
        "mcp_servers.both: give `command:`",
        "mcp_servers.neither: give `command:`",
        "mcp_servers.remote: url `ftp://example.com` is not an http(s) address",
        "mcp_servers.remote: args, env, cwd and sandbox are for a server over stdio",
    ] {
        assert!(err.contains(want), "no `{want}` in\n{err}");
    }
    assert!(err.contains("task.yaml:"), "{err}");
}
