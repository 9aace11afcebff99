//! `openai:MODEL` with `model_options.api: responses`: OpenAI's Responses
//! API (`/v1/responses`), streamed or not. Stateless: every request
//! carries the whole conversation as input items (`store: false`), as
//! Chat Completions does, so a resumed task and a batch ask the same way.
//!
//! The conversation maps onto items: the system prompt is `instructions`;
//! a user message and an assistant's text are `message` items; each tool
//! call is a `function_call` item (`call_id`, `name`, `arguments`) and each
//! result a `function_call_output`. An answer is its `output` items: the
//! text of its `message`s' `output_text` parts and its `function_call`s
//! (reasoning items are not kept). A stream is read to its
//! `response.completed` event, which holds the whole response; each call
//! is handed out early as its `response.output_item.done` arrives.

use serde_json::{Map, Value, json};

use super::assemble::CallAssembler;
use super::client::{StreamFuture, WireFormat};
use super::config::ProviderConfig;
use super::failure::Failure;
use super::http::SseReader;
use super::openai::{argument_text, native_schema, options};
use super::{EarlyCalls, Message, ModelRequest, ModelTurn, ToolChoice, ToolSpec, Usage};

/// The Responses API.
pub struct OpenAiResponses;

impl WireFormat for OpenAiResponses {
    fn vendor(&self) -> &'static str {
        "openai"
    }

    fn url(&self, cfg: &ProviderConfig) -> String {
        format!("{}/responses", cfg.base_url)
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        super::OpenAi.headers(cfg)
    }

    fn declarations(&self, tools: &[ToolSpec]) -> Value {
        tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.input_schema, "strict": false})
            })
            .collect()
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest<'_>) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(cfg.model));
        body.insert("instructions".into(), json!(req.system));
        body.insert("input".into(), Value::Array(input_items(req.messages)));
        body.insert("store".into(), json!(false));
        if !req.tools.is_empty() {
            body.insert("tools".into(), self.declarations(req.tools));
            let choice = match req.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            };
            body.insert("tool_choice".into(), choice);
        }
        if let Some(schema) = req.output_schema
            && native_schema(cfg)
        {
            body.insert(
                "text".into(),
                json!({"format": {"type": "json_schema", "name": "output", "schema": schema, "strict": false}}),
            );
        }
        options(&mut body, cfg, "max_output_tokens");
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

/// The conversation as input items.
fn input_items(messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::new();
    for m in messages {
        match m {
            Message::User { content } => {
                items.push(json!({"type": "message", "role": "user", "content": content}));
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                if !text.is_empty() {
                    items.push(json!({"type": "message", "role": "assistant", "content": text}));
                }
                items.extend(tool_calls.iter().map(|c| {
                    json!({"type": "function_call", "call_id": c.id, "name": c.name,
                           "arguments": argument_text(c)})
                }));
            }
            Message::Tool {
                call_id, content, ..
            } => {
                items.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": content}),
                );
            }
        }
    }
    items
}

fn usage_of(response: &Value) -> Usage {
    let u = &response["usage"];
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    Usage {
        input_tokens: n("/input_tokens"),
        output_tokens: n("/output_tokens"),
        cached_input_tokens: n("/input_tokens_details/cached_tokens"),
        ..Usage::default()
    }
}

/// The calls of `output` items into `asm` (each at its position among
/// the items), handed to `early` as they are complete.
fn push_call(asm: &mut CallAssembler, key: u64, item: &Value) {
    let id = item
        .get("call_id")
        .or_else(|| item.get("id"))
        .and_then(Value::as_str);
    let name = item["name"].as_str().unwrap_or_default();
    match &item["arguments"] {
        Value::String(s) => asm.push(key, id, Some(name), s),
        v @ Value::Object(_) => asm.push_whole(key, id, name, v),
        _ => asm.push(key, id, Some(name), ""),
    }
}

