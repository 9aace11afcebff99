//! Shell analysis: every simple command a bash script would run.
//!
//! A script is parsed with a real bash grammar (brush-parser) and walked in
//! full: lists, pipelines, subshells, groups, `if`/`for`/`while`/`case`,
//! function bodies, `$(...)`, backticks, process substitutions, heredocs and
//! here-strings. Wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`,
//! `bash -c`, `eval` ...) are unwrapped so the wrapped command is checked as
//! well as the wrapper. Redirections that write become `Edit(path)`, those
//! that read and the file operands of well-known readers become `Read(path)`.
//!
//! Whatever cannot be known before running (a command word built from a
//! variable or substitution, a glob or brace in the command word, `source`,
//! a syntax error, a risky assignment such as `PATH=`, an interpreter reading
//! its script from stdin) makes the whole script *opaque*: one signature that
//! only a rule naming the exact text can allow. When unsure, deny.

mod analysis;
mod arith;
mod budget;
mod builtins;
mod env;
mod expand;
mod folders;
mod heredoc;
mod parallel;
mod parse;
mod produced;
mod redirect;
mod shells;
mod state;
mod variables;
mod walk;
mod word;
mod wrappers;

pub use analysis::{PathUse, ShellAnalysis, SimpleCommand};
pub use budget::{MAX_NESTING, MAX_SIGNATURES};
pub use heredoc::MAX_DATA_CHARS;
pub(crate) use heredoc::{body_end as heredoc_body_end, delimiter as heredoc_delimiter};
pub(crate) use redirect::expands_code;
pub use state::MAX_SCRIPT_CHARS;
use state::Walker;
pub(crate) use variables::{is_risky_variable, names_a_program};
pub(crate) use wrappers::{SCRIPT_STEPS, TIMEOUT_VALUE_OPTIONS};

/// Analyses a bash script.
pub fn analyze(script: &str) -> ShellAnalysis {
    let mut w = Walker::new(script);
    if script.len() > MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS {
        w.opaque(format!(
            "the script is longer than {} characters",
            MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS
        ));
        return w.out;
    }
    w.script(script);
    w.check_evaluated();
    if w.glob_options && w.glob_operand {
        w.opaque("`shopt` changes how globs match, and the script has glob operands");
    }
    w.out
}

#[cfg(test)]
mod tests;
