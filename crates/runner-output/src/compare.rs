//! `runner compare BASE NEW --format json` (`runner schema compare`): two
//! runs of the same tasks side by side, for a pull request that changes a
//! prompt, a policy or a model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the comparison's format.
pub const COMPARE_VERSION: u32 = 1;

/// Two runs compared.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    /// [`COMPARE_VERSION`].
    pub version: u32,
    /// The base run's output folder.
    pub base: String,
    /// The new run's output folder.
    pub new: String,
    /// The tasks both ran, by name.
    pub tasks: Vec<TaskComparison>,
    /// Tasks only the base ran (listed, not failed).
    pub only_in_base: Vec<String>,
    /// Tasks only the new run ran.
    pub only_in_new: Vec<String>,
    /// The regressions beyond the tolerances, a line each; the command
    /// exits 1 when there is one.
    pub regressions: Vec<String>,
}

/// One task in both runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TaskComparison {
    /// The task's name.
    pub task: String,
    /// Its runs in the base.
    pub base: RunStats,
    /// Its runs in the new run.
    pub new: RunStats,
    /// The new pass rate minus the base's.
    pub pass_rate_change: f64,
    /// Fisher's exact test (two-sided) of the two pass counts: how likely
    /// counts this far apart are when both runs pass equally often.
    pub p_value: f64,
    /// Whether `p_value` is under the significance level: the counts can
    /// tell the two rates apart.
    pub significant: bool,
    /// The new median cost over the base's, minus 1 (`0.25`: a quarter
    /// more); absent when a side's cost is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_change: Option<f64>,
    /// The new median turns minus the base's.
    pub turns_change: f64,
    /// Denials (`tool: rule`) of the new run the base never had.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_denials: Vec<String>,
    /// Why the task is a regression, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regression: Option<String>,
}

/// One side's runs of a task (its attempts, or its one run).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunStats {
    /// How many times it ran.
    pub runs: u32,
    /// How many of those passed.
    pub passed: u32,
    /// `passed / runs`.
    pub pass_rate: f64,
    /// The median cost in USD; absent when a run's is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_cost: Option<f64>,
    /// The median number of model turns.
    pub median_turns: f64,
}
