//! `runner check --policy FILE [--workspace DIR] TOOL ARGS_JSON`: the policy
//! engine on its own. Prints the decision as JSON; exit 0 allow, 1 deny,
//! 2 bad input.

use std::path::Path;

use serde_json::json;

use super::{EXIT_FAILED, EXIT_INVALID, EXIT_OK, report_errors};
use crate::policy::{PolicySet, Verdict, load_policy_file};
use crate::tools::{Registry, ToolContext, ToolErrorKind};

pub fn check(policies: &[std::path::PathBuf], workspace: &Path, tool: &str, args: &str) -> i32 {
    let mut layers = Vec::new();
    for p in policies {
        match load_policy_file(p) {
            Ok(l) => layers.push(l),
            Err(es) => {
                report_errors(&es);
                return EXIT_INVALID;
            }
        }
    }
    let set = PolicySet::new(layers);
    let (args, ws) = match super::call_inputs(args, workspace) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let registry = Registry::builtin();
    let Ok(t) = registry.get(tool) else {
        eprintln!(
            "error: unknown tool `{tool}` (known: {})",
            registry.names().collect::<Vec<_>>().join(", ")
        );
        return EXIT_INVALID;
    };
    let ctx = ToolContext::new(ws);
    let prepared = match t.prepare(&args, &ctx) {
        Ok(p) => p,
        Err(e) if e.kind == ToolErrorKind::Permission => {
            println!(
                "{}",
                json!({"decision": "deny", "signatures": [], "rule": null, "reason": e.message})
            );
            return EXIT_FAILED;
        }
        Err(e) => {
            eprintln!("error: {}", e.message);
            return EXIT_INVALID;
        }
    };
    let d = set.decide(tool, t.risk(), prepared.signatures(&ctx));
    let sigs: Vec<String> = d.signatures.iter().map(|s| s.to_string()).collect();
    println!(
        "{}",
        json!({"decision": d.verdict, "signatures": sigs, "rule": d.rule, "reason": d.reason, "policy": d.policy})
    );
    if d.verdict == Verdict::Allow {
        EXIT_OK
    } else {
        EXIT_FAILED
    }
}
