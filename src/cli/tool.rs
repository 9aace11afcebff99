//! `runner tools` and `runner tool NAME ARGS_JSON`: the tool system on its
//! own, for debugging tools and for benchmarks.

use crate::contain::{CommandSetup, EnvSettings, SandboxSettings};
use std::path::Path;
use std::sync::Arc;

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, load_policies, report_errors};
use crate::engine::{CallStatus, NullSink, ToolEnv, run_calls};
use crate::provider::ToolCallRequest;
use crate::tools::{Dialect, Registry, ToolContext};
use runner_policy::PolicySet;

pub fn print_tools(format: Dialect) -> i32 {
    let decls = Registry::builtin().declarations(format);
    println!(
        "{}",
        serde_json::to_string_pretty(&decls).unwrap_or_default()
    );
    EXIT_OK
}

/// The declarations of the tools one task gets, MCP servers included.
pub async fn print_task_tools(format: Dialect, task: &Path) -> i32 {
    let opts = crate::task::LoadOptions::lenient();
    let task = match crate::task::load_task(task, &opts) {
        Ok(t) => t,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            return super::EXIT_INVALID;
        }
    };
    let mut registry = crate::run::task_registry(&task, &Registry::builtin());
    let logs = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: cannot create a temp folder: {e}");
            return EXIT_FAILED;
        }
    };
    let started = crate::mcp::McpServers::start_into(
        &task.mcp_servers,
        task.mode == crate::task::Mode::Plan,
        &task.workspace,
        logs.path(),
        &mut registry,
    )
    .await;
    match started {
        Ok((mut servers, warnings)) => {
            for w in warnings {
                eprintln!("warning: {w}");
            }
            servers.shutdown().await;
        }
        Err(e) => {
            eprintln!("error: {}: {e}", task.file.display());
            return EXIT_FAILED;
        }
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&registry.declarations(format)).unwrap_or_default()
    );
    EXIT_OK
}

pub async fn run_tool(name: &str, args: &str, workspace: &Path, policy: Option<&Path>) -> i32 {
    let (args, ws) = match super::call_inputs(args, workspace) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let registry = Registry::builtin();
    if let Err(e) = registry.get(name) {
        eprintln!("error: {e}");
        return EXIT_INVALID;
    }
    // Without --policy every call is allowed: this command is for
    // debugging the tools themselves.
    let layers = match policy {
        Some(p) => match load_policies(&[p.to_path_buf()], &[]) {
            Ok(l) => l,
            Err(es) => {
                report_errors(&es);
                return EXIT_INVALID;
            }
        },
        None => vec![runner_policy::Policy::allowing_nothing(
            "no policy (runner tool)",
            runner_policy::DefaultDecision::Allow,
        )],
    };
    let set = Arc::new(PolicySet::new(layers));
    // Commands get what they get in a run with the default settings: the
    // scrubbed environment and the best-effort sandbox (writes only in the
    // workspace, which here is the real one, and a temp folder).
    let commands = match CommandSetup::new(
        ws.root(),
        None,
        &EnvSettings::default(),
        &SandboxSettings::default(),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILED;
        }
    };
    let mut ctx = ToolContext::new(ws).with_visibility(set.clone());
    ctx.env = Some(commands.env);
    ctx.confine = commands.confine.map(Arc::new);
    let _tmp = (commands.tmp, commands.registered);
    let ctx = Arc::new(ctx);
    let env = ToolEnv {
        registry: &registry,
        policy: &set,
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
    match rec.status {
        CallStatus::Ok => EXIT_OK,
        CallStatus::Denied | CallStatus::Cancelled => EXIT_FAILED,
        CallStatus::Error => {
            if rec.error_kind == Some(crate::tools::ToolErrorKind::Validation)
                && rec.decision.is_none()
            {
                EXIT_INVALID
            } else {
                EXIT_FAILED
            }
        }
    }
}
