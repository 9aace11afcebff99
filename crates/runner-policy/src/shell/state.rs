//! The state of the walk over a script, shared by the files that walk it
//! ([`super::walk`], [`super::word`], [`super::wrappers`]): what was found
//! so far, the folders the script may be in, how deep it is nested.

use std::collections::HashMap;

use super::analysis::ShellAnalysis;
use super::budget::{MAX_PARSED_CHARS, MAX_STEPS, too_complex};

/// Scripts longer than this are not analysed (fail closed).
pub const MAX_SCRIPT_CHARS: usize = 10_000;
/// How deep scripts and wrappers may nest before the analysis fails closed.
pub(super) const MAX_DEPTH: usize = 16;

/// Most folders a script may be in after its `cd`s before the folder
/// counts as unknown (each `cd` can double them).
pub(super) const MAX_CWDS: usize = 64;

/// The word that stands for `<(...)`/`>(...)` among a command's arguments.
pub(super) const PROCESS_SUBSTITUTION: &str = "<(...)";

/// Walks a script and gathers what it finds.
pub(super) struct Walker {
    /// What was found so far.
    pub(super) out: ShellAnalysis,
    /// Folders the script may be in, relative to where it started; `None`
    /// once a `cd` went somewhere unknown.
    pub(super) cwds: Option<Vec<String>>,
    /// How many scripts deep the walk is (`bash -c`, `eval`, `$(...)`).
    pub(super) depth: usize,
    /// The `cd` being walked must succeed for the script to go on (`cd X
    /// && ...`, or under `set -e`): the script is then in X only.
    pub(super) cd_must_succeed: bool,
    /// `set -e` is on at the top of the script.
    pub(super) errexit: bool,
    /// How many compound commands deep the walk is.
    pub(super) compound_depth: usize,
    /// Loop variables over a literal list, and their values.
    pub(super) bindings: Vec<(String, Vec<String>)>,
    /// Inside `find -exec`: find's roots, which `{}` stands beneath.
    pub(super) find_roots: Option<Vec<String>>,
    /// The scripts being walked, innermost last: source spans index them.
    pub(super) texts: Vec<String>,
    /// Steps of the walk so far, and characters parsed (see [`super::budget`]).
    pub(super) steps: usize,
    pub(super) parsed_chars: usize,
    /// Signatures the recorded paths will make at least (a path per folder
    /// the script may be in).
    pub(super) path_signatures: usize,
    /// Variables the script assigns, with where each value came from.
    pub(super) assigned: HashMap<String, Vec<Origin>>,
    /// Variables whose value bash evaluates as an arithmetic expression or
    /// a variable name (`(( x ))`, `$(( $x ))`, `${a[$i]}`, `${!x}`): bash
    /// runs the command substitutions of an array subscript in such a
    /// value, so each must be one the script fixes (checked at the end).
    pub(super) evaluated: Vec<String>,
    /// Variables declared with the integer attribute (`declare -i`).
    pub(super) integers: Vec<String>,
    /// `shopt` turned on an option that changes how globs match (dotglob,
    /// globstar, nocaseglob, extglob), and a glob operand was seen.
    pub(super) glob_options: bool,
    pub(super) glob_operand: bool,
    /// The heredoc body on the stdin of the simple command being looked
    /// into, when bash passes it on as written: the script of a shell that
    /// reads one from stdin (`bash <<'EOF'`).
    pub(super) stdin_script: Option<String>,
    /// The words of the simple command whose output the one being looked
    /// into reads, in a pipeline (`find . -name x | xargs grep y`).
    pub(super) piped_from: Option<Vec<String>>,
    /// Loop variables that take the paths a producer prints, with its
    /// words (`for f in $(find src -name '*.py')`, `find ... | while read
    /// f`): see `produced`.
    pub(super) produced: Vec<(String, Vec<String>)>,
}

