//! Variables whose assignment changes what runs.
//!
//! `PATH=/tmp git status` runs whatever `/tmp/git` is; `LD_PRELOAD`,
//! `BASH_ENV`, `GIT_*`, pagers and editors load or run other programs, and
//! so do the wrappers, compilers and flags of build tools (`RUSTC_WRAPPER`,
//! `RUSTFLAGS`, `CARGO_*`, `CC`, `MAKEFLAGS`, `GOFLAGS`, `npm_config_*`). A
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
        // Build tools: wrappers, compilers and flags that name programs.
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTFLAGS",
        "RUSTDOCFLAGS",
        "CC",
        "CXX",
        "CPP",
        "AR",
        "LD",
        "MAKE",
        "MAKEFLAGS",
        "GOFLAGS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GCONV_PATH",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("CARGO_")
        || name.to_ascii_lowercase().starts_with("npm_config_")
}
