//! The agent bench's fake servers: a model speaking each vendor's wire
//! format (one call per answer, `ls` or a `write_file`, then text) and an
//! OTLP collector.

use std::io::BufReader;
use std::net::TcpListener;
use std::time::Duration;

use super::http;

/// The call each answer asks for.
#[derive(Clone, Copy)]
pub enum Call {
    /// `ls`: reads.
    Ls,
    /// `write_file` of a new file: changes the workspace.
    Write,
    /// `bash` of `cat small.txt`: a command under every wall.
    Bash,
}

impl Call {
    fn of(self, n: usize) -> (&'static str, serde_json::Value) {
        match self {
            Call::Ls => ("ls", serde_json::json!({})),
            Call::Write => (
                "write_file",
                serde_json::json!({"file_path": format!("new{n}.txt"), "content": "x\n"}),
            ),
            Call::Bash => ("bash", serde_json::json!({"command": "cat small.txt"})),
        }
    }
}

/// The vendors' wire formats, as the fake model server answers in them.
#[derive(Clone, Copy)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Wire {
    pub fn name(self) -> &'static str {
        match self {
            Wire::OpenAi => "OpenAI Chat Completions",
            Wire::Anthropic => "Anthropic Messages",
            Wire::Gemini => "Gemini generateContent",
        }
    }

    /// The task's `model:` and the variables that point it at the fake.
    pub fn model_and_env(self, port: u16) -> (&'static str, [(&'static str, String); 2]) {
        let root = format!("http://127.0.0.1:{port}");
        match self {
            Wire::OpenAi => (
                "openai:bench",
                [
                    ("OPENAI_BASE_URL", format!("{root}/v1")),
                    ("OPENAI_API_KEY", "sk-bench".into()),
                ],
            ),
            Wire::Anthropic => (
                "anthropic:bench",
                [
                    ("ANTHROPIC_BASE_URL", root),
                    ("ANTHROPIC_API_KEY", "sk-bench".into()),
                ],
            ),
            Wire::Gemini => (
                "gemini:bench",
                [
                    ("GEMINI_BASE_URL", format!("{root}/v1beta")),
                    ("GEMINI_API_KEY", "bench".into()),
                ],
            ),
        }
    }

    /// Answer `n`: one call, or the final text when `last`.
    fn answer(self, n: usize, last: bool, call: Call) -> serde_json::Value {
        use serde_json::json;
        let (name, args) = call.of(n);
        match self {
            Wire::OpenAi => {
                let message = if last {
                    json!({"role": "assistant", "content": "done"})
                } else {
                    json!({"role": "assistant", "content": null, "tool_calls": [
                        {"id": format!("c{n}"), "type": "function",
                         "function": {"name": name, "arguments": args.to_string()}}]})
                };
                json!({"choices": [{"message": message,
                    "finish_reason": if last {"stop"} else {"tool_calls"}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
            }
            Wire::Anthropic => {
                let content = if last {
                    json!([{"type": "text", "text": "done"}])
                } else {
                    json!([{"type": "tool_use", "id": format!("c{n}"), "name": name, "input": args}])
                };
                json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant",
                    "content": content,
                    "stop_reason": if last {"end_turn"} else {"tool_use"},
                    "usage": {"input_tokens": 10, "output_tokens": 5}})
            }
            Wire::Gemini => {
                let part = if last {
                    json!({"text": "done"})
                } else {
                    json!({"functionCall": {"name": name, "args": args}})
                };
                json!({"candidates": [{"content": {"role": "model", "parts": [part]},
                    "finishReason": "STOP"}],
                    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}})
            }
        }
    }
}

/// A fake model server speaking `wire`: each answer after `latency`; it
/// asks for one `call` until `turns` answers were given, then answers
/// text.
pub fn fake_model(
    wire: Wire,
    latency: Duration,
    turns: usize,
    call: Call,
) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let mut n = 0;
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let (_, probe) = http::read_request(&mut BufReader::new(conn.try_clone().unwrap()));
            if probe {
                http::answer_probe(&mut conn);
                continue;
            }
            std::thread::sleep(latency);
            let last = (n + 1) % (turns + 1) == 0;
            let body = wire.answer(n, last, call).to_string();
            http::answer_json(&mut conn, &body);
            n += 1;
        }
    });
    (port, handle)
}

/// An OTLP/HTTP collector that takes every export (an empty protobuf
/// answer is a valid `Export*ServiceResponse`).
pub fn fake_collector() -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            http::read_request(&mut BufReader::new(conn.try_clone().unwrap()));
            http::answer_json(&mut conn, "");
        }
    });
    (port, handle)
}
