//! What loading task files needs from the command line.

use std::collections::BTreeMap;

use crate::provider::ModelSpec;
use crate::tools::Registry;

/// What loading needs from the command line.
#[derive(Clone, Default)]
pub struct LoadOptions {
    /// `--model`: replaces every task's model, and its fallbacks (the
    /// rest of a comma-separated list).
    pub model_override: Option<Vec<ModelSpec>>,
    /// The tools a task may name (built-in ones).
    pub registry: Registry,
    /// `--param NAME=VALUE`, for every task that declares NAME.
    pub params: BTreeMap<String, String>,
    /// `--files`: the value of `{{files}}` and of `Edit({{files}})` rules.
    pub files: Vec<String>,
    /// `runner validate`: a parameter without a value is not an error (its
    /// placeholder is kept as written).
    pub params_optional: bool,
}

impl LoadOptions {
    /// For looking at task files without running them (`runner validate`,
    /// `runner tools --task`): built-in tools, no `--param`, and a parameter
    /// without a value is not an error.
    pub fn lenient() -> Self {
        LoadOptions {
            model_override: None,
            registry: Registry::builtin(),
            params: Default::default(),
            files: Default::default(),
            params_optional: true,
        }
    }
}
