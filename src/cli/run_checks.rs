//! What `runner run` refuses before any task starts, beyond the task
//! files' own errors: a model that cannot be reached for want of a key,
//! under `--max-cost` a model whose price is unknown, and an output folder
//! holding an earlier run's other tasks.

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

/// The task folders of `out` (those with a transcript) that are not among
/// `ours`, by name.
fn others_in(out: &std::path::Path, ours: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(out)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter(|e| e.path().join("transcript.json").is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| !ours.contains(&name.as_str()))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// An output folder holding an earlier run's other tasks would show them
/// beside this run's in `runner report` while the summary counts only
/// these: refused when the folder was named (`--out`), unless `force`;
/// the default folder (`runner-out`) holds the last run, so there, as
/// with `force`, their folders are removed (and the default says so).
pub(super) fn out_is_ours(
    out: &std::path::Path,
    tasks: &[Task],
    named: bool,
    force: bool,
) -> Result<(), CliError> {
    let ours: Vec<&str> = tasks.iter().map(|t| t.name.as_str()).collect();
    let others = others_in(out, &ours);
    if others.is_empty() {
        return Ok(());
    }
    if named && !force {
        return Err(CliError::Invalid(format!(
            "--out {}: holds an earlier run's other tasks ({}), which its report would show beside this run's; give another --out, remove the folder, or pass --force-out to remove those tasks' folders",
            out.display(),
            others.join(", ")
        )));
    }
    for name in &others {
        let dir = out.join(name);
        std::fs::remove_dir_all(&dir).map_err(|e| {
            CliError::Invalid(format!("removing the earlier run's {}: {e}", dir.display()))
        })?;
    }
    if !named {
        eprintln!(
            "{}: removed the earlier run's {} (the default output folder holds the last run; give --out to keep runs apart)",
            out.display(),
            others.join(", ")
        );
    }
    Ok(())
}
