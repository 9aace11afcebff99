//! Model providers behind one trait.
//!
//! The engine speaks [`Message`]s and gets back a [`ModelTurn`]; each provider
//! translates to its vendor's wire format. `scripted` plays a task's
//! `script:` and needs no network: the examples and most tests use it.

mod message;
mod scripted;

use std::future::Future;
use std::pin::Pin;

pub use message::{Message, ModelTurn, ToolCallRequest, Usage};
pub use scripted::ScriptedProvider;

use crate::tools::Registry;

/// What the engine asks of a model.
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a Registry,
}

/// A failure to get a turn from the model: an infrastructure error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct ProviderError {
    pub provider: String,
    pub message: String,
}

pub type TurnFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelTurn, ProviderError>> + Send + 'a>>;

/// A model.
pub trait Provider: Send + Sync {
    /// `scripted`, `openai:gpt-4.1` ...
    fn name(&self) -> String;
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> TurnFuture<'a>;
}
