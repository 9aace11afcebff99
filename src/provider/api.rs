//! The face every model has: the request the engine makes
//! ([`ModelRequest`]), the [`Provider`] trait that answers it, and the
//! error a provider fails with.

use std::future::Future;
use std::pin::Pin;

use super::message::Message;
use super::message::{ModelTurn, ToolCallRequest, ToolSpec};
use super::models;

/// Where a streaming provider hands each tool call, with its position in
/// the turn, as soon as its arguments are complete, so the engine can start
/// read-only calls while the model is still streaming the rest.
pub type EarlyCalls = tokio::sync::mpsc::UnboundedSender<(usize, ToolCallRequest)>;

/// What the engine asks of a model.
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    /// The tools the model may call, rendered by each vendor's
    /// [`WireFormat::declarations`].
    pub tools: &'a [ToolSpec],
    /// Set when the engine can start calls before the turn ends.
    pub early: Option<&'a EarlyCalls>,
    /// A turn of the task, or a request of the runner's own.
    pub purpose: RequestPurpose,
    /// Whether the model must call a tool (the task's first turn only).
    pub tool_choice: &'a ToolChoice,
    /// The schema of the final answer, for vendors that enforce one
    /// natively together with tools.
    pub output_schema: Option<&'a serde_json::Value>,
}

/// `model_options.tool_choice`: whether the model must call a tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides (the default, and every turn after the first).
    #[default]
    Auto,
    /// It must call some tool.
    Required,
    /// It must not call any.
    None,
    /// It must call this one.
    Tool(String),
}

impl ToolChoice {
    /// `auto`, `required`, `none` or a tool's name.
    pub fn parse(s: &str) -> Self {
        match s {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            name => ToolChoice::Tool(name.to_string()),
        }
    }
}

/// What a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestPurpose {
    /// The agent's next turn.
    Turn,
    /// A summary of the work so far, to compact the conversation (no
    /// tools; the scripted model answers it without using a turn).
    Summary,
}

/// A failure to get a turn from the model: an infrastructure error, with
/// its class.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{provider} ({}): {message}", class.as_str())]
pub struct ProviderError {
    pub provider: String,
    pub message: String,
    pub class: runner_output::ErrorClass,
    /// Some of the answer's calls had started when it failed: sending the
    /// turn to another model would ask for them again.
    pub calls_started: bool,
}

/// The model a fallback chain has moved to: what the agent loop needs to
/// go on with it (its window, its price).
#[derive(Debug, Clone)]
pub struct ActiveModel {
    /// `PROVIDER:MODEL`.
    pub name: String,
    pub window: u64,
    pub pricing: Option<models::Pricing>,
}

pub type TurnFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelTurn, ProviderError>> + Send + 'a>>;

/// A model.
pub trait Provider: Send + Sync {
    /// `scripted`, `openai:gpt-4.1` ...
    fn name(&self) -> String;
    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> TurnFuture<'a>;
    /// For a fallback chain ([`chain::Chain`]): the model now answering.
    /// `None`: a single model, the task's own.
    fn active(&self) -> Option<ActiveModel> {
        None
    }
    /// For a fallback chain: moves to the next model for the rest of the
    /// task; `None` when there is none left (or no chain).
    fn fall_back(&self) -> Option<ActiveModel> {
        None
    }
    /// The context window the server of the model answering now told
    /// (asked, or named in a refusal), where the task left it to the
    /// runner: it replaces the table's (or the default) guess.
    fn window(&self) -> Option<u64> {
        None
    }
    /// What the runner changed in its requests because the server refused
    /// their shape ([`learn`]), one line each.
    fn adaptations(&self) -> Vec<String> {
        Vec::new()
    }
}
