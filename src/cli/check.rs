//! `runner check --policy FILE [--workspace DIR] TOOL ARGS_JSON`: the policy
//! engine on its own, through the same gate as a run. Prints the decision
//! (the transcript's `Decision`, serialised) as JSON; exit 0 allow, 1 deny,
//! 2 bad input.

use std::path::Path;

use runner_policy::{Decision, PolicySet, Verdict};

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, load_policies, report_errors};
use crate::engine::pipeline::decide_call;
use crate::tools::{Registry, ToolContext, ToolErrorKind};

pub fn check(policies: &[std::path::PathBuf], workspace: &Path, tool: &str, args: &str) -> i32 {
    let set = match load_policies(policies, &[]) {
        Ok(layers) => PolicySet::new(layers),
        Err(es) => {
            report_errors(&es);
            return EXIT_INVALID;
        }
    };
    let (args, ws) = match super::call_inputs(args, workspace) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let registry = Registry::builtin();
    let t = match registry.get(tool) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INVALID;
        }
    };
    let ctx = ToolContext::new(ws);
    let decision = match decide_call(t.as_ref(), &args, &set, &ctx) {
        Ok((_, d)) => d,
        Err(e) if e.kind == ToolErrorKind::Permission => Decision::refused(e.message),
        Err(e) => {
            eprintln!("error: {}", e.message);
            return EXIT_INVALID;
        }
    };
    println!(
        "{}",
        serde_json::to_string(&decision).expect("a decision serialises")
    );
    match decision.verdict {
        Verdict::Allow => EXIT_OK,
        Verdict::Deny => EXIT_FAILED,
    }
}
