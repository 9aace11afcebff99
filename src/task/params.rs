//! Task parameters: `parameters:` in a task, `--param k=v` on the command
//! line, and `{{name}}` in the prompt and the checks.
//!
//! Rendering happens when the task loads, so a typo in a placeholder or a
//! missing value is a load error with a location, never a prompt sent to a
//! model with `{{target}}` still in it. `{{files}}` is built in: the file
//! names given with `--files` (a pre-commit hook's staged files), separated
//! by spaces; policies may write `Edit({{files}})` for one rule per file.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// The built-in parameter holding `--files`.
pub const FILES: &str = "files";

/// One declared parameter: a default value, nothing (`name:`), or a
/// mapping with a default and a description. Without a default, `--param`
/// must give a value.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ParamDecl {
    Default(String),
    /// `name:` with no value: declared, without a default.
    Bare(()),
    Full {
        /// The value when `--param` gives none.
        #[serde(default)]
        default: Option<String>,
        /// For people reading the task file (and `runner schema task`).
        #[serde(default)]
        #[allow(dead_code)]
        description: Option<String>,
    },
}

impl ParamDecl {
    pub fn default_value(&self) -> Option<&str> {
        match self {
            ParamDecl::Default(v) => Some(v),
            ParamDecl::Bare(()) => None,
            ParamDecl::Full { default, .. } => default.as_deref(),
        }
    }
}

/// Why a text's placeholders could not be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error("`{{{{` without a closing `}}}}`")]
    Unclosed,
    #[error("`{{{{{name}}}}}` is not a declared parameter (declared: {})", declared.join(", "))]
    Undeclared { name: String, declared: Vec<String> },
}

/// Replaces every `{{ name }}` in `text` with its value. Fails on the first
/// name without a value, and on an unclosed `{{`.
pub fn render(text: &str, values: &BTreeMap<String, String>) -> Result<String, RenderError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(RenderError::Unclosed);
        };
        let name = after[..end].trim();
        match values.get(name) {
            Some(v) => out.push_str(v),
            None => {
                return Err(RenderError::Undeclared {
                    name: name.to_string(),
                    declared: values.keys().cloned().collect(),
                });
            }
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A `--param` that is not `NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--param `{0}`: expected NAME=VALUE")]
pub struct ParamError(String);

/// Parses one `--param NAME=VALUE`.
pub fn parse_param(s: &str) -> Result<(String, String), ParamError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(ParamError(s.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_refuses_unknown_names() {
        let v: BTreeMap<String, String> = [("a".to_string(), "x".to_string())].into();
        assert_eq!(render("{{a}}-{{ a }}", &v).unwrap(), "x-x");
        assert_eq!(render("no braces", &v).unwrap(), "no braces");
        assert_eq!(
            render("{{b}}", &v).unwrap_err().to_string(),
            "`{{b}}` is not a declared parameter (declared: a)"
        );
        assert_eq!(
            render("{{a", &v).unwrap_err().to_string(),
            "`{{` without a closing `}}`"
        );
        assert_eq!(parse_param("k=v=w").unwrap(), ("k".into(), "v=w".into()));
        assert!(parse_param("=v").is_err());
    }
}
