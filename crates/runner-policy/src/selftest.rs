//! A policy file's `tests:`: examples checked when the policy loads, so a
//! rule that does not do what its author meant is a load error, not a
//! surprise in CI.

use std::path::Path;

use crate::config_error::ConfigError;
use crate::decide::{PolicySet, Verdict};
use crate::model::{DefaultDecision, PolicyTest};
use crate::paths::{LexicalPaths, SignaturePaths};
use crate::pattern::Pattern;
use crate::policy::Policy;
use crate::risk::Risk;
use crate::shell;
use crate::signature::{Family, Signature};

/// Checks `tests` against `policy` alone; one error per failing example.
pub(crate) fn run(policy: &Policy, tests: &[PolicyTest], file: &Path) -> Vec<ConfigError> {
    let set = PolicySet::new(vec![policy.clone()]);
    let ws = LexicalPaths::new("/__workspace__");
    let mut errors = Vec::new();
    for t in tests {
        let call = t.call.value.trim();
        let pattern = match Pattern::parse(call) {
            Ok(p) => p,
            Err(e) => {
                errors.push(ConfigError::at(
                    file,
                    &t.call.referenced,
                    format!("tests.call: {e}"),
                ));
                continue;
            }
        };
        let spec = call
            .find('(')
            .map(|i| call[i + 1..call.len() - 1].to_string())
            .unwrap_or_default();
        let (sigs, risk) = test_signatures(pattern.family, &spec, &ws);
        let d = set.decide(test_tool_name(pattern.family), risk, sigs);
        let got = match d.verdict {
            Verdict::Allow => DefaultDecision::Allow,
            Verdict::Deny => DefaultDecision::Deny,
        };
        if got != t.expect {
            let word = |d: DefaultDecision, past: bool| match (d, past) {
                (DefaultDecision::Allow, true) => "allowed",
                (DefaultDecision::Deny, true) => "denied",
                (DefaultDecision::Allow, false) => "allow",
                (DefaultDecision::Deny, false) => "deny",
            };
            let why = d.reason.map(|r| format!(" ({r})")).unwrap_or_default();
            errors.push(ConfigError::at(
                file,
                &t.call.referenced,
                format!(
                    "policy test failed: `{call}` is {} but the test expects {}{why}",
                    word(got, true),
                    word(t.expect, false),
                ),
            ));
        }
    }
    errors
}

/// The built-in tool a test call of `family` stands for.
fn test_tool_name(f: Family) -> &'static str {
    match f {
        Family::Read => "read_file",
        Family::Edit => "write_file",
        Family::Bash => "bash",
        Family::Memory => "save_memory",
        Family::Mcp => "mcp",
        Family::Tool => "tool",
        Family::Fetch => "web_fetch",
        Family::Agent => "task",
    }
}

/// The signatures and default risk that a signature-shaped test call
/// (`Bash(git status && rm -rf /)`, `Edit(src/a.rs)`) stands for: a Bash
/// specifier is analysed as a script run from the workspace root, a path is
/// spelled as `paths` spells it.
pub fn test_signatures(
    family: Family,
    spec: &str,
    paths: &dyn SignaturePaths,
) -> (Vec<Signature>, Risk) {
    let spelled = |f: Family| {
        paths
            .signature_paths(spec)
            .into_iter()
            .map(|p| Signature::new(f, p))
            .collect()
    };
    match family {
        Family::Bash => (shell::analyze(spec).signatures(paths, "."), Risk::High),
        Family::Read => (spelled(Family::Read), Risk::Low),
        Family::Edit => (spelled(Family::Edit), Risk::Medium),
        Family::Memory => (vec![Signature::bare(Family::Memory)], Risk::Low),
        Family::Mcp | Family::Tool | Family::Fetch | Family::Agent => {
            (vec![Signature::new(family, spec)], Risk::Medium)
        }
    }
}
