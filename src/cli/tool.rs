//! `runner tools` and `runner tool NAME ARGS_JSON`: the tool system on its
//! own, for debugging tools and for benchmarks.

use crate::contain::{CommandSetup, EnvSettings, SandboxSettings};
use std::path::Path;
use std::sync::Arc;

use super::{CliError, CliResult, Exit, load_policies};
use crate::engine::{CallStatus, NullSink, ToolEnv, run_calls};
use crate::provider::ToolCallRequest;
use crate::provider::{Vendor, declarations};
use crate::run::CopyPlan;
use crate::tools::{Registry, ToolContext};
use runner_policy::PolicySet;

/// The vendor whose declaration format `runner tools --format` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeclarationFormat {
    #[value(name = "openai")]
    OpenAi,
    Anthropic,
    Gemini,
}

impl DeclarationFormat {
    fn render(self, registry: &Registry) -> serde_json::Value {
        let vendor = match self {
            DeclarationFormat::OpenAi => Vendor::OpenAi,
            DeclarationFormat::Anthropic => Vendor::Anthropic,
            DeclarationFormat::Gemini => Vendor::Gemini,
        };
        declarations(vendor, &registry.specs())
    }
}

pub fn print_tools(format: DeclarationFormat) -> CliResult {
    let decls = format.render(&Registry::builtin());
    println!(
        "{}",
        serde_json::to_string_pretty(&decls).unwrap_or_default()
    );
    Ok(Exit::Passed)
}

/// The declarations of the tools one task gets, MCP servers included.
pub async fn print_task_tools(format: DeclarationFormat, task: &Path) -> CliResult {
    let opts = crate::task::LoadOptions::lenient();
    let task = crate::task::load_task(task, &opts)?;
    let mut registry = crate::run::task_registry(&task, &Registry::builtin());
    let logs = tempfile::tempdir()
        .map_err(|e| CliError::Failed(format!("cannot create a temp folder: {e}")))?;
    let started = crate::mcp::McpServers::start_into(
        &task.mcp_servers,
        task.mode == crate::task::Mode::Plan,
        &task.workspace,
        logs.path(),
        &mut registry,
        None,
    )
    .await;
    match started {
        Ok((mut servers, warnings)) => {
            for w in warnings {
                eprintln!("warning: {w}");
            }
            servers.shutdown().await;
        }
        Err(e) => return Err(CliError::Failed(format!("{}: {e}", task.file.display()))),
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&format.render(&registry)).unwrap_or_default()
    );
    Ok(Exit::Passed)
}