/// The value of a word when it is fixed before running.
#[derive(Default)]
pub(super) struct WordValue {
    pub(super) text: String,
    /// Holds expansions (variables, substitutions, tildes, arithmetic).
    pub(super) dynamic: bool,
    /// Holds unquoted glob or brace characters.
    pub(super) unquoted_magic: bool,
    /// Where its value comes from, for variables assigned from it.
    pub(super) origin: Origin,
}

/// Where a value comes from, as far as bash evaluating it as arithmetic is
/// concerned (see [`Walker::evaluated`]).
#[derive(Default, Clone, Debug)]
pub(super) struct Origin {
    /// Holds text the script does not fix (a command's output, a
    /// positional parameter) or literal text that holds a command
    /// substitution.
    pub(super) runtime: bool,
    /// Variables whose values it copies.
    pub(super) copies: Vec<String>,
}

impl Origin {
    /// A value only known when the script runs.
    pub(super) fn runtime() -> Self {
        Self {
            runtime: true,
            copies: Vec::new(),
        }
    }
}

impl Walker {
    /// A walk of a script that starts in the workspace folder.
    pub(super) fn new(text: &str) -> Self {
        Self {
            out: ShellAnalysis {
                text: text.to_string(),
                ..Default::default()
            },
            cwds: Some(vec![".".to_string()]),
            depth: 0,
            find_roots: None,
            cd_must_succeed: false,
            errexit: false,
            compound_depth: 0,
            bindings: Vec::new(),
            texts: Vec::new(),
            steps: 0,
            parsed_chars: 0,
            path_signatures: 0,
            assigned: HashMap::new(),
            evaluated: Vec::new(),
            integers: Vec::new(),
            glob_options: false,
            glob_operand: false,
            stdin_script: None,
            piped_from: None,
            produced: Vec::new(),
        }
    }

    /// True once the script is opaque: the walk stops there, since an
    /// opaque script is one signature whatever else it holds.
    pub(super) fn done(&self) -> bool {
        self.out.opaque.is_some()
    }

    /// Records an assignment of `name` (a plain variable name, or an array
    /// element `name[...]`, whose subscript is checked as arithmetic).
    pub(super) fn assign(&mut self, name: &str, origin: Origin) {
        let base = match name.split_once('[') {
            Some((base, sub)) => {
                self.arithmetic(sub.strip_suffix(']').unwrap_or(sub));
                base
            }
            None => name,
        };
        self.assigned
            .entry(base.to_string())
            .or_default()
            .push(origin);
    }

    /// Counts one step of the walk; false (and the script opaque) past the
    /// budget.
    pub(super) fn step(&mut self) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.opaque(too_complex("too many commands and words"));
        }
        !self.done()
    }

    /// Counts `n` characters about to be parsed; false past the budget.
    pub(super) fn parse_budget(&mut self, n: usize) -> bool {
        self.parsed_chars += n;
        if self.parsed_chars > MAX_PARSED_CHARS {
            self.opaque(too_complex("scripts nested in scripts too many times"));
        }
        !self.done()
    }

    /// Marks the script opaque; the first reason is kept.
    pub(super) fn opaque(&mut self, why: impl Into<String>) {
        if self.out.opaque.is_none() {
            self.out.opaque = Some(why.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::budget::{MAX_PARSED_CHARS, MAX_STEPS};

    /// The walk's budgets hold at their edges: the last step and the last
    /// character within them pass, the next is refused.
    #[test]
    fn budgets_at_their_edges() {
        let mut w = Walker::new("");
        for _ in 0..MAX_STEPS {
            assert!(w.step());
        }
        assert!(w.out.opaque.is_none());
        assert!(!w.step());
        assert!(w.done());
        let mut w = Walker::new("");
        assert!(w.parse_budget(MAX_PARSED_CHARS - 1));
        assert!(w.parse_budget(1));
        assert!(!w.done());
        assert!(!w.parse_budget(1));
        assert_eq!(
            w.out.opaque.as_deref(),
            Some("too complex to check safely (scripts nested in scripts too many times)")
        );
    }
}
