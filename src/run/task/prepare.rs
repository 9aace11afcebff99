//! The second phase: the task's world. The network proxy (with `network:`
//! rules), the workspace copy with its sandbox and backstops (made on a
//! blocking thread while the first turn's request is in flight, for a task
//! whose tools are known before the copy is made), a resumed task's
//! changes applied to the copy, and the MCP servers.
//!
//! Hands [`Ready`] to the attempts: everything they run in, and the first
//! turn when it was asked for. What it learned for the transcript is its
//! [`Setup`], known once the copy is made (so a task whose MCP servers fail
//! to start still says how it was sandboxed).

use std::sync::Arc;

use super::progress::{Prior, Progress};
use super::scene::Scene;
use super::scene::{cancelled, timed_out};
use super::workspace::{CopyPlan, Prepared};
use crate::engine::{Event, EventSink, FirstTurn, ask_first};
use crate::mcp::McpServers;
use crate::provider::Provider;
use crate::report::{Outcome, OutcomeStatus};
use crate::run::prompt::system_prompt;
use crate::task::Mode;
use crate::tools::Registry;
use runner_policy::PolicySet;

/// What preparing learned, for the transcript.
pub(super) struct Setup {
    /// The policy with the run's backstops.
    pub policy: Arc<PolicySet>,
    /// The transcript's `sandbox` note.
    pub sandbox_note: String,
    /// What the copy left out because it holds a credential.
    pub credentials_removed: Vec<String>,
    /// The copy's path below its repository, for the diff's names.
    pub diff_prefix: String,
    /// How the copy was made.
    pub workspace_copy: runner_output::WorkspaceCopy,
}

/// The task's world, ready for its attempts.
pub(super) struct Ready<'p> {
    pub workspace: Prepared,
    /// The task's tools, its MCP servers' among them.
    pub registry: Registry,
    /// Stopped when the task's world is closed.
    pub proxy: Option<crate::net::Proxy>,
    pub mcp: McpServers,
    /// The first turn, asked for while the copy was made.
    pub first: Option<FirstTurn<'p>>,
    pub setup: Setup,
}

/// Why the task's world could not be made, and what was learned first.
pub(super) struct Unready {
    pub outcome: Outcome,
    pub setup: Option<Setup>,
}

impl From<Outcome> for Unready {
    fn from(outcome: Outcome) -> Self {
        Self {
            outcome,
            setup: None,
        }
    }
}

fn failure(reason: String) -> Outcome {
    Outcome {
        status: OutcomeStatus::Error,
        reason,
        error_class: None,
        tripwire: None,
    }
}

