//! How a command ends: an [`Exit`] status when it ran, a [`CliError`]
//! when it could not. `main` prints the error, in one place, and turns
//! both into the process's exit code.

use runner_policy::ConfigError;

/// How a command that ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything passed, the call was allowed (0).
    Passed,
    /// Something failed or was denied (1).
    Failed,
    /// The input was bad, and the command said so in its output (2).
    Invalid,
    /// A run stopped before it finished, and `--resume` goes on from
    /// where it stopped (75, EX_TEMPFAIL: try again).
    Resumable,
}

impl Exit {
    /// The process's exit code: 0, 1, 2 or 75.
    pub fn code(self) -> i32 {
        match self {
            Exit::Passed => 0,
            Exit::Failed => 1,
            Exit::Invalid => 2,
            Exit::Resumable => 75,
        }
    }

    /// `Passed` when `ok`, else `Failed`.
    pub fn passed_if(ok: bool) -> Self {
        if ok { Exit::Passed } else { Exit::Failed }
    }

    /// How a run (or a merge of shards) exits by its tasks' outcomes:
    /// `Passed` when all passed; `Resumable` when those that did not were
    /// all cut short (`--resume` goes on with them); `Failed` otherwise.
    pub fn of_run<'a>(outcomes: impl IntoIterator<Item = &'a runner_output::Outcome>) -> Self {
        let mut exit = Exit::Passed;
        for o in outcomes {
            if o.status == runner_output::OutcomeStatus::Passed {
                continue;
            }
            if !crate::run::resumable(o) {
                return Exit::Failed;
            }
            exit = Exit::Resumable;
        }
        exit
    }
}

/// Why a command could not do its work.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input: nothing was run (exit 2).
    #[error("{0}")]
    Invalid(String),
    /// Task or policy files with errors, each located (exit 2).
    #[error("{} error(s) in task or policy files", .0.len())]
    Config(Vec<ConfigError>),
    /// The command started and could not finish (exit 1).
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    /// The exit status it ends the process with.
    pub fn exit(&self) -> Exit {
        match self {
            CliError::Invalid(_) | CliError::Config(_) => Exit::Invalid,
            CliError::Failed(_) => Exit::Failed,
        }
    }

    /// Prints it to stderr, each located error on a line of its own.
    pub fn print(&self) {
        match self {
            CliError::Config(errors) => {
                for e in errors {
                    eprintln!("error: {e}");
                }
            }
            // One `error:` a line: several inputs can be bad at once.
            other => {
                for line in other.to_string().lines() {
                    eprintln!("error: {line}");
                }
            }
        }
    }
}

impl From<Vec<ConfigError>> for CliError {
    fn from(errors: Vec<ConfigError>) -> Self {
        CliError::Config(errors)
    }
}

/// What a command returns.
pub type CliResult = Result<Exit, CliError>;
