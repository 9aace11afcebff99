//! Variables whose assignment changes what runs.
//!
//! `PATH=/tmp git status` runs whatever `/tmp/git` is; `LD_PRELOAD`,
//! `BASH_ENV`, `GIT_*`, pagers and editors load or run other programs. A
//! script that sets one cannot be checked by its words.

/// Variables whose assignment changes what a command runs or loads.
pub(super) fn is_risky_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "PAGER",
        "GIT_PAGER",
        "EDITOR",
        "VISUAL",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "PS4",
        "CDPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "HOME",
        "SHELL",
        "GLOBIGNORE",
        "BROWSER",
        "TERMINFO",
        "HISTFILE",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
}
