//! The conversation types, from `runner-output` (they are written to the
//! transcript as they are), and what a provider returns for one turn.

use serde_json::Value;

pub use runner_output::{Message, ToolCallRequest, Usage};

/// A tool as a model is told of it: each vendor's [`WireFormat`] renders
/// these into its own declarations.
///
/// [`WireFormat`]: super::WireFormat
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
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
    /// The tier that served it, as the vendor names it (OpenAI's
    /// `service_tier`, Anthropic's `usage.service_tier`), for its price.
    pub service_tier: Option<String>,
}
