//! Loading a policy: YAML text or a file to a compiled, self-tested
//! [`Policy`], with every error located as `file:line:column`.

use std::path::Path;

use crate::config_error::ConfigError;
use crate::model::PolicyFile;
use crate::policy::Policy;
use crate::selftest;

/// Compiles a parsed policy (a file, or a task's inline `policy:`) and runs
/// its `tests:`; `file` names error locations, `source` is what decisions
/// will name as the deciding layer.
pub fn compile_policy(
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
