//! Loading and validating task files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::model::TaskFile;
use super::options::LoadOptions;
use super::resolve::Resolve;
use super::resolved::Task;
use super::sections::{duration_field, mcp_servers, model_options, sandbox_settings};
use crate::contain::EnvSettings;
use runner_policy::{ConfigError, parse_policy_yaml};

const DEFAULT_MAX_TURNS: u32 = 20;
/// Compact when a request would fill 80% of the window.
const DEFAULT_COMPACT_AT: f64 = 0.8;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

fn read(path: &Path) -> Result<String, Vec<ConfigError>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::new(
            path,
            0,
            0,
            format!("cannot read file: {e}"),
        )]
    })
}

/// Parses and validates one task file: each field is resolved in turn
/// ([`Resolve`]), every error of every field is kept, and the task is
/// built only when there are none.
pub fn load_task(path: &Path, opts: &LoadOptions) -> Result<Task, Vec<ConfigError>> {
    let text = read(path)?;
    let tf: TaskFile = serde_saphyr::from_str(&text)
        .map_err(|e| vec![ConfigError::from_yaml_in(path, &text, &e)])?;
    let mut r = Resolve::new(path, &text, opts);
    let name = r.name(&tf);
    let params = r.params(&tf);
    let (prompt, check_runs) = r.render_texts(&tf, &params);
    let (model, fallback) = r.model(&tf);
    let policy = r.policy(&tf);
    let workspace = r.workspace(&tf);
    let tools = r.tools(&tf);
    let timeout = duration_field(path, &tf.timeout, "timeout", DEFAULT_TIMEOUT, &mut r.errors);
    let checks = r.checks(&tf, check_runs);
    let model_options = model_options(path, tf.model_options.as_ref(), &mut r.errors);
    let sandbox = sandbox_settings(
        path,
        r.dir,
        tf.sandbox.as_ref(),
        tf.limits.as_ref(),
        &mut r.errors,
    );
    let mcp_servers = mcp_servers(path, r.dir, &tf.mcp_servers, &mut r.errors);
    let pricing = r.pricing(&tf, model.as_ref(), &model_options);
    r.fallback_prices(&tf, &fallback);
    r.service_tier(&tf, model.as_ref(), &model_options);
    let output_schema = r.output_schema(&tf);
    r.tool_choice(&tf, &model_options);
    let hooks = r.hooks(&tf);
    let telemetry = super::sections::telemetry(path, tf.telemetry.as_ref(), &mut r.errors);
    r.limits(&tf);
    let tripwires =
        super::tripwires::resolve(path, tf.max_denials.as_ref(), &tf.fail_fast, &mut r.errors);
    r.script(&tf);
    for entry in &tf.redact {
        if let Some(why) = runner_policy::redact_entry_error(&entry.value) {
            r.errors.push(ConfigError::at(
                path,
                &entry.referenced,
                format!("redact: {why}"),
            ));
        }
    }
    super::tripwires::check_decoy_file(
        (path, &text),
        tf.canaries.as_ref(),
        &workspace,
        &mut r.errors,
    );
    let shadow_policy = super::shadow::resolve(
        path,
        r.dir,
        tf.shadow_policy.as_ref(),
        &opts.files,
        &mut r.errors,
    );
    let agents = super::agents::resolve_agents(
        path,
        r.dir,
        tf.agents.as_ref(),
        tf.agent_limits.as_ref(),
        &opts.registry,
        &mut r.errors,
    );
    r.finish()?;
    let model = model.expect("checked");
    let context_window = model_options
        .context_window
        .unwrap_or_else(|| crate::provider::models::context_window(&model.model));
    let compact_at = model_options.compact_at.unwrap_or(DEFAULT_COMPACT_AT);
    let name_at = tf
        .name
        .as_ref()
        .map_or((1, 1), |n| (n.referenced.line(), n.referenced.column()));
    let env = tf
        .env
        .as_ref()
        .map_or_else(EnvSettings::default, |e| EnvSettings {
            pass: e.pass.clone(),
            set: e.set.clone(),
            redact: Vec::new(),
            decoys: None,
        });
    let env = EnvSettings {
        redact: tf.redact.iter().map(|r| r.value.clone()).collect(),
        ..env
    };
    Ok(Task {
        name,
        name_at,
        file: path.to_path_buf(),
        prompt,
        model,
        fallback,
        matrix: None,
        policy: policy.expect("checked"),
        workspace,
        mode: tf.mode,
        tools,
        max_turns: tf.max_turns.map_or(DEFAULT_MAX_TURNS, |m| m.value),
        timeout,
        checks,
        retries: tf.retries,
        fail_on_denial: tf.fail_on_denial,
        tripwires,
        shadow_policy,
        canaries: tf.canaries,
        batch: tf.batch,
        repository: None,
        model_options,
        env,
        sandbox,
        mcp_servers,
        max_tokens_total: tf.max_tokens_total.map_or(0, |m| m.value),
        context_window,
        compact_at,
        pricing,
        max_cost: tf.max_cost.map(|m| m.value),
        output_schema,
        hooks,
        telemetry,
        agents,
        scripts: tf
            .scripts
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(Into::into)
            .collect(),
        script: tf
            .script
            .or_else(|| tf.scripts.and_then(|s| s.into_iter().next()))
            .unwrap_or_default()
            .into(),
        params,
    })
}

/// Loads every task, collecting all errors; names must be unique.
pub fn load_tasks(paths: &[PathBuf], opts: &LoadOptions) -> Result<Vec<Task>, Vec<ConfigError>> {
    let mut tasks = Vec::new();
    let mut errors = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    for p in paths {
        match load_task(p, opts) {
            Ok(t) => {
                if let Some(first) = seen.get(&t.name) {
                    errors.push(ConfigError::new(
                        p,
                        t.name_at.0,
                        t.name_at.1,
                        format!(
                            "name: duplicate task name `{}` (also used by {})",
                            t.name,
                            first.display()
                        ),
                    ));
                } else {
                    seen.insert(t.name.clone(), p.clone());
                    tasks.push(t);
                }
            }
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(tasks)
    } else {
        Err(errors)
    }
}

/// What kind of file `validate` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Task,
    Policy,
}

/// Validates a task or policy file (told apart by their keys).
pub fn validate_file(path: &Path, opts: &LoadOptions) -> Result<FileKind, Vec<ConfigError>> {
    let text = read(path)?;
    let v: serde_json::Value = serde_saphyr::from_str(&text)
        .map_err(|e| vec![ConfigError::from_yaml_in(path, &text, &e)])?;
    let is_task =
        v.get("prompt").is_some() || v.get("script").is_some() || v.get("checks").is_some();
    let is_policy = ["rules", "default", "risk", "tests"]
        .iter()
        .any(|k| v.get(k).is_some());
    if is_task {
        load_task(path, opts).map(|_| FileKind::Task)
    } else if is_policy {
        parse_policy_yaml(&text, path).map(|_| FileKind::Policy)
    } else {
        Err(vec![ConfigError::new(
            path,
            1,
            1,
            "neither a task file (it has no `prompt:`) nor a policy file (it has no `rules:` or `default:`)",
        )])
    }
}
