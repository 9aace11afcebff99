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
use crate::contain::{CommandSetup, HiddenTree};
use crate::process::{CommandSpec, run_shell};
use crate::task::{LoadOptions, load_task};
use crate::workspace::IsolatedWorkspace;

/// How long the command may run.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

pub async fn sandbox(task: &std::path::Path, print: bool, command: &[String]) -> CliResult {
    if !print && command.is_empty() {
        return Err(CliError::Invalid(
            "give --print, or a command to run after `--`".into(),
        ));
    }
    let task = load_task(task, &LoadOptions::lenient()).map_err(CliError::Config)?;
    let policy = Arc::new(PolicySet::new(vec![task.policy.clone()]));
    let hides = policy.denies_reads();
    let iso = if hides {
        IsolatedWorkspace::create_hiding(&task.workspace, &[], &|rel| policy.read_denied(rel))
    } else {
        IsolatedWorkspace::create(&task.workspace, &[])
    }
    .map_err(|e| {
        CliError::Failed(format!(
            "copying the workspace {}: {e}",
            task.workspace.display()
        ))
    })?;
    let hidden = hides.then(|| HiddenTree {
        root: iso.original().to_path_buf(),
        except: iso.object_stores().to_vec(),
    });
    let mut settings = task.sandbox.clone();
    settings.proxy_port = None;
    let mut setup = CommandSetup::new(
        iso.path(),
        iso.git_dir().as_deref(),
        &task.env,
        &settings,
        hidden.as_ref(),
        Some(&policy),
    )
    .map_err(|e| CliError::Failed(e.to_string()))?;
    let mut writable = vec![
        iso.path().display().to_string(),
        setup.tmp.path().display().to_string(),
    ];
    writable.extend(iso.git_dir().map(|g| g.display().to_string()));
    writable.extend(settings.write.iter().map(|p| p.display().to_string()));
    let plan = format!(
        "sandbox: {}\nwritable: {}\nhidden: {}\n",
        setup.sandbox_note,
        writable.join(", "),
        match &hidden {
            Some(h) => format!(
                "the original workspace {} ({} path(s) the policy denies reading left out of the copy)",
                h.root.display(),
                iso.hidden().len()
            ),
            None => "nothing (the policy denies reading nothing)".into(),
        }
    );
    if print {
        print!("{plan}");
        if command.is_empty() {
            return Ok(Exit::Passed);
        }
    } else {
        eprint!("{plan}");
    }
    let confine = setup.confine.take().map(Arc::new);
    let result = run_shell(CommandSpec {
        script: "",
        argv: command,
        cwd: iso.path(),
        env: Some(&setup.env),
        timeout: TIMEOUT,
        max_output_bytes: 1 << 20,
        confine,
        stdin: None,
    })
    .await
    .map_err(|e| CliError::Failed(format!("{}: {e}", command[0])))?;
    print!("{}", result.stdout.text);
    eprint!("{}", result.stderr.text);
    for r in &result.exec_refusals {
        eprintln!("runner sandbox: refused to start: {r:?}");
    }
    drop(setup);
    Ok(match result.exit_code {
        Some(0) => Exit::Passed,
        _ => Exit::Failed,
    })
}
