//! What a tool call may use besides its arguments.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::read_tracker::ReadTracker;
use crate::workspace::{PathError, ResolvedPath, Workspace};

/// Starts child agents for the `task` tool (see `run::agents`): the run
/// implements it, the tool only asks.
pub trait Delegate: Send + Sync {
    /// Runs the profile `agent` on `prompt` as a child of the calling
    /// agent; its answer is the result.
    fn delegate<'a>(
        &'a self,
        agent: &'a str,
        prompt: &'a str,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<super::ToolOutput, super::ToolError>>
                + Send
                + 'a,
        >,
    >;
}

/// Shared state of one task's tool calls.
pub struct ToolContext {
    pub workspace: Workspace,
    /// Where large results are spilled (`<out>/<task>/tool-results`). Files
    /// there can be read with `read_file` by their absolute path.
    pub spill_dir: Option<PathBuf>,
    pub reads: ReadTracker,
    /// Environment for commands; `None` inherits the runner's.
    pub env: Option<Vec<(String, String)>>,
    /// Sandbox and limits for commands.
    pub confine: Option<Arc<crate::contain::Confinement>>,
    /// The task's policy: for decisions a tool makes while it runs (each
    /// hop of `web_fetch`), and the paths denied to `Read`, which `grep`,
    /// `glob` and `ls` leave out.
    pub policy: Option<Arc<runner_policy::PolicySet>>,
    /// Where connection decisions go (see `net::NetLog`).
    pub net_log: Option<Arc<crate::net::NetLog>>,
    /// Starts children, for an agent that may (`agents:`).
    pub delegate: Option<Arc<dyn Delegate>>,
    /// The task's decoy credentials: `web_fetch` and MCP calls carrying
    /// one are refused.
    pub canaries: Option<Arc<crate::canary::Canaries>>,
    seq: AtomicU64,
}

impl ToolContext {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            spill_dir: None,
            reads: ReadTracker::default(),
            env: None,
            confine: None,
            policy: None,
            net_log: None,
            delegate: None,
            canaries: None,
            seq: AtomicU64::new(0),
        }
    }

    /// Sets the spill folder, made absolute once here so that
    /// [`ToolContext::is_spill_file`] compares paths without touching the disk.
    pub fn with_spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let dir = if dir.is_absolute() {
            dir
        } else {
            std::env::current_dir().unwrap_or_default().join(dir)
        };
        self.spill_dir = Some(crate::workspace::normalize_lexically(&dir));
        self
    }

    /// A context like this one for another agent: the same workspace,
    /// environment, sandbox and policy; what it has read and counted
    /// starts afresh, and it starts no children.
    pub fn fork(&self) -> Self {
        Self {
            workspace: self.workspace.clone(),
            spill_dir: self.spill_dir.clone(),
            reads: ReadTracker::default(),
            env: self.env.clone(),
            confine: self.confine.clone(),
            policy: self.policy.clone(),
            net_log: self.net_log.clone(),
            delegate: None,
            canaries: self.canaries.clone(),
            seq: AtomicU64::new(0),
        }
    }

    /// [`ToolContext::fork`], starting children through `d`.
    pub fn with_delegate(&self, d: Arc<dyn Delegate>) -> Self {
        Self {
            delegate: Some(d),
            ..self.fork()
        }
    }

    /// Sets the policy: what tools decide as they run, and which paths
    /// listing and search tools leave out (those denied to `Read`).
    pub fn with_policy(mut self, policy: Arc<runner_policy::PolicySet>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Resolves a path argument inside the workspace (see [`Workspace::resolve`]).
    pub fn resolve(&self, path: &str) -> Result<ResolvedPath, PathError> {
        self.workspace.resolve(path)
    }

    /// True when listing tools must leave `rel` out.
    pub fn is_hidden(&self, rel: &str) -> bool {
        self.policy.as_ref().is_some_and(|p| p.read_denied(rel))
    }

    /// True when `path` (as the model gave it, absolute) is a spilled
    /// result file of this task.
    pub fn is_spill_file(&self, path: &Path) -> bool {
        path.is_absolute()
            && self
                .spill_dir
                .as_ref()
                .is_some_and(|dir| crate::workspace::normalize_lexically(path).starts_with(dir))
    }

    /// A number unique within this task, for spill file names.
    pub fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }
}
