//! `openai:MODEL`: Chat Completions with tools, streamed or not.
//!
//! Written for OpenAI and for the servers that copy its API (Ollama, vLLM,
//! llama.cpp, OpenRouter): every field is optional, tool-call deltas are
//! joined by `index` (or by position when a server leaves it out), a call
//! sent whole in one chunk is fine, and a stream that ends after its
//! `finish_reason` but without `[DONE]` is accepted. A stream that ends
//! before either is an error, never a silent short answer.
//!
//! What a real server showed (llama-cpp-python's, with SmolLM2): a request
//! without `tool_choice` is not always `auto` there (its function-calling
//! format then shows the model no tools at all), so `auto` is sent
//! explicitly whenever tools are declared, which is OpenAI's default
//! anyway; and it refuses `"content": null` beside tool calls, hence
//! [`ToolCallContent`].

use serde_json::{Map, Value, json};

use super::assemble::CallAssembler;
use super::client::{StreamFuture, WireFormat};
use super::config::{ProviderConfig, ToolCallContent};
use super::failure::Failure;
use super::http::SseReader;
use super::learn::Lesson;
use super::{
    EarlyCalls, Message, ModelRequest, ModelTurn, ToolCallRequest, ToolChoice, ToolSpec, Usage,
};

/// Chat Completions.
pub struct OpenAi;

impl WireFormat for OpenAi {
    fn vendor(&self) -> &'static str {
        "openai"
    }

    fn url(&self, cfg: &ProviderConfig) -> String {
        format!("{}/chat/completions", cfg.base_url)
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        match &cfg.api_key {
            Some(k) => vec![("authorization", format!("Bearer {}", k.expose()))],
            None => vec![],
        }
    }

    fn declarations(&self, tools: &[ToolSpec]) -> Value {
        tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}
                })
            })
            .collect()
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest<'_>) -> Value {
        let mut messages = vec![json!({"role": "system", "content": req.system})];
        messages.extend(
            req.messages
                .iter()
                .map(|m| wire_message(m, cfg.content_with_tool_calls)),
        );
        let mut body = Map::new();
        body.insert("model".into(), json!(cfg.model));
        body.insert("messages".into(), Value::Array(messages));
        if !req.tools.is_empty() {
            body.insert("tools".into(), self.declarations(req.tools));
            let choice = match req.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(schema) = req.output_schema
            && native_schema(cfg)
        {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": "output", "schema": schema, "strict": false}}),
            );
        }
        options(&mut body, cfg, "max_tokens");
        if cfg.stream {
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    fn parse(&self, raw: Value) -> Result<ModelTurn, Failure> {
        parse_response(raw)
    }

    fn read_stream<'a>(
        &'a self,
        sse: SseReader,
        early: Option<&'a EarlyCalls>,
    ) -> StreamFuture<'a> {
        Box::pin(read_stream(sse, early))
    }

    fn lesson(&self, cfg: &ProviderConfig, body: &Value, failure: &Failure) -> Option<Lesson> {
        if cfg.learnable.content && sent_null_content(cfg, body, &failure.message) {
            return Some(Lesson::EmptyContent);
        }
        let m = &failure.message;
        let closed = m.contains(super::http::CLOSED_EMPTY)
            || (m.contains("stream") && m.contains("not supported"));
        (cfg.learnable.stream && cfg.stream && closed).then_some(Lesson::NoStream)
    }
}

/// Native structured output works together with tools at OpenAI;
/// OpenAI-compatible servers differ, so only there.
pub(super) fn native_schema(cfg: &ProviderConfig) -> bool {
    cfg.base_url.starts_with("https://api.openai.com/")
}

/// What both of OpenAI's APIs send alike: the temperature, the service
/// tier, the cap on an answer's tokens (each API names it: `max_field`)
/// and whether to stream.
pub(super) fn options(body: &mut Map<String, Value>, cfg: &ProviderConfig, max_field: &str) {
    if let Some(t) = cfg.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(t) = cfg.service_tier {
        body.insert("service_tier".into(), json!(t.as_str()));
    }
    if let Some(m) = cfg.max_tokens {
        body.insert(max_field.into(), json!(m));
    }
    body.insert("stream".into(), json!(cfg.stream));
}

/// Whether the server refused `body` (`message`) where the cause may be
/// its `"content": null` beside tool calls.
fn sent_null_content(cfg: &ProviderConfig, body: &Value, message: &str) -> bool {
    let sent_null = cfg.content_with_tool_calls == ToolCallContent::Null
        && body["messages"].as_array().is_some_and(|ms| {
            ms.iter()
                .any(|m| m["role"] == "assistant" && m["content"].is_null())
        });
    sent_null && message.starts_with("HTTP ") && message.contains("content")
}

/// A conversation message in Chat Completions form; `empty` is the
/// `content` of an assistant message that only calls tools.
fn wire_message(m: &Message, empty: ToolCallContent) -> Value {
    match m {
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant {
            text, tool_calls, ..
        } => {
            let mut o = Map::new();
            o.insert("role".into(), json!("assistant"));
            let content = if text.is_empty() && !tool_calls.is_empty() {
                match empty {
                    ToolCallContent::Null => Value::Null,
                    ToolCallContent::Empty => json!(""),
                }
            } else {
                json!(text)
            };
            o.insert("content".into(), content);
            if !tool_calls.is_empty() {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": argument_text(c)}
                        })
                    })
                    .collect();
                o.insert("tool_calls".into(), Value::Array(calls));
            }
            Value::Object(o)
        }
        Message::Tool {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
    }
}

