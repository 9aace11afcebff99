//! What a task's model costs: its price (the task's own or the table's),
//! its fallbacks' prices, and the service tier it asks for, each checked
//! where `max_cost` needs a known price.

use super::super::model::TaskFile;
use super::Resolve;
use crate::provider::models::{self, Pricing};
use crate::provider::{ModelOptions, ModelSpec};
use serde_saphyr::Location;

impl Resolve<'_> {
    /// `max_cost` holds across a fallback chain only when every model of
    /// it has a known price (a fallback's is the built-in one).
    pub(in crate::task) fn fallback_prices(&mut self, tf: &TaskFile, fallback: &[ModelSpec]) {
        let Some(m) = &tf.max_cost else { return };
        for spec in fallback {
            if models::pricing(&spec.model).is_none() {
                self.error(
                    &m.referenced,
                    format!("max_cost: the price of the fallback model `{spec}` is not known"),
                );
            }
        }
    }

    /// The model's price: `model_options.pricing`, else the built-in
    /// table; `max_cost:` needs one.
    pub(in crate::task) fn pricing(
        &mut self,
        tf: &TaskFile,
        model: Option<&ModelSpec>,
        options: &ModelOptions,
    ) -> Option<Pricing> {
        let pricing = options
            .pricing
            .or_else(|| model.and_then(|m| models::pricing(&m.model)));
        if let Some(m) = &tf.max_cost {
            if !(m.value > 0.0 && m.value.is_finite()) {
                self.error(&m.referenced, "max_cost: must be more than 0 (US dollars)");
            } else if pricing.is_none() && model.is_some() {
                let name = model.map(ToString::to_string).unwrap_or_default();
                self.error(
                    &m.referenced,
                    format!(
                        "max_cost: the price of `{name}` is not known; set model_options.pricing: {{input, cached_input, output}} (USD per million tokens)"
                    ),
                );
            }
        }
        pricing
    }

    /// `model_options.service_tier`: one the task's model's vendor
    /// defines (a scripted model takes any), and with `max_cost`, a tier
    /// whose price is known.
    pub(in crate::task) fn service_tier(
        &mut self,
        tf: &TaskFile,
        model: Option<&ModelSpec>,
        options: &ModelOptions,
    ) {
        let (Some(tier), Some(model)) = (options.service_tier, model) else {
            return;
        };
        let at = tf
            .model_options
            .as_ref()
            .and_then(|m| m.service_tier.as_ref())
            .map_or(Location::UNKNOWN, |t| t.referenced);
        let Some(vendor) = crate::provider::Vendor::from_provider(&model.provider) else {
            return;
        };
        if !vendor.service_tiers().contains(&tier) {
            self.error(
                &at,
                format!(
                    "model_options.service_tier: `{}` is not a tier {} defines (it has: {})",
                    tier.as_str(),
                    model.provider,
                    crate::provider::tier::names(vendor.service_tiers())
                ),
            );
        } else if tier == crate::provider::tier::ServiceTier::Priority
            && tf.max_cost.is_some()
            && options.pricing.is_none()
            && models::priority_pricing(&model.model).is_none()
        {
            self.error(
                &at,
                format!(
                    "model_options.service_tier: the priority price of `{model}` is not known, and max_cost needs it; set model_options.pricing"
                ),
            );
        }
    }
}
