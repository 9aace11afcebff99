//! Where a provider's endpoint, key and options come from.
//!
//! The vendors' usual variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, ...)
//! give the key and endpoint; a task's `model_options` may set the endpoint
//! and the sampling options. Everything is resolved before a run starts, so
//! a missing key stops the run with exit 2 instead of failing every task.

use std::time::Duration;

use super::ModelSpec;

/// Options a task may set for its model (`model_options:`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOptions {
    pub temperature: Option<f64>,
    /// Most tokens one answer may have.
    pub max_tokens: Option<u64>,
    /// Overrides the endpoint variable.
    pub base_url: Option<String>,
    /// Streaming on (the default) or off, for servers that stream tool
    /// calls badly.
    pub stream: Option<bool>,
    /// Limit of one request, retries not included (default 10m).
    pub request_timeout: Option<Duration>,
    /// Longest silence inside a streamed answer (default 2m).
    pub idle_timeout: Option<Duration>,
    /// Retries after a failed request (default 4).
    pub max_retries: Option<u32>,
    /// The context window in tokens, when the task sets it.
    pub context_window: Option<u64>,
    /// When to compact, as a share of the window (default 0.8).
    pub compact_at: Option<f64>,
    /// The task's own prices.
    pub pricing: Option<super::models::Pricing>,
    /// Whether the first turn must call a tool.
    pub tool_choice: super::ToolChoice,
    /// How the vendor serves the requests (where it defines the tier).
    pub service_tier: Option<super::tier::ServiceTier>,
    /// `content` of an assistant message that only calls tools.
    /// `None`: the runner's choice (`null`, or `""` once a server refused
    /// `null`).
    pub content_with_tool_calls: Option<ToolCallContent>,
    /// `api:`: which of OpenAI's APIs asks the model.
    pub api: OpenAiApi,
}

/// `model_options.api`: OpenAI's two APIs for a model's turns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OpenAiApi {
    /// Chat Completions (`/v1/chat/completions`), which the servers that
    /// copy OpenAI's API speak too.
    #[default]
    Chat,
    /// The Responses API (`/v1/responses`).
    Responses,
}

impl OpenAiApi {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "chat" => Some(Self::Chat),
            "responses" => Some(Self::Responses),
            _ => None,
        }
    }
}

impl ModelOptions {
    /// The options a fallback model gets: the task's choices of behaviour
    /// (temperature, limits, timeouts, retries, streaming, when to compact,
    /// `tool_choice`), without what belongs to the task's own model (its
    /// server, window, prices and wire quirks).
    pub fn for_fallback(&self) -> Self {
        Self {
            base_url: None,
            context_window: None,
            pricing: None,
            content_with_tool_calls: None,
            api: OpenAiApi::Chat,
            ..self.clone()
        }
    }
}

/// What Chat Completions requests carry as the `content` of an assistant
/// message that has tool calls and no text. OpenAI documents `null`, and
/// some gateways refuse an empty text; llama-cpp-python's server (and
/// others built on its pydantic types) refuses `null` and takes `""`. No
/// one spelling is accepted everywhere, so it is a task's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolCallContent {
    /// `"content": null` (the default).
    #[default]
    Null,
    /// `"content": ""`.
    Empty,
}

/// An API key: never printed, never serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

/// A hash of the key a server is asked with (none: no key), for the
/// run's registries per server and key (the rate governor, the batches):
/// requests with one key share its limits, and the key itself is not kept.
pub fn key_hash(key: Option<&ApiKey>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.map(ApiKey::expose).hash(&mut h);
    h.finish()
}

impl ApiKey {
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }
    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// The vendors this build speaks to over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Vendor {
    pub fn from_provider(name: &str) -> Option<Self> {
        match name {
            "openai" => Some(Self::OpenAi),
            "anthropic" => Some(Self::Anthropic),
            "gemini" => Some(Self::Gemini),
            _ => None,
        }
    }
    /// `openai`, `anthropic`, `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
        }
    }
    /// The service tiers its API defines (`model_options.service_tier`).
    pub fn service_tiers(self) -> &'static [super::tier::ServiceTier] {
        use super::tier::ServiceTier::*;
        match self {
            Vendor::OpenAi => &[Auto, Default, Flex, Priority],
            Vendor::Anthropic => &[Auto, StandardOnly],
            Vendor::Gemini => &[],
        }
    }

    pub fn key_var(self) -> &'static str {
        match self {
            Self::OpenAi => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
            Self::Gemini => "GEMINI_API_KEY",
        }
    }
    pub fn base_url_var(self) -> &'static str {
        match self {
            Self::OpenAi => "OPENAI_BASE_URL",
            Self::Anthropic => "ANTHROPIC_BASE_URL",
            Self::Gemini => "GEMINI_BASE_URL",
        }
    }
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta",
        }
    }
}

