//! The models a task's agents talk to: its model's configuration from the
//! environment and `model_options`, its fallbacks', and the provider they
//! make (a chain, or the scripted model). Children's models are made the
//! same way (see `agents`).

use std::sync::Arc;

use crate::provider::batch::BatchJoin;
use crate::provider::config::resolve;
use crate::provider::{
    ProviderConfig, ProviderSetupError, ScriptedProvider, batched_provider, http_provider,
};
use crate::task::Task;

/// The configuration of a task's HTTP model from the environment and its
/// `model_options` (`None` for `scripted`). The error names what to set.
pub fn provider_config(task: &Task) -> Result<Option<ProviderConfig>, ProviderSetupError> {
    if task.model.is_scripted() {
        return Ok(None);
    }
    resolve(&task.model, &task.model_options, |k| std::env::var(k).ok()).map(Some)
}

/// The configuration of each of a task's fallback models, in order (they
/// share the task's `model_options` but for its own model's server,
/// window, prices and wire quirks).
pub fn fallback_configs(task: &Task) -> Result<Vec<ProviderConfig>, ProviderSetupError> {
    let options = task.model_options.for_fallback();
    task.fallback
        .iter()
        .map(|spec| resolve(spec, &options, |k| std::env::var(k).ok()))
        .collect()
}

/// The task's model (a chain with its fallbacks), and its seat at a
/// vendor batch when it asks in batches; a scripted one plays
/// its script from turn `done` on (a resumed task's). With `batch`, its
/// own model asks through the vendor's batch API (its fallbacks at once:
/// a model the task may never use holds no batch back).
pub(crate) fn make_provider(
    task: &Task,
    done: usize,
    batch: Option<BatchJoin>,
) -> Result<crate::provider::Seated, ProviderSetupError> {
    let (first, seat) = match provider_config(task)? {
        None => {
            let script = ScriptedProvider::new(Arc::clone(&task.script)).starting_at(done);
            return Ok((Box::new(script), None));
        }
        Some(cfg) => batched_provider(cfg, batch)?,
    };
    if task.fallback.is_empty() {
        return Ok((first, seat));
    }
    use crate::provider::chain::{Chain, Link};
    let mut links = vec![Link {
        provider: first,
        name: task.model.to_string(),
        window: task.context_window,
        pricing: task.pricing,
    }];
    for (spec, cfg) in task.fallback.iter().zip(fallback_configs(task)?) {
        links.push(Link {
            provider: http_provider(cfg)?,
            name: spec.to_string(),
            window: crate::provider::models::context_window(&spec.model),
            pricing: crate::provider::models::pricing(&spec.model),
        });
    }
    Ok((Box::new(Chain::new(links)), seat))
}
