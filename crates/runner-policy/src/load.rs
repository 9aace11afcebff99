//! Loading a policy: YAML text or a file to a compiled, self-tested
//! [`Policy`], with every error located as `file:line:column`.
//!
//! This is the one loader: `runner validate`, `run`, `check`, `replay`,
//! the hook and MCP paths and a task's inline `policy:` all come through
//! [`compile_policy`], so a policy one of them rejects none of them runs.
//! A rule that can never match (the lint's errors, `deny Bash(git status
//! && ls)`) is a load error here: a deny rule that never matches is a
//! hole its author did not mean. The lint's warnings stay warnings
//! (`runner validate` and `runner policy lint` print them).

use std::path::Path;

use crate::config_error::ConfigError;
use crate::lint::{Severity, lint_policy};
use crate::model::PolicyFile;
use crate::policy::Policy;
use crate::selftest;

/// Compiles a parsed policy (a file, or a task's inline `policy:`), runs
/// its `tests:` and refuses a rule that never matches; `file` names error
/// locations, `source` is what decisions will name as the deciding layer.
pub fn compile_policy(
    pf: &PolicyFile,
    file: &Path,
    source: String,
) -> Result<Policy, Vec<ConfigError>> {
    let policy = compile_policy_unlinted(pf, file, source)?;
    let never = never_matching(pf, file);
    if never.is_empty() {
        Ok(policy)
    } else {
        Err(never)
    }
}

/// Compiles and self-tests a policy without the lint's errors: for
/// `runner policy lint`, which reports a rule that never matches as a
/// finding of its own rather than as a file that does not load.
pub fn compile_policy_unlinted(
    pf: &PolicyFile,
    file: &Path,
    source: String,
) -> Result<Policy, Vec<ConfigError>> {
    let policy = Policy::compile(pf, file, source)?;
    let errors = selftest::run(&policy, &pf.tests, file);
    if errors.is_empty() {
        Ok(policy)
    } else {
        Err(errors)
    }
}

/// The rules that can never match, as located errors.
fn never_matching(pf: &PolicyFile, file: &Path) -> Vec<ConfigError> {
    lint_policy(pf, file)
        .into_iter()
        .filter(|x| x.severity == Severity::Error)
        .map(|x| {
            ConfigError::new(
                &x.file,
                x.line,
                x.column,
                format!("rules: `{}` never matches: {}", x.rule, x.message),
            )
        })
        .collect()
}

/// Parses and compiles policy YAML.
pub fn parse_policy_yaml(text: &str, file: &Path) -> Result<Policy, Vec<ConfigError>> {
    let pf: PolicyFile = serde_saphyr::from_str(text)
        .map_err(|e| vec![ConfigError::from_yaml_in(file, text, &e)])?;
    compile_policy(&pf, file, file.display().to_string())
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
