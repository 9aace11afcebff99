//! Policy files: the YAML model, its compilation and its load-time tests.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::decide::{PolicySet, Verdict};
use super::pattern::Pattern;
use super::shell;
use super::signature::{Family, Signature};
use crate::config_error::ConfigError;
use crate::tools::Risk;
use crate::workspace::Workspace;

/// What a call that needs approval and matches no rule gets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DefaultDecision {
    Allow,
    #[default]
    Deny,
}

/// One entry of `rules:`: allow or deny patterns, with an optional reason.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleEntry {
    /// Patterns such as `Bash(cargo test:*)`, `Edit(src/**)`.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub deny: Option<Vec<Spanned<String>>>,
    /// Told to the model when one of these patterns denies a call.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A check run when the policy loads: a failing example is a load error.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyTest {
    /// A signature-shaped call: `Bash(git status && rm -rf /)`, `Edit(src/a.rs)`.
    #[schemars(with = "String")]
    pub call: Spanned<String>,
    pub expect: DefaultDecision,
}

/// A policy file as written (also the inline `policy:` of a task).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyFile {
    /// The decision for calls that need approval and match no rule (default: deny).
    #[serde(default)]
    pub default: DefaultDecision,
    #[serde(default)]
    #[schemars(with = "Vec<RuleEntry>")]
    pub rules: Vec<Spanned<RuleEntry>>,
    /// Risk overrides by tool name, or `mcp` for every MCP tool.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Risk>")]
    pub risk: BTreeMap<String, Spanned<Risk>>,
    #[serde(default)]
    pub tests: Vec<PolicyTest>,
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub allow: bool,
    pub pattern: Pattern,
    pub reason: Option<String>,
}

/// A compiled policy: one layer.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from (a file path, or `<task>.yaml (inline)`).
    pub source: String,
    pub default: DefaultDecision,
    pub rules: Vec<Rule>,
    pub risk: BTreeMap<String, Risk>,
    /// Rules written with `{{files}}`, made concrete by [`Policy::bind_files`].
    pub file_templates: Vec<FileTemplate>,
}

/// A rule pattern with `{{files}}` in it, such as `Edit({{files}})`: one rule
/// per file given with `--files` (a pre-commit hook's staged files), and no
/// rule at all when none are given.
#[derive(Debug, Clone)]
pub struct FileTemplate {
    pub allow: bool,
    pub text: String,
    pub reason: Option<String>,
}

/// The placeholder [`FileTemplate`]s expand.
pub const FILES_PLACEHOLDER: &str = "{{files}}";

impl Policy {
    /// The policy used when a task names none: low-risk calls only.
    pub fn builtin_default() -> Self {
        Self {
            source: "built-in default (deny)".into(),
            default: DefaultDecision::Deny,
            rules: vec![],
            risk: BTreeMap::new(),
            file_templates: vec![],
        }
    }

    /// Adds one rule per file for each `{{files}}` template. A file name that
    /// does not make a valid pattern (glob characters) is an error.
    pub fn bind_files(mut self, files: &[String]) -> Result<Self, String> {
        for t in std::mem::take(&mut self.file_templates) {
            for f in files {
                // Anchored and escaped: exactly this file, at the root.
                let f = f.strip_prefix("./").unwrap_or(f);
                let exact = if f.starts_with('/') {
                    globset::escape(f)
                } else {
                    format!("./{}", globset::escape(f))
                };
                let text = t.text.replace(FILES_PLACEHOLDER, &exact);
                let pattern = Pattern::parse(&text)
                    .map_err(|e| format!("{}: `{text}` from --files: {e}", self.source))?;
                self.rules.push(Rule {
                    allow: t.allow,
                    pattern,
                    reason: t.reason.clone(),
                });
            }
        }
        Ok(self)
    }

