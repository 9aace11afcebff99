//! The conversation, in a form no vendor owns.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallRequest {
    /// The call's id, as the vendor gave it (or made up when it gave none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments when they are valid JSON.
    pub arguments: Option<Value>,
    /// The raw argument text when it is not valid JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_arguments: Option<String>,
}

/// What kind of failure a model provider's error is; the class decides
/// what the runner does about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Too many requests (HTTP 429): wait as the server says, then retry.
    RateLimited,
    /// The vendor is overloaded (Anthropic's 529, an `overloaded` error):
    /// retry, then fall back.
    Overloaded,
    /// The vendor could not be reached or failed (5xx, a connection error,
    /// a timeout, a stream cut short): retry, then fall back.
    Unavailable,
    /// The account's quota or credit is spent: never retried; fall back.
    Quota,
    /// The key was refused (401/403): never retried; fall back.
    Auth,
    /// The request does not fit the model's window: compact, then retry.
    ContextOverflow,
    /// A 4xx that will never pass as sent: never retried; fall back.
    RefusedRequest,
    /// The answer could not be read (not JSON, no message): never retried;
    /// fall back.
    BadResponse,
}

impl ErrorClass {
    /// The name used in the JSON (`rate_limited` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::RateLimited => "rate_limited",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::Unavailable => "unavailable",
            ErrorClass::Quota => "quota",
            ErrorClass::Auth => "auth",
            ErrorClass::ContextOverflow => "context_overflow",
            ErrorClass::RefusedRequest => "refused_request",
            ErrorClass::BadResponse => "bad_response",
        }
    }

    /// Whether the same request may pass if sent again.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimited | ErrorClass::Overloaded | ErrorClass::Unavailable
        )
    }
}

/// A model request that failed and was sent again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RetryRecord {
    /// The try that failed, counted from 1 across the turn's requests (a
    /// request sent again after a compaction, or to a fallback model).
    pub attempt: u32,
    /// What failed: its first line, secrets masked.
    pub error: String,
    /// Its class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ErrorClass>,
    /// Milliseconds from the request's start to the failure.
    pub at_ms: u64,
    /// How long the runner waited before the next try (the server's
    /// `Retry-After` when it gave one).
    pub wait_ms: u64,
}

/// Token counts and cost of one turn or of a whole task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Usage {
    /// Tokens the model read, cached ones included.
    pub input_tokens: u64,
    /// Tokens the model wrote.
    pub output_tokens: u64,
    /// The part of `input_tokens` read from the vendor's prompt cache
    /// (billed at the cached-input price).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// The part of `input_tokens` written to the vendor's prompt cache
    /// (Anthropic bills it above the input price; others report none).
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    /// What the tokens cost in US dollars at the task's prices; null when
    /// the model's price is unknown (never 0 for "unknown").
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Input and output together.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Adds another turn's counts. The cost stays known only while every
    /// turn's is: start from `cost_usd: Some(0.0)` for a priced model.
    pub fn add(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.cache_write_input_tokens += o.cache_write_input_tokens;
        self.cost_usd = match (self.cost_usd, o.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The task's prompt, or what the runner tells the model (a failed
    /// check's output).
    User {
        /// The text.
        content: String,
    },
    /// What the model answered.
    Assistant {
        /// Its text.
        #[serde(default)]
        text: String,
        /// The tool calls it asked for.
        #[serde(default)]
        tool_calls: Vec<ToolCallRequest>,
        /// The vendor's own form of this message, sent back verbatim on
        /// later turns when the vendor needs it (Gemini's thought
        /// signatures).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Value>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call it answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the model is shown.
        content: String,
        /// Whether the call failed or was denied.
        is_error: bool,
    },
}
