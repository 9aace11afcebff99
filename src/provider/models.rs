//! What the runner knows of the vendors' current models: each family's
//! context window and price. A task's `model_options.context_window` and
//! `model_options.pricing` override it (local servers, new models).
//!
//! Prices are USD per million tokens, from the vendors' pricing pages
//! (platform.openai.com/docs/pricing, docs.anthropic.com/en/docs/about-claude/pricing,
//! ai.google.dev/gemini-api/docs/pricing) as of 2025-11; Gemini's are the
//! prices for prompts up to 200k tokens. Anthropic bills writing to the
//! cache (five-minute entries, what `cache_control` asks for here) at 1.25
//! times the input price.

use schemars::JsonSchema;
use serde::Deserialize;

use super::Usage;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// Input tokens not read from the cache.
    pub input: f64,
    /// Input tokens read from the cache (default: the input price).
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Output tokens.
    pub output: f64,
    /// Input tokens written to the cache (default: the input price).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Pricing {
    const fn new(input: f64, cached_input: f64, output: f64) -> Self {
        Self {
            input,
            cached_input: Some(cached_input),
            output,
            cache_write: None,
        }
    }

    /// Anthropic's: cache writes at 1.25 times the input price.
    const fn anthropic(input: f64, cached_input: f64, output: f64) -> Self {
        Self {
            cache_write: Some(input * 1.25),
            ..Self::new(input, cached_input, output)
        }
    }

    /// Every price times `factor` (OpenAI's flex tier: half).
    pub fn scaled(self, factor: f64) -> Self {
        Self {
            input: self.input * factor,
            cached_input: self.cached_input.map(|p| p * factor),
            output: self.output * factor,
            cache_write: self.cache_write.map(|p| p * factor),
        }
    }

    /// What one turn's tokens cost.
    pub fn cost(&self, u: &Usage) -> f64 {
        let cached = u.cached_input_tokens.min(u.input_tokens);
        let written = u.cache_write_input_tokens.min(u.input_tokens - cached);
        let fresh = u.input_tokens - cached - written;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + u.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// The window of a model the table does not know.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// A family of models: names starting with `prefix`.
struct Family {
    prefix: &'static str,
    context_window: u64,
    pricing: Pricing,
}

const fn family(prefix: &'static str, context_window: u64, pricing: Pricing) -> Family {
    Family {
        prefix,
        context_window,
        pricing,
    }
}

/// A Claude family: a 200k window, Anthropic's prices (cache writes at
/// 1.25 times input).
const fn claude(prefix: &'static str, input: f64, cached_input: f64, output: f64) -> Family {
    family(
        prefix,
        200_000,
        Pricing::anthropic(input, cached_input, output),
    )
}

/// The longest matching prefix wins (`gpt-4.1-mini` before `gpt-4.1`).
const FAMILIES: &[Family] = &[
    // OpenAI
    family("gpt-5-nano", 400_000, Pricing::new(0.05, 0.005, 0.40)),
    family("gpt-5-mini", 400_000, Pricing::new(0.25, 0.025, 2.00)),
    family("gpt-5", 400_000, Pricing::new(1.25, 0.125, 10.00)),
    family("gpt-4.1-nano", 1_047_576, Pricing::new(0.10, 0.025, 0.40)),
    family("gpt-4.1-mini", 1_047_576, Pricing::new(0.40, 0.10, 1.60)),
    family("gpt-4.1", 1_047_576, Pricing::new(2.00, 0.50, 8.00)),
    family("gpt-4o-mini", 128_000, Pricing::new(0.15, 0.075, 0.60)),
    family("gpt-4o", 128_000, Pricing::new(2.50, 1.25, 10.00)),
    family("o4-mini", 200_000, Pricing::new(1.10, 0.275, 4.40)),
    family("o3", 200_000, Pricing::new(2.00, 0.50, 8.00)),
    // Anthropic
    claude("claude-opus-4-5", 5.00, 0.50, 25.00),
    claude("claude-opus-4", 15.00, 1.50, 75.00),
    claude("claude-sonnet-4", 3.00, 0.30, 15.00),
    claude("claude-3-7-sonnet", 3.00, 0.30, 15.00),
    claude("claude-haiku-4-5", 1.00, 0.10, 5.00),
    claude("claude-3-5-haiku", 0.80, 0.08, 4.00),
    // Gemini
    family(
        "gemini-2.5-pro",
        1_048_576,
        Pricing::new(1.25, 0.125, 10.00),
    ),
    family(
        "gemini-2.5-flash-lite",
        1_048_576,
        Pricing::new(0.10, 0.01, 0.40),
    ),
    family(
        "gemini-2.5-flash",
        1_048_576,
        Pricing::new(0.30, 0.03, 2.50),
    ),
    family(
        "gemini-2.0-flash",
        1_048_576,
        Pricing::new(0.10, 0.025, 0.40),
    ),
];

/// OpenAI's priority tier (`service_tier: priority`), where it serves a
/// family (openai.com/api-priority-processing, as of 2025-11; prompts
/// estimated past 128k tokens are billed otherwise and not modelled).
const PRIORITY: &[(&str, Pricing)] = &[
    ("gpt-5-mini", Pricing::new(0.45, 0.045, 3.60)),
    ("gpt-5", Pricing::new(2.50, 0.25, 20.00)),
    ("gpt-4.1-nano", Pricing::new(0.20, 0.05, 0.80)),
    ("gpt-4.1-mini", Pricing::new(0.70, 0.175, 2.80)),
    ("gpt-4.1", Pricing::new(3.50, 0.875, 14.00)),
    ("gpt-4o-mini", Pricing::new(0.25, 0.125, 1.00)),
    ("gpt-4o", Pricing::new(4.25, 2.125, 17.00)),
    ("o4-mini", Pricing::new(2.00, 0.50, 8.00)),
    ("o3", Pricing::new(3.50, 0.875, 14.00)),
];

fn lookup(model: &str) -> Option<&'static Family> {
    FAMILIES
        .iter()
        .filter(|f| model.starts_with(f.prefix))
        .max_by_key(|f| f.prefix.len())
}

