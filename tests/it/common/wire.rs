//! Model answers in each vendor's wire format, as their servers send them:
//! OpenAI chat-completion chunks ending in `[DONE]`, Anthropic's named
//! events, Gemini's CRLF-framed chunks. Text and argument strings are split
//! across chunks the way real streams split them.
#![allow(dead_code)]

use serde_json::{Value, json};

use super::fake_llm::Reply;

/// A vendor under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    OpenAi,
    Anthropic,
    Gemini,
}

pub const ALL: [Vendor; 3] = [Vendor::OpenAi, Vendor::Anthropic, Vendor::Gemini];

impl Vendor {
    pub fn model(self) -> &'static str {
        match self {
            Vendor::OpenAi => "openai:fake-gpt",
            Vendor::Anthropic => "anthropic:fake-claude",
            Vendor::Gemini => "gemini:fake-gemini",
        }
    }
    pub fn key_var(self) -> &'static str {
        match self {
            Vendor::OpenAi => "OPENAI_API_KEY",
            Vendor::Anthropic => "ANTHROPIC_API_KEY",
            Vendor::Gemini => "GEMINI_API_KEY",
        }
    }
    pub fn url_var(self) -> &'static str {
        match self {
            Vendor::OpenAi => "OPENAI_BASE_URL",
            Vendor::Anthropic => "ANTHROPIC_BASE_URL",
            Vendor::Gemini => "GEMINI_BASE_URL",
        }
    }
    /// The base URL for a server at `root`, as a user would set it.
    pub fn base_url(self, root: &str) -> String {
        match self {
            Vendor::OpenAi => format!("{root}/v1"),
            Vendor::Anthropic => root.to_string(),
            Vendor::Gemini => format!("{root}/v1beta"),
        }
    }
    /// The error event a vendor sends in the middle of a stream.
    pub fn error_event(self, message: &str) -> String {
        match self {
            Vendor::OpenAi => format!(
                "data: {}\n\n",
                json!({"error": {"message": message, "type": "server_error"}})
            ),
            Vendor::Anthropic => format!(
                "event: error\ndata: {}\n\n",
                json!({"type": "error", "error": {"type": "overloaded_error", "message": message}})
            ),
            Vendor::Gemini => format!(
                "data: {}\r\n\r\n",
                json!({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})
            ),
        }
    }
}

/// The `runner` command speaking to vendor `v`'s fake at `server`, with
/// `key`, as in CI, and no other vendor's variables.
pub fn runner_for(v: Vendor, server: &str, key: &str) -> std::process::Command {
    let mut cmd = super::runner();
    for other in ALL {
        cmd.env_remove(other.key_var()).env_remove(other.url_var());
    }
    cmd.env("CI", "true")
        .env(v.key_var(), key)
        .env(v.url_var(), v.base_url(server));
    cmd
}

/// One tool call: id, name, and the argument text (maybe not JSON).
#[derive(Debug, Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub args: String,
}

pub fn call(id: &str, name: &str, args: Value) -> Call {
    Call {
        id: id.into(),
        name: name.into(),
        args: args.to_string(),
    }
}

/// A model turn.
#[derive(Debug, Clone, Default)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<Call>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The part of `input_tokens` read from the prompt cache.
    pub cached_tokens: u64,
    /// The part of `input_tokens` written to the prompt cache (Anthropic).
    pub cache_write_tokens: u64,
}

pub fn turn(text: &str, calls: Vec<Call>) -> Turn {
    Turn {
        text: text.into(),
        calls,
        input_tokens: 100,
        output_tokens: 20,
        cached_tokens: 0,
        cache_write_tokens: 0,
    }
}

fn halves(s: &str) -> (String, String) {
    let mid = s
        .char_indices()
        .nth(s.chars().count() / 2)
        .map_or(0, |(i, _)| i);
    (s[..mid].to_string(), s[mid..].to_string())
}

/// The streamed events of a turn. Events are grouped so that
/// `events[..calls_done(v, k)]` ends right after call `k` is complete.
pub fn stream(v: Vendor, t: &Turn) -> Vec<String> {
    match v {
        Vendor::OpenAi => openai_stream(t),
        Vendor::Anthropic => anthropic_stream(t),
        Vendor::Gemini => gemini_stream(t),
    }
}

pub fn reply(v: Vendor, t: &Turn) -> Reply {
    Reply::sse(&stream(v, t))
}

fn data(v: Value) -> String {
    format!("data: {v}\n\n")
}

fn oa_chunk(delta: Value, finish: Value) -> String {
    data(json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
        "model": "fake-gpt",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
    }))
}

