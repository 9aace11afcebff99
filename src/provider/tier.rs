//! `model_options.service_tier`: how a vendor is asked to serve a
//! request, and what the tier that served it costs.
//!
//! OpenAI defines `auto`, `default`, `flex` (slower, at half the price)
//! and `priority` (faster, at a premium); Anthropic `auto` and
//! `standard_only` (its priority tier is a commitment, billed at the
//! standard price); Gemini none. A task's tier goes to each of its models
//! whose vendor defines it, and to no other (a fallback of another vendor
//! is asked as usual). The answer says which tier served it (OpenAI's
//! `service_tier`, Anthropic's `usage.service_tier`): that tier is priced,
//! and recorded on the turn.

use super::models::{self, Pricing};

/// A tier a task may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceTier {
    Auto,
    Default,
    Flex,
    Priority,
    StandardOnly,
}

impl ServiceTier {
    /// Every tier, as the tasks write them.
    pub const ALL: [ServiceTier; 5] = [
        ServiceTier::Auto,
        ServiceTier::Default,
        ServiceTier::Flex,
        ServiceTier::Priority,
        ServiceTier::StandardOnly,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// As the task and the vendor write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceTier::Auto => "auto",
            ServiceTier::Default => "default",
            ServiceTier::Flex => "flex",
            ServiceTier::Priority => "priority",
            ServiceTier::StandardOnly => "standard_only",
        }
    }
}

/// Tiers as a list for a message: `auto, flex`, or `none`.
pub fn names(tiers: &[ServiceTier]) -> String {
    if tiers.is_empty() {
        return "none".into();
    }
    let names: Vec<&str> = tiers.iter().map(|t| t.as_str()).collect();
    names.join(", ")
}

/// The price of a turn `served` by a tier (as the answer names it) of
/// `model`, whose standard price is `standard`: `own` when the task set
/// its price (`model_options.pricing`), which then holds whatever the
/// tier. `None`: not known (priority for a model the table has no
/// priority price for).
/// What a turn answered from a vendor batch is priced as.
pub const BATCH: &str = "batch";

pub fn price(standard: Pricing, model: &str, served: &str, own: bool) -> Option<Pricing> {
    match served {
        // Batches cost half whatever the price (the runner chose them).
        BATCH => Some(standard.scaled(0.5)),
        _ if own => Some(standard),
        "flex" => Some(standard.scaled(0.5)),
        "priority" => models::priority_pricing(model),
        _ => Some(standard),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_read_and_listed() {
        let both = [ServiceTier::Auto, ServiceTier::StandardOnly];
        assert_eq!(names(&both), "auto, standard_only");
        assert_eq!(names(&[]), "none");
        assert_eq!(ServiceTier::parse("flex"), Some(ServiceTier::Flex));
        assert_eq!(ServiceTier::parse("Flex"), None);
    }

    #[test]
    fn the_tier_that_served_is_priced() {
        let standard = models::pricing("gpt-5").unwrap();
        let flex = price(standard, "gpt-5", "flex", false).unwrap();
        assert_eq!(flex.input, standard.input / 2.0);
        assert_eq!(flex.output, standard.output / 2.0);
        let priority = price(standard, "gpt-5", "priority", false).unwrap();
        assert_eq!((priority.input, priority.output), (2.50, 20.00));
        assert_eq!(price(standard, "gpt-5", "default", false), Some(standard));
        // Not served at priority by the table: unknown.
        assert_eq!(price(standard, "my-model", "priority", false), None);
        // The task's own price holds.
        assert_eq!(price(standard, "gpt-5", "flex", true), Some(standard));
    }
}
