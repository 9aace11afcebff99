//! `gemini:MODEL`: `generateContent`, or `streamGenerateContent?alt=sse`,
//! with `functionDeclarations`, `functionCall` and `functionResponse` parts.
//!
//! Gemini sends each function call whole, so a call is handed to the engine
//! as soon as its chunk arrives. The model's parts are kept as they came
//! (`replay`) and sent back verbatim on the next turn: thinking models
//! require their `thoughtSignature`s back. A stream has no end marker; one
//! that ends before a `finishReason` was cut short.

use serde_json::{Map, Value, json};

use super::assemble::CallAssembler;
use super::client::{StreamFuture, WireFormat, merge_roles};
use super::config::ProviderConfig;
use super::failure::Failure;
use super::gemini_schema::gemini_schema;
use super::http::SseReader;
use super::{EarlyCalls, Message, ModelRequest, ModelTurn, ToolChoice, ToolSpec, Usage};

/// Ids made up for calls Gemini sent without one; they are not sent back.
const LOCAL_ID: &str = "gemini_call_";

/// `generateContent` and `streamGenerateContent`.
pub struct Gemini;

impl WireFormat for Gemini {
    fn vendor(&self) -> &'static str {
        "gemini"
    }

    fn url(&self, cfg: &ProviderConfig) -> String {
        if cfg.stream {
            format!(
                "{}/models/{}:streamGenerateContent?alt=sse",
                cfg.base_url, cfg.model
            )
        } else {
            format!("{}/models/{}:generateContent", cfg.base_url, cfg.model)
        }
    }

    fn headers(&self, cfg: &ProviderConfig) -> Vec<(&'static str, String)> {
        match &cfg.api_key {
            Some(k) => vec![("x-goog-api-key", k.expose().to_string())],
            None => vec![],
        }
    }

    fn declarations(&self, tools: &[ToolSpec]) -> Value {
        let decls: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description, "parameters": gemini_schema(&t.input_schema)})
            })
            .collect();
        json!([{ "functionDeclarations": decls }])
    }

    fn body(&self, cfg: &ProviderConfig, req: &ModelRequest<'_>) -> Value {
        let mut body = Map::new();
        body.insert("contents".into(), Value::Array(wire_contents(req.messages)));
        if !req.system.is_empty() {
            body.insert(
                "systemInstruction".into(),
                json!({"parts": [{"text": req.system}]}),
            );
        }
        if !req.tools.is_empty() {
            body.insert("tools".into(), self.declarations(req.tools));
            let config = match req.tool_choice {
                ToolChoice::Auto => None,
                ToolChoice::Required => Some(json!({"mode": "ANY"})),
                ToolChoice::None => Some(json!({"mode": "NONE"})),
                ToolChoice::Tool(name) => {
                    Some(json!({"mode": "ANY", "allowedFunctionNames": [name]}))
                }
            };
            if let Some(c) = config {
                body.insert("toolConfig".into(), json!({"functionCallingConfig": c}));
            }
        }
        let mut gen_cfg = Map::new();
        if let Some(t) = cfg.temperature {
            gen_cfg.insert("temperature".into(), json!(t));
        }
        if let Some(m) = cfg.max_tokens {
            gen_cfg.insert("maxOutputTokens".into(), json!(m));
        }
        if !gen_cfg.is_empty() {
            body.insert("generationConfig".into(), Value::Object(gen_cfg));
        }
        Value::Object(body)
    }

    fn parse(&self, raw: Value) -> Result<ModelTurn, Failure> {
        let mut turn = Turn::new();
        turn.add_chunk(&raw, None)?;
        if turn.finish.is_none() && turn.parts.is_empty() {
            return Err(Failure::fatal(format!(
                "the answer has no candidates: {raw}"
            )));
        }
        Ok(turn.into_model_turn(raw))
    }

    fn read_stream<'a>(
        &'a self,
        sse: SseReader,
        early: Option<&'a EarlyCalls>,
    ) -> StreamFuture<'a> {
        Box::pin(read_stream(sse, early))
    }
}

/// The conversation as `contents`, same roles merged.
fn wire_contents(messages: &[Message]) -> Vec<Value> {
    let items = messages.iter().map(|m| match m {
            Message::User { content } => ("user", vec![json!({"text": content})]),
            Message::Assistant {
                text,
                tool_calls,
                replay,
            } => {
                if let Some(parts) = replay
                    .as_ref()
                    .and_then(|r| r.get("parts"))
                    .and_then(Value::as_array)
                {
                    ("model", parts.clone())
                } else {
                    let mut p = Vec::new();
                    if !text.is_empty() {
                        p.push(json!({"text": text}));
                    }
                    for c in tool_calls {
                        let mut call = json!({"name": c.name,
                            "args": c.arguments.clone().filter(Value::is_object).unwrap_or_else(|| json!({}))});
                        if !c.id.starts_with(LOCAL_ID) {
                            call["id"] = json!(c.id);
                        }
                        p.push(json!({ "functionCall": call }));
                    }
                    ("model", p)
                }
            }
            Message::Tool {
                call_id,
                name,
                content,
                is_error,
            } => {
                let response = if *is_error {
                    json!({"error": content})
                } else {
                    json!({"content": content})
                };
                let mut r = json!({"name": name, "response": response});
                if !call_id.starts_with(LOCAL_ID) {
                    r["id"] = json!(call_id);
                }
                ("user", vec![json!({ "functionResponse": r })])
            }
    });
    merge_roles(items, "parts")
}

