//! The web by domain (issue 34): `web_fetch` under `Fetch(...)` rules, and
//! commands and MCP servers under `network:` rules through the runner's
//! proxy. A local HTTP server answers under several names, which the
//! runner's resolver maps to 127.0.0.1 (`RUNNER_TEST_HOSTS`, test builds).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::common::{read_json, runner, stderr, write};
use serde_json::Value;

const HOSTS: &str = "docs.test=127.0.0.1,evil.test=127.0.0.1";

/// A small HTTP/1.1 server: a page, a large body, redirects, and the files
/// of `root` (a bare git repository, served as git's dumb protocol reads
/// it). It records the `Host` and path of every request it gets.
struct Web {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Web {
    fn start(root: PathBuf) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, log) = (root.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &root, port, &log));
            }
        });
        Self { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// Whether any request named `host`.
    fn asked(&self, host: &str) -> bool {
        self.seen().iter().any(|s| s.starts_with(host))
    }
}

fn serve(mut s: std::net::TcpStream, root: &Path, port: u16, log: &Mutex<Vec<String>>) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut first = String::new();
    if r.read_line(&mut first).is_err() {
        return;
    }
    let mut host = String::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
            break;
        }
        if let Some(v) = l.to_ascii_lowercase().strip_prefix("host:") {
            host = v.trim().to_string();
        }
    }
    let path = first.split(' ').nth(1).unwrap_or("/").to_string();
    log.lock().unwrap().push(format!("{host}{path}"));
    let (status, ctype, body): (&str, &str, Vec<u8>) = match path.split('?').next().unwrap() {
        "/page.html" => (
            "200 OK",
            "text/html; charset=utf-8",
            b"<html><body><h1>Tokio docs</h1><p>Read <a href=\"/guide\">the guide</a>.</p><script>var x = 1;</script></body></html>".to_vec(),
        ),
        "/big" => ("200 OK", "text/plain", vec![b'x'; 3 * 1024 * 1024]),
        "/to-evil" => {
            let loc = format!("http://evil.test:{port}/page.html");
            let msg = format!("HTTP/1.1 302 Found\r\nLocation: {loc}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = s.write_all(msg.as_bytes());
            return;
        }
        p => match std::fs::read(root.join(p.trim_start_matches('/'))) {
            Ok(b) if p.ends_with(".json") => ("200 OK", "application/json", b),
            Ok(b) => ("200 OK", "application/octet-stream", b),
            Err(_) => ("404 Not Found", "text/plain", b"not found".to_vec()),
        },
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(&body);
    let _ = s.flush();
    // What came after the request is logged too: a request pipelined
    // behind it that a proxy let through undecided.
    let mut rest = Vec::new();
    let _ = r.read_to_end(&mut rest);
    for l in String::from_utf8_lossy(&rest).lines() {
        if let Some(v) = l.to_ascii_lowercase().strip_prefix("host:") {
            log.lock()
                .unwrap()
                .push(format!("{} (pipelined)", v.trim()));
        }
    }
}

fn run(dir: &Path) -> (std::process::Output, Value) {
    run_with(dir, &[])
}

/// [`run`] with `env` set.
fn run_with(dir: &Path, env: &[(&str, &str)]) -> (std::process::Output, Value) {
    let out = runner()
        .current_dir(dir)
        .env("CI", "true")
        .env("RUNNER_TEST_HOSTS", HOSTS)
        .envs(env.iter().copied())
        .args(["run", "--format", "json", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.join("out/t/transcript.json"));
    (out, t)
}

fn results(t: &Value) -> Vec<(String, String)> {
    t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["status"].as_str().unwrap().to_string(),
                c["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Each call's status, content and metadata, in the order of `urls`
/// (calls of a turn run in parallel and finish in any order).
fn by_url(t: &Value, urls: &[String]) -> Vec<(String, String, Value)> {
    let calls = t["tool_calls"].as_array().unwrap();
    urls.iter()
        .map(|u| {
            let c = calls
                .iter()
                .find(|c| c["arguments"]["url"] == *u)
                .unwrap_or_else(|| panic!("no call of {u}"));
            (
                c["status"].as_str().unwrap().to_string(),
                c["content"].as_str().unwrap().to_string(),
                c["metadata"].clone(),
            )
        })
        .collect()
}

fn fetches(urls: &[String]) -> String {
    urls.iter()
        .map(|u| {
            format!(
                "      - {{name: web_fetch, args: {{url: {}}}}}\n",
                serde_json::to_string(u).unwrap()
            )
        })
        .collect()
}

#[test]
fn web_fetch_is_decided_by_domain_on_every_hop_and_on_the_real_host() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let p = web.port;
    let urls = [
        format!("http://docs.test:{p}/page.html"),
        format!("http://evil.test:{p}/page.html"),
        format!("http://docs.test:{p}/to-evil"),
        format!("http://evil.test@docs.test:{p}/page.html"),
        format!("http://%65vil.test:{p}/page.html"),
        format!("http://docs.test:{p}/big"),
    ];
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: read\nworkspace: ws\ntools: [web_fetch]\npolicy:\n  rules:\n    - allow: [\"Fetch(docs.test)\", \"Fetch(127.0.0.1)\"]\n    - deny: [\"Fetch(evil.test)\"]\n      reason: not a documentation site\nscript:\n  - tool_calls:\n{}  - text: done\n",
            fetches(&urls)
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = by_url(&t, &urls);
    // Allowed: the page as text, without its script.
    assert_eq!(r[0].0, "ok", "{r:?}");
    assert!(
        r[0].1.contains("Tokio docs") && r[0].1.contains("the guide"),
        "{}",
        r[0].1
    );
    assert!(
        !r[0].1.contains("<h1>") && !r[0].1.contains("var x"),
        "{}",
        r[0].1
    );
    // Denied by the gate, with the rule's reason.
    assert_eq!(r[1].0, "denied", "{r:?}");
    assert!(r[1].1.contains("not a documentation site"), "{}", r[1].1);
    // A redirect to a denied host is refused at that hop.
    assert_eq!(r[2].0, "error", "{r:?}");
    assert!(
        r[2].1.contains("evil.test") && r[2].1.contains("refused"),
        "{}",
        r[2].1
    );
    // User information is refused; an encoded host is the host it decodes to.
    assert_eq!(r[3].0, "error", "{r:?}");
    assert!(r[3].1.contains("user information"), "{}", r[3].1);
    assert_eq!(r[4].0, "denied", "{r:?}");
    // Over the size limit: cut, with a note.
    assert_eq!(r[5].0, "ok", "{r:?}");
    assert_eq!(r[5].2["cut"], true, "{:?}", r[5].2);
    let spilled = r[5].2["spilled_to"]
        .as_str()
        .expect("a large result is spilled");
    let big = std::fs::read_to_string(spilled).unwrap();
    assert!(
        big.contains("was cut at 2 MB"),
        "{}",
        &big[big.len().saturating_sub(300)..]
    );
    // evil.test was never asked for anything.
    assert!(!web.asked("evil.test"), "{:?}", web.seen());
    // Every hop is evidence: the redirect's refusal names its rule.
    let conns = t["connections"].as_array().unwrap();
    let refused: Vec<&Value> = conns.iter().filter(|c| c["allowed"] == false).collect();
    assert_eq!(refused.len(), 1, "{conns:?}");
    assert_eq!(refused[0]["host"], "evil.test");
    assert_eq!(refused[0]["rule"], "deny Fetch(evil.test)");
    assert_eq!(refused[0]["via"], "web_fetch");
    assert_eq!(t["counts"]["denied_connections"], 1);
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(summary.contains("Connections refused (1)"), "{summary}");
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("denied_connections\" value=\"1\""),
        "{junit}"
    );
    let html = std::fs::read_to_string(dir.path().join("out/report.html")).unwrap();
    assert!(html.contains("Connections refused (1)"), "report.html");
}

#[test]
fn a_name_that_resolves_to_a_private_address_needs_a_rule_naming_the_address() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let urls = [
        format!("http://docs.test:{}/page.html", web.port),
        format!("http://127.0.0.1:{}/page.html", web.port),
    ];
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: read\nworkspace: ws\ntools: [web_fetch]\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Fetch(*)\"]\nscript:\n  - tool_calls:\n{}  - text: done\n",
            fetches(&urls)
        ),
    );
    let (_, t) = run(dir.path());
    let r = by_url(&t, &urls);
    assert_eq!(r[0].0, "error", "{r:?}");
    assert!(r[0].1.contains("private address"), "{}", r[0].1);
    assert_eq!(r[1].0, "denied", "{r:?}");
    assert!(web.seen().is_empty(), "{:?}", web.seen());
}

