//! `runner run --models a,b,c` and `--params NAME=v1,v2`: every task run
//! under each model and each value (their product, when both or several
//! names are given), each run a task of its own (`TASK/VARIANT`, its own
//! copy and outputs; with `--repeat`, `TASK/VARIANT/attempt-K`), so that
//! the reports can set the variants side by side (`report::matrix`).
//!
//! Each variant's tasks are loaded as `--model` and `--param` would load
//! them, so that a model's price, context window and service tier are
//! checked and set for it, a value is in the prompt and checks where the
//! task says, and a task that cannot run under one (`scripted` without a
//! script) is an error at its file and line before anything runs.

use std::path::PathBuf;

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

/// `--params`' value: a parameter and two or more values for it.
#[derive(Debug, Clone)]
pub struct ParamValues {
    pub(super) name: String,
    pub(super) values: Vec<String>,
}

/// Reads `NAME=v1,v2`.
pub(super) fn parse_param_values(s: &str) -> Result<ParamValues, ModelListError> {
    let Some((name, values)) = s.split_once('=').filter(|(n, _)| !n.trim().is_empty()) else {
        return Err(ModelListError(format!("`{s}` is not NAME=VALUE,VALUE...")));
    };
    let mut out: Vec<String> = Vec::new();
    for v in values.split(',') {
        if out.iter().any(|o| o == v) {
            return Err(ModelListError(format!("`{v}` is given twice")));
        }
        out.push(v.to_string());
    }
    if out.len() < 2 {
        return Err(ModelListError(
            "give two or more values, separated by commas (one is --param)".into(),
        ));
    }
    Ok(ParamValues {
        name: name.trim().to_string(),
        values: out,
    })
}

/// A part of a variant's name made folder-safe (`openai:gpt-4o` is
/// `openai-gpt-4o`, `tone=short` is `tone-short`).
fn slug(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One cell of the matrix: its model (when `--models`) and values.
struct Cell {
    model: Option<ModelSpec>,
    values: Vec<(String, String)>,
}

impl Cell {
    /// `openai:gpt-4o, tone=short`.
    fn label(&self) -> String {
        (self.model.iter().map(ToString::to_string))
            .chain(self.values.iter().map(|(k, v)| format!("{k}={v}")))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `openai-gpt-4o_tone-short`.
    fn slug(&self) -> String {
        (self.model.iter().map(|m| slug(&m.to_string())))
            .chain(self.values.iter().map(|(k, v)| slug(&format!("{k}={v}"))))
            .collect::<Vec<_>>()
            .join("_")
    }
}

/// Every cell of `models` × each parameter's values, models first.
fn cells(models: Option<&ModelList>, params: &[ParamValues]) -> Vec<Cell> {
    let mut cells = match models {
        Some(l) => (l.0.iter())
            .map(|m| Cell {
                model: Some(m.clone()),
                values: Vec::new(),
            })
            .collect(),
        None => vec![Cell {
            model: None,
            values: Vec::new(),
        }],
    };
    for p in params {
        cells = (cells.into_iter())
            .flat_map(|c| {
                p.values.iter().map(move |v| {
                    let mut values = c.values.clone();
                    values.push((p.name.clone(), v.clone()));
                    Cell {
                        model: c.model.clone(),
                        values,
                    }
                })
            })
            .collect();
    }
    cells
}

/// The tasks of `paths` under each cell of the matrix, task by task:
/// `TASK/VARIANT`.
pub(super) fn load_cells(
    paths: &[PathBuf],
    opts: &LoadOptions,
    models: Option<&ModelList>,
    params: &[ParamValues],
) -> Result<Vec<Task>, Vec<runner_policy::ConfigError>> {
    let mut per_cell = Vec::new();
    let mut errors = Vec::new();
    for cell in cells(models, params) {
        let mut one = LoadOptions {
            model_override: (cell.model.clone().map(|m| vec![m])).or(opts.model_override.clone()),
            ..opts.clone()
        };
        one.params.extend(cell.values.iter().cloned());
        match load_tasks(paths, &one) {
            Ok(tasks) => per_cell.push((cell, tasks)),
            // The same mistake under every cell is said once.
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
    let count = per_cell.first().map_or(0, |(_, t)| t.len());
    let mut out = Vec::with_capacity(count * per_cell.len());
    for i in 0..count {
        for (cell, tasks) in &per_cell {
            let mut t = tasks[i].clone();
            t.matrix = Some(runner_output::MatrixCell {
                task: t.name.clone(),
                variant: cell.label(),
            });
            t.name = format!("{}/{}", t.name, cell.slug());
            out.push(t);
        }
    }
    Ok(out)
}

fn errors_has(errors: &[runner_policy::ConfigError], e: &runner_policy::ConfigError) -> bool {
    errors.iter().any(|o| o.to_string() == e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_two_or_more_distinct_ones_named_safely() {
        let l = parse_models("openai:gpt-4o, anthropic:claude-x").unwrap();
        assert_eq!(l.0.len(), 2);
        assert_eq!(slug(&l.0[0].to_string()), "openai-gpt-4o");
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

    #[test]
    fn values_make_a_product_with_the_models() {
        let p = parse_param_values("tone=short,long").unwrap();
        assert_eq!(p.values, ["short", "long"]);
        assert!(parse_param_values("tone=short").is_err());
        assert!(parse_param_values("=a,b").is_err());
        assert!(parse_param_values("tone=a,a").is_err());
        let models = parse_models("openai:a,openai:b").unwrap();
        let c = cells(Some(&models), &[p]);
        let labels: Vec<String> = c.iter().map(Cell::label).collect();
        assert_eq!(
            labels,
            [
                "openai:a, tone=short",
                "openai:a, tone=long",
                "openai:b, tone=short",
                "openai:b, tone=long"
            ]
        );
        assert_eq!(c[0].slug(), "openai-a_tone-short");
    }
}
