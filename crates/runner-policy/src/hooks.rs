//! Hooks: commands a task or a policy layer runs around tool calls.
//!
//! A `pre_tool` hook runs after the policy allowed a call and before it
//! runs; it can deny the call (never allow one the policy denied), and
//! anything but a clean exit denies it too: a hook that crashes, times out
//! or is killed fails closed. A `post_tool` hook runs after the call and
//! can add to what the model is told. Which calls a hook sees is chosen
//! with rule patterns over the call's signatures (`Bash(git push:*)`,
//! `Edit(src/**)`). This module is the data; the runner runs them.

use std::path::Path;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::ConfigError;
use crate::pattern::Pattern;
use crate::signature::Signature;

/// How long a hook may run when its `timeout:` is not given.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// `hooks:` as written in a task or policy file.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    /// After the policy allowed a call, before it runs: exit 0 lets it
    /// run, exit 2 denies it (stderr is the reason), anything else denies
    /// it too.
    #[serde(default)]
    pub pre_tool: Vec<HookFile>,
    /// After the call ran: stdout (exit 0) or stderr (exit 2) is added to
    /// the result; any other exit fails the task.
    #[serde(default)]
    pub post_tool: Vec<HookFile>,
}

/// One hook as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookFile {
    /// Signature patterns, as in rules: the calls the hook sees.
    #[serde(rename = "match")]
    #[schemars(with = "Vec<String>")]
    pub patterns: Vec<Spanned<String>>,
    /// The command (bash), run in the workspace with the call as JSON on
    /// stdin.
    #[schemars(with = "String")]
    pub run: Spanned<String>,
    /// How long it may run (`30s`, `2m`; default 60s).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub timeout: Option<Spanned<String>>,
}

/// A compiled hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The calls it sees.
    pub patterns: Vec<Pattern>,
    /// Its command.
    pub run: String,
    /// How long it may run.
    pub timeout: Duration,
    /// The file it came from.
    pub source: String,
}

impl Hook {
    /// Whether a call with these signatures is one the hook sees.
    pub fn matches(&self, sigs: &[Signature]) -> bool {
        self.patterns
            .iter()
            .any(|p| sigs.iter().any(|s| p.matches(s, false)))
    }
}

/// A file's compiled hooks.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    /// Run before allowed calls.
    pub pre_tool: Vec<Hook>,
    /// Run after calls.
    pub post_tool: Vec<Hook>,
}

impl Hooks {
    /// No hook at all.
    pub fn is_empty(&self) -> bool {
        self.pre_tool.is_empty() && self.post_tool.is_empty()
    }

    /// Adds another file's hooks after these.
    pub fn extend(&mut self, other: &Hooks) {
        self.pre_tool.extend(other.pre_tool.iter().cloned());
        self.post_tool.extend(other.post_tool.iter().cloned());
    }
}

/// Why a timeout is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeoutError {
    /// Not a number with a unit.
    #[error("`{0}` is not a duration (30s, 2m, 500ms)")]
    NotADuration(String),
    /// Zero.
    #[error("must be more than 0")]
    Zero,
}

/// `30s`, `2m`, `500ms`, `1h`.
pub(crate) fn parse_timeout(s: &str) -> Result<Duration, TimeoutError> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(digits);
    let not = || TimeoutError::NotADuration(s.to_string());
    let n: u64 = n.parse().map_err(|_| not())?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(not()),
    };
    if d.is_zero() {
        return Err(TimeoutError::Zero);
    }
    Ok(d)
}

/// Compiles `hooks:` of `file` (named `source` in records).
pub fn compile_hooks(f: &HooksFile, file: &Path, source: &str) -> Result<Hooks, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut compile = |kind: &str, list: &[HookFile]| -> Vec<Hook> {
        let mut out = Vec::new();
        for (i, h) in list.iter().enumerate() {
            let field = format!("hooks.{kind}[{i}]");
            if h.patterns.is_empty() {
                errors.push(ConfigError::at(
                    file,
                    &h.run.referenced,
                    format!(
                        "{field}.match: name the calls it sees (`Bash(git push:*)`, `Edit(src/**)`)"
                    ),
                ));
            }
            if h.run.value.trim().is_empty() {
                errors.push(ConfigError::at(
                    file,
                    &h.run.referenced,
                    format!("{field}.run: must not be empty"),
                ));
            }
            let mut patterns = Vec::new();
            for p in &h.patterns {
                match Pattern::parse(&p.value) {
                    Ok(pattern) => patterns.push(pattern),
                    Err(e) => errors.push(ConfigError::at(
                        file,
                        &p.referenced,
                        format!("{field}.match: {e}"),
                    )),
                }
            }
            let timeout = match &h.timeout {
                None => DEFAULT_HOOK_TIMEOUT,
                Some(t) => parse_timeout(&t.value).unwrap_or_else(|e| {
                    errors.push(ConfigError::at(
                        file,
                        &t.referenced,
                        format!("{field}.timeout: {e}"),
                    ));
                    DEFAULT_HOOK_TIMEOUT
                }),
            };
            out.push(Hook {
                patterns,
                run: h.run.value.clone(),
                timeout,
                source: source.to_string(),
            });
        }
        out
    };
    let hooks = Hooks {
        pre_tool: compile("pre_tool", &f.pre_tool),
        post_tool: compile("post_tool", &f.post_tool),
    };
    if errors.is_empty() {
        Ok(hooks)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::Family;

    #[test]
    fn timeouts_and_matching() {
        assert_eq!(parse_timeout("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_timeout("soon").is_err());
        assert!(parse_timeout("0s").is_err());
        let h = Hook {
            patterns: vec![Pattern::parse("Bash(git push:*)").unwrap()],
            run: "true".into(),
            timeout: DEFAULT_HOOK_TIMEOUT,
            source: "t".into(),
        };
        assert!(h.matches(&[
            Signature::new(Family::Bash, "git status"),
            Signature::new(Family::Bash, "git push origin main"),
        ]));
        assert!(!h.matches(&[Signature::new(Family::Bash, "git pushd")]));
    }
}