/// Commands under `network:`: curl, Python's urllib and git reach an
/// allowed host through the proxy and not a denied one, and a direct
/// connection that ignores the proxy variables fails.
#[test]
fn commands_reach_allowed_hosts_through_the_proxy_only() {
    if std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_err()
    {
        panic!("curl is needed (apt install curl)");
    }
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    // A bare repository git can list over its dumb HTTP protocol.
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let git = |args: &[&str], cwd: &Path| {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    git(&["init", "-q", "--bare", "repo.git"], &served);
    git(&["--git-dir", "repo.git", "update-server-info"], &served);
    let web = Web::start(served);
    let p = web.port;
    let commands = [
        format!("curl -fsS http://docs.test:{p}/page.html"),
        format!("curl -fsS http://evil.test:{p}/page.html"),
        format!(
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://docs.test:{p}/page.html').read()[:60])\""
        ),
        format!(
            "python3 -c \"import urllib.request; urllib.request.urlopen('http://evil.test:{p}/page.html')\""
        ),
        format!("git ls-remote http://docs.test:{p}/repo.git && echo listed"),
        format!("git ls-remote http://evil.test:{p}/repo.git"),
        format!("curl -sS --noproxy '*' http://127.0.0.1:{p}/page.html"),
        format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {p}))\""),
        // A tunnel (CONNECT), as HTTPS takes.
        format!("curl -fsS --proxytunnel http://docs.test:{p}/page.html"),
        format!("curl -fsS --proxytunnel http://evil.test:{p}/page.html"),
    ];
    let exact: Vec<String> = commands
        .iter()
        .map(|c| serde_json::to_string(&format!("Bash({c})")).unwrap())
        .collect();
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: run\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\", {}]\n  network:\n    allow: [\"docs.test:{p}\", \"127.0.0.1\"]\n    deny: [evil.test]\nscript:\n{}  - text: done\n",
            exact.join(", "),
            crate::common::bash_turns(&commands.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    // CI logs say what was refused, a line each.
    assert!(
        stderr(&out).contains(&format!(
            "[t] proxy connection refused: evil.test:{p} (deny evil.test)"
        )),
        "{}",
        stderr(&out)
    );
    let r = results(&t);
    assert_eq!(r.len(), commands.len(), "{}", t["outcome"]);
    let ok = |i: usize| r[i].0 == "ok";
    assert!(
        ok(0) && r[0].1.contains("Tokio docs"),
        "curl allowed: {:?}",
        r[0]
    );
    assert!(!ok(1) && r[1].1.contains("403"), "curl denied: {:?}", r[1]);
    assert!(
        ok(2) && r[2].1.contains("Tokio docs"),
        "urllib allowed: {:?}",
        r[2]
    );
    assert!(
        !ok(3) && r[3].1.contains("403"),
        "urllib denied: {:?}",
        r[3]
    );
    assert!(
        ok(4) && r[4].1.contains("listed"),
        "git allowed: {:?}",
        r[4]
    );
    assert!(!ok(5), "git denied: {:?}", r[5]);
    // Around the proxy: refused by the sandbox, whatever the rules say.
    assert!(!ok(6), "direct curl: {:?}", r[6]);
    assert!(
        !ok(7) && r[7].1.contains("Operation not permitted"),
        "direct socket: {:?}",
        r[7]
    );
    assert!(
        ok(8) && r[8].1.contains("Tokio docs"),
        "CONNECT allowed: {:?}",
        r[8]
    );
    assert!(
        !ok(9) && r[9].1.contains("403"),
        "CONNECT denied: {:?}",
        r[9]
    );
    assert!(!web.asked("evil.test"), "{:?}", web.seen());
    // Each decision is an event of the stream too.
    let events: Vec<Value> = crate::common::events(&out)
        .into_iter()
        .filter(|e| e["event"] == "connection")
        .collect();
    assert!(
        events.iter().any(|e| e["host"] == "evil.test"
            && e["allowed"] == false
            && e["rule"] == "deny evil.test"),
        "{events:?}"
    );
    let conns = t["connections"].as_array().unwrap();
    assert_eq!(events.len(), conns.len());
    let denied = conns.iter().filter(|c| c["allowed"] == false).count();
    assert!(denied >= 3, "{conns:?}");
    let allowed = conns
        .iter()
        .find(|c| c["allowed"] == true && c["via"] == "proxy")
        .expect("an allowed connection");
    assert_eq!(allowed["rule"], format!("allow docs.test:{p}"));
    assert!(allowed["bytes_received"].as_u64().unwrap() > 0, "{allowed}");
    assert!(
        t["sandbox"].as_str().unwrap().contains("runner's proxy"),
        "{}",
        t["sandbox"]
    );
}

