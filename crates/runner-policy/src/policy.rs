//! A compiled policy: one layer of rules, a default and risk overrides.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config_error::ConfigError;
use crate::model::{DefaultDecision, MAX_RULES, PolicyFile};
use crate::pattern::Pattern;
use crate::risk::Risk;

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Allow (true) or deny (false).
    pub allow: bool,
    /// What it matches.
    pub pattern: Pattern,
    /// Told to the model when the rule denies a call.
    pub reason: Option<String>,
    /// Its line in the policy's file (the task file for an inline policy;
    /// 0 when unknown).
    pub line: u64,
}

/// A compiled policy: one layer.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from (a file path, or `<task>.yaml (inline)`).
    pub source: String,
    /// What a call that needs approval and matches no rule gets.
    pub default: DefaultDecision,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// Risk overrides by tool name, or `mcp` for every MCP tool.
    pub risk: BTreeMap<String, Risk>,
    /// Rules written with `{{files}}`, made concrete by [`Policy::bind_files`].
    pub file_templates: Vec<FileTemplate>,
    /// Hooks run for every task under this policy.
    pub hooks: crate::hooks::Hooks,
    /// Where the traces and metrics of runs under this policy go.
    pub telemetry: Option<crate::telemetry::Telemetry>,
    /// `network:`, compiled.
    pub network: Option<crate::network::Network>,
    /// `redact:`: variables whose values every output redacts, by name or
    /// glob (see [`crate::redact_matches`]).
    pub redact: Vec<String>,
    /// `canaries:`, as written (the runner decides with a task's).
    pub canaries: Option<crate::CanariesFile>,
}

/// A rule pattern with `{{files}}` in it, such as `Edit({{files}})`: one rule
/// per file given with `--files` (a pre-commit hook's staged files), and no
/// rule at all when none are given.
#[derive(Debug, Clone)]
pub struct FileTemplate {
    /// Allow (true) or deny (false).
    pub allow: bool,
    /// The pattern as written, with the placeholder.
    pub text: String,
    /// Told to the model when a rule made from it denies a call.
    pub reason: Option<String>,
    /// Its line in the policy's file (0: unknown).
    pub line: u64,
}

/// The placeholder [`FileTemplate`]s expand.
pub const FILES_PLACEHOLDER: &str = "{{files}}";

/// A `{{files}}` rule that a file name made invalid.
#[derive(Debug, thiserror::Error)]
#[error("{policy}: `{rule}` from --files: {error}")]
pub struct BindError {
    /// The policy's source (its file, or the task's inline policy).
    pub policy: String,
    /// The rule with the file name in it.
    pub rule: String,
    /// Why it is not a valid rule.
    pub error: crate::pattern::PatternError,
}

impl Policy {
    /// The policy used when a task names none: low-risk calls only.
    pub fn builtin_default() -> Self {
        Self::allowing_nothing("built-in default (deny)", DefaultDecision::Deny)
    }

    /// A policy with no rules, deciding everything by `default`.
    pub fn allowing_nothing(source: impl Into<String>, default: DefaultDecision) -> Self {
        Self {
            source: source.into(),
            default,
            rules: vec![],
            risk: BTreeMap::new(),
            file_templates: vec![],
            hooks: Default::default(),
            telemetry: None,
            network: None,
            redact: Vec::new(),
            canaries: None,
        }
    }

    /// Adds one rule per file for each `{{files}}` template. A file name that
    /// does not make a valid pattern (glob characters) is an error.
    pub fn bind_files(mut self, files: &[String]) -> Result<Self, BindError> {
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
                let pattern = Pattern::parse(&text).map_err(|error| BindError {
                    policy: self.source.clone(),
                    rule: text.clone(),
                    error,
                })?;
                self.rules.push(Rule {
                    allow: t.allow,
                    pattern,
                    reason: t.reason.clone(),
                    line: t.line,
                });
            }
        }
        Ok(self)
    }

    /// Compiles a parsed file; `file` is used in error locations. The file's
    /// `tests:` are run by [`crate::compile_policy`], the public way in.
    pub(crate) fn compile(
        pf: &PolicyFile,
        file: &Path,
        source: String,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut rules = Vec::new();
        let mut file_templates = Vec::new();
        // Past the limit, the first pattern over it is named.
        let over = pf
            .rules
            .iter()
            .flat_map(|r| {
                let e = &r.value;
                e.allow.iter().flatten().chain(e.deny.iter().flatten())
            })
            .nth(MAX_RULES);
        if let Some(p) = over {
            return Err(vec![ConfigError::at(
                file,
                &p.referenced,
                format!(
                    "rules: more than {MAX_RULES} patterns; a policy may hold at most {MAX_RULES}"
                ),
            )]);
        }
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
                            line: p.referenced.line(),
                        });
                        continue;
                    }
                    match Pattern::parse(&p.value) {
                        Ok(pattern) => rules.push(Rule {
                            allow,
                            pattern,
                            reason: entry.reason.clone(),
                            line: p.referenced.line(),
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
        let hooks = match &pf.hooks {
            None => crate::hooks::Hooks::default(),
            Some(h) => crate::hooks::compile_hooks(h, file, &source).unwrap_or_else(|es| {
                errors.extend(es);
                Default::default()
            }),
        };
        let telemetry = pf.telemetry.as_ref().and_then(|t| {
            crate::telemetry::compile_telemetry(t, file)
                .map_err(|e| errors.push(e))
                .ok()
        });
        let network = pf.network.as_ref().and_then(|n| {
            crate::network::compile_network(n, file)
                .map_err(|es| errors.extend(es))
                .ok()
        });
        let redact = crate::redact_names::compile_redact(&pf.redact, file).unwrap_or_else(|es| {
            errors.extend(es);
            Vec::new()
        });
        if pf.canaries.as_ref().is_some_and(|c| c.file.is_some()) {
            errors.push(ConfigError::new(
                file,
                0,
                0,
                "canaries.file: a decoy file is a task's (its path is in its workspace), not a policy's",
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            source,
            default: pf.default,
            rules,
            risk: pf.risk.iter().map(|(k, v)| (k.clone(), v.value)).collect(),
            file_templates,
            hooks,
            telemetry,
            network,
            redact,
            canaries: pf.canaries.clone(),
        })
    }
}