/// The arguments as the model sent them.
pub fn argument_text(c: &ToolCallRequest) -> String {
    match (&c.arguments, &c.invalid_arguments) {
        (_, Some(raw)) => raw.clone(),
        (Some(v), None) => v.to_string(),
        (None, None) => "{}".into(),
    }
}

fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
    Some(Usage {
        input_tokens: n("prompt_tokens"),
        output_tokens: n("completion_tokens"),
        // Part of prompt_tokens (OpenAI and the servers that copy it).
        cached_input_tokens: u
            .pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        ..Usage::default()
    })
}

/// Text of a `content` that is a string, null, or a list of parts.
fn content_text(c: Option<&Value>) -> String {
    match c {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// A non-streamed answer.
fn parse_response(raw: Value) -> Result<ModelTurn, Failure> {
    if let Some(e) = raw.get("error") {
        return Err(Failure::answered("error in the answer", e));
    }
    let message = raw
        .pointer("/choices/0/message")
        .ok_or_else(|| Failure::fatal(format!("the answer has no choices[0].message: {raw}")))?;
    let mut asm = CallAssembler::new("call_");
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function").unwrap_or(c);
            let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
            let id = c.get("id").and_then(Value::as_str);
            match f.get("arguments") {
                Some(Value::String(s)) => asm.push(i as u64, id, Some(name), s),
                Some(v @ Value::Object(_)) => asm.push_whole(i as u64, id, name, v),
                _ => asm.push(i as u64, id, Some(name), ""),
            }
        }
    }
    Ok(ModelTurn {
        text: content_text(message.get("content")),
        tool_calls: asm.finish(),
        usage: usage_of(&raw).unwrap_or_default(),
        service_tier: raw["service_tier"].as_str().map(str::to_string),
        raw,
        replay: None,
    })
}

/// A streamed answer, handing each finished tool call to `early`.
async fn read_stream(mut sse: SseReader, early: Option<&EarlyCalls>) -> Result<ModelTurn, Failure> {
    let mut asm = CallAssembler::new("call_");
    let mut text = String::new();
    let mut usage = None;
    let mut finish: Option<String> = None;
    let mut done = false;
    let (mut id, mut model) = (Value::Null, Value::Null);
    let mut service_tier: Option<String> = None;
    loop {
        let ev = match sse.next().await {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            Err(f) => return Err(asm.cut(f.message)),
        };
        let data = ev.data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            Failure::fatal(format!(
                "a stream chunk is not JSON ({e}): {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        if let Some(e) = chunk.get("error") {
            return Err(asm.unless_handed_out(Failure::answered("error event in the stream", e)));
        }
        if id.is_null() {
            id = chunk.get("id").cloned().unwrap_or(Value::Null);
            model = chunk.get("model").cloned().unwrap_or(Value::Null);
        }
        if let Some(u) = usage_of(&chunk) {
            usage = Some(u);
        }
        if let Some(t) = chunk.get("service_tier").and_then(Value::as_str) {
            service_tier = Some(t.to_string());
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            continue;
        };
        let delta = choice
            .get("delta")
            .or_else(|| choice.get("message"))
            .unwrap_or(&Value::Null);
        text.push_str(&content_text(delta.get("content")));
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (pos, c) in calls.iter().enumerate() {
                let key = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
                let f = c.get("function").unwrap_or(&Value::Null);
                let name = f.get("name").and_then(Value::as_str);
                let id = c.get("id").and_then(Value::as_str);
                match f.get("arguments") {
                    Some(Value::String(s)) => asm.push(key, id, name, s),
                    Some(v @ Value::Object(_)) => {
                        asm.push_whole(key, id, name.unwrap_or_default(), v)
                    }
                    _ => asm.push(key, id, name, ""),
                }
                asm.complete_before(key, early);
            }
        }
        if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
            finish = Some(r.to_string());
            asm.complete_all(early);
        }
    }
    if !done && finish.is_none() {
        return Err(asm
            .cut("the stream ended before the answer was complete (no finish_reason, no [DONE])"));
    }
    asm.complete_all(early);
    let tool_calls = asm.finish();
    let usage = usage.unwrap_or_default();
    let raw = json!({
        "id": id,
        "model": model,
        "object": "chat.completion",
        "streamed_events": sse.count,
        "choices": [{
            "index": 0,
            "message": wire_message(&Message::Assistant {
                text: text.clone(),
                tool_calls: tool_calls.clone(),
                replay: None,
            }, ToolCallContent::Null),
            "finish_reason": finish,
        }],
        "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                  "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens}},
        "service_tier": service_tier,
    });
    Ok(ModelTurn {
        text,
        tool_calls,
        usage,
        raw,
        replay: None,
        service_tier,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_messages_keep_calls_and_raw_bad_arguments() {
        let m = Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCallRequest {
                id: "c1".into(),
                name: "ls".into(),
                arguments: None,
                invalid_arguments: Some("{oops".into()),
            }],
            replay: None,
        };
        let w = wire_message(&m, ToolCallContent::Null);
        assert_eq!(w["content"], Value::Null);
        assert_eq!(w["tool_calls"][0]["function"]["arguments"], "{oops");
        let w = wire_message(&m, ToolCallContent::Empty);
        assert_eq!(w["content"], "");
    }

    #[test]
    fn a_plain_answer_with_list_content_parses() {
        let t = parse_response(json!({
            "choices": [{"message": {"content": [{"type": "text", "text": "hi"}]}}]
        }))
        .unwrap();
        assert_eq!(t.text, "hi");
        assert!(t.tool_calls.is_empty());
        assert_eq!(t.usage, Usage::default());
    }
}