/// Where nothing can confine connections by address (no supervisor, and
/// no Landlock or one without network rules), network rules mean no
/// network, and the transcript says so. With `network: false` they mean no network too,
/// and the transcript blames no kernel; with `sandbox: off`, no network.
#[test]
fn without_landlock_network_rules_mean_no_network() {
    for (env, settings, says) in [
        (
            &[
                ("RUNNER_SIMULATE_NO_LANDLOCK", "1"),
                ("RUNNER_SIMULATE_NO_SUPERVISOR", "1"),
            ][..],
            "",
            "cannot be enforced without Landlock or the runner's supervisor",
        ),
        (
            &[
                ("RUNNER_SIMULATE_LANDLOCK_ABI", "3"),
                ("RUNNER_SIMULATE_NO_SUPERVISOR", "1"),
            ],
            "",
            "need Landlock network rules (ABI 4) or the runner's supervisor, and this kernel has ABI 3 and no supervisor",
        ),
        // `network: false` holds without Landlock and the supervisor too.
        (
            &[
                ("RUNNER_SIMULATE_NO_LANDLOCK", "1"),
                ("RUNNER_SIMULATE_NO_SUPERVISOR", "1"),
            ],
            "sandbox: {network: false}\n",
            "unsandboxed (best-effort)",
        ),
        (
            &[],
            "sandbox: {network: false}\n",
            "network off (seccomp); ",
        ),
        // With nothing else to confine (no limit, no process bound), the
        // network switch alone.
        (
            &[],
            "sandbox: off\n",
            "cannot be enforced with sandbox: off",
        ),
    ] {
        no_network_where(env, settings, says);
    }
}

