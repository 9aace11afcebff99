//! Provider-neutral conversation types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    /// The arguments when they are valid JSON.
    pub arguments: Option<Value>,
    /// The raw argument text when it is not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<String>,
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
    pub fn add(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        content: String,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default)]
        tool_calls: Vec<ToolCallRequest>,
        /// The vendor's own form of this message, sent back verbatim on
        /// later turns when the vendor needs it (Gemini's thought
        /// signatures).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Value>,
    },
    Tool {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// What the model answered in one turn.
#[derive(Debug, Clone, Default)]
pub struct ModelTurn {
    pub text: String,
    pub tool_calls: Vec<ToolCallRequest>,
    pub usage: Usage,
    /// The provider's raw response, kept for the transcript.
    pub raw: Value,
    /// See [`Message::Assistant`]'s `replay`.
    pub replay: Option<Value>,
}
