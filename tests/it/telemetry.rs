//! OpenTelemetry (issue "Runs you can watch"): a run sends its span tree
//! and metrics to a real OTLP receiver on 127.0.0.1 (the
//! opentelemetry-proto package's definitions, over HTTP protobuf and gRPC:
//! tests/fixtures/otlp_receiver.py), under the CI's `TRACEPARENT`, and a
//! command sees the `TRACEPARENT` of its own `execute_tool` span.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::common::fake_llm::{FakeServer, Reply};
use crate::common::wire::{self, Vendor, call, turn};
use crate::common::{read_json, repo, runner, stderr, write};

const CI_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CI_SPAN: &str = "00f067aa0ba902b7";

/// The receiver, killed on drop.
struct Receiver {
    child: Child,
    file: PathBuf,
    http: u16,
    grpc: u16,
}

impl Receiver {
    fn start(dir: &Path) -> Self {
        let file = dir.join("received.jsonl");
        let mut child = Command::new("python3")
            .arg(repo().join("tests/fixtures/otlp_receiver.py"))
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ports: Vec<u16> = line
            .split_whitespace()
            .skip(1)
            .map(|p| {
                p.parse()
                    .unwrap_or_else(|_| panic!("receiver said {line:?}"))
            })
            .collect();
        assert_eq!(ports.len(), 2, "receiver said {line:?}");
        Self {
            child,
            file,
            http: ports[0],
            grpc: ports[1],
        }
    }