fn no_network_where(env: &[(&str, &str)], settings: &str, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let cmd = format!("curl -sS http://docs.test:{}/page.html", web.port);
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: run\nworkspace: ws\n{settings}policy:\n  default: allow\n  rules:\n    - allow: [\"Bash(*)\"]\n  network:\n    allow: [\"docs.test:{}\"]\nscript:\n{}  - text: done\n",
            web.port,
            crate::common::bash_turns(&[&cmd])
        ),
    );
    let out = runner()
        .current_dir(dir.path())
        .env("CI", "true")
        .env("RUNNER_TEST_HOSTS", HOSTS)
        .envs(env.iter().copied())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    let t = read_json(dir.path().join("out/t/transcript.json"));
    assert!(out.status.success(), "{}", stderr(&out));
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("network off") && sandbox.contains(says),
        "{sandbox}"
    );
    assert_eq!(results(&t)[0].0, "error", "{:?}", results(&t));
    assert!(web.seen().is_empty(), "{:?}", web.seen());
}

/// An MCP stdio server under `network:`: through the proxy to an allowed
/// host, not to a denied one, and not around it.
#[test]
fn an_mcp_stdio_server_goes_through_the_same_proxy() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let p = web.port;
    let server = crate::common::repo().join("tests/fixtures/mcp_test_server.py");
    let calls = [
        format!("{{name: t__fetch, args: {{url: 'http://docs.test:{p}/page.html'}}}}"),
        format!("{{name: t__fetch, args: {{url: 'http://evil.test:{p}/page.html'}}}}"),
        format!("{{name: t__connect, args: {{host: '127.0.0.1', port: {p}}}}}"),
    ];
    let turns: String = calls
        .iter()
        .map(|c| format!("  - tool_calls:\n      - {c}\n"))
        .collect();
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\n  network:\n    allow: [\"docs.test:{p}\", 127.0.0.1]\nmcp_servers:\n  t:\n    command: python3\n    args: [\"{}\"]\nscript:\n{turns}  - text: done\n",
            server.display()
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = results(&t);
    let content = |name: &str| {
        r.iter()
            .zip(t["tool_calls"].as_array().unwrap())
            .find(|(_, c)| c["arguments"].to_string().contains(name))
            .map(|((_, text), _)| text.clone())
            .unwrap()
    };
    assert!(content("docs.test").contains("Tokio docs"), "{r:?}");
    assert!(content("evil.test").contains("403"), "{r:?}");
    assert!(content("127.0.0.1").contains("failed"), "{r:?}");
    assert!(!web.asked("evil.test"), "{:?}", web.seen());
    assert!(
        t["mcp_sandbox"]["t"]
            .as_str()
            .unwrap()
            .contains("runner's proxy"),
        "{}",
        t["mcp_sandbox"]
    );
}