/// A turn built from one answer or many stream chunks.
#[derive(Default)]
struct Turn {
    parts: Vec<Value>,
    text: String,
    calls: CallAssembler,
    next_key: u64,
    usage: Usage,
    finish: Option<String>,
}

impl Turn {
    fn new() -> Self {
        Self {
            calls: CallAssembler::new(LOCAL_ID),
            ..Self::default()
        }
    }

    fn add_chunk(&mut self, chunk: &Value, early: Option<&EarlyCalls>) -> Result<(), Failure> {
        if let Some(e) = chunk.get("error") {
            return Err(self
                .calls
                .unless_handed_out(Failure::answered("error in the answer", e)));
        }
        if let Some(reason) = chunk
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            return Err(Failure::of(
                runner_output::ErrorClass::RefusedRequest,
                format!("the prompt was blocked: {reason}"),
            ));
        }
        if let Some(u) = chunk.get("usageMetadata") {
            let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.usage = Usage {
                input_tokens: n("promptTokenCount"),
                output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                // Part of promptTokenCount.
                cached_input_tokens: n("cachedContentTokenCount"),
                ..Usage::default()
            };
        }
        let Some(cand) = chunk.pointer("/candidates/0") else {
            return Ok(());
        };
        let parts = cand
            .pointer("/content/parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for p in parts {
            if let Some(fc) = p.get("functionCall") {
                let key = self.next_key;
                self.next_key += 1;
                self.calls.push_whole(
                    key,
                    fc.get("id").and_then(Value::as_str),
                    fc.get("name").and_then(Value::as_str).unwrap_or_default(),
                    fc.get("args").unwrap_or(&json!({})),
                );
                self.calls.complete(key, early);
            } else if p.get("thought").and_then(Value::as_bool) != Some(true)
                && let Some(t) = p.get("text").and_then(Value::as_str)
            {
                self.text.push_str(t);
            }
            self.parts.push(p);
        }
        if let Some(r) = cand.get("finishReason").and_then(Value::as_str) {
            self.finish = Some(r.to_string());
        }
        Ok(())
    }

    fn into_model_turn(mut self, raw: Value) -> ModelTurn {
        self.calls.complete_all(None);
        ModelTurn {
            text: self.text,
            tool_calls: self.calls.finish(),
            usage: self.usage,
            raw,
            replay: Some(json!({"role": "model", "parts": self.parts})),
            service_tier: None,
        }
    }
}

async fn read_stream(mut sse: SseReader, early: Option<&EarlyCalls>) -> Result<ModelTurn, Failure> {
    let mut turn = Turn::new();
    let mut chunks = Vec::new();
    loop {
        match sse.next().await {
            Ok(None) => break,
            Err(f) => return Err(turn.calls.cut(f.message)),
            Ok(Some(ev)) => {
                if ev.data.trim().is_empty() {
                    continue;
                }
                let chunk: Value = serde_json::from_str(&ev.data).map_err(|e| {
                    Failure::fatal(format!(
                        "a stream chunk is not JSON ({e}): {}",
                        ev.data.chars().take(200).collect::<String>()
                    ))
                })?;
                turn.add_chunk(&chunk, early)?;
                chunks.push(chunk);
            }
        }
    }
    if turn.finish.is_none() {
        return Err(turn.calls.cut("the stream ended before a finishReason"));
    }
    let raw = json!({
        "candidates": [{
            "content": {"role": "model", "parts": turn.parts},
            "finishReason": turn.finish,
        }],
        "usageMetadata": {
            "promptTokenCount": turn.usage.input_tokens,
            "candidatesTokenCount": turn.usage.output_tokens,
        },
        "streamed_events": chunks.len(),
    });
    Ok(turn.into_model_turn(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolCallRequest;

    #[test]
    fn replayed_parts_go_back_verbatim_and_responses_merge() {
        let parts = json!({"role": "model", "parts": [
            {"functionCall": {"name": "ls", "args": {}}, "thoughtSignature": "sig"}
        ]});
        let msgs = vec![
            Message::User {
                content: "go".into(),
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![ToolCallRequest {
                    id: format!("{LOCAL_ID}1"),
                    name: "ls".into(),
                    arguments: Some(json!({})),
                    invalid_arguments: None,
                }],
                replay: Some(parts),
            },
            Message::Tool {
                call_id: format!("{LOCAL_ID}1"),
                name: "ls".into(),
                content: "a\nb".into(),
                is_error: false,
            },
        ];
        let w = wire_contents(&msgs);
        assert_eq!(w[1]["parts"][0]["thoughtSignature"], "sig");
        assert_eq!(w[2]["parts"][0]["functionResponse"]["name"], "ls");
        assert!(w[2]["parts"][0]["functionResponse"].get("id").is_none());
    }
}