    /// Compiles a parsed file; `file` is used in error locations.
    pub fn compile(pf: &PolicyFile, file: &Path, source: String) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut rules = Vec::new();
        let mut file_templates = Vec::new();
        for spanned in &pf.rules {
            let entry = &spanned.value;
            if entry.allow.is_none() && entry.deny.is_none() {
                errors.push(ConfigError::at(
                    file,
                    &spanned.referenced,
                    "rules: a rule needs `allow:` or `deny:`",
                ));
            }
            for (allow, list) in [(true, &entry.allow), (false, &entry.deny)] {
                for p in list.iter().flatten() {
                    if p.value.contains(FILES_PLACEHOLDER) {
                        file_templates.push(FileTemplate {
                            allow,
                            text: p.value.clone(),
                            reason: entry.reason.clone(),
                        });
                        continue;
                    }
                    match Pattern::parse(&p.value) {
                        Ok(pattern) => rules.push(Rule {
                            allow,
                            pattern,
                            reason: entry.reason.clone(),
                        }),
                        Err(e) => errors.push(ConfigError::at(
                            file,
                            &p.referenced,
                            format!("rules.{}: {e}", if allow { "allow" } else { "deny" }),
                        )),
                    }
                }
            }
        }
        for (key, level) in &pf.risk {
            if key != "mcp"
                && !key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                errors.push(ConfigError::at(
                    file,
                    &level.referenced,
                    format!("risk: `{key}` is not a tool name or `mcp`"),
                ));
            }
        }
        let policy = Self {
            source,
            default: pf.default,
            rules,
            risk: pf.risk.iter().map(|(k, v)| (k.clone(), v.value)).collect(),
            file_templates,
        };
        if errors.is_empty() {
            errors.extend(policy.run_tests(&pf.tests, file));
        }
        if errors.is_empty() {
            Ok(policy)
        } else {
            Err(errors)
        }
    }

    /// Checks the file's `tests:` against this policy alone.
    fn run_tests(&self, tests: &[PolicyTest], file: &Path) -> Vec<ConfigError> {
        let set = PolicySet::new(vec![self.clone()]);
        let ws = Workspace::lexical("/__workspace__");
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
            let d = set.decide(&test_tool_name(pattern.family), risk, sigs);
            let got = if d.verdict == Verdict::Allow {
                DefaultDecision::Allow
            } else {
                DefaultDecision::Deny
            };
            if got != t.expect {
                let why = d.reason.clone().unwrap_or_default();
                errors.push(ConfigError::at(
                    file,
                    &t.call.referenced,
                    format!(
                        "policy test failed: `{call}` is {} but the test expects {}{}",
                        if got == DefaultDecision::Allow {
                            "allowed"
                        } else {
                            "denied"
                        },
                        if t.expect == DefaultDecision::Allow {
                            "allow"
                        } else {
                            "deny"
                        },
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(" ({why})")
                        }
                    ),
                ));
            }
        }
        errors
    }
}

fn test_tool_name(f: Family) -> String {
    match f {
        Family::Read => "read_file",
        Family::Edit => "write_file",
        Family::Bash => "bash",
        Family::Memory => "save_memory",
        Family::Mcp => "mcp",
        Family::Tool => "tool",
    }
    .to_string()
}

/// The signatures and default risk a test call stands for.
pub fn test_signatures(family: Family, spec: &str, ws: &Workspace) -> (Vec<Signature>, Risk) {
    match family {
        Family::Bash => (shell::analyze(spec).signatures(ws, "."), Risk::High),
        Family::Read => (paths(Family::Read, spec, ws), Risk::Low),
        Family::Edit => (paths(Family::Edit, spec, ws), Risk::Medium),
        Family::Memory => (vec![Signature::bare(Family::Memory)], Risk::Low),
        Family::Mcp | Family::Tool => (vec![Signature::new(family, spec)], Risk::Medium),
    }
}

fn paths(f: Family, spec: &str, ws: &Workspace) -> Vec<Signature> {
    ws.signature_paths(spec)
        .into_iter()
        .map(|p| Signature::new(f, p))
        .collect()
}

/// Parses and compiles policy YAML.
pub fn parse_policy_yaml(text: &str, file: &Path) -> Result<Policy, Vec<ConfigError>> {
    let pf: PolicyFile = serde_saphyr::from_str(text)
        .map_err(|e| vec![ConfigError::from_yaml_in(file, text, &e)])?;
    Policy::compile(&pf, file, file.display().to_string())
}

/// Loads a policy file from disk.
pub fn load_policy_file(path: &Path) -> Result<Policy, Vec<ConfigError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::new(
            path,
            0,
            0,
            format!("cannot read policy: {e}"),
        )]
    })?;
    parse_policy_yaml(&text, path)
}
