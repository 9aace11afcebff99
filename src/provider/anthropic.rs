//! `anthropic:MODEL`: the Messages API with tools, streamed or not.
//!
//! Tool results go back as `tool_result` blocks in a user message; messages
//! of the same role in a row are merged, as the API wants roles to
//! alternate. The stream is read event by event (`message_start`,
//! `content_block_start/delta/stop`, `message_delta`, `message_stop`,
//! `ping`, `error`); a call is handed to the engine at its
//! `content_block_stop`. A stream without `message_stop` is cut short.

use serde_json::{Map, Value, json};

use super::assemble::CallAssembler;
use super::client::{StreamFuture, WireFormat, merge_roles};
use super::config::ProviderConfig;
use super::failure::Failure;
use super::http::SseReader;
use super::{EarlyCalls, Message, ModelRequest, ModelTurn, ToolChoice, ToolSpec, Usage};

/// The API version this client speaks.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is used when a task sets none.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

/// The Messages API.
pub struct Anthropic;

impl WireFormat for Anthropic {
    fn vendor(&self) -> &'static str {
        "anthropic"
    }

    fn url(&self, cfg: &ProviderConfig) -> String {
        format!("{}/v1/messages", cfg.base_url)
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", API_VERSION.to_string())];
        if let Some(k) = &cfg.api_key {
            headers.push(("x-api-key", k.expose().to_string()));
        }
        headers
    }

    fn declarations(&self, tools: &[ToolSpec]) -> Value {
        tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect()
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest<'_>) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(cfg.model));
        body.insert(
            "max_tokens".into(),
            json!(cfg.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
        );
        // Prompt caching: breakpoints on the tools, the system prompt and
        // the latest message (three of the four allowed). The tools and
        // system come first in the cached prefix and are the same bytes
        // every turn; the latest message's breakpoint lets the next turn
        // read everything before it from the cache.
        if !req.system.is_empty() {
            body.insert(
                "system".into(),
                json!([{"type": "text", "text": req.system, "cache_control": EPHEMERAL}]),
            );
        }
        let mut messages = wire_messages(req.messages);
        mark_last_block(&mut messages);
        body.insert("messages".into(), Value::Array(messages));
        if !req.tools.is_empty() {
            let mut tools = self.declarations(req.tools);
            if let Some(last) = tools.as_array_mut().and_then(|t| t.last_mut()) {
                last["cache_control"] = json!(EPHEMERAL);
            }
            let choice = match req.tool_choice {
                ToolChoice::Auto => None,
                ToolChoice::Required => Some(json!({"type": "any"})),
                ToolChoice::None => Some(json!({"type": "none"})),
                ToolChoice::Tool(name) => Some(json!({"type": "tool", "name": name})),
            };
            if let Some(c) = choice {
                body.insert("tool_choice".into(), c);
            }
            body.insert("tools".into(), tools);
        }
        if let Some(t) = cfg.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(t) = cfg.service_tier {
            body.insert("service_tier".into(), json!(t.as_str()));
        }
        if cfg.stream {
            body.insert("stream".into(), json!(true));
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
}

/// The conversation as Messages API messages, same roles merged.
/// A cache breakpoint (`cache_control`).
const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

#[derive(serde::Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// Puts a cache breakpoint on the last content block of the last message.
fn mark_last_block(messages: &mut [Value]) {
    let last = messages
        .last_mut()
        .and_then(|m| m.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|c| c.last_mut());
    if let Some(block) = last {
        block["cache_control"] = json!(EPHEMERAL);
    }
}

fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let items = messages.iter().map(|m| match m {
        Message::User { content } => ("user", vec![json!({"type": "text", "text": content})]),
        Message::Assistant {
            text, tool_calls, ..
        } => {
            let mut b = Vec::new();
            if !text.is_empty() {
                b.push(json!({"type": "text", "text": text}));
            }
            for c in tool_calls {
                // `input` must be an object; bad arguments were answered
                // with an error result that quotes them.
                let input = c
                    .arguments
                    .clone()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({}));
                b.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
            }
            ("assistant", b)
        }
        Message::Tool {
            call_id,
            content,
            is_error,
            ..
        } => (
            "user",
            vec![json!({
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": content,
                "is_error": is_error,
            })],
        ),
    });
    merge_roles(items, "content")
}

fn usage_of(u: Option<&Value>) -> Usage {
    let n = |k: &str| {
        u.and_then(|u| u.get(k))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    // Anthropic's `input_tokens` leaves out what was read from and
    // written to the cache; ours counts every token read.
    Usage {
        input_tokens: n("input_tokens")
            + n("cache_creation_input_tokens")
            + n("cache_read_input_tokens"),
        output_tokens: n("output_tokens"),
        cached_input_tokens: n("cache_read_input_tokens"),
        cache_write_input_tokens: n("cache_creation_input_tokens"),
        cost_usd: None,
    }
}

fn parse_response(raw: Value) -> Result<ModelTurn, Failure> {
    if raw.get("type").and_then(Value::as_str) == Some("error") {
        return Err(Failure::answered("error in the answer", &raw));
    }
    let blocks = raw
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| Failure::fatal(format!("the answer has no content: {raw}")))?;
    let mut text = String::new();
    let mut asm = CallAssembler::new("toolu_");
    for (i, b) in blocks.iter().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => asm.push_whole(
                i as u64,
                b.get("id").and_then(Value::as_str),
                b.get("name").and_then(Value::as_str).unwrap_or_default(),
                b.get("input").unwrap_or(&json!({})),
            ),
            _ => {}
        }
    }
    Ok(ModelTurn {
        text,
        tool_calls: asm.finish(),
        usage: usage_of(raw.get("usage")),
        service_tier: raw
            .pointer("/usage/service_tier")
            .and_then(Value::as_str)
            .map(str::to_string),
        raw,
        replay: None,
    })
}

