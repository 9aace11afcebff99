//! The state of the walk over a script, shared by the files that walk it
//! ([`super::walk`], [`super::word`], [`super::wrappers`]): what was found
//! so far, the folders the script may be in, how deep it is nested.

use super::analysis::ShellAnalysis;

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
    /// Inside `find -exec`: find's roots, which `{}` stands beneath.
    pub(super) find_roots: Option<Vec<String>>,
}

/// The value of a word when it is fixed before running.
pub(super) struct WordValue {
    pub(super) text: String,
    /// Holds expansions (variables, substitutions, tildes, arithmetic).
    pub(super) dynamic: bool,
    /// Holds unquoted glob or brace characters.
    pub(super) unquoted_magic: bool,
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
        }
    }

    /// Marks the script opaque; the first reason is kept.
    pub(super) fn opaque(&mut self, why: impl Into<String>) {
        if self.out.opaque.is_none() {
            self.out.opaque = Some(why.into());
        }
    }
}
