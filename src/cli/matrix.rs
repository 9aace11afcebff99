//! `runner run --models a,b,c`: every task run under each model, each run
//! a task of its own (`TASK/VARIANT`, its own copy and outputs; with
//! `--repeat`, `TASK/VARIANT/attempt-K`), so that the reports can set the
//! models side by side (`report::matrix`).
//!
//! Each model's tasks are loaded as `--model` would load them, so that a
//! model's price, context window and service tier are checked and set for
//! it, and a task that cannot run under one (`scripted` without a script)
//! is an error at its file and line before anything runs.

use std::path::PathBuf;

use super::CliError;
use crate::provider::ModelSpec;
use crate::task::{LoadOptions, Task, load_tasks};

/// `--models`' value: two or more distinct models.
#[derive(Debug, Clone)]
pub struct ModelList(pub(super) Vec<ModelSpec>);

/// What is wrong with a `--models` value.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ModelListError(String);

/// Reads `a,b,c`.
pub(super) fn parse_models(s: &str) -> Result<ModelList, ModelListError> {
    let mut models: Vec<ModelSpec> = Vec::new();
    for m in s.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let spec = ModelSpec::parse(m).map_err(|e| ModelListError(e.to_string()))?;
        if models.iter().any(|o| o.to_string() == spec.to_string()) {
            return Err(ModelListError(format!("`{spec}` is given twice")));
        }
        models.push(spec);
    }
    if models.len() < 2 {
        return Err(ModelListError(
            "give two or more models, separated by commas (one is --model)".into(),
        ));
    }
    Ok(ModelList(models))
}

/// The folder-safe name of a model's variant (`openai:gpt-4o` is
/// `openai-gpt-4o`).
fn variant_slug(m: &ModelSpec) -> String {
    m.to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// The tasks of `paths` under each model, task by task: `TASK/VARIANT`.
pub(super) fn load_cells(
    paths: &[PathBuf],
    opts: &LoadOptions,
    models: &ModelList,
) -> Result<Vec<Task>, Vec<runner_policy::ConfigError>> {
    let mut per_model = Vec::new();
    let mut errors = Vec::new();
    for m in &models.0 {
        let one = LoadOptions {
            model_override: Some(vec![m.clone()]),
            ..opts.clone()
        };
        match load_tasks(paths, &one) {
            Ok(tasks) => per_model.push((m, tasks)),
            // The same mistake under every model is said once.
            Err(es) => {
                for e in es {
                    if !errors_has(&errors, &e) {
                        errors.push(e);
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let count = per_model.first().map_or(0, |(_, t)| t.len());
    let mut cells = Vec::with_capacity(count * per_model.len());
    for i in 0..count {
        for (m, tasks) in &per_model {
            let mut t = tasks[i].clone();
            t.matrix = Some(runner_output::MatrixCell {
                task: t.name.clone(),
                variant: m.to_string(),
            });
            t.name = format!("{}/{}", t.name, variant_slug(m));
            cells.push(t);
        }
    }
    Ok(cells)
}

fn errors_has(errors: &[runner_policy::ConfigError], e: &runner_policy::ConfigError) -> bool {
    errors.iter().any(|o| o.to_string() == e.to_string())
}

/// `--models` with the run's other options: not with what takes one
/// change per task (`--apply`, `--push`), `--resume` or `--repos`.
pub(super) fn check(apply: bool, push: bool, resume: bool, repos: bool) -> Result<(), CliError> {
    for (on, what) in [
        (apply, "--apply (which model's changes?)"),
        (push, "--push"),
        (resume, "--resume"),
        (repos, "--repos"),
    ] {
        if on {
            return Err(CliError::Invalid(format!("--models cannot go with {what}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_two_or_more_distinct_ones_named_safely() {
        let l = parse_models("openai:gpt-4o, anthropic:claude-x").unwrap();
        assert_eq!(l.0.len(), 2);
        assert_eq!(variant_slug(&l.0[0]), "openai-gpt-4o");
        assert!(
            parse_models("openai:a")
                .unwrap_err()
                .to_string()
                .contains("two or more")
        );
        assert!(
            parse_models("openai:a,openai:a")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        assert!(parse_models("nope,openai:a").is_err());
    }
}