/// A remote MCP server is decided by the same `network:` rules before the
/// runner connects to it.
#[test]
fn a_remote_mcp_server_is_decided_by_the_network_rules() {
    let server = crate::mcp::RemoteServer::start("tok");
    let port = server
        .url
        .split(':')
        .nth(2)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    // Which rule decided is checked, not only the verdict: a host rule that
    // allows, a host rule that denies an address the allow rule names, and
    // an address that no entry names.
    let allow_port = format!("allow 127.0.0.1:{port}");
    for (network, reached, rule) in [
        ("allow: [\"docs.test\"]".to_string(), false, None),
        (
            format!("allow: [\"127.0.0.1:{port}\"]"),
            true,
            Some(allow_port.as_str()),
        ),
        (
            format!("allow: [\"127.0.0.1:{port}\"]\n    deny: [\"127.0.0.1\"]"),
            false,
            Some("deny 127.0.0.1"),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "ws/a.txt", "a\n");
        write(
            dir.path(),
            "task.yaml",
            &format!(
                "name: t\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\n  network:\n    {network}\nmcp_servers:\n  remote:\n    url: {}\n    headers: {{Authorization: \"Bearer tok\"}}\nscript:\n  - text: done\n",
                server.url
            ),
        );
        let (out, t) = run(dir.path());
        let conns = t["connections"].as_array().unwrap();
        assert_eq!(conns.len(), 1, "{conns:?}");
        assert_eq!(conns[0]["via"], "mcp");
        assert_eq!(conns[0]["allowed"], reached, "{conns:?}");
        match rule {
            Some(rule) => assert_eq!(conns[0]["rule"], rule, "{conns:?}"),
            None => {
                assert!(conns[0]["rule"].is_null(), "{conns:?}");
                let reason = conns[0]["reason"].as_str().unwrap_or("");
                assert!(
                    reason.contains(&format!(
                        "no network entry of task.yaml (inline policy) allows 127.0.0.1:{port}"
                    )),
                    "{conns:?}"
                );
            }
        }
        if reached {
            assert!(out.status.success(), "{}", stderr(&out));
        } else {
            assert!(
                t["outcome"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("was refused"),
                "{}",
                t["outcome"]
            );
        }
    }
}

/// Hooks and checks run with the commands' proxy and sandbox: they reach
/// the allowed host and not the denied one.
#[test]
fn hooks_and_checks_go_through_the_same_proxy() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let p = web.port;
    let fetch = |host: &str| {
        format!("curl -sS -o /dev/null -w '{host} %{{http_code}};' http://{host}:{p}/page.html")
    };
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: p
workspace: ws
policy:
  default: allow
  network:
    allow: ["docs.test:{p}", 127.0.0.1]
    deny: [evil.test]
hooks:
  post_tool:
    - match: ["Read"]
      run: {}
checks:
  - run: curl -fsS http://docs.test:{p}/page.html | grep -q Tokio && ! curl -fsS http://evil.test:{p}/page.html
script:
  - tool_calls:
      - {{name: ls, args: {{}}}}
  - text: done
"#,
            serde_json::to_string(&format!("{}; {}", fetch("docs.test"), fetch("evil.test")))
                .unwrap()
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let content = t["tool_calls"][0]["content"].as_str().unwrap();
    assert!(
        content.contains("docs.test 200;") && content.contains("evil.test 403;"),
        "{}",
        t["tool_calls"][0]
    );
    assert_eq!(t["checks"][0]["passed"], true, "{}", t["checks"]);
    assert!(!web.asked("evil.test"), "{:?}", web.seen());
}

/// A deny entry naming an address holds for every name that resolves to
/// it: the name is allowed, the address it leads to is not.
#[test]
fn a_name_is_no_way_around_a_denied_address() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let p = web.port;
    let url = format!("http://docs.test:{p}/page.html");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: t
