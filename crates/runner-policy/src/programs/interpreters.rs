//! Shells and interpreters: programs whose argument or input is a program.
//! A shell's `-c` script is analysed as bash; another language's code is
//! the command itself, allowed only by a rule that names it; code read from
//! stdin or a heredoc cannot be seen, so it fails closed.

/// Shells: `-c SCRIPT` is a script of its own, a file operand runs a file,
/// and with neither they read their script from stdin.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "fish", "mksh", "ash", "busybox",
];
/// Interpreters of other languages: code in `-c`/`-e`, a script file, or
/// stdin (which cannot be checked).
pub const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "Rscript",
    "deno",
    "bun",
    "tclsh",
    "osascript",
];