fn openai_stream(t: &Turn) -> Vec<String> {
    let mut ev = vec![oa_chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    )];
    if !t.text.is_empty() {
        let (a, b) = halves(&t.text);
        ev.push(oa_chunk(json!({"content": a}), Value::Null));
        ev.push(oa_chunk(json!({"content": b}), Value::Null));
    }
    for (i, c) in t.calls.iter().enumerate() {
        ev.push(oa_chunk(
            json!({"tool_calls": [{"index": i, "id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": ""}}]}),
            Value::Null,
        ));
        let (a, b) = halves(&c.args);
        for piece in [a, b] {
            ev.push(oa_chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    let finish = if t.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ev.push(oa_chunk(json!({}), json!(finish)));
    ev.push(data(json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
        "model": "fake-gpt", "choices": [],
        "usage": {"prompt_tokens": t.input_tokens, "completion_tokens": t.output_tokens,
                  "total_tokens": t.input_tokens + t.output_tokens,
                  "prompt_tokens_details": {"cached_tokens": t.cached_tokens}}
    })));
    ev.push("data: [DONE]\n\n".into());
    ev
}

fn named(event: &str, v: Value) -> String {
    format!("event: {event}\ndata: {v}\n\n")
}

fn anthropic_stream(t: &Turn) -> Vec<String> {
    let mut ev = vec![named(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "content": [],
            "model": "fake-claude", "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": t.input_tokens - t.cached_tokens - t.cache_write_tokens,
                      "cache_read_input_tokens": t.cached_tokens,
                      "cache_creation_input_tokens": t.cache_write_tokens, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if !t.text.is_empty() {
        ev.push(named(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "text", "text": ""}}),
        ));
        ev.push(named("ping", json!({"type": "ping"})));
        let (a, b) = halves(&t.text);
        for piece in [a, b] {
            ev.push(named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        ev.push(named(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    for c in &t.calls {
        ev.push(named(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}}),
        ));
        let (a, b) = halves(&c.args);
        for piece in [a, b] {
            ev.push(named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        ev.push(named(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    let stop = if t.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev.push(named(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": t.output_tokens}}),
    ));
    ev.push(named("message_stop", json!({"type": "message_stop"})));
    ev
}

fn gdata(v: Value) -> String {
    format!("data: {v}\r\n\r\n")
}

fn gemini_stream(t: &Turn) -> Vec<String> {
    let mut ev = Vec::new();
    if !t.text.is_empty() {
        let (a, b) = halves(&t.text);
        for piece in [a, b] {
            ev.push(gdata(json!({
                "candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}],
                "usageMetadata": {"promptTokenCount": t.input_tokens, "totalTokenCount": t.input_tokens},
                "modelVersion": "fake-gemini"
            })));
        }
    }
    for c in &t.calls {
        // Gemini sends arguments as an object; text that is not a JSON
        // object goes as a string, as a confused server might.
        let args: Value = serde_json::from_str::<Value>(&c.args)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!(c.args));
        ev.push(gdata(json!({
            "candidates": [{"content": {"parts": [{"functionCall": {"name": c.name, "args": args}}],
                            "role": "model"}, "index": 0}],
            "modelVersion": "fake-gemini"
        })));
    }
    ev.push(gdata(json!({
        "candidates": [{"content": {"parts": [{"text": ""}], "role": "model"},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": t.input_tokens, "candidatesTokenCount": t.output_tokens,
                          "cachedContentTokenCount": t.cached_tokens,
                          "totalTokenCount": t.input_tokens + t.output_tokens},
        "modelVersion": "fake-gemini"
    })));
    ev
}

/// How many events of `stream(v, t)` come before call `k`'s first event.
pub fn events_before_call(v: Vendor, t: &Turn, k: usize) -> usize {
    let text = !t.text.is_empty();
    match v {
        Vendor::OpenAi => 1 + usize::from(text) * 2 + 3 * k,
        Vendor::Anthropic => 1 + usize::from(text) * 5 + 4 * k,
        Vendor::Gemini => usize::from(text) * 2 + k,
    }
}

/// The tool results the runner sent back in a request, as
/// (call id or name, content, is_error).
pub fn tool_results(v: Vendor, body: &Value) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    match v {
        Vendor::OpenAi => {
            for m in body["messages"].as_array().unwrap() {
                if m["role"] == "tool" {
                    let c = m["content"].as_str().unwrap_or_default().to_string();
                    let err = c.starts_with("Error");
                    out.push((m["tool_call_id"].as_str().unwrap().to_string(), c, err));
                }
            }
        }
        Vendor::Anthropic => {
            for m in body["messages"].as_array().unwrap() {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_result" {
                        out.push((
                            b["tool_use_id"].as_str().unwrap().to_string(),
                            b["content"].as_str().unwrap_or_default().to_string(),
                            b["is_error"].as_bool().unwrap_or(false),
                        ));
                    }
                }
            }
        }
        Vendor::Gemini => {
            for m in body["contents"].as_array().unwrap() {
                for p in m["parts"].as_array().into_iter().flatten() {
                    if let Some(r) = p.get("functionResponse") {
                        let (c, err) = match r["response"].get("error") {
                            Some(e) => (e.as_str().unwrap_or_default().to_string(), true),
                            None => (
                                r["response"]["content"]
                                    .as_str()
                                    .unwrap_or_default()
                                    .to_string(),
                                false,
                            ),
                        };
                        out.push((r["name"].as_str().unwrap().to_string(), c, err));
                    }
                }
            }
        }
    }
    out
}

/// A turn as one whole (not streamed) answer body, as each vendor's
/// endpoint (and its batch API) sends it.
pub fn whole(v: Vendor, t: &Turn) -> Value {
    let args = |c: &Call| serde_json::from_str::<Value>(&c.args).unwrap_or(json!({}));
    match v {
        Vendor::OpenAi => {
            let calls: Vec<Value> = t
                .calls
                .iter()
                .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}))
                .collect();
            let mut message = json!({"role": "assistant", "content": t.text});
            if !calls.is_empty() {
                message["tool_calls"] = json!(calls);
            }
            json!({
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "fake-gpt",
                "choices": [{"index": 0, "message": message,
                             "finish_reason": if t.calls.is_empty() { "stop" } else { "tool_calls" }}],
                "usage": {"prompt_tokens": t.input_tokens, "completion_tokens": t.output_tokens,
                          "total_tokens": t.input_tokens + t.output_tokens}
            })
        }
        Vendor::Anthropic => {
            let mut content = Vec::new();
            if !t.text.is_empty() {
                content.push(json!({"type": "text", "text": t.text}));
            }
            content.extend(t.calls.iter().map(
                |c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": args(c)}),
            ));
            json!({
                "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake-claude",
                "content": content,
                "stop_reason": if t.calls.is_empty() { "end_turn" } else { "tool_use" },
                "usage": {"input_tokens": t.input_tokens, "output_tokens": t.output_tokens,
                          "service_tier": "batch"}
            })
        }
        Vendor::Gemini => {
            let mut parts = Vec::new();
            if !t.text.is_empty() {
                parts.push(json!({"text": t.text}));
            }
            parts.extend(
                t.calls
                    .iter()
                    .map(|c| json!({"functionCall": {"name": c.name, "args": args(c)}})),
            );
            json!({
                "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": t.input_tokens,
                                  "candidatesTokenCount": t.output_tokens,
                                  "totalTokenCount": t.input_tokens + t.output_tokens}
            })
        }
    }
}

