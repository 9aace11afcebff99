//! `runner check --policy FILE [--workspace DIR] TOOL ARGS_JSON`: the policy
//! engine on its own, through the same gate as a run. Prints the decision
//! (the transcript's `Decision`, serialised) as JSON; exit 0 allow, 1 deny,
//! 2 bad input.

use std::path::Path;

use runner_policy::{Decision, PolicySet, Verdict};

use super::{CliError, CliResult, Exit, load_policies};
use crate::engine::pipeline::decide_call;
use crate::tools::{Registry, ToolContext, ToolErrorKind};

pub fn check(
    policies: &[std::path::PathBuf],
    workspace: &Path,
    tool: &str,
    args: &str,
) -> CliResult {
    let set = PolicySet::new(load_policies(policies, &[])?);
    let (args, ws) = super::call_inputs(args, workspace)?;
    let registry = Registry::builtin();
    let t = registry
        .get(tool)
        .map_err(|e| CliError::Invalid(e.to_string()))?;
    let ctx = ToolContext::new(ws);
    let decision = match decide_call(t.as_ref(), &args, &set, &ctx) {
        Ok((_, d)) => d,
        Err(e) if e.kind == ToolErrorKind::Permission => Decision::refused(e.message),
        Err(e) => return Err(CliError::Invalid(e.message)),
    };
    println!(
        "{}",
        serde_json::to_string(&decision).expect("a decision serialises")
    );
    Ok(Exit::passed_if(decision.verdict == Verdict::Allow))
}
