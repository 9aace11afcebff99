//! `runner policy suggest [--policy BASE] TRANSCRIPT...`: for the calls a
//! policy's default denied, the narrowest allow rules that would let them
//! run, printed as a policy file: BASE's rules (or, without BASE, the
//! deny rules the transcripts show) followed by the suggested rules, each
//! with a comment naming the calls it covers. Calls denied by an explicit
//! rule, or refused before any policy was asked, get no rule: they are
//! listed apart, as comments.
//!
//! Every layer of a policy set must allow a call, so a layer of allow
//! rules added beside BASE would change nothing: the output is meant to
//! replace BASE once reviewed. So it keeps every section of BASE (`hooks`,
//! `tests` and whatever else it has, as JSON, which is YAML) besides the
//! rules it extends: a suggestion that dropped a fail-closed hook would
//! loosen more than its rules say. It is checked before it is printed:
//! under it, every call the default denied is allowed, every call an
//! explicit rule denied is still denied, and BASE's own `tests:` hold.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::replay::read_transcript;
use super::{CliError, CliResult, Exit};
use crate::engine::pipeline::decide_recorded;
use crate::tools::Registry;
use runner_policy::{
    Decision, DefaultDecision, PolicyFile, PolicySet, Signature, Verdict, narrowest_rule,
    parse_policy_yaml,
};

/// A comment's text on one line: what a model wrote cannot end the
/// comment and add YAML of its own.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// A denied call, as a comment names it.
fn describe(task: &str, turn: u32, d: &Decision) -> String {
    let sigs: Vec<String> = d.signatures.iter().map(ToString::to_string).collect();
    one_line(&format!("{task}, turn {turn}: {}", sigs.join(" ")))
}

/// What the base policy is: its file's rules, or the deny rules seen.
struct Base {
    name: String,
    file: PolicyFile,
    /// The file as data, for the sections carried over as they are.
    raw: serde_json::Map<String, serde_json::Value>,
}

fn read_base(path: &Path) -> Result<Base, CliError> {
    // Load it as a policy first: its errors, located.
    runner_policy::load_policy_file(path)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Invalid(format!("{}: {e}", path.display())))?;
    let file: PolicyFile = serde_saphyr::from_str(&text)
        .map_err(|e| CliError::Invalid(format!("{}: {e}", path.display())))?;
    let raw = match serde_saphyr::from_str(&text) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => serde_json::Map::new(),
        Err(e) => return Err(CliError::Invalid(format!("{}: {e}", path.display()))),
    };
    Ok(Base {
        name: path.display().to_string(),
        file,
        raw,
    })
}

fn quoted(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let items: Vec<String> = items
        .into_iter()
        .map(|s| serde_json::to_string(s.as_ref()).expect("a string serialises"))
        .collect();
    format!("[{}]", items.join(", "))
}

/// The base's part of the output: default, risk, every other section but
/// `tests` unless `with_tests`, and rules.
fn base_yaml(base: Option<&Base>, seen_denies: &BTreeSet<String>, with_tests: bool) -> String {
    let mut y = String::new();
    let Some(b) = base else {
        y.push_str("default: deny\nrules:\n");
        if !seen_denies.is_empty() {
            y.push_str("  # the deny rules that decided calls in the transcripts\n");
            let _ = writeln!(y, "  - deny: {}", quoted(seen_denies));
        }
        return y;
    };
    let default = match b.file.default {
        DefaultDecision::Allow => "allow",
        DefaultDecision::Deny => "deny",
    };
    let _ = writeln!(y, "default: {default}");
    if !b.file.risk.is_empty() {
        let risk: Vec<String> = b
            .file
            .risk
            .iter()
            .map(|(k, v)| format!("{}: {}", serde_json::to_string(k).unwrap(), v.value))
            .collect();
        let _ = writeln!(y, "risk: {{{}}}", risk.join(", "));
    }
    for (key, value) in &b.raw {
        let carried =
            !matches!(key.as_str(), "default" | "risk" | "rules") && (with_tests || key != "tests");
        // The loader refuses unknown fields: a key is a plain name.
        if carried {
            let _ = writeln!(y, "{key}: {value}");
        }
    }
    y.push_str("rules:\n");
    let _ = writeln!(y, "  # the rules of {}", one_line(&b.name));
    for r in &b.file.rules {
        let r = &r.value;
        for (kind, list) in [("allow", &r.allow), ("deny", &r.deny)] {
            if let Some(list) = list {
                let _ = writeln!(y, "  - {kind}: {}", quoted(list.iter().map(|s| &s.value)));
                if let Some(reason) = &r.reason {
                    let _ = writeln!(y, "    reason: {}", serde_json::to_string(reason).unwrap());
                }
            }
        }
    }
    y
}

