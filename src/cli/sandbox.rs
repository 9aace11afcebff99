//! `runner sandbox TASK [--print] [-- CMD ARGS...]`: the sandbox a task's
//! commands get on this machine, for debugging a policy or a sandbox
//! setting. `--print` says what it enforces (as the transcript's
//! `sandbox` does, with what is writable and what is hidden); with a
//! command, it makes the task's copy of its workspace as a run does, runs
//! the command in it under the task's sandbox and environment, prints its
//! output and exits with its status, then removes the copy.
//!
//! One difference from a run: no network proxy is started, so a task's
//! `network:` rules are not applied here; `sandbox: {network: false}`
//! still turns the network off.

use std::sync::Arc;

use runner_policy::PolicySet;

use super::{CliError, CliResult, Exit};
use crate::process::{CommandSpec, run_shell};
use crate::run::CopyPlan;
use crate::task::{LoadOptions, load_task};

/// How long the command may run.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

pub async fn sandbox(task: &std::path::Path, print: bool, command: &[String]) -> CliResult {
    if !print && command.is_empty() {
        return Err(CliError::Invalid(
            "give --print, or a command to run after `--`".into(),
        ));
    }
    let task = load_task(task, &LoadOptions::lenient()).map_err(CliError::Config)?;
    let spill = tempfile::tempdir().map_err(|e| CliError::Failed(format!("a temp folder: {e}")))?;
    let mut sandbox = task.sandbox.clone();
    sandbox.proxy_port = None;
    // The copy, its sandbox and its environment, made as a run makes them.
    let plan = CopyPlan {
        workspace: task.workspace.clone(),
        excludes: Vec::new(),
        policy: Arc::new(PolicySet::new(vec![task.policy.clone()])),
        env: task.env.clone(),
        sandbox: sandbox.clone(),
        spill_dir: spill.path().to_path_buf(),
        net_log: Arc::new(crate::net::NetLog::new(std::time::Instant::now())),
    };
    let ready = tokio::task::spawn_blocking(move || plan.prepare())
        .await
        .map_err(|e| CliError::Failed(e.to_string()))?
        .map_err(|e| CliError::Failed(e.to_string()))?;
    let iso = &ready.iso;
    let mut writable = vec![
        iso.path().display().to_string(),
        ready._task_tmp.0.path().display().to_string(),
    ];
    writable.extend(iso.git_dir().map(|g| g.display().to_string()));
    writable.extend(sandbox.write.iter().map(|p| p.display().to_string()));
    let said = format!(
        "sandbox: {}\nwritable: {}\nhidden: {}\n",
        ready.sandbox_note,
        writable.join(", "),
        match &ready.hidden {
            Some(h) => format!(
                "the original workspace {} ({} path(s) the policy denies reading left out of the copy)",
                h.root.display(),
                iso.hidden().len()
            ),
            None => "nothing (the policy denies reading nothing)".into(),
        }
    );
    if print {
        print!("{said}");
        if command.is_empty() {
            return Ok(Exit::Passed);
        }
    } else {
        eprint!("{said}");
    }
    let result = run_shell(CommandSpec {
        script: "",
        argv: command,
        cwd: iso.path(),
        env: ready.ctx.env.as_deref(),
        timeout: TIMEOUT,
        max_output_bytes: 1 << 20,
        confine: ready.ctx.confine.clone(),
        stdin: None,
    })
    .await
    .map_err(|e| CliError::Failed(format!("{}: {e}", command[0])))?;
    print!("{}", result.stdout.text);
    eprint!("{}", result.stderr.text);
    for r in &result.exec_refusals {
        eprintln!("runner sandbox: refused to start: {r:?}");
    }
    Ok(match result.exit_code {
        Some(0) => Exit::Passed,
        _ => Exit::Failed,
    })
}
