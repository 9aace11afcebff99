//! The aliases a program expands in its own process, read as it reads
//! them, for the exec wall.
//!
//! The wall decides each exec; an alias a program expands itself starts no
//! exec of what it names. With `[alias] ship = "publish"` in a
//! `.cargo/config.toml`, `cargo ship` publishes; with `gh alias set m 'pr
//! merge'`, `gh m 1` merges. So an exec of such a program, when a deny
//! rule names it, is also decided as each alias it may expand reads
//! ([`readings`]). (git runs an alias as a new git process, decided in
//! turn, and needs none of this.)
//!
//! **Fails closed.** What cannot be read as the program would read it is
//! [`Unreadable`], and the exec is refused by the rule that names the
//! program.
//!
//! **The race.** The files are read when the exec is decided, and the
//! program reads them after: a process of the task running beside the
//! command could change one in between. It is the argv's race (see
//! `exec_guard`), and the README names both.

use std::path::Path;

pub(super) use self::config_file::Unreadable;

mod cargo;
mod config_file;
mod gh;

/// The programs whose aliases are read.
pub(super) fn expands_aliases(program: &str) -> bool {
    matches!(program, "cargo" | "gh")
}

/// The other ways `program` may read `words` (the program and its
/// arguments), run in `cwd` with environment `env` (`NAME=value`): each
/// with an alias expanded. Empty when no alias applies.
pub(super) fn readings(
    program: &str,
    words: &[String],
    cwd: &Path,
    env: &[String],
) -> Result<Vec<Vec<String>>, Unreadable> {
    match program {
        "cargo" => cargo::readings(words, cwd, env),
        "gh" => gh::readings(words, cwd, env),
        _ => Ok(Vec::new()),
    }
}