/// Everything needed to talk to one model.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub vendor: Vendor,
    pub model: String,
    /// Without a trailing slash.
    pub base_url: String,
    /// `None` only for an OpenAI-compatible server at a custom address
    /// (Ollama, llama.cpp and vLLM need none).
    pub api_key: Option<ApiKey>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    pub stream: bool,
    pub request_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_retries: u32,
    /// Chat Completions only.
    pub content_with_tool_calls: ToolCallContent,
    /// The task's tier, where this vendor defines it.
    pub service_tier: Option<super::tier::ServiceTier>,
    /// Which of OpenAI's APIs (other vendors have one).
    pub api: OpenAiApi,
    /// What the task left to the runner, which a server's refusal may
    /// change for the run ([`super::learn`]).
    pub learnable: Learnable,
}

/// The request shapes a task did not choose, so the runner may change
/// them when a server refuses them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Learnable {
    /// `content_with_tool_calls` was not set.
    pub content: bool,
    /// `stream` was not set.
    pub stream: bool,
    /// `context_window` was not set: the server's own may be learned.
    pub window: bool,
}

pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
pub const DEFAULT_MAX_RETRIES: u32 = 4;

/// Why a provider cannot be set up: each says what to set or fix.
#[derive(Debug, thiserror::Error)]
pub enum ProviderSetupError {
    #[error("`{0}` is not an HTTP provider")]
    NotHttp(String),
    #[error("the base URL `{url}` of {model} must start with http:// or https://")]
    BadBaseUrl { url: String, model: String },
    #[error("{model} needs an API key: set {var}{hint}")]
    MissingKey {
        model: String,
        var: &'static str,
        hint: &'static str,
    },
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Resolves a model's configuration; `var` reads the environment (a
/// function so tests need not change the process's environment). The
/// error names the variable to set.
pub fn resolve(
    spec: &ModelSpec,
    options: &ModelOptions,
    var: impl Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, ProviderSetupError> {
    let vendor = Vendor::from_provider(&spec.provider)
        .ok_or_else(|| ProviderSetupError::NotHttp(spec.to_string()))?;
    let var = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    let custom_url = options
        .base_url
        .clone()
        .or_else(|| var(vendor.base_url_var()));
    let base_url = custom_url
        .clone()
        .unwrap_or_else(|| vendor.default_base_url().to_string())
        .trim_end_matches('/')
        .to_string();
    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
        return Err(ProviderSetupError::BadBaseUrl {
            url: base_url,
            model: spec.to_string(),
        });
    }
    let api_key = var(vendor.key_var()).map(ApiKey::new);
    let keyless_ok = vendor == Vendor::OpenAi && custom_url.is_some();
    if api_key.is_none() && !keyless_ok {
        return Err(ProviderSetupError::MissingKey {
            model: spec.to_string(),
            var: vendor.key_var(),
            hint: if vendor == Vendor::OpenAi {
                " (or OPENAI_BASE_URL for a local OpenAI-compatible server that needs none)"
            } else {
                ""
            },
        });
    }
    Ok(ProviderConfig {
        vendor,
        model: spec.model.clone(),
        base_url,
        api_key,
        temperature: options.temperature,
        max_tokens: options.max_tokens,
        stream: options.stream.unwrap_or(true),
        request_timeout: options.request_timeout.unwrap_or(DEFAULT_REQUEST_TIMEOUT),
        idle_timeout: options.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        max_retries: options.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
        content_with_tool_calls: options.content_with_tool_calls.unwrap_or_default(),
        service_tier: options
            .service_tier
            .filter(|t| vendor.service_tiers().contains(t)),
        api: options.api,
        learnable: Learnable {
            content: options.content_with_tool_calls.is_none(),
            stream: options.stream.is_none(),
            window: options.context_window.is_none(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> ModelSpec {
        ModelSpec::parse(s).unwrap()
    }

    #[test]
    fn a_missing_key_names_the_variable() {
        let e = resolve(&spec("anthropic:claude"), &ModelOptions::default(), |_| {
            None
        })
        .unwrap_err();
        assert!(
            matches!(
                e,
                ProviderSetupError::MissingKey {
                    var: "ANTHROPIC_API_KEY",
                    ..
                }
            ),
            "{e}"
        );
        let e = resolve(&spec("openai:gpt"), &ModelOptions::default(), |_| None).unwrap_err();
        assert!(
            e.to_string()
                .contains("set OPENAI_API_KEY (or OPENAI_BASE_URL"),
            "{e}"
        );
    }

    #[test]
    fn a_local_openai_compatible_server_needs_no_key() {
        let c = resolve(&spec("openai:llama3"), &ModelOptions::default(), |v| {
            (v == "OPENAI_BASE_URL").then(|| "http://127.0.0.1:11434/v1/".to_string())
        })
        .unwrap();
        assert_eq!(c.base_url, "http://127.0.0.1:11434/v1");
        assert!(c.api_key.is_none());
        assert!(c.stream);
    }

    #[test]
    fn task_options_win_over_variables_and_keys_stay_hidden() {
        let opts = ModelOptions {
            base_url: Some("http://localhost:9/v1".into()),
            stream: Some(false),
            ..Default::default()
        };
        let c = resolve(&spec("openai:m"), &opts, |v| match v {
            "OPENAI_BASE_URL" => Some("http://elsewhere/v1".into()),
            "OPENAI_API_KEY" => Some("sk-secret".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(c.base_url, "http://localhost:9/v1");
        assert!(!c.stream);
        assert!(!format!("{c:?}").contains("sk-secret"));
    }
}