pub fn suggest(base: Option<&Path>, paths: &[PathBuf]) -> CliResult {
    let base = base.map(read_base).transpose()?;
    let transcripts: Vec<_> = paths
        .iter()
        .map(|p| read_transcript(p))
        .collect::<Result<_, _>>()?;
    let registry = Registry::builtin();
    let decide = |set: &PolicySet, tool: &str, sigs: &[Signature]| {
        decide_recorded(set, &registry, tool, sigs.to_vec()).verdict
    };
    // What each signature needs is judged against the base alone.
    let base_set = match &base {
        Some(b) => PolicySet::new(vec![runner_policy::compile_policy(
            &b.file,
            Path::new(&b.name),
            b.name.clone(),
        )?]),
        None => PolicySet::new(vec![parse_policy_yaml("default: deny\n", Path::new("-"))?]),
    };
    let mut rules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // (the call as a comment names it, its tool, its signatures), and for
    // the explicitly denied ones the rule.
    let mut by_default: Vec<(String, &str, &[Signature])> = Vec::new();
    let mut explicit: Vec<(String, &str, &[Signature], &str)> = Vec::new();
    let mut apart: Vec<String> = Vec::new();
    let mut seen_denies = BTreeSet::new();
    for t in &transcripts {
        for call in &t.tool_calls {
            let Some(d) = call.decision.as_deref() else {
                continue;
            };
            if d.verdict != Verdict::Deny {
                continue;
            }
            let what = describe(&t.task, call.turn, d);
            match (&d.rule, &d.policy) {
                (_, None) => apart.push(format!(
                    "{what}: {}",
                    one_line(d.reason.as_deref().unwrap_or("refused before the policy"))
                )),
                (Some(rule), Some(_)) if rule.starts_with("deny ") => {
                    seen_denies.insert(rule["deny ".len()..].to_string());
                    explicit.push((what, &call.tool, &d.signatures, rule));
                }
                _ => {
                    for sig in &d.signatures {
                        if decide(&base_set, &call.tool, std::slice::from_ref(sig))
                            == Verdict::Allow
                        {
                            continue;
                        }
                        match narrowest_rule(sig) {
                            Some(rule) => rules.entry(rule).or_default().push(what.clone()),
                            None => apart.push(format!("{what}: {sig} is outside the workspace; only an absolute rule, written by a person, can allow it")),
                        }
                    }
                    by_default.push((what, &call.tool, &d.signatures));
                }
            }
        }
    }
    let mut suggested = String::new();
    if !rules.is_empty() {
        suggested.push_str("  # suggested\n");
    }
    for (rule, calls) in &rules {
        let mut calls = calls.clone();
        calls.dedup();
        let shown: Vec<&String> = calls.iter().take(5).collect();
        let more = calls.len().saturating_sub(5);
        let _ = writeln!(
            suggested,
            "  # covers {}{}",
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
        let _ = writeln!(suggested, "  - allow: {}", quoted([rule]));
    }
    let header = format!(
        "# Suggested by `runner policy suggest` from {} transcript(s): {}, then\n# the narrowest allow rules for the calls the default denied. Review\n# each rule; use this file in place of the base policy.\n",
        transcripts.len(),
        base.as_ref()
            .map_or("the deny rules they show".to_string(), |b| format!(
                "the rules of {}",
                one_line(&b.name)
            ))
    );
    let render = |with_tests| {
        header.clone() + &base_yaml(base.as_ref(), &seen_denies, with_tests) + &suggested
    };
    let mut y = render(true);
    // The check: the base's tests hold, the calls the default denied run,
    // the others do not.
    let layer = parse_policy_yaml(&y, Path::new("<suggested>")).map_err(|es| {
        let errors = es
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        match &base {
            // Loads without the base's tests: a suggested rule allows what
            // one of them expects denied.
            Some(b) if parse_policy_yaml(&render(false), Path::new("<suggested>")).is_ok() => {
                CliError::Failed(format!(
                    "the suggested rules break the tests of {} ({errors}): the calls they cover need a person's decision, not a rule from this command",
                    b.name
                ))
            }
            _ => CliError::Failed(format!(
                "the suggested policy does not load ({errors}); please report this"
            )),
        }
    })?;
    let set = PolicySet::new(vec![layer]);
    let mut uncovered = Vec::new();
    for (what, tool, sigs) in &by_default {
        if decide(&set, tool, sigs) != Verdict::Allow {
            uncovered.push(what.clone());
        }
    }
    for (what, tool, sigs, rule) in &explicit {
        if decide(&set, tool, sigs) == Verdict::Allow {
            return Err(CliError::Failed(format!(
                "the suggested rules would allow {what}, which `{rule}` denied; please report this"
            )));
        }
    }
    if !explicit.is_empty() {
        y.push_str("# Denied by an explicit rule (no rule suggested):\n");
        for (what, _, _, rule) in &explicit {
            let _ = writeln!(y, "#   {what}: {}", one_line(rule));
        }
    }
    if !apart.is_empty() {
        y.push_str("# Refused, no rule suggested:\n");
        for a in &apart {
            let _ = writeln!(y, "#   {a}");
        }
    }
    if !uncovered.is_empty() {
        y.push_str(
            "# Still denied under these rules (a deny rule of the base covers part of them):\n",
        );
        for u in &uncovered {
            let _ = writeln!(y, "#   {u}");
        }
    }
    print!("{y}");
    Ok(Exit::Passed)
}
