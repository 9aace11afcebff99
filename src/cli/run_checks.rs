//! What `runner run` refuses before any task starts, beyond the task
//! files' own errors: a model that cannot be reached for want of a key,
//! and under `--max-cost` a model whose price is unknown.

use super::CliError;
use crate::task::Task;

/// Every task's models can be asked, and, when the run has a budget
/// (`max_cost`), priced; otherwise an input error naming each task.
pub(super) fn models_usable(tasks: &[Task], max_cost: bool) -> Result<(), CliError> {
    // A model that cannot be reached for want of a key is an input error:
    // say so before anything runs.
    let bad_models: Vec<String> = tasks
        .iter()
        .filter_map(|t| {
            crate::run::provider_config(t)
                .and_then(|_| crate::run::fallback_configs(t))
                .err()
                .map(|e| format!("{}: task `{}`: {e}", t.file.display(), t.name))
        })
        .collect();
    if !bad_models.is_empty() {
        return Err(CliError::Invalid(bad_models.join("\n")));
    }
    // A run budget counts what every task costs: each needs a price.
    if max_cost {
        let unpriced: Vec<String> = tasks
            .iter()
            .flat_map(|t| {
                let own = t.pricing.is_none().then(|| (t, t.model.to_string()));
                let fallbacks = t
                    .fallback
                    .iter()
                    .filter(|f| crate::provider::models::pricing(&f.model).is_none())
                    .map(move |f| (t, f.to_string()));
                own.into_iter().chain(fallbacks)
            })
            .map(|(t, model)| {
                format!(
                    "--max-cost: task `{}` ({}): the price of `{model}` is not known; set model_options.pricing",
                    t.name,
                    t.file.display(),
                )
            })
            .collect();
        if !unpriced.is_empty() {
            return Err(CliError::Invalid(unpriced.join("\n")));
        }
    }
    Ok(())
}
