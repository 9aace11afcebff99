//! Command-line commands, one file each. stdout carries data, stderr logs.

pub mod check;
pub mod expand;
pub mod init;
pub mod merge;
pub mod run;
pub mod schema;
pub mod tool;
pub mod validate;

/// Exit codes: 0 everything passed, 1 something failed or was denied, 2 bad
/// input (nothing was run).
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILED: i32 = 1;
pub const EXIT_INVALID: i32 = 2;

/// Prints config errors to stderr.
pub fn report_errors(errors: &[runner_policy::ConfigError]) {
    for e in errors {
        eprintln!("error: {e}");
    }
}

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
            Ok(Err(e)) => errors.push(runner_policy::ConfigError::new(p, 0, 0, e)),
            Err(es) => errors.extend(es),
        }
    }
    if errors.is_empty() {
        Ok(layers)
    } else {
        Err(errors)
    }
}

/// Parses ARGS_JSON and opens the workspace of `check` and `tool`; on bad
/// input prints the error and gives the exit code.
pub fn call_inputs(
    args: &str,
    workspace: &std::path::Path,
) -> Result<(serde_json::Value, crate::workspace::Workspace), i32> {
    let args = serde_json::from_str(args).map_err(|e| {
        eprintln!("error: ARGS_JSON is not valid JSON: {e}");
        EXIT_INVALID
    })?;
    let ws = crate::workspace::Workspace::new(workspace).map_err(|e| {
        eprintln!("error: workspace {}: {e}", workspace.display());
        EXIT_INVALID
    })?;
    Ok((args, ws))
}