prompt: p
workspace: ws
tools: [bash, web_fetch]
policy:
  default: allow
  rules:
    - allow: ["Bash(*)", "Fetch(docs.test)", "Fetch(127.0.0.0/8)"]
    - deny: ["Fetch(127.0.0.1)"]
  network:
    allow: ["docs.test:{p}", 127.0.0.0/8]
    deny: [127.0.0.1]
script:
  - tool_calls:
      - {{name: bash, args: {{command: "curl -fsS {url}"}}}}
      - {{name: web_fetch, args: {{url: "{url}"}}}}
  - text: done
"#
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let calls = t["tool_calls"].as_array().unwrap();
    let of = |tool: &str| calls.iter().find(|c| c["tool"] == tool).unwrap();
    assert_ne!(of("bash")["status"], "ok", "{}", of("bash"));
    assert!(of("bash")["content"].as_str().unwrap().contains("403"));
    let fetched = of("web_fetch");
    assert_ne!(fetched["status"], "ok", "{fetched}");
    assert!(
        fetched["content"]
            .as_str()
            .unwrap()
            .contains("denied by `Fetch(127.0.0.1)`"),
        "{fetched}"
    );
    assert!(web.seen().is_empty(), "{:?}", web.seen());
    let proxy = t["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["via"] == "proxy")
        .unwrap();
    assert_eq!(proxy["allowed"], false);
    assert!(
        proxy["reason"]
            .as_str()
            .unwrap()
            .contains("denied by `127.0.0.1`"),
        "{proxy}"
    );
}

/// JSON comes back as it is, and HEAD gives the status and headers only.
#[test]
fn web_fetch_returns_json_as_it_is_and_head_without_a_body() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "ws/data.json",
        "{\"crate\": \"tokio\", \"version\": \"1.48\"}",
    );
    let web = Web::start(dir.path().join("ws"));
    let urls = [
        format!("http://docs.test:{}/data.json", web.port),
        format!("http://docs.test:{}/page.html", web.port),
    ];
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: read\nworkspace: ws\ntools: [web_fetch]\npolicy:\n  rules:\n    - allow: [\"Fetch(docs.test)\", \"Fetch(127.0.0.1)\"]\nscript:\n  - tool_calls:\n      - {{name: web_fetch, args: {{url: {}}}}}\n      - {{name: web_fetch, args: {{url: {}, method: HEAD}}}}\n  - text: done\n",
            serde_json::to_string(&urls[0]).unwrap(),
            serde_json::to_string(&urls[1]).unwrap()
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = by_url(&t, &urls);
    assert!(
        r[0].1
            .contains("{\"crate\": \"tokio\", \"version\": \"1.48\"}"),
        "{}",
        r[0].1
    );
    assert!(
        r[1].1.contains("Status: 200 OK") && r[1].1.contains("content-length:"),
        "{}",
        r[1].1
    );
    assert!(!r[1].1.contains("Tokio docs"), "{}", r[1].1);
    assert_eq!(web.seen().len(), 2);
}

/// The proxy is reached by address and port, not by port alone: a command
/// that listens on another loopback address at the proxy's port and
/// connects there is refused by the supervisor (Landlock's TCP rule alone
/// let it through), while the proxy itself still takes the allowed host.
/// Whether Landlock has network rules (ABI 4+), has none (ABI 3,
/// simulated) or is missing (simulated, `best-effort`), the supervisor
/// alone holds connections to the proxy's address and port.
#[test]
fn the_proxys_port_on_another_address_is_refused() {
    for env in [
        &[][..],
        &[("RUNNER_SIMULATE_LANDLOCK_ABI", "3")],
        &[("RUNNER_SIMULATE_NO_LANDLOCK", "1")],
    ] {
        proxys_port_elsewhere_is_refused(env);
    }
}

