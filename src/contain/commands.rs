//! Everything a task's commands run under, prepared in one place for
//! `runner run` and `runner tool`: the scrubbed environment, a private
//! temp folder (also `TMPDIR`), a private `/tmp` where the machine allows
//! one, and the sandbox allowing writes in the workspace, those folders
//! and the task's extra `write:` paths.

use std::path::{Path, PathBuf};

use super::{Confinement, EnvSettings, HiddenTree, SandboxSettings, scrubbed_env};

/// The runner's own environment (names and values that are not UTF-8 are
/// left out).
pub fn process_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

/// Why commands cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum CommandSetupError {
    #[error("could not create the task's temp folder: {0}")]
    TempFolder(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] super::SandboxError),
}

/// What commands get. Keep [`CommandSetup::tmp`] alive while they run:
/// dropping it removes the temp folders.
pub struct CommandSetup {
    pub env: Vec<(String, String)>,
    pub confine: Option<Confinement>,
    /// What the sandbox enforces, for the transcript.
    pub sandbox_note: String,
    pub tmp: TaskTemp,
}

/// A task's temp folders: its own (`TMPDIR`), and the one that holds its
/// commands' private `/tmp` and `/var/tmp`. Removed when dropped, and on a
/// hurried exit (a second signal) too.
pub struct TaskTemp {
    dir: tempfile::TempDir,
    _private: tempfile::TempDir,
    _registered: [crate::cleanup::Registered; 2],
}

impl TaskTemp {
    fn new() -> std::io::Result<TaskTemp> {
        let make = |prefix: &str| tempfile::Builder::new().prefix(prefix).tempdir();
        let dir = make("runner-tmp-")?;
        let private = make("runner-ptmp-")?;
        // The folders Landlock must let commands write: the ones bound at
        // `/tmp` and `/var/tmp` (a rule on their parent would not hold
        // there, as the parent is no folder of theirs in that view).
        for root in crate::contain::PRIVATE_ROOTS {
            std::fs::create_dir_all(private.path().join(root.trim_start_matches('/')))?;
        }
        let registered = [
            crate::cleanup::register(dir.path()),
            crate::cleanup::register(private.path()),
        ];
        Ok(TaskTemp {
            dir,
            _private: private,
            _registered: registered,
        })
    }

    /// The task's temp folder (`TMPDIR`).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The folder that holds the commands' private `/tmp`.
    fn private(&self) -> &Path {
        self._private.path()
    }

    /// The folders that stand in for `/tmp` and `/var/tmp`.
    fn private_roots(&self) -> impl Iterator<Item = PathBuf> + '_ {
        crate::contain::PRIVATE_ROOTS
            .iter()
            .map(|r| self.private().join(r.trim_start_matches('/')))
    }
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
        let tmp = TaskTemp::new().map_err(CommandSetupError::TempFolder)?;
        let mut writable = vec![workspace.to_path_buf(), tmp.path().to_path_buf()];
        writable.extend(git_dir.map(Path::to_path_buf));
        writable.extend(sandbox.write.iter().cloned());
        let mut walled = writable.clone();
        walled.extend(tmp.private_roots());
        let mut vars = scrubbed_env(process_env(), env);
        let path_dirs: Vec<PathBuf> = vars
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.split(':').map(PathBuf::from).collect())
            .unwrap_or_default();
        let mut sandbox = sandbox.clone();
        sandbox.unreadable = super::world::unreadable_trees(
            std::env::var_os("HOME").map(PathBuf::from).as_deref(),
            &path_dirs,
            &sandbox.readable,
            &sandbox.unreadable_paths,
        );
        let sandbox = &sandbox;
        let (confine, sandbox_note) = Confinement::hiding(sandbox, &walled, hidden)?;
        // The task's proxy, and no other (see `net`).
        if let Some(port) = sandbox.proxy_port {
            vars.retain(|(k, _)| !crate::net::is_proxy_var(k));
            vars.extend(crate::net::proxy_env(port));
        }
        if let Some(ca) = &sandbox.proxy_ca {
            trust_proxy_ca(ca, &mut vars, tmp.path()).map_err(CommandSetupError::TempFolder)?;
        }
        if let Some(decoys) = &env.decoys {
            plant_decoys(decoys, &mut vars, tmp.path()).map_err(CommandSetupError::TempFolder)?;
        }
        // The copy's `.git` may lie above the workspace across a mount
        // (an overlay workspace in a folder of its repository): git must
        // look past it to find its view.
        if git_dir.is_some() {
            vars.retain(|(k, _)| k != "GIT_DISCOVERY_ACROSS_FILESYSTEM");
            vars.push(("GIT_DISCOVERY_ACROSS_FILESYSTEM".into(), "1".into()));
        }
        vars.retain(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"));
        for var in ["TMPDIR", "TMP", "TEMP"] {
            vars.push((var.to_string(), tmp.path().display().to_string()));
        }
        let confine = match confine {
            Some(c) if sandbox.private_tmp => {
                let keeps =
                    super::tmp_keeps::kept_in_tmp(&writable, hidden, &sandbox.unreadable, &vars);
                Some(c.with_private_tmp(tmp.private(), &keeps))
            }
            c => c,
        };
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
        })
    }
}

/// Gives commands the task's decoys: their variables where the task's
/// `env:` gives none of that name, and `HOME` a folder of the task's own
/// (in `tmp`) holding their files, the runner's home linked in beside them.
fn plant_decoys(
    decoys: &crate::canary::Canaries,
    vars: &mut Vec<(String, String)>,
    tmp: &Path,
) -> std::io::Result<()> {
    for (k, v) in decoys.variables() {
        if !vars.iter().any(|(n, _)| *n == k) {
            vars.push((k, v));
        }
    }
    let home = tmp.join("home");
    let real = std::env::var_os("HOME").map(PathBuf::from);
    decoys.make_home(&home, real.as_deref())?;
    vars.retain(|(k, _)| k != "HOME");
    vars.push(("HOME".into(), home.display().to_string()));
    Ok(())
}

/// The variables commands read for their root certificates, pointed at
/// the machine's roots and the task proxy's CA `ca` (written to `tmp`):
/// the proxy reads their HTTPS (see `net::inspect`).
fn trust_proxy_ca(ca: &str, vars: &mut Vec<(String, String)>, tmp: &Path) -> std::io::Result<()> {
    const BUNDLE_VARS: [&str; 5] = [
        "SSL_CERT_FILE",
        "CURL_CA_BUNDLE",
        "REQUESTS_CA_BUNDLE",
        "GIT_SSL_CAINFO",
        "PIP_CERT",
    ];
    let only = tmp.join("runner-proxy-ca.pem");
    let bundle = tmp.join("runner-ca-bundle.pem");
    std::fs::write(&only, ca)?;
    let mut roots = crate::net::inspect::machine_roots_pem();
    if !roots.is_empty() && !roots.ends_with('\n') {
        roots.push('\n');
    }
    roots.push_str(ca);
    std::fs::write(&bundle, roots)?;
    vars.retain(|(k, _)| !BUNDLE_VARS.contains(&k.as_str()) && k != "NODE_EXTRA_CA_CERTS");
    for k in BUNDLE_VARS {
        vars.push((k.to_string(), bundle.display().to_string()));
    }
    vars.push(("NODE_EXTRA_CA_CERTS".into(), only.display().to_string()));
    Ok(())
}