/// Makes the task's world; meanwhile (for a fresh task without MCP
/// servers) sends the first turn's request.
pub(super) async fn prepare<'p>(
    scene: &Scene<'_>,
    provider: &'p dyn Provider,
    progress: &mut Progress,
    prior: Option<&Prior>,
    sink: &dyn EventSink,
) -> Result<Ready<'p>, Unready> {
    let task = scene.task;
    // With `network:` rules, commands, hooks and MCP servers reach the
    // network through the task's proxy only (stopped with the world).
    // Canaries looked for inside HTTPS: a CA of the task's own.
    let inspector = match &scene.canaries {
        Some(c) if c.inspect_https && scene.policy.has_network_rules() => {
            match crate::net::inspect::Inspector::new() {
                Ok(i) => Some(std::sync::Arc::new(i)),
                Err(e) => {
                    return Err(failure(format!("canaries.inspect_https: {e}")).into());
                }
            }
        }
        _ => None,
    };
    let proxy = if scene.policy.has_network_rules() {
        let started = crate::net::Proxy::start(
            scene.policy.clone(),
            crate::net::Resolver::from_env(),
            scene.net_log.clone(),
            (scene.canaries.clone(), inspector.clone()),
        )
        .await;
        match started {
            Ok(p) => Some(p),
            Err(e) => return Err(failure(format!("could not start the network proxy: {e}")).into()),
        }
    } else {
        None
    };
    let proxy_port = proxy.as_ref().map(crate::net::Proxy::port);
    let mut plan = copy_plan(scene);
    plan.sandbox.proxy_port = proxy_port;
    plan.sandbox.proxy_ca = inspector.map(|i| std::sync::Arc::from(i.ca_pem()));
    let mut copy = tokio::task::spawn_blocking(move || plan.prepare());
    let mut registry = super::options::task_registry(task, &Registry::builtin());
    // A resumed task's first request is its recorded conversation's
    // next: it waits for the copy and the changes applied to it.
    let ahead = task.mcp_servers.is_empty() && prior.is_none();
    let mut first = None;
    if ahead {
        progress.system = system_prompt(task, &registry, &scene.policy);
        sink.emit(&Event::AttemptStarted { attempt: 1 });
        first = Some(ask_first(
            provider,
            &progress.system,
            &registry,
            &mut progress.conversation,
            &scene.limits,
            sink,
        ));
    }
    let waited = async {
        match first.as_mut() {
            Some(f) => f.alongside(&mut copy).await,
            None => (&mut copy).await,
        }
    };
    let cancel = scene.opts.cancel.clone();
    let ended = tokio::select! {
        r = tokio::time::timeout(task.timeout.saturating_sub(scene.epoch.elapsed()), waited) => {
            r.map_err(|_| timed_out(task))
        }
        why = cancel.cancelled() => Err(cancelled(&why)),
    };
    let prepared = match ended {
        Ok(prepared) => prepared,
        Err(outcome) => {
            // The copy cannot be stopped half-way: it ends, and is
            // removed, before the task does (a second signal exits at
            // once, and its temporary folders are removed then).
            drop(first);
            let _ = copy.await;
            return Err(outcome.into());
        }
    };
    let workspace = match prepared {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return Err(failure(e.to_string()).into()),
        Err(e) => return Err(failure(format!("preparing the workspace failed: {e}")).into()),
    };
    if let Some(prior) = prior
        && let Err(e) = crate::run::resume::apply_changes(workspace.iso.path(), &prior.diff)
    {
        return Err(failure(format!("resuming: {e}")).into());
    }
    let setup = Setup {
        policy: workspace.policy.clone(),
        sandbox_note: workspace.sandbox_note.clone(),
        credentials_removed: workspace.credentials_removed(),
        diff_prefix: workspace.iso.diff_prefix(),
        workspace_copy: workspace.iso.record(),
    };
    sink.emit(&Event::WorkspaceReady {
        files: workspace.iso.files(),
    });
    let network = proxy_port.map(|proxy_port| crate::mcp::McpNetwork {
        policy: setup.policy.clone(),
        log: scene.net_log.clone(),
        proxy_port,
    });
    let started = McpServers::start_into(
        &task.mcp_servers,
        task.mode == Mode::Plan,
        workspace.iso.path(),
        &scene.task_out,
        &mut registry,
        network.as_ref(),
    )
    .await;
    let mcp = match started {
        Ok((servers, warnings)) => {
            progress.warnings.extend(warnings);
            servers
        }
        Err(e) => {
            return Err(Unready {
                outcome: failure(e.to_string()),
                setup: Some(setup),
            });
        }
    };
    // A resumed task sends its recorded system prompt.
    if !ahead && prior.is_none() {
        progress.system = system_prompt(task, &registry, &setup.policy);
    }
    Ok(Ready {
        workspace,
        registry,
        proxy,
        mcp,
        first,
        setup,
    })
}

/// What the task's workspace is made from.
fn copy_plan(scene: &Scene) -> CopyPlan {
    CopyPlan {
        workspace: scene.task.workspace.clone(),
        excludes: scene.opts.out_dir.canonicalize().into_iter().collect(),
        policy: scene.policy.clone(),
        env: crate::contain::EnvSettings {
            decoys: scene.canaries.clone(),
            ..scene.task.env.clone()
        },
        sandbox: scene.task.sandbox.clone(),
        spill_dir: scene.task_out.join("tool-results"),
        net_log: scene.net_log.clone(),
    }
}

impl Ready<'_> {
    /// Stops the MCP servers and the proxy; the workspace (for the
    /// violations phase), the setup and what the MCP servers' sandboxes
    /// were.
    pub async fn close(self) -> (Prepared, Setup, std::collections::BTreeMap<String, String>) {
        let mut mcp = self.mcp;
        let notes = mcp.sandbox_notes();
        mcp.shutdown().await;
        drop(self.proxy);
        (self.workspace, self.setup, notes)
    }
}
