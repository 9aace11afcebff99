//! Which model a task talks to: `PROVIDER:MODEL` as written in a task's
//! `model:` or `--model`.

/// Why a `model:` value does not name a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelSpecError {
    #[error(
        "unknown provider `{provider}` in model `{spec}` (expected scripted, openai:MODEL, anthropic:MODEL or gemini:MODEL)"
    )]
    UnknownProvider { provider: String, spec: String },
    #[error("model `{spec}` names no model (write {provider}:MODEL)")]
    NoModel { provider: String, spec: String },
}

/// A parsed `model:` value.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelSpec {
    /// `scripted`, `openai`, `anthropic` or `gemini`.
    pub provider: String,
    /// The vendor's model name; empty for `scripted`.
    pub model: String,
}

impl ModelSpec {
    pub const PROVIDERS: [&'static str; 4] = ["scripted", "openai", "anthropic", "gemini"];

    /// Parses `PROVIDER:MODEL`, or `scripted`.
    pub fn parse(s: &str) -> Result<Self, ModelSpecError> {
        let s = s.trim();
        let (provider, model) = match s.split_once(':') {
            Some((p, m)) => (p, m),
            None => (s, ""),
        };
        if !Self::PROVIDERS.contains(&provider) {
            return Err(ModelSpecError::UnknownProvider {
                provider: provider.to_string(),
                spec: s.to_string(),
            });
        }
        if provider != "scripted" && model.is_empty() {
            return Err(ModelSpecError::NoModel {
                provider: provider.to_string(),
                spec: s.to_string(),
            });
        }
        Ok(Self {
            provider: provider.to_string(),
            model: model.to_string(),
        })
    }

    pub fn is_scripted(&self) -> bool {
        self.provider == "scripted"
    }
}

impl std::fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.model.is_empty() {
            f.write_str(&self.provider)
        } else {
            write!(f, "{}:{}", self.provider, self.model)
        }
    }
}
