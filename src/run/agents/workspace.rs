//! A child's workspace and tool context: its parent's copy, or a copy of
//! its own with its commands' environment and sandbox made for it.

use std::sync::Arc;

use super::Delegator;
use crate::tools::ToolContext;
use crate::workspace::{IsolatedWorkspace, Workspace};
use runner_policy::PolicySet;

/// Why a child's own workspace could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ChildSetupError {
    #[error("could not open the child's copy: {0}")]
    Open(std::io::Error),
    #[error("could not set up the child's commands: {0}")]
    Commands(#[from] crate::contain::CommandSetupError),
}

/// A child's own temp folder for its commands (removed on drop).
pub type TempFolder = Option<crate::contain::commands::TaskTemp>;

/// The child's tool context: the parent's, or one for its own copy (with
/// its commands' temp folder, kept until the child ends).
pub fn child_context(
    d: &Delegator,
    policy: &Arc<PolicySet>,
    copy: Option<&IsolatedWorkspace>,
) -> Result<(ToolContext, TempFolder), ChildSetupError> {
    let parent = &d.ctx_of;
    let Some(iso) = copy else {
        let mut c = parent.fork();
        c.policy = Some(Arc::clone(policy));
        return Ok((c, None));
    };
    let ws = Workspace::new(iso.path()).map_err(ChildSetupError::Open)?;
    let mut sandbox = d.tree.task.sandbox.clone();
    sandbox.proxy_port = d.tree.proxy_port;
    let setup = crate::contain::CommandSetup::new(
        iso.path(),
        iso.git_dir().as_deref(),
        &d.tree.task.env,
        &sandbox,
        d.tree.hidden.as_ref(),
        Some(policy),
    )?;
    let mut c = ToolContext::new(ws).with_spill_dir(d.tree.spill_dir.clone());
    c.env = Some(setup.env);
    c.confine = setup.confine.map(Arc::new);
    c.net_log = parent.net_log.clone();
    c.policy = Some(Arc::clone(policy));
    Ok((c, Some(setup.tmp)))
}