pub async fn run_tool(
    name: &str,
    args: &str,
    workspace: &Path,
    policy: Option<&Path>,
) -> CliResult {
    let (args, ws) = super::call_inputs(args, workspace)?;
    let registry = Registry::builtin();
    registry
        .get(name)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    // Without --policy every call is allowed: this command is for
    // debugging the tools themselves.
    let layers = match policy {
        Some(p) => load_policies(&[p.to_path_buf()], &[])?,
        None => vec![runner_policy::Policy::allowing_nothing(
            "no policy (runner tool)",
            runner_policy::DefaultDecision::Allow,
        )],
    };
    let set = Arc::new(PolicySet::new(layers));
    // Under a policy, the call runs as a run's would, and so is decided
    // alike (issue 73, item 7): in a copy of the workspace that leaves out
    // what the policy denies reading, with the backstops that copy and its
    // sandbox hold; the copy's changes then come back to the workspace but
    // those the policy denies editing. Without one (debugging a tool),
    // in the workspace itself.
    let (ctx, held) = match policy {
        Some(_) => {
            let spill = tempfile::tempdir()
                .map_err(|e| CliError::Failed(format!("cannot create a temp folder: {e}")))?;
            let plan = CopyPlan {
                workspace: ws.root().to_path_buf(),
                excludes: Vec::new(),
                policy: set.clone(),
                env: EnvSettings::default(),
                sandbox: SandboxSettings::default(),
                spill_dir: spill.path().to_path_buf(),
                net_log: Arc::new(crate::net::NetLog::new(std::time::Instant::now())),
            };
            let ready = super::prepare_copy(plan).await?;
            (
                ready.ctx.clone(),
                Held::Copy {
                    ready: Box::new(ready),
                    _spill: spill,
                },
            )
        }
        None => {
            // The scrubbed environment and the best-effort sandbox (writes
            // only in the workspace, which here is the real one, and a
            // temp folder).
            let commands = CommandSetup::new(
                ws.root(),
                None,
                &EnvSettings::default(),
                &SandboxSettings::default(),
                None,
                Some(&set),
            )
            .map_err(|e| CliError::Failed(e.to_string()))?;
            let mut ctx = ToolContext::new(ws).with_policy(set.clone());
            ctx.env = Some(commands.env);
            ctx.confine = commands.confine.map(Arc::new);
            (Arc::new(ctx), Held::Workspace { _tmp: commands.tmp })
        }
    };
    // One call has no earlier read: the file it names counts as read as it
    // is now (a task's edit_file or write_file needs a read_file first).
    if let Some(path) = args.get("file_path").and_then(|p| p.as_str())
        && let Ok(r) = ctx.workspace.resolve(path)
    {
        ctx.reads.record(&r.real);
    }
    let decided_by = ctx.policy.clone().unwrap_or_else(|| set.clone());
    let hooks = crate::engine::TaskHooks::default();
    let env = ToolEnv {
        hooks: &hooks,
        shadow: None,
        registry: &registry,
        policy: &decided_by,
        ctx,
        sink: &NullSink,
        epoch: std::time::Instant::now(),
    };
    let req = ToolCallRequest {
        id: "cli".into(),
        name: name.into(),
        arguments: Some(args),
        invalid_arguments: None,
    };
    let rec = run_calls(&env, std::slice::from_ref(&req), 1, 1, vec![])
        .await
        .remove(0);
    print!("{}", rec.content);
    if !rec.content.ends_with('\n') {
        println!();
    }
    eprintln!("{}", rec.display);
    if let Held::Copy { ready, .. } = &held
        && bring_back(ready, &decided_by, workspace)?
    {
        return Ok(Exit::Failed);
    }
    // Arguments the tool's schema rejects are bad input, as in `check`.
    Ok(match rec.status {
        CallStatus::Ok => Exit::Passed,
        CallStatus::Error
            if rec.error_kind == Some(crate::tools::ToolErrorKind::Validation)
                && rec.decision.is_none() =>
        {
            Exit::Invalid
        }
        CallStatus::Error | CallStatus::Denied | CallStatus::Cancelled => Exit::Failed,
    })
}

/// What a call runs in, kept until it ends: a copy of the workspace (and
/// the folder large results spill to), or the workspace's temp folder.
enum Held {
    Copy {
        ready: Box<crate::run::Prepared>,
        _spill: tempfile::TempDir,
    },
    Workspace {
        _tmp: crate::contain::commands::TaskTemp,
    },
}

/// Brings the copy's changes back to `workspace`, but those `policy`
/// denies editing (reverted in the copy and named on stderr, as a run
/// names its violations); whether any was.
fn bring_back(
    ready: &crate::run::Prepared,
    policy: &PolicySet,
    workspace: &Path,
) -> Result<bool, CliError> {
    let mut found = Vec::new();
    let changes =
        crate::run::revert_denied_changes(&ready.iso, policy, &mut found).map_err(|e| {
            CliError::Failed(format!(
                "could not compare the copy with the workspace: {e}"
            ))
        })?;
    crate::workspace::apply_changes(workspace, &changes)
        .map_err(|e| CliError::Failed(format!("could not bring the changes back: {e}")))?;
    for v in &found {
        eprintln!(
            "runner tool: the change to `{}` was dropped: {} ({})",
            v.path, v.rule, v.policy
        );
    }
    Ok(!found.is_empty())
}
