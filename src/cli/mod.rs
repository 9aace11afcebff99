//! Command-line commands, one file each. stdout carries data, stderr logs.

mod budget_plan;
pub mod check;
pub mod compare;
pub mod doctor;
mod error;
pub mod exec;
pub(crate) mod expand;
pub mod export;
pub mod github_output;
pub mod init;
mod init_action;
mod init_fleet;
pub mod lint;
pub mod man;
mod matrix;
pub mod merge;
pub mod plan;
mod repeat;
pub mod replay;
pub mod report;
pub mod run;
mod run_args;
mod run_checks;
mod run_end;
pub mod sandbox;
pub mod schema;
pub mod shadow;
pub mod suggest;
pub mod tool;
pub mod validate;

pub use error::{CliError, CliResult, Exit};

/// Loads `--policy` files, each a layer, with `{{files}}` rules bound to
/// `files`; every error of every file, located.
pub fn load_policies(
    paths: &[std::path::PathBuf],
    files: &[String],
) -> Result<Vec<runner_policy::Policy>, Vec<runner_policy::ConfigError>> {
    let mut layers = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        match runner_policy::load_policy_file(p).map(|l| l.bind_files(files)) {
            Ok(Ok(l)) => layers.push(l),
            Ok(Err(e)) => errors.push(runner_policy::ConfigError::new(p, 0, 0, e.to_string())),
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(layers)
    } else {
        Err(errors)
    }
}

/// Parses ARGS_JSON and opens the workspace of `check` and `tool`.
/// A task's workspace copy made as a run makes it, off the async
/// threads (`runner sandbox`, `runner tool --policy`).
pub(crate) async fn prepare_copy(
    plan: crate::run::CopyPlan,
) -> Result<crate::run::Prepared, CliError> {
    tokio::task::spawn_blocking(move || plan.prepare())
        .await
        .map_err(|e| CliError::Failed(e.to_string()))?
        .map_err(|e| CliError::Failed(e.to_string()))
}

pub fn call_inputs(
    args: &str,
    workspace: &std::path::Path,
) -> Result<(serde_json::Value, crate::workspace::Workspace), CliError> {
    let args = serde_json::from_str(args)
        .map_err(|e| CliError::Invalid(format!("ARGS_JSON is not valid JSON: {e}")))?;
    let ws = crate::workspace::Workspace::new(workspace)
        .map_err(|e| CliError::Invalid(format!("workspace {}: {e}", workspace.display())))?;
    Ok((args, ws))
}
