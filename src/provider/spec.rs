//! Which model a task talks to: `PROVIDER:MODEL` as written in a task's
//! `model:` or `--model`.

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

    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (provider, model) = match s.split_once(':') {
            Some((p, m)) => (p, m),
            None => (s, ""),
        };
        if !Self::PROVIDERS.contains(&provider) {
            return Err(format!(
                "unknown provider `{provider}` in model `{s}` (expected scripted, openai:MODEL, anthropic:MODEL or gemini:MODEL)"
            ));
        }
        if provider != "scripted" && model.is_empty() {
            return Err(format!(
                "model `{s}` names no model (write {provider}:MODEL)"
            ));
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
