//! A task's workspace: its copy, what commands run in, the backstops the
//! run holds, and the context its tools run in.
//!
//! Made on a blocking thread from owned inputs ([`CopyPlan`]), so that the
//! task's first model request can be in flight meanwhile (see
//! `engine::first_turn`): a copy grows with the repository, the request
//! does not.

use std::path::PathBuf;
use std::sync::Arc;

use crate::contain::{CommandSetup, CommandSetupError, EnvSettings, HiddenTree, SandboxSettings};
use crate::tools::ToolContext;
use crate::workspace::{IsolatedWorkspace, Workspace};
use runner_policy::PolicySet;

/// What could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error("could not prepare the workspace copy of {workspace}: {source}")]
    Copy {
        workspace: String,
        source: std::io::Error,
    },
    #[error("could not open the workspace copy: {0}")]
    Open(std::io::Error),
    #[error(transparent)]
    Commands(#[from] CommandSetupError),
}

/// What a task's workspace is made from.
pub struct CopyPlan {
    /// The original workspace.
    pub workspace: PathBuf,
    /// Absolute paths left out of the copy (the output folder).
    pub excludes: Vec<PathBuf>,
    /// The task's policy layers (before the backstops are known).
    pub policy: Arc<PolicySet>,
    pub env: EnvSettings,
    pub sandbox: SandboxSettings,
    /// Where large tool results are spilled.
    pub spill_dir: PathBuf,
    /// Where the task's connection decisions go.
    pub net_log: Arc<crate::net::NetLog>,
}

/// A task's workspace, ready for tools: the copy (removed on drop), the
/// task's temp folder, the context its tools run in, and what the
/// transcript says of them.
pub struct Prepared {
    pub iso: IsolatedWorkspace,
    /// Kept until the task ends (removed on drop).
    pub _task_tmp: crate::contain::commands::TaskTemp,
    pub ctx: Arc<ToolContext>,
    /// The policy with the run's backstops.
    pub policy: Arc<PolicySet>,
    /// The transcript's `sandbox` note.
    pub sandbox_note: String,
    /// What commands cannot read (the original, when the policy denies
    /// reads): an isolated child's commands too.
    pub hidden: Option<HiddenTree>,
}

impl Prepared {
    /// What the copy left out because it holds a credential: its git
    /// config's entries, and the files only the built-in credentials
    /// layer hid.
    pub fn credentials_removed(&self) -> Vec<String> {
        let mut out = self.iso.credentials_removed().to_vec();
        out.extend(
            (self.iso.hidden().iter())
                .filter(|rel| !self.policy.rules_deny_reading(rel))
                .map(|rel| format!("{rel}: hidden by the built-in credentials layer")),
        );
        out
    }
}

impl CopyPlan {
    /// Copies the workspace and sets up commands.
    pub fn prepare(self) -> Result<Prepared, PrepareError> {
        // What the policy denies reading is not in the copy at all, and the
        // original is unreadable to commands (see contain::HiddenTree).
        let hides = self.policy.denies_reads();
        let policy = &self.policy;
        let iso = if hides {
            IsolatedWorkspace::create_hiding(&self.workspace, &self.excludes, &|rel| {
                policy.read_denied(rel)
            })
        } else {
            IsolatedWorkspace::create(&self.workspace, &self.excludes)
        };
        let iso = iso.map_err(|source| PrepareError::Copy {
            workspace: self.workspace.display().to_string(),
            source,
        })?;
        // Tests hold the made copy back to see what happens meanwhile.
        #[cfg(feature = "test-tools")]
        if let Some(ms) = std::env::var("RUNNER_TEST_COPY_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        // A task's decoy credentials file (`canaries.file`), left out of
        // its diff.
        if let Some((rel, text)) = self.env.decoys.as_ref().and_then(|d| d.decoy_file()) {
            iso.plant(rel, text.as_bytes())
                .map_err(|source| PrepareError::Copy {
                    workspace: self.workspace.display().to_string(),
                    source,
                })?;
        }
        let ws = Workspace::new(iso.path()).map_err(PrepareError::Open)?;
        // Commands may write in the copy (and its `.git`) and the task's
        // temp folder, nowhere else (under the sandbox).
        let hidden = hides.then(|| HiddenTree {
            root: iso.hidden_root().to_path_buf(),
            except: iso.object_stores().to_vec(),
        });
        let commands = CommandSetup::new(
            iso.path(),
            iso.git_dir().as_deref(),
            &self.env,
            &self.sandbox,
            hidden.as_ref(),
            Some(&self.policy),
        )?;
        let mut sandbox_note = commands.sandbox_note;
        // The walls this run holds behind the policy's deny rules decide
        // how much the analysis must refuse.
        let backstops = crate::run::backstops::run_backstops(
            &iso,
            commands.confine.as_ref(),
            self.sandbox.network,
            &mut sandbox_note,
        );
        let policy = Arc::new((*self.policy).clone().with_backstops(backstops));
        let mut ctx = ToolContext::new(ws)
            .with_spill_dir(self.spill_dir)
            .with_policy(policy.clone());
        ctx.env = Some(commands.env);
        ctx.canaries = self.env.decoys.clone();
        // Connections the supervisor refuses join the task's.
        ctx.confine = commands
            .confine
            .map(|c| Arc::new(c.with_net_log(self.net_log.clone())));
        ctx.net_log = Some(self.net_log);
        Ok(Prepared {
            iso,
            _task_tmp: commands.tmp,
            ctx: Arc::new(ctx),
            policy,
            sandbox_note,
            hidden,
        })
    }
}