/// The priority-tier price of a model by its name; `None` where the
/// table has none (`gpt-5-nano` is not served at priority).
pub fn priority_pricing(model: &str) -> Option<Pricing> {
    // The family decides first: `gpt-5-nano` is not `gpt-5`'s.
    let family = lookup(model)?.prefix;
    PRIORITY
        .iter()
        .find(|(prefix, _)| *prefix == family)
        .map(|(_, p)| *p)
}

/// The context window of a model by its name.
pub fn context_window(model: &str) -> u64 {
    lookup(model).map_or(DEFAULT_CONTEXT_WINDOW, |f| f.context_window)
}

/// The built-in price of a model by its name; `None` when unknown.
pub fn pricing(model: &str) -> Option<Pricing> {
    lookup(model).map(|f| f.pricing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_wins_and_unknown_models_have_no_price() {
        assert_eq!(pricing("gpt-4.1-mini-2025-04-14").unwrap().input, 0.40);
        assert_eq!(pricing("gpt-4.1").unwrap().input, 2.00);
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), 200_000);
        assert_eq!(pricing("llama-3.1-8b"), None);
        assert_eq!(context_window("llama-3.1-8b"), DEFAULT_CONTEXT_WINDOW);
    }

    #[test]
    fn cached_input_has_its_own_price() {
        let p = Pricing::new(2.0, 0.5, 8.0);
        let u = Usage {
            input_tokens: 1_000_000,
            cached_input_tokens: 400_000,
            output_tokens: 100_000,
            ..Usage::default()
        };
        // 600k fresh at 2.0, 400k cached at 0.5, 100k out at 8.0.
        assert!((p.cost(&u) - (1.2 + 0.2 + 0.8)).abs() < 1e-9);
    }

    #[test]
    fn anthropic_cache_writes_cost_a_quarter_more_than_input() {
        let p = pricing("claude-sonnet-4-5").unwrap();
        assert_eq!(p.cache_write, Some(3.75));
        let u = Usage {
            input_tokens: 1_000_000,
            cached_input_tokens: 500_000,
            cache_write_input_tokens: 400_000,
            output_tokens: 0,
            cost_usd: None,
        };
        // 100k fresh at 3.0, 500k read at 0.3, 400k written at 3.75.
        assert!((p.cost(&u) - (0.3 + 0.15 + 1.5)).abs() < 1e-9);
        // Without a price of its own, a write costs what input does.
        let own = Pricing::new(3.0, 0.3, 15.0);
        assert!((own.cost(&u) - (0.3 + 0.15 + 1.2)).abs() < 1e-9);
        // Counts that do not add up never give a negative share.
        let odd = Usage {
            input_tokens: 10,
            cached_input_tokens: 8,
            cache_write_input_tokens: 8,
            ..Usage::default()
        };
        assert!((p.cost(&odd) - (8.0 * 0.3 + 2.0 * 3.75) / 1e6).abs() < 1e-12);
    }
}