fn proxys_port_elsewhere_is_refused(env: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let web = Web::start(dir.path().join("ws"));
    let p = web.port;
    let around = "python3 -c \"import os, socket, urllib.parse; port = urllib.parse.urlparse(os.environ['http_proxy']).port; srv = socket.socket(); srv.bind(('127.0.0.3', port)); srv.listen(); print('bound'); socket.create_connection(('127.0.0.3', port)); print('reached')\"".to_string();
    let v6 = "python3 -c \"import os, socket, urllib.parse; port = urllib.parse.urlparse(os.environ['http_proxy']).port; socket.create_connection(('::1', port)); print('reached')\"".to_string();
    let commands = [around, v6, format!("curl -fsS http://docs.test:{p}/a.txt")];
    // Without Landlock the gate decides as strictly as it can (no
    // backstop holds): inline code runs by a rule naming its text.
    let exact: Vec<String> = commands
        .iter()
        .map(|c| serde_json::to_string(&format!("Bash({c})")).unwrap())
        .collect();
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: run\nworkspace: ws\npolicy:\n  default: allow\n  rules:\n    - allow: [{}]\n  network:\n    allow: [\"docs.test:{p}\", \"127.0.0.1\"]\nscript:\n{}  - text: done\n",
            exact.join(", "),
            crate::common::bash_turns(&commands.iter().map(String::as_str).collect::<Vec<_>>())
        ),
    );
    let (out, t) = run_with(dir.path(), env);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = results(&t);
    assert!(r[0].1.contains("bound"), "{:?}", r[0]);
    assert!(!r[0].1.contains("reached"), "{:?}", r[0]);
    assert!(r[0].1.contains("Operation not permitted"), "{:?}", r[0]);
    assert!(!r[1].1.contains("reached"), "{:?}", r[1]);
    assert_eq!(r[2].0, "ok", "{:?}", r[2]);
    assert!(r[2].1.contains('a'), "{:?}", r[2]);
    let sandbox = t["sandbox"].as_str().unwrap();
    assert!(
        sandbox.contains("IP only to the proxy at 127.0.0.1:"),
        "{env:?}: {sandbox}"
    );
    // Below ABI 4 the supervisor is the only wall by address.
    assert_eq!(
        sandbox.contains("; the supervisor and seccomp)"),
        !env.is_empty(),
        "{env:?}: {sandbox}"
    );
    // Each refusal is one of the task's connections, in its transcript
    // and counts.
    let refused: Vec<&Value> = t["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["via"] == "sandbox")
        .collect();
    let hosts: Vec<&str> = refused
        .iter()
        .map(|c| c["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["127.0.0.3", "::1"], "{refused:?}");
    for c in &refused {
        assert_eq!(c["allowed"], false, "{c}");
        assert!(
            c["reason"]
                .as_str()
                .unwrap()
                .contains("only the runner's proxy"),
            "{c}"
        );
    }
    assert!(
        t["counts"]["denied_connections"].as_u64().unwrap() >= 2,
        "{}",
        t["counts"]
    );
}

/// A request pipelined behind an allowed one on the same connection to
/// the proxy, naming a denied host (domain fronting behind a shared
/// address): it never reaches the upstream, whatever the upstream does
/// with what follows its first request.
#[test]
fn a_pipelined_second_request_for_a_denied_host_is_never_sent_on() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "a\n");
    let served = dir.path().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let web = Web::start(served);
    let p = web.port;
    let script = format!(
        "import os, socket, urllib.parse\n\
         proxy = urllib.parse.urlsplit(os.environ['http_proxy'])\n\
         s = socket.create_connection((proxy.hostname, proxy.port))\n\
         s.sendall(b'GET http://docs.test:{p}/page.html HTTP/1.1\\r\\nHost: docs.test:{p}\\r\\n\\r\\n'\n\
         \x20         b'GET http://evil.test:{p}/page.html HTTP/1.1\\r\\nHost: evil.test:{p}\\r\\n\\r\\n')\n\
         got = b''\n\
         while True:\n\
         \x20   chunk = s.recv(65536)\n\
         \x20   if not chunk: break\n\
         \x20   got += chunk\n\
         print('responses', got.count(b'HTTP/1.1 '), got.count(b'Tokio docs'))\n"
    );
    write(dir.path(), "ws/pipe.py", &script);
    let commands = ["python3 pipe.py"];
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: t\nprompt: run\nworkspace: ws\npolicy:\n  default: allow\n  network:\n    allow: [\"docs.test:{p}\", \"127.0.0.1\"]\n    deny: [evil.test]\nscript:\n{}  - text: done\n",
            crate::common::bash_turns(&commands)
        ),
    );
    let (out, t) = run(dir.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = results(&t);
    assert!(r[0].1.contains("responses 1 1"), "{}", r[0].1);
    assert!(web.asked("docs.test"), "{:?}", web.seen());
    assert!(!web.asked("evil.test"), "{:?}", web.seen());
}
