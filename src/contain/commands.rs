//! Everything a task's commands run under, prepared in one place for
//! `runner run` and `runner tool`: the scrubbed environment, a private
//! temp folder (also `TMPDIR`), and the sandbox allowing writes in the
//! workspace, that folder and the task's extra `write:` paths.

use std::path::Path;

use super::{Confinement, EnvSettings, HiddenTree, SandboxSettings, scrubbed_env};

/// The runner's own environment (names and values that are not UTF-8 are
/// left out).
pub fn process_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// What commands get. Keep it alive while they run: dropping it removes
/// the temp folder.
/// Why commands cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum CommandSetupError {
    #[error("could not create the task's temp folder: {0}")]
    TempFolder(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] super::SandboxError),
}

pub struct CommandSetup {
    pub env: Vec<(String, String)>,
    pub confine: Option<Confinement>,
    /// What the sandbox enforces, for the transcript.
    pub sandbox_note: String,
    pub tmp: tempfile::TempDir,
    /// Removed on a hurried exit (a second signal) too.
    pub registered: crate::cleanup::Registered,
}

impl CommandSetup {
    /// The error says what could not be prepared (or that `sandbox:
    /// required` cannot be met).
    pub fn new(
        workspace: &Path,
        git_dir: Option<&Path>,
        env: &EnvSettings,
        sandbox: &SandboxSettings,
        hidden: Option<&HiddenTree>,
        policy: Option<&std::sync::Arc<runner_policy::PolicySet>>,
    ) -> Result<CommandSetup, CommandSetupError> {
        let tmp = tempfile::Builder::new()
            .prefix("runner-tmp-")
            .tempdir()
            .map_err(CommandSetupError::TempFolder)?;
        let mut writable = vec![workspace.to_path_buf(), tmp.path().to_path_buf()];
        writable.extend(git_dir.map(Path::to_path_buf));
        writable.extend(sandbox.write.iter().cloned());
        let (confine, sandbox_note) = Confinement::hiding(sandbox, &writable, hidden)?;
        let mut vars = scrubbed_env(process_env(), env);
        // The task's proxy, and no other (see `net`).
        if let Some(port) = sandbox.proxy_port {
            vars.retain(|(k, _)| !crate::net::is_proxy_var(k));
            vars.extend(crate::net::proxy_env(port));
        }
        vars.retain(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"));
        for var in ["TMPDIR", "TMP", "TEMP"] {
            vars.push((var.to_string(), tmp.path().display().to_string()));
        }
        let registered = crate::cleanup::register(tmp.path());
        // What the policy's deny rules say, where the platform's sandbox
        // can hold it (the exec wall on Linux, the profile on macOS);
        // programs looked up on the commands' PATH.
        let path = vars
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str());
        let confine = match (confine, policy) {
            (Some(c), Some(p)) => Some(c.with_policy(p, path)),
            (c, _) => c,
        };
        let sandbox_note = confine
            .as_ref()
            .map_or(sandbox_note, |c| c.description.clone());
        Ok(CommandSetup {
            env: vars,
            confine,
            sandbox_note,
            tmp,
            registered,
        })
    }
}