    /// Every request received so far.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.file)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn spans(&self) -> Vec<Value> {
        self.received()
            .iter()
            .filter(|r| r["signal"] == "traces")
            .flat_map(|r| r["spans"].as_array().unwrap().clone())
            .collect()
    }

    /// The last reading of each metric (they are cumulative).
    fn metrics(&self) -> serde_json::Map<String, Value> {
        let mut out = serde_json::Map::new();
        for r in self.received().iter().filter(|r| r["signal"] == "metrics") {
            for (k, v) in r["metrics"].as_object().unwrap() {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `runner` without any OpenTelemetry variable of the machine's.
fn clean(mut cmd: Command) -> Command {
    for (k, _) in std::env::vars() {
        if k.starts_with("OTEL_")
            || k == "TRACEPARENT"
            || k == "TRACESTATE"
            || k.starts_with("GITHUB_")
        {
            cmd.env_remove(k);
        }
    }
    cmd
}

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn one<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "{name}: {spans:#?}");
    found[0]
}

/// A scripted task: a command that prints its TRACEPARENT, a denied
/// call, a hook, a check.
fn scripted_task(dir: &Path, telemetry: &str) {
    write(dir, "ws/a.txt", "alpha\n");
    write(
        dir,
        "task.yaml",
        &format!(
            r#"name: traced
prompt: "Print the trace context; the secret word is plover"
workspace: ws
policy:
  default: allow
  rules:
    - deny: ["Bash(rm:*)"]
checks:
  - name: tp
    run: echo "CHECK_TP=$TRACEPARENT"
hooks:
  pre_tool:
    - match: ["Bash(echo:*)"]
      run: echo "HOOK_TP=$TRACEPARENT"
{telemetry}script:
  - text: looking
    tool_calls:
      - {{name: bash, id: c1, args: {{command: "echo TP=$TRACEPARENT"}}}}
      - {{name: bash, id: c2, args: {{command: "rm a.txt"}}}}
  - text: done
"#
        ),
    );
}

#[test]
fn a_traced_run_sends_its_span_tree_under_the_ci_trace() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    scripted_task(dir.path(), "");
    let out = clean(runner())
        .current_dir(dir.path())
        .env("TRACEPARENT", format!("00-{CI_TRACE}-{CI_SPAN}-01"))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_REPOSITORY", "acme/shop")
        .env("GITHUB_RUN_ID", "4242")
        .env("GITHUB_WORKFLOW", "nightly")
        .env("GITHUB_JOB", "refactor")
        .env("GITHUB_SHA", "abc123")
        .args(["run", "-q", "--out", "out", "task.yaml"])
        .arg("--otel")
        .arg(format!("http://127.0.0.1:{}", rx.http))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spans = rx.spans();
    assert!(rx.received().iter().all(|r| r["transport"] == "http"));
    for s in &spans {
        assert_eq!(s["trace_id"], CI_TRACE, "{s}");
    }
    // The tree: CI span > run > invoke_agent > chat, execute_tool, check.
    let run = one(&spans, "runner run");
    assert_eq!(run["parent_span_id"], CI_SPAN);
    assert_eq!(run["attributes"]["runner.tasks.passed"], 1);
    let agent = one(&spans, "invoke_agent traced");
    assert_eq!(agent["parent_span_id"], run["span_id"]);
    let a = &agent["attributes"];
    assert_eq!(a["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(a["gen_ai.agent.name"], "traced");
    assert_eq!(a["runner.outcome"], "passed");
    assert_eq!(a["runner.tool_calls.denied"], 1);
    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 2);
    let tools = named(&spans, "execute_tool bash");
    assert_eq!(tools.len(), 2);
    for s in chats.iter().chain(&tools) {
        assert_eq!(s["parent_span_id"], agent["span_id"], "{s}");
        assert!(s["start"].as_u64() >= agent["start"].as_u64(), "{s}");
        assert!(s["end"].as_u64() <= agent["end"].as_u64(), "{s}");
    }
    assert_eq!(chats[0]["attributes"]["gen_ai.operation.name"], "chat");
    assert_eq!(chats[0]["attributes"]["runner.turn"], 1);
    let by_id = |id: &str| {
        *tools
            .iter()
            .find(|s| s["attributes"]["gen_ai.tool.call.id"] == id)
            .unwrap()
    };
    let (echo, rm) = (by_id("c1"), by_id("c2"));
    assert_eq!(echo["attributes"]["runner.policy.decision"], "allow");
    assert_eq!(echo["attributes"]["runner.tool.outcome"], "ok");
    assert_eq!(echo["attributes"]["runner.tool.exit_code"], 0);
    assert_eq!(echo["events"][0]["name"], "runner.hook");
    assert_eq!(
        echo["events"][0]["attributes"]["runner.hook.kind"],
        "pre_tool"
    );
    assert_eq!(rm["attributes"]["runner.policy.decision"], "deny");
    assert_eq!(rm["attributes"]["runner.policy.rule"], "deny Bash(rm:*)");
    assert_eq!(
        rm["attributes"]["runner.policy.signatures"],
        json!(["Bash(rm a.txt)", "Edit(a.txt)"])
    );
    let check = one(&spans, "check tp");
    assert_eq!(check["attributes"]["runner.check.passed"], true);
    // What the command, its hook and the check saw is their own span.
    let t = read_json(dir.path().join("out/traced/transcript.json"));
    let hook_out = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c1")
        .unwrap()["hooks"][0]["stdout"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        hook_out.trim(),
        format!(
            "HOOK_TP=00-{CI_TRACE}-{}-01",
            echo["span_id"].as_str().unwrap()
        )
    );
    let echoed = t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c1")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        echoed.contains(&format!(
            "TP=00-{CI_TRACE}-{}-01",
            echo["span_id"].as_str().unwrap()
        )),
        "{echoed}"
    );
    assert!(
        t["checks"][0]["output"]
            .as_str()
            .unwrap()
            .contains(&format!(
                "CHECK_TP=00-{CI_TRACE}-{}-01",
                check["span_id"].as_str().unwrap()
            )),
        "{}",
        t["checks"][0]
    );
    assert_eq!(t["trace"]["trace_id"], CI_TRACE);
    assert_eq!(t["trace"]["span_id"], agent["span_id"]);
    // The CI's run, on every span's resource.
    let resource = &rx.received()[0]["resource"];
    assert_eq!(resource["service.name"], "runner");
    assert_eq!(resource["cicd.pipeline.run.id"], "4242");
    assert_eq!(resource["cicd.pipeline.name"], "nightly");
    assert_eq!(resource["cicd.pipeline.task.name"], "refactor");
    assert_eq!(resource["vcs.ref.head.revision"], "abc123");
    assert_eq!(
        resource["vcs.repository.url.full"],
        "https://github.com/acme/shop"
    );
    // Metrics: tokens and durations per request, calls by decision,
    // denials by rule, outcomes.
    let m = rx.metrics();
    for name in [
        "gen_ai.client.token.usage",
        "gen_ai.client.operation.duration",
        "runner.tool.calls",
        "runner.policy.denials",
        "runner.tasks",
    ] {
        assert!(m.contains_key(name), "{name}: {m:?}");
    }
    let denials = &m["runner.policy.denials"][0];
    assert_eq!(
        denials["attributes"]["runner.policy.rule"],
        "deny Bash(rm:*)"
    );
    assert_eq!(denials["asInt"], "1");
    assert_eq!(
        m["runner.tasks"][0]["attributes"]["runner.outcome"],
        "passed"
    );
    // Content is off by default: no prompt, no answer, no command output
    // (the signatures, which the policy decides on, are attributes).
    let all = std::fs::read_to_string(&rx.file).unwrap();
    for text in ["plover", "looking", "TP=00-"] {
        assert!(!all.contains(text), "{text} was exported");
    }
}

