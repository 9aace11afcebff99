//! Tripwires: what ends a task at once, the model not asked again, and
//! names itself in `outcome.tripwire` so that CI can tell these endings
//! apart from an ordinary failure.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What tripped: a denial budget, a denial of a class the task fails fast
/// on, or a canary that moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tripwire {
    /// `max_denials`: the task's denied calls reached the budget.
    Denials,
    /// `fail_fast: [credentials]`: the built-in credentials layer denied a
    /// call.
    Credentials,
    /// `fail_fast: [network]`: a connection or a `Fetch` was refused.
    Network,
    /// `fail_fast: [exec]`: the exec wall refused a program a deny rule
    /// names.
    Exec,
    /// A canary credential moved toward the outside.
    Canary,
}

impl Tripwire {
    /// The classes `fail_fast:` may name, in the order documented.
    pub const FAIL_FAST: [Tripwire; 4] = [
        Tripwire::Credentials,
        Tripwire::Network,
        Tripwire::Exec,
        Tripwire::Canary,
    ];

    /// The name used in the JSON and in task files (`denials` ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Tripwire::Denials => "denials",
            Tripwire::Credentials => "credentials",
            Tripwire::Network => "network",
            Tripwire::Exec => "exec",
            Tripwire::Canary => "canary",
        }
    }

    /// The `fail_fast:` class named `name`.
    pub fn fail_fast_class(name: &str) -> Option<Tripwire> {
        Self::FAIL_FAST.into_iter().find(|c| c.as_str() == name)
    }
}

impl std::fmt::Display for Tripwire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