/// A whole response (a non-streamed answer, or the one a stream's
/// `response.completed` holds).
fn parse_response(raw: Value) -> Result<ModelTurn, Failure> {
    if let Some(e) = raw.get("error").filter(|e| !e.is_null()) {
        return Err(Failure::answered("error in the answer", e));
    }
    let output = raw["output"]
        .as_array()
        .ok_or_else(|| Failure::fatal(format!("the answer has no output items: {raw}")))?;
    let mut asm = CallAssembler::new("call_");
    let mut text = String::new();
    for (i, item) in output.iter().enumerate() {
        match item["type"].as_str() {
            Some("message") => {
                for part in item["content"].as_array().into_iter().flatten() {
                    if part["type"] == "output_text" {
                        text.push_str(part["text"].as_str().unwrap_or_default());
                    }
                }
            }
            Some("function_call") => push_call(&mut asm, i as u64, item),
            _ => {}
        }
    }
    Ok(ModelTurn {
        text,
        tool_calls: asm.finish(),
        usage: usage_of(&raw),
        service_tier: raw["service_tier"].as_str().map(str::to_string),
        raw,
        replay: None,
    })
}

/// A streamed answer: read to `response.completed`, each call handed out
/// as its item is done.
async fn read_stream(mut sse: SseReader, early: Option<&EarlyCalls>) -> Result<ModelTurn, Failure> {
    let mut asm = CallAssembler::new("call_");
    loop {
        let ev = match sse.next().await {
            Ok(Some(ev)) => ev,
            Ok(None) => {
                return Err(asm.cut("the stream ended before response.completed"));
            }
            Err(f) => return Err(asm.cut(f.message)),
        };
        let data = ev.data.trim();
        if data.is_empty() || data == "[DONE]" {
            continue;
        }
        let event: Value = serde_json::from_str(data).map_err(|e| {
            Failure::fatal(format!(
                "a stream event is not JSON ({e}): {}",
                data.chars().take(200).collect::<String>()
            ))
        })?;
        let kind = event["type"].as_str().unwrap_or(ev.event.as_str());
        match kind {
            "response.output_item.done" if event["item"]["type"] == "function_call" => {
                let key = event["output_index"].as_u64().unwrap_or(0);
                push_call(&mut asm, key, &event["item"]);
                asm.complete(key, early);
            }
            // The whole response: the calls handed out early are in it,
            // at the same positions (keyed by their output index).
            "response.completed" | "response.incomplete" => {
                return parse_response(event["response"].clone());
            }
            "response.failed" | "error" => {
                let e = event
                    .pointer("/response/error")
                    .filter(|e| !e.is_null())
                    .or_else(|| event.get("error"))
                    .unwrap_or(&event);
                return Err(
                    asm.unless_handed_out(Failure::answered("error event in the stream", e))
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCallRequest;

    #[test]
    fn the_conversation_becomes_items_and_an_answer_reads_back() {
        let call = ToolCallRequest {
            id: "call_1".into(),
            name: "ls".into(),
            arguments: Some(json!({"path": "src"})),
            invalid_arguments: None,
        };
        let items = input_items(&[
            Message::User {
                content: "go".into(),
            },
            Message::Assistant {
                text: "looking".into(),
                tool_calls: vec![call],
                replay: None,
            },
            Message::Tool {
                call_id: "call_1".into(),
                name: "ls".into(),
                content: "a.rs".into(),
                is_error: false,
            },
        ]);
        let kinds: Vec<&str> = items.iter().map(|i| i["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "message",
                "message",
                "function_call",
                "function_call_output"
            ]
        );
        assert_eq!(items[2]["arguments"], "{\"path\":\"src\"}");
        let t = parse_response(json!({
            "output": [
                {"type": "reasoning", "summary": []},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "done"}]},
                {"type": "function_call", "call_id": "call_2", "name": "ls", "arguments": "{}"}
            ],
            "usage": {"input_tokens": 10, "output_tokens": 3,
                      "input_tokens_details": {"cached_tokens": 4}},
            "service_tier": "flex"
        }))
        .unwrap();
        assert_eq!(t.text, "done");
        assert_eq!(t.tool_calls[0].id, "call_2");
        assert_eq!(t.usage.cached_input_tokens, 4);
        assert_eq!(t.service_tier.as_deref(), Some("flex"));
    }
}
