//! What the engine's table tests share: a bash command decided by one
//! policy layer under given backstops, in a workspace at `/ws`.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;

use runner_policy::{Backstops, PolicySet, Risk, Verdict, parse_policy_yaml};

/// The verdict and reason `yaml` gives `cmd` (a bash call) under
/// `backstops`.
pub fn decide_bash(yaml: &str, backstops: Backstops, cmd: &str) -> (Verdict, String) {
    let set = PolicySet::new(vec![parse_policy_yaml(yaml, Path::new("p.yaml")).unwrap()])
        .with_backstops(backstops);
    let ws = runner_policy::LexicalPaths::new("/ws");
    let sigs = runner_policy::shell::analyze(cmd).signatures(&ws, ".");
    let d = set.decide("bash", Risk::High, sigs);
    (d.verdict, d.reason.unwrap_or_default())
}
