//! `runner check --policy FILE [--workspace DIR] [--backstops LIST] TOOL
//! ARGS_JSON`: the policy engine on its own, through the same gate as a
//! run. Prints the decision (the transcript's `Decision`, serialised) as
//! JSON; exit 0 allow, 1 deny, 2 bad input. Without `--backstops` it
//! decides as a run that holds none, so never looser than a run;
//! `--backstops auto` as a run here would (what `runner doctor` reports),
//! which is how `runner tool` and `runner run` decide the same call.

use std::path::Path;

use runner_policy::{Backstops, Decision, PolicySet, Verdict};

use super::{CliError, CliResult, Exit, load_policies};
use crate::engine::pipeline::decide_call;
use crate::tools::{Registry, ToolContext, ToolErrorKind};

/// A `--backstops` entry that names no backstop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown backstop `{0}` (reads, edits, confined, network-off, exec, history, private-tmp, all, auto)"
)]
pub struct BackstopError(String);

/// `--backstops`: `all`, or a comma-separated list of `reads`, `edits`,
/// `confined`, `network-off`, `exec`, `history`, `private-tmp`; empty for
/// none.
pub fn parse_backstops(text: &str) -> Result<Backstops, BackstopError> {
    let mut b = Backstops::default();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "all" => b = Backstops::all(),
            "auto" => b = held_here(),
            "reads" => b.reads = true,
            "edits" => b.edits = true,
            "confined" => b.confined = true,
            "network-off" => b.network_off = true,
            "exec" => b.exec = true,
            "history" => b.history = true,
            "private-tmp" => b.private_tmp = true,
            other => return Err(BackstopError(other.to_string())),
        }
    }
    Ok(b)
}

/// The backstops a run here holds, with the default sandbox and the
/// network on, as `runner doctor` reports them (its history backstop is
/// the reads one: both rest on Landlock hiding the original).
pub fn held_here() -> Backstops {
    let report = crate::contain::doctor::examine();
    let held = |name: &str| report.backstops.iter().any(|b| b.name == name && b.held);
    Backstops {
        reads: held("reads"),
        edits: held("edits"),
        confined: held("confined"),
        network_off: false,
        exec: held("exec"),
        history: held("reads"),
        private_tmp: held("private-tmp"),
    }
}

pub fn check(
    policies: &[std::path::PathBuf],
    workspace: &Path,
    backstops: Backstops,
    tool: &str,
    args: &str,
) -> CliResult {
    let set = PolicySet::new(load_policies(policies, &[])?).with_backstops(backstops);
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
