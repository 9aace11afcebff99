//! What a tool call may use besides its arguments.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::read_tracker::ReadTracker;
use crate::workspace::{PathError, ResolvedPath, Workspace};

/// Decides which workspace paths listing and search tools may show. The
/// policy implements it: a path denied to `Read` is left out of what `grep`,
/// `glob` and `ls` return.
pub trait PathVisibility: Send + Sync {
    /// `rel` is workspace-relative and `/`-separated.
    fn is_hidden(&self, rel: &str) -> bool;
}

impl PathVisibility for runner_policy::PolicySet {
    fn is_hidden(&self, rel: &str) -> bool {
        self.read_denied(rel)
    }
}

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
    pub visibility: Option<Arc<dyn PathVisibility>>,
    /// Environment for commands; `None` inherits the runner's.
    pub env: Option<Vec<(String, String)>>,
    /// Sandbox and limits for commands.
    pub confine: Option<Arc<crate::contain::Confinement>>,
    /// The task's policy, for decisions a tool makes while it runs (each
    /// hop of `web_fetch`).
    pub policy: Option<Arc<runner_policy::PolicySet>>,
    /// Where connection decisions go (see `net::NetLog`).
    pub net_log: Option<Arc<crate::net::NetLog>>,
    /// Starts children, for an agent that may (`agents:`).
    pub delegate: Option<Arc<dyn Delegate>>,
    seq: AtomicU64,
}

impl ToolContext {
    pub fn new(workspace: Workspace) -> Self {
        Self {
            workspace,
            spill_dir: None,
            reads: ReadTracker::default(),
            visibility: None,
            env: None,
            confine: None,
            policy: None,
            net_log: None,
            delegate: None,
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
            visibility: self.visibility.clone(),
            env: self.env.clone(),
            confine: self.confine.clone(),
            policy: self.policy.clone(),
            net_log: self.net_log.clone(),
            delegate: None,
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

    pub fn with_visibility(mut self, v: Arc<dyn PathVisibility>) -> Self {
        self.visibility = Some(v);
        self
    }

    /// Resolves a path argument inside the workspace (see [`Workspace::resolve`]).
    pub fn resolve(&self, path: &str) -> Result<ResolvedPath, PathError> {
        self.workspace.resolve(path)
    }

    /// True when listing tools must leave `rel` out.
    pub fn is_hidden(&self, rel: &str) -> bool {
        self.visibility.as_ref().is_some_and(|v| v.is_hidden(rel))
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