/// A turn as OpenAI's Responses API answers it whole.
pub fn responses_whole(t: &Turn) -> Value {
    let mut output = Vec::new();
    if !t.text.is_empty() {
        output.push(
            json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": t.text, "annotations": []}]}),
        );
    }
    for c in &t.calls {
        output.push(
            json!({"type": "function_call", "id": format!("fc_{}", c.id), "call_id": c.id,
            "name": c.name, "arguments": c.args, "status": "completed"}),
        );
    }
    json!({
        "id": "resp_fake", "object": "response", "status": "completed", "model": "fake-gpt",
        "output": output,
        "usage": {"input_tokens": t.input_tokens, "output_tokens": t.output_tokens,
                  "total_tokens": t.input_tokens + t.output_tokens,
                  "input_tokens_details": {"cached_tokens": t.cached_tokens}}
    })
}

/// A turn as OpenAI's Responses API streams it: the text in deltas, each
/// call's arguments in deltas then its item done, and the whole response
/// last.
pub fn responses_stream(t: &Turn) -> Vec<String> {
    let ev = |kind: &str, mut v: Value| {
        v["type"] = json!(kind);
        format!("event: {kind}\ndata: {v}\n\n")
    };
    let whole = responses_whole(t);
    let mut out = vec![ev(
        "response.created",
        json!({"response": {"id": "resp_fake", "status": "in_progress", "output": []}}),
    )];
    for (i, item) in whole["output"].as_array().unwrap().iter().enumerate() {
        out.push(ev(
            "response.output_item.added",
            json!({"output_index": i, "item": item}),
        ));
        if item["type"] == "message" {
            let (a, b) = halves(&t.text);
            for piece in [a, b] {
                out.push(ev(
                    "response.output_text.delta",
                    json!({"output_index": i, "content_index": 0, "delta": piece}),
                ));
            }
        } else {
            let (a, b) = halves(item["arguments"].as_str().unwrap());
            for piece in [a, b] {
                out.push(ev(
                    "response.function_call_arguments.delta",
                    json!({"output_index": i, "delta": piece}),
                ));
            }
        }
        out.push(ev(
            "response.output_item.done",
            json!({"output_index": i, "item": item}),
        ));
    }
    out.push(ev("response.completed", json!({"response": whole})));
    out
}