async fn read_stream(mut sse: SseReader, early: Option<&EarlyCalls>) -> Result<ModelTurn, Failure> {
    let mut asm = CallAssembler::new("toolu_");
    let mut text = String::new();
    let mut usage = Usage::default();
    let mut message = Value::Null;
    let mut stop_reason = Value::Null;
    let mut stopped = false;
    while !stopped {
        let ev = match sse.next().await {
            Ok(Some(ev)) => ev,
            Ok(None) => {
                return Err(asm.cut("the stream ended before message_stop"));
            }
            Err(f) => return Err(asm.cut(f.message)),
        };
        if ev.data.trim().is_empty() {
            continue;
        }
        let data: Value = serde_json::from_str(&ev.data).map_err(|e| {
            Failure::fatal(format!(
                "a stream event is not JSON ({e}): {}",
                ev.data.chars().take(200).collect::<String>()
            ))
        })?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(ev.event.as_str());
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                message = data.get("message").cloned().unwrap_or(Value::Null);
                let u = usage_of(message.get("usage"));
                usage = u;
            }
            "content_block_start" => {
                let b = data.get("content_block").unwrap_or(&Value::Null);
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        text.push_str(b.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("tool_use") => {
                        let input = b
                            .get("input")
                            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
                            .map(Value::to_string)
                            .unwrap_or_default();
                        asm.push(
                            index,
                            b.get("id").and_then(Value::as_str),
                            b.get("name").and_then(Value::as_str),
                            &input,
                        );
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let d = data.get("delta").unwrap_or(&Value::Null);
                match d.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        text.push_str(d.get("text").and_then(Value::as_str).unwrap_or(""))
                    }
                    Some("input_json_delta") => asm.push(
                        index,
                        None,
                        None,
                        d.get("partial_json").and_then(Value::as_str).unwrap_or(""),
                    ),
                    _ => {}
                }
            }
            "content_block_stop" => asm.complete(index, early),
            "message_delta" => {
                if let Some(r) = data.pointer("/delta/stop_reason") {
                    stop_reason = r.clone();
                }
                if let Some(n) = data.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    usage.output_tokens = n;
                }
                if let Some(n) = data.pointer("/usage/input_tokens").and_then(Value::as_u64) {
                    usage.input_tokens = usage.input_tokens.max(n);
                }
            }
            "message_stop" => stopped = true,
            "error" => {
                return Err(
                    asm.unless_handed_out(Failure::answered("error event in the stream", &data))
                );
            }
            _ => {} // ping, and events added later
        }
    }
    asm.complete_all(early);
    let tool_calls = asm.finish();
    let mut content: Vec<Value> = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for c in &tool_calls {
        content.push(json!({"type": "tool_use", "id": c.id, "name": c.name,
            "input": c.arguments.clone().unwrap_or(Value::Null)}));
    }
    let raw = json!({
        "id": message.get("id"),
        "type": "message",
        "role": "assistant",
        "model": message.get("model"),
        "content": content,
        "stop_reason": stop_reason,
        // In Anthropic's own terms, which count reads and writes apart.
        "usage": {"input_tokens": usage.input_tokens.saturating_sub(usage.cached_input_tokens + usage.cache_write_input_tokens),
                  "output_tokens": usage.output_tokens,
                  "cache_read_input_tokens": usage.cached_input_tokens,
                  "cache_creation_input_tokens": usage.cache_write_input_tokens},
        "streamed_events": sse.count,
    });
    Ok(ModelTurn {
        text,
        tool_calls,
        usage,
        raw,
        replay: None,
        service_tier: message
            .pointer("/usage/service_tier")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCallRequest;

    #[test]
    fn tool_results_merge_into_one_user_message() {
        let msgs = vec![
            Message::User {
                content: "go".into(),
            },
            Message::Assistant {
                text: "reading".into(),
                tool_calls: vec![
                    ToolCallRequest {
                        id: "a".into(),
                        name: "ls".into(),
                        arguments: Some(json!({})),
                        invalid_arguments: None,
                    },
                    ToolCallRequest {
                        id: "b".into(),
                        name: "ls".into(),
                        arguments: None,
                        invalid_arguments: Some("{".into()),
                    },
                ],
                replay: None,
            },
            Message::Tool {
                call_id: "a".into(),
                name: "ls".into(),
                content: "x".into(),
                is_error: false,
            },
            Message::Tool {
                call_id: "b".into(),
                name: "ls".into(),
                content: "bad".into(),
                is_error: true,
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![],
                replay: None,
            },
            Message::User {
                content: "checks failed".into(),
            },
        ];
        let w = wire_messages(&msgs);
        assert_eq!(w.len(), 3);
        assert_eq!(w[1]["content"][2]["input"], json!({}));
        assert_eq!(w[2]["role"], "user");
        assert_eq!(w[2]["content"].as_array().unwrap().len(), 3);
        assert_eq!(w[2]["content"][1]["is_error"], true);
    }
}
