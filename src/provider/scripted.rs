//! The scripted provider: plays a task's `script:` turns in order.
//!
//! Each request gets the next turn; when the script runs out the model
//! answers with no tool calls, which ends the conversation. Retries after
//! failed checks continue the script where it stopped, so a script can show
//! an agent fixing what a check found.

use std::sync::{Arc, Mutex};

use serde_json::json;

use super::{
    ModelRequest, ModelTurn, Provider, ProviderError, RequestPurpose, ToolCallRequest, TurnFuture,
    Usage,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use serde_saphyr::Spanned;

/// One tool call of a scripted turn.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    /// The tool's name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The arguments, any YAML mapping.
    #[serde(default)]
    pub args: Option<Value>,
    /// Arguments as raw text, sent as is (to test malformed JSON).
    #[serde(default)]
    pub raw_args: Option<String>,
    /// The call's id (default: one made up).
    #[serde(default)]
    pub id: Option<String>,
}

/// One scripted model turn: text, tool calls, or both.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptTurn {
    /// The turn's text (the final answer on a turn without calls).
    #[serde(default)]
    pub text: Option<String>,
    /// The tool calls the turn asks for.
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
}

pub struct ScriptedProvider {
    turns: Arc<[ScriptTurn]>,
    next: Mutex<usize>,
    /// Messages already counted and their tokens: the conversation only
    /// grows, so each request counts only what is new.
    counted: Mutex<(usize, u64)>,
}

impl ScriptedProvider {
    pub fn new(turns: impl Into<Arc<[ScriptTurn]>>) -> Self {
        Self {
            turns: turns.into(),
            next: Mutex::new(0),
            counted: Mutex::new((0, 0)),
        }
    }

    /// Plays the script from turn `done` on (a resumed task's model has
    /// answered `done` turns already).
    pub fn starting_at(self, done: usize) -> Self {
        *self.next.lock().unwrap_or_else(|e| e.into_inner()) = done;
        self
    }
}

/// A rough token count (4 characters a token), so that budgets and reports
/// have numbers to show for scripted runs.
fn estimate_tokens(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

/// [`estimate_tokens`] of a value's JSON, counted as it is written instead
/// of built as a string.
fn estimate_json_tokens(v: &impl serde::Serialize) -> u64 {
    /// Counts the characters of UTF-8 written to it.
    struct Chars(u64);
    impl std::io::Write for Chars {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Chars(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0.div_ceil(4)
}

impl Provider for ScriptedProvider {
    fn name(&self) -> String {
        "scripted".into()
    }

    fn complete<'a>(&'a self, req: ModelRequest<'a>) -> TurnFuture<'a> {
        Box::pin(async move {
            // A compaction's summary is not one of the script's turns.
            if req.purpose == RequestPurpose::Summary {
                let input: u64 = req.messages.iter().map(estimate_json_tokens).sum();
                return Ok(ModelTurn {
                    text: format!("(scripted summary of {} message(s))", req.messages.len()),
                    usage: Usage {
                        input_tokens: input + estimate_tokens(req.system),
                        ..Usage::default()
                    },
                    raw: json!({"script": "summary"}),
                    ..ModelTurn::default()
                });
            }
            let index = {
                let mut n = self.next.lock().map_err(|_| ProviderError {
                    provider: "scripted".into(),
                    message: "internal lock poisoned".into(),
                    class: runner_output::ErrorClass::Unavailable,
                    calls_started: false,
                })?;
                let i = *n;
                *n += 1;
                i
            };
            let input = {
                let mut c = self.counted.lock().map_err(|_| ProviderError {
                    provider: "scripted".into(),
                    message: "internal lock poisoned".into(),
                    class: runner_output::ErrorClass::Unavailable,
                    calls_started: false,
                })?;
                if c.0 > req.messages.len() {
                    *c = (0, 0);
                }
                let new: u64 = req.messages[c.0..].iter().map(estimate_json_tokens).sum();
                *c = (req.messages.len(), c.1 + new);
                estimate_tokens(req.system) + c.1
            };
            let Some(turn) = self.turns.get(index) else {
                return Ok(ModelTurn {
                    text: String::new(),
                    tool_calls: vec![],
                    usage: Usage {
                        input_tokens: input,
                        ..Usage::default()
                    },
                    raw: json!({"script": "exhausted", "turn": index}),
                    service_tier: None,
                    replay: None,
                });
            };
            let tool_calls = turn
                .tool_calls
                .iter()
                .enumerate()
                .map(|(j, c)| {
                    let id =
                        c.id.clone()
                            .unwrap_or_else(|| format!("call_{}_{}", index + 1, j + 1));
                    match &c.raw_args {
                        Some(raw) => match serde_json::from_str(raw) {
                            Ok(v) => ToolCallRequest {
                                id,
                                name: c.name.value.clone(),
                                arguments: Some(v),
                                invalid_arguments: None,
                            },
                            Err(_) => ToolCallRequest {
                                id,
                                name: c.name.value.clone(),
                                arguments: None,
                                invalid_arguments: Some(raw.clone()),
                            },
                        },
                        None => ToolCallRequest {
                            id,
                            name: c.name.value.clone(),
                            arguments: Some(c.args.clone().unwrap_or_else(|| json!({}))),
                            invalid_arguments: None,
                        },
                    }
                })
                .collect::<Vec<_>>();
            let text = turn.text.clone().unwrap_or_default();
            let output =
                estimate_tokens(&text) + tool_calls.iter().map(estimate_json_tokens).sum::<u64>();
            Ok(ModelTurn {
                raw: json!({"script_turn": index}),
                replay: None,
                service_tier: None,
                text,
                tool_calls,
                usage: Usage {
                    input_tokens: input,
                    output_tokens: output,
                    ..Usage::default()
                },
            })
        })
    }
}
