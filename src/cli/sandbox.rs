//! `runner sandbox TASK [--print] [-- CMD ARGS...]`: the sandbox a task's
//! commands get on this machine, for debugging a policy or a sandbox
//! setting. `--print` says what it enforces (as the transcript's
//! `sandbox` does, with what is writable and what is hidden); with a
//! command, it makes the task's copy of its workspace as a run does, runs
//! the command in it under the task's sandbox and environment, prints its
//! output and exits with its status, then removes the copy.
//!
//! `--platform macos --print` prints the Seatbelt profile a macOS run of
//! the task would get (for this copy's paths), on any machine;
//! `--platform linux` is the plan this machine's kernel gives, so it is
//! printed on Linux only.
//!
//! One difference from a run: no network proxy is started, so a task's
//! `network:` rules are not applied here; `sandbox: {network: false}`
//! still turns the network off.

use std::path::PathBuf;
use std::sync::Arc;

use runner_policy::PolicySet;

use super::{CliError, CliResult, Exit};
use crate::process::{CommandSpec, run_shell};
use crate::run::CopyPlan;
use crate::task::{LoadOptions, load_task};

/// How long the command may run.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// `--platform`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    Linux,
    Macos,
}

impl Platform {
    /// This machine's, where it is one of them.
    fn here() -> Option<Platform> {
        match std::env::consts::OS {
            "linux" => Some(Platform::Linux),
            "macos" => Some(Platform::Macos),
            _ => None,
        }
    }
}

pub async fn sandbox(
    task: &std::path::Path,
    print: bool,
    platform: Option<Platform>,
    command: &[String],
) -> CliResult {
    if !print && command.is_empty() {
        return Err(CliError::Invalid(
            "give --print, or a command to run after `--`".into(),
        ));
    }
    let here = Platform::here();
    if let Some(p) = platform
        && Some(p) != here
    {
        if !command.is_empty() {
            return Err(CliError::Invalid(format!(
                "--platform {}: a command runs under this machine's sandbox ({}); give --print alone",
                p.name(),
                std::env::consts::OS
            )));
        }
        if p == Platform::Linux {
            return Err(CliError::Invalid(
                "--platform linux: the Linux plan is what the kernel gives; print it on Linux"
                    .into(),
            ));
        }
    }
    let seatbelt = platform == Some(Platform::Macos);
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
    let ready = super::prepare_copy(plan).await?;
    let iso = &ready.iso;
    let mut writable = vec![
        iso.path().to_path_buf(),
        ready._task_tmp.path().to_path_buf(),
    ];
    writable.extend(iso.git_dir().map(|g| g.to_path_buf()));
    writable.extend(sandbox.write.iter().cloned());
    let said = format!(
        "sandbox: {}\nwritable: {}\nhidden: {}\n",
        ready.sandbox_note,
        writable
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        match &ready.hidden {
            Some(h) => format!(
                "the original workspace {} ({} path(s) the policy denies reading left out of the copy)",
                h.root.display(),
                iso.hidden().len()
            ),
            None => "nothing (the policy denies reading nothing)".into(),
        }
    );
    if print && seatbelt {
        let profile = seatbelt_profile(&sandbox, &writable, &ready)?;
        print!("{profile}");
        return Ok(Exit::Passed);
    }
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
        eprintln!("runner sandbox: refused to start: {r}");
    }
    for c in &result.refused_calls {
        eprintln!("runner sandbox: refused: {c}");
    }
    Ok(match result.exit_code {
        Some(0) => Exit::Passed,
        _ => Exit::Failed,
    })
}

impl Platform {
    fn name(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Macos => "macos",
        }
    }
}

/// The Seatbelt profile a macOS run of the task would get, for this
/// copy's folders. The proxy's port is chosen when a run starts: `PORT`
/// here.
fn seatbelt_profile(
    sandbox: &crate::contain::SandboxSettings,
    writable: &[PathBuf],
    ready: &crate::run::Prepared,
) -> Result<String, CliError> {
    use crate::contain::seatbelt::Network;
    use crate::contain::seatbelt::{Spec, render};
    let policy = &ready.policy;
    let mut spec = Spec::new(sandbox, writable, ready.hidden.as_ref());
    // A run's proxy, whose port is chosen when the run starts.
    if policy.has_network_rules() && sandbox.network {
        spec.network = Some(Network::Proxy(None));
    }
    let path = ready.ctx.env.as_deref().and_then(|vars| {
        vars.iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str())
    });
    spec.add_policy(policy, path);
    render(&spec).map_err(|e| CliError::Failed(e.to_string()))
}
