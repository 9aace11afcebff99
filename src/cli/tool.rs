//! `runner tools` and `runner tool NAME ARGS_JSON`: the tool system on its
//! own, for debugging tools and for benchmarks.

use std::path::Path;
use std::sync::Arc;

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, report_errors};
use crate::engine::{CallStatus, NullSink, ToolEnv, run_calls};
use crate::policy::{PolicySet, load_policy_file};
use crate::provider::ToolCallRequest;
use crate::tools::{Dialect, Registry, ToolContext};

pub fn print_tools(format: Dialect) -> i32 {
    let decls = Registry::builtin().declarations(format);
    println!(
        "{}",
        serde_json::to_string_pretty(&decls).unwrap_or_default()
    );
    EXIT_OK
}

pub async fn run_tool(name: &str, args: &str, workspace: &Path, policy: Option<&Path>) -> i32 {
    let (args, ws) = match super::call_inputs(args, workspace) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let registry = Registry::builtin();
    if !registry.contains(name) {
        eprintln!(
            "error: unknown tool `{name}` (known: {})",
            registry.names().collect::<Vec<_>>().join(", ")
        );
        return EXIT_INVALID;
    }
    // Without --policy every call is allowed: this command is for
    // debugging the tools themselves.
    let layers = match policy {
        Some(p) => match load_policy_file(p) {
            Ok(l) => vec![l],
            Err(es) => {
                report_errors(&es);
                return EXIT_INVALID;
            }
        },
        None => vec![crate::policy::Policy {
            source: "no policy (runner tool)".into(),
            default: crate::policy::DefaultDecision::Allow,
            rules: vec![],
            risk: Default::default(),
            file_templates: vec![],
        }],
    };
    let set = Arc::new(PolicySet::new(layers));
    let ctx = Arc::new(ToolContext::new(ws).with_visibility(set.clone()));
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