#[test]
fn a_run_against_a_vendor_is_traced_over_grpc_with_the_task_settings() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    let v = Vendor::OpenAi;
    write(dir.path(), "ws/a.txt", "alpha\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            r#"name: vendor
prompt: Read a.txt.
model: {}
workspace: ws
tools: [read_file]
telemetry:
  endpoint: http://127.0.0.1:{}
  protocol: grpc
  timeout: 5s
  headers:
    x-team: "${{TEAM_NAME}}"
"#,
            v.model(),
            rx.grpc
        ),
    );
    let mut first = turn(
        "",
        vec![call("c1", "read_file", json!({"file_path": "a.txt"}))],
    );
    first.input_tokens = 1200;
    first.output_tokens = 30;
    let replies = [
        wire::reply(v, &first),
        wire::reply(v, &turn("It holds alpha.", vec![])),
    ];
    // The first try is refused once (503): a retry on the chat span.
    let server = FakeServer::start(move |_, n| match n {
        0 => Reply::json(503, &json!({"error": {"message": "overloaded"}})),
        n => replies[(n - 1).min(1)].clone(),
    });
    let out = clean(wire::runner_for(v, &server.url(), "sk-test"))
        .current_dir(dir.path())
        .env("TEAM_NAME", "core")
        .env("TRACEPARENT", format!("00-{CI_TRACE}-{CI_SPAN}-01"))
        .args(["run", "-q", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let got = rx.received();
    assert!(!got.is_empty());
    for r in &got {
        assert_eq!(r["transport"], "grpc");
        assert_eq!(r["headers"]["x-team"], "core");
    }
    let spans = rx.spans();
    let chats = named(&spans, "chat fake-gpt");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    let a = &chats[0]["attributes"];
    assert_eq!(a["gen_ai.provider.name"], "openai");
    assert_eq!(a["gen_ai.request.model"], "fake-gpt");
    assert_eq!(a["gen_ai.usage.input_tokens"], 1200);
    assert_eq!(a["gen_ai.usage.output_tokens"], 30);
    assert_eq!(a["gen_ai.response.finish_reasons"], json!(["tool_calls"]));
    assert_eq!(chats[0]["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(a["runner.retries"], 1);
    assert_eq!(chats[0]["events"][0]["name"], "runner.retry");
    let retry = &chats[0]["events"][0]["attributes"];
    assert_eq!(retry["runner.retry.attempt"], 1);
    assert!(
        retry["runner.retry.error"]
            .as_str()
            .unwrap()
            .contains("503"),
        "{retry}"
    );
    let tool = one(&spans, "execute_tool read_file");
    assert_eq!(
        tool["attributes"]["runner.policy.signatures"],
        json!(["Read(a.txt)"])
    );
    let run = one(&spans, "runner run");
    assert_eq!(run["parent_span_id"], CI_SPAN);
    let agent = one(&spans, "invoke_agent vendor");
    assert_eq!(agent["parent_span_id"], run["span_id"]);
    for s in chats.iter().chain([&tool]) {
        assert_eq!(s["trace_id"], CI_TRACE);
        assert_eq!(s["parent_span_id"], agent["span_id"], "{s}");
    }
    let tokens = &rx.metrics()["gen_ai.client.token.usage"];
    let input = tokens
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["attributes"]["gen_ai.token.type"] == "input")
        .unwrap();
    assert_eq!(input["attributes"]["gen_ai.request.model"], "fake-gpt");
    assert_eq!(input["count"], "2");
}

#[test]
fn content_is_exported_only_when_asked_and_with_secrets_masked() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    scripted_task(
        dir.path(),
        "env:\n  pass: [DEPLOY_TOKEN]\ntelemetry:\n  content: true\n",
    );
    // The command prints the secret; the transcript and the export mask it.
    let yaml = std::fs::read_to_string(dir.path().join("task.yaml"))
        .unwrap()
        .replace("echo TP=$TRACEPARENT", "echo TP=$TRACEPARENT $DEPLOY_TOKEN");
    std::fs::write(dir.path().join("task.yaml"), yaml).unwrap();
    let out = clean(runner())
        .current_dir(dir.path())
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", rx.http),
        )
        .env("DEPLOY_TOKEN", "tok-9f8e7d6c5b4a")
        .args(["run", "-q", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spans = rx.spans();
    let agent = one(&spans, "invoke_agent traced");
    assert!(
        agent["attributes"]["gen_ai.input.messages"]
            .as_str()
            .unwrap()
            .contains("plover")
    );
    let result = named(&spans, "execute_tool bash")
        .iter()
        .map(|s| {
            s["attributes"]["gen_ai.tool.call.result"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect::<String>();
    assert!(result.contains("TP=00-"), "{result}");
    assert!(result.contains("[REDACTED]"), "{result}");
    let all = std::fs::read_to_string(&rx.file).unwrap();
    assert!(!all.contains("tok-9f8e7d6c5b4a"), "the secret was exported");
}

/// A listener that accepts connections and never answers.
fn hanging_collector() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming() {
            held.push(c);
        }
    });
    port
}

#[test]
fn a_collector_that_hangs_or_is_down_costs_the_timeout_at_most_and_never_the_outcome() {
    let hanging = hanging_collector();
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for (port, protocol) in [
        (hanging, "http/protobuf"),
        (hanging, "grpc"),
        (closed, "http/protobuf"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        scripted_task(
            dir.path(),
            &format!(
                "telemetry:\n  endpoint: http://127.0.0.1:{port}\n  protocol: {protocol}\n  timeout: 1s\n"
            ),
        );
        let started = std::time::Instant::now();
        let out = clean(runner())
            .current_dir(dir.path())
            .args(["run", "-q", "--out", "out", "task.yaml"])
            .output()
            .unwrap();
        let took = started.elapsed();
        assert!(out.status.success(), "{protocol} {port}: {}", stderr(&out));
        let t = read_json(dir.path().join("out/traced/transcript.json"));
        assert_eq!(t["outcome"]["status"], "passed");
        let err = stderr(&out);
        assert!(
            err.contains("runner: telemetry:") && err.contains(&format!("127.0.0.1:{port}")),
            "{err}"
        );
        // Not a speed goal: the bound itself, near the timeout. A run
        // waiting on a hung collector would never end; the export timeout
        // (1s) is spent at most once while tasks run and once at the end,
        // and the rest (a scripted task: well under a second) is the run,
        // with room for a loaded machine. A run that waited a third time
        // would still pass 15 s.
        assert!(
            took < std::time::Duration::from_secs(6),
            "{protocol}: {took:?}"
        );
    }
}

#[test]
fn export_sends_a_finished_run_again_as_the_same_spans() {
    let dir = tempfile::tempdir().unwrap();
    scripted_task(dir.path(), "");
    // The run's collector is down: its spans are lost, its transcript
    // keeps the ids.
    let out = clean(runner())
        .current_dir(dir.path())
        .env("TRACEPARENT", format!("00-{CI_TRACE}-{CI_SPAN}-01"))
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
        .args([
            "run",
            "-q",
            "--out",
            "out",
            "task.yaml",
            "--otel",
            "http://127.0.0.1:1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/traced/transcript.json"));
    let rx = Receiver::start(dir.path());
    let out = clean(runner())
        .current_dir(dir.path())
        .args(["export", "out", "--otel"])
        .arg(format!("http://127.0.0.1:{}", rx.http))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("exported 1 task(s)"),
        "{}",
        stderr(&out)
    );
    let spans = rx.spans();
    let agent = one(&spans, "invoke_agent traced");
    assert_eq!(agent["trace_id"], CI_TRACE);
    assert_eq!(agent["span_id"], t["trace"]["span_id"]);
    let run = one(&spans, "runner run");
    assert_eq!(run["span_id"], t["trace"]["run_span_id"]);
    assert_eq!(run["parent_span_id"], CI_SPAN);
    // The command saw the span the export sends.
    let echo = named(&spans, "execute_tool bash")
        .into_iter()
        .find(|s| s["attributes"]["gen_ai.tool.call.id"] == "c1")
        .unwrap();
    let content = t["tool_calls"].to_string();
    assert!(
        content.contains(echo["span_id"].as_str().unwrap()),
        "{content}"
    );
    // Exporting to a collector that is not there fails, and says where.
    let out = clean(runner())
        .current_dir(dir.path())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
        .args(["export", "out", "--otel", "http://127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("127.0.0.1:1"), "{}", stderr(&out));
}

#[test]
fn without_telemetry_nothing_is_traced_and_bad_settings_are_named() {
    let dir = tempfile::tempdir().unwrap();
    scripted_task(dir.path(), "");
    let out = clean(runner())
        .current_dir(dir.path())
        .args(["run", "-q", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let t = read_json(dir.path().join("out/traced/transcript.json"));
    assert!(t.get("trace").is_none(), "{}", t["trace"]);
    // Commands get no trace context the run did not have.
    let echoed = &t["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "c1")
        .unwrap()["content"];
    assert!(
        echoed.as_str().unwrap().contains("stdout ---\nTP=\n"),
        "{echoed}"
    );
    // Bad settings: exit 2 before anything runs, naming the setting.
    for (args, env, says) in [
        (
            vec!["--otel", "collector:4317"],
            None,
            "not an http:// or https:// URL",
        ),
        (
            vec!["--otel"],
            Some(("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")),
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ),
    ] {
        let mut cmd = clean(runner());
        if let Some((k, v)) = env {
            cmd.env(k, v);
        }
        let out = cmd
            .current_dir(dir.path())
            .args(["run", "--out", "out2", "task.yaml"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(says), "{}", stderr(&out));
        assert!(!dir.path().join("out2").exists());
    }
    write(
        dir.path(),
        "bad.yaml",
        "prompt: x\nworkspace: ws\ntelemetry:\n  endpoint: http://c:4318\n  sample: 0.5\n",
    );
    let err = crate::common::validate_refuses(dir.path(), "bad.yaml");
    assert!(
        err.contains("bad.yaml:5") && err.contains("sample"),
        "{err}"
    );
}

/// `--otel` takes an optional endpoint: a task file right after it is a
/// task, and `--otel` then sends where the variables say (issue 50: the
/// task file was read as the endpoint, and the run refused for want of a
/// task).
#[test]
fn a_task_file_after_otel_is_a_task() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: x\nworkspace: ws\nscript:\n  - text: done\n",
    );
    let out = clean(runner())
        .current_dir(dir.path())
        .env(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{}", rx.http),
        )
        .args(["run", "-q", "--out", "out", "--otel", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    one(&rx.spans(), "invoke_agent t");
    // Without a task, a clear refusal.
    let out = clean(runner())
        .current_dir(dir.path())
        .args(["run", "-q", "--out", "out2", "--otel"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no task files given"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_run_stopped_by_sigterm_still_sends_its_telemetry() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    write(dir.path(), "ws/a.txt", "a\n");
    // A distinctive duration, to find the process.
    let sleeper = ["sleep", "43.75"];
    write(
        dir.path(),
        "slow.yaml",
        "name: slow\nprompt: wait\nworkspace: ws\npolicy:\n  default: allow\nscript:\n  - tool_calls:\n      - {name: bash, args: {command: \"sleep 43.75\", timeout: 120000}}\n",
    );
    let mut child = clean(runner())
        .current_dir(dir.path())
        .args(["run", "-q", "--out", "out", "slow.yaml", "--otel"])
        .arg(format!("http://127.0.0.1:{}", rx.http))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    crate::common::sigterm_once_running(&child, &sleeper);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(75), "cancelled: resumable");
    let spans = rx.spans();
    let agent = one(&spans, "invoke_agent slow");
    assert_eq!(agent["attributes"]["runner.outcome"], "cancelled");
    let call = one(&spans, "execute_tool bash");
    assert_eq!(call["attributes"]["runner.tool.outcome"], "cancelled");
    one(&spans, "runner run");
}

#[test]
fn an_mcp_server_runs_under_its_task_span() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: m\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nmcp_servers:\n  t:\n    command: python3\n    args: [\"{}\"]\nscript:\n  - tool_calls:\n      - {{name: t__env_value, args: {{name: TRACEPARENT}}}}\n",
            repo().join("tests/fixtures/mcp_test_server.py").display()
        ),
    );
    let out = clean(runner())
        .current_dir(dir.path())
        .env("TRACEPARENT", format!("00-{CI_TRACE}-{CI_SPAN}-01"))
        .args(["run", "-q", "--out", "out", "task.yaml", "--otel"])
        .arg(format!("http://127.0.0.1:{}", rx.http))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spans = rx.spans();
    let agent = one(&spans, "invoke_agent m");
    let call = one(&spans, "execute_tool t__env_value");
    assert_eq!(call["attributes"]["gen_ai.tool.type"], "extension");
    let t = read_json(dir.path().join("out/m/transcript.json"));
    assert_eq!(
        t["tool_calls"][0]["content"].as_str().unwrap().trim(),
        format!("00-{CI_TRACE}-{}-01", agent["span_id"].as_str().unwrap())
    );
}

#[test]
fn a_policy_layer_can_ask_for_telemetry_for_every_task_under_it() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    scripted_task(dir.path(), "");
    write(
        dir.path(),
        "org.yaml",
        &format!(
            "default: allow\ntelemetry:\n  endpoint: http://127.0.0.1:{}\n  timeout: 5s\n",
            rx.http
        ),
    );
    let out = clean(runner())
        .current_dir(dir.path())
        .args([
            "run",
            "-q",
            "--out",
            "out",
            "--policy",
            "org.yaml",
            "task.yaml",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let spans = rx.spans();
    one(&spans, "invoke_agent traced");
    // Without a CI trace the run starts its own: the root has no parent.
    assert_eq!(one(&spans, "runner run")["parent_span_id"], "");
    // A task that asks for another place is an error, naming both files.
    write(
        dir.path(),
        "elsewhere.yaml",
        "name: other\nprompt: x\nworkspace: ws\ntelemetry:\n  endpoint: http://127.0.0.1:9\nscript: []\n",
    );
    let out = clean(runner())
        .current_dir(dir.path())
        .args([
            "run",
            "--out",
            "out2",
            "--policy",
            "org.yaml",
            "task.yaml",
            "elsewhere.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("org.yaml") && err.contains("elsewhere.yaml"),
        "{err}"
    );
    // A bad timeout is an error at its line, in a policy as in a task.
    write(
        dir.path(),
        "bad-policy.yaml",
        "default: allow\ntelemetry:\n  timeout: soon\n",
    );
    let err = crate::common::validate_refuses(dir.path(), "bad-policy.yaml");
    assert!(
        err.contains("bad-policy.yaml:3") && err.contains("telemetry.timeout"),
        "{err}"
    );
}

#[test]
fn a_remote_mcp_server_gets_its_task_span_as_trace_context_headers() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path());
    let token = "remote-token-for-tracing-7731";
    let server = crate::mcp::RemoteServer::start(token);
    write(dir.path(), "ws/a.txt", "a\n");
    write(
        dir.path(),
        "task.yaml",
        &format!(
            "name: r\nprompt: x\nworkspace: ws\npolicy:\n  default: allow\nmcp_servers:\n  remote:\n    url: {}\n    headers: {{Authorization: \"Bearer ${{MCP_AUTH}}\"}}\nscript:\n  - tool_calls:\n      - {{name: remote__trace_header, args: {{}}}}\n",
            server.url
        ),
    );
    let out = clean(runner())
        .current_dir(dir.path())
        .env("MCP_AUTH", token)
        .env("TRACEPARENT", format!("00-{CI_TRACE}-{CI_SPAN}-01"))
        .args(["run", "-q", "--out", "out", "task.yaml", "--otel"])
        .arg(format!("http://127.0.0.1:{}", rx.http))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let agent = one(&rx.spans(), "invoke_agent r").clone();
    let t = read_json(dir.path().join("out/r/transcript.json"));
    assert_eq!(
        t["tool_calls"][0]["content"].as_str().unwrap().trim(),
        format!("00-{CI_TRACE}-{}-01", agent["span_id"].as_str().unwrap())
    );
}
