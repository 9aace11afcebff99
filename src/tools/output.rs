//! What a tool call returns: two channels on success, a typed error otherwise.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A successful result. `content` is what the model sees and must stand on its
/// own; `display` is a one-line summary and `metadata` structured data (a
/// diff, counts) for the transcript and the progress display.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolOutput {
    pub content: String,
    pub display: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

impl ToolOutput {
    pub fn new(content: impl Into<String>, display: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            display: display.into(),
            metadata: Value::Null,
        }
    }

    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }
}

pub use runner_output::ToolErrorKind;

/// A failed call. It goes back to the model as an error result; the run goes on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("{kind:?} error: {message}")]
pub struct ToolError {
    pub kind: ToolErrorKind,
    pub message: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
}

impl ToolError {
    fn make(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            metadata: Value::Null,
        }
    }
    pub fn validation(m: impl Into<String>) -> Self {
        Self::make(ToolErrorKind::Validation, m)
    }
    pub fn execution(m: impl Into<String>) -> Self {
        Self::make(ToolErrorKind::Execution, m)
    }
    pub fn permission(m: impl Into<String>) -> Self {
        Self::make(ToolErrorKind::Permission, m)
    }
    pub fn timeout(m: impl Into<String>) -> Self {
        Self::make(ToolErrorKind::Timeout, m)
    }
    pub fn with_metadata(mut self, metadata: Value) -> Self {
        self.metadata = metadata;
        self
    }

    /// The text the model receives.
    pub fn to_model_text(&self) -> String {
        let kind = match self.kind {
            ToolErrorKind::Validation => "validation error",
            ToolErrorKind::Execution => "error",
            ToolErrorKind::Permission => "permission denied",
            ToolErrorKind::Timeout => "timeout",
        };
        format!("Error ({kind}): {}", self.message)
    }
}

impl From<crate::workspace::PathError> for ToolError {
    fn from(e: crate::workspace::PathError) -> Self {
        ToolError::permission(e.to_string())
    }
}
