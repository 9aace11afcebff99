//! Model providers behind one trait.
//!
//! The engine speaks [`Message`]s and gets back a [`ModelTurn`]; each provider
//! translates to its vendor's wire format. `scripted` plays a task's
//! `script:` and needs no network: the examples and most tests use it. The
//! HTTP clients (`openai`, `anthropic`, `gemini`) are written by hand over
//! reqwest with tolerant types; [`http`] holds what they share (timeouts,
//! server-sent events), [`retry`] and [`failure`] how a failed request is
//! classed and sent again, [`governor`] the pace the run's requests to one
//! server share, and [`assemble`] joins streamed tool calls. The
//! trait and the request it takes are [`api`]'s.

mod anthropic;
mod api;
mod assemble;
pub(crate) mod batch;
pub(crate) mod chain;
mod client;
pub(crate) mod config;
pub(crate) mod failure;
mod gemini;
mod gemini_schema;
pub(crate) mod governor;
pub(crate) mod http;
pub(crate) mod learn;
mod message;
pub(crate) mod models;
mod openai;
mod openai_responses;
mod probe;
mod rate_headers;
pub(crate) mod retry;
mod scripted;
mod spec;
pub(crate) mod tier;

pub(crate) use anthropic::Anthropic;
pub(crate) use client::{HttpProvider, WireFormat};
pub use config::Vendor;
pub(crate) use config::{ModelOptions, ProviderConfig, ProviderSetupError, ToolCallContent};
pub(crate) use gemini::Gemini;
pub(crate) use message::{Message, ModelTurn, ToolCallRequest, ToolSpec, Usage};
pub(crate) use openai::OpenAi;
pub(crate) use openai_responses::OpenAiResponses;
pub(crate) use scripted::{ScriptTurn, ScriptedProvider};
pub(crate) use spec::{ModelSpec, ModelSpecError};

pub use api::{
    ActiveModel, EarlyCalls, ModelRequest, Provider, ProviderError, RequestPurpose, ToolChoice,
    TurnFuture,
};

/// The tool declarations a vendor's requests carry (`runner tools`).
pub fn declarations(vendor: Vendor, tools: &[ToolSpec]) -> serde_json::Value {
    match vendor {
        Vendor::OpenAi => OpenAi.declarations(tools),
        Vendor::Anthropic => Anthropic.declarations(tools),
        Vendor::Gemini => Gemini.declarations(tools),
    }
}

/// The HTTP provider for a resolved configuration.
pub fn http_provider(cfg: ProviderConfig) -> Result<Box<dyn Provider>, ProviderSetupError> {
    batched_provider(cfg, None).map(|(p, _)| p)
}

/// A model, and its seat at a vendor batch when it asks in batches.
pub type Seated = (Box<dyn Provider>, Option<std::sync::Arc<batch::Seat>>);

/// The HTTP provider for a resolved configuration, asking through the
/// vendor's batch API when `join` is given (`runner run --batch`), with
/// its seat at the batcher then.
pub fn batched_provider(
    cfg: ProviderConfig,
    join: Option<batch::BatchJoin>,
) -> Result<Seated, ProviderSetupError> {
    fn make<W: WireFormat>(
        w: W,
        cfg: ProviderConfig,
        client: reqwest::Client,
        join: Option<batch::BatchJoin>,
    ) -> Seated {
        let p = HttpProvider::new(w, cfg, client);
        let p = match join {
            Some(j) => p.batched(j),
            None => p,
        };
        let seat = p.seat();
        (Box::new(p), seat)
    }
    let client = http::client(&cfg.base_url)?;
    Ok(match cfg.vendor {
        Vendor::OpenAi if cfg.api == config::OpenAiApi::Responses => {
            make(OpenAiResponses, cfg, client, join)
        }
        Vendor::OpenAi => make(OpenAi, cfg, client, join),
        Vendor::Anthropic => make(Anthropic, cfg, client, join),
        Vendor::Gemini => make(Gemini, cfg, client, join),
    })
}
