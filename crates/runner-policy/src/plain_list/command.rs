//! One simple command of a plain list: whether it may be decided on its
//! own by the rule for its program (its program is a plain word, runs no
//! other program, is no keyword and no builtin that evaluates bash code),
//! and the harmless assignments before it that can be left out.

/// Programs that run another program their words name: an allow rule for
/// one of them does not cover what it runs (the analysis decides that
/// program on its own when it can see it).
const RUNS_OTHERS: &[&str] = &[
    "xargs", "env", "sudo", "doas", "su", "runuser", "timeout", "nice", "ionice", "chrt", "stdbuf",
    "nohup", "setsid", "builtin", "exec", "time", "command", "unbuffer", "find", "watch", "eval",
    "trap", "parallel", "flock", "chroot", "unshare", "nsenter", "script", "expect", "strace",
    "ltrace", "gdb", "valgrind", "fakeroot", "busybox", "sh", "bash", "dash", "zsh", "ksh", "mksh",
    "fish", "csh", "tcsh", "rbash", "ash", "yash",
];

/// Words that begin a compound command, not a program: a list holding one
/// is no plain list (`if x; then rm y; fi` runs `rm`, not `then`).
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "coproc", "[[", "]]",
];

/// Whether bash reads `word` in a command's first place as a keyword
/// or runs it as a builtin of its own (not as the program of that name).
pub fn is_shell_word(word: &str) -> bool {
    KEYWORDS.contains(&word) || BUILTINS.contains(&word) || matches!(word, "{" | "}" | "!" | "time")
}

/// bash's builtins (`compgen -b`): they run inside bash, and many of them
/// evaluate names, subscripts or code (`let`, `printf -v 'a[$(..)]'`,
/// `test -v`, `hash -p`, `compgen -C`, `shopt`, `alias`, `enable -f`).
const BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// Whether the simple command `part` is a builtin that may evaluate bash
/// code. Only those that cannot are kept: `echo`, `true`, `false`, `:`,
/// `pwd`, and `printf`, `test`, `[` without an option that takes a name
/// (`-v`, `-R`); and `source`/`.`, whose code is a file's, decided like a
/// program's own code by the rule that names it.
fn runs_bash_code(part: &str) -> bool {
    let mut words = part.split_whitespace();
    let first = words.next().unwrap_or("");
    if !BUILTINS.contains(&first) {
        return false;
    }
    match first {
        "echo" | "true" | "false" | ":" | "pwd" => false,
        // A folder to run the rest in (`cd /testbed && pytest`): no code,
        // and where the rest writes is the backstops' to hold.
        "cd" => false,
        // A file's code, run in this shell (`source .venv/bin/activate`):
        // like an interpreter's script, the rule that allows it covers
        // whatever it runs, the rest of the list included.
        "source" | "." => false,
        "printf" | "test" | "[" => words.any(|w| w.contains("-v") || w.contains("-R")),
        _ => true,
    }
}

/// `Some` when the simple command `part` may be decided on its own: its
/// program is named by a plain word, is no keyword, does not run others
/// (but `timeout` with a plain duration, whose program is decided too) and
/// is no builtin that evaluates bash code. `listed_apart`: the program it
/// runs is a command of the list too (`timeout`'s).
pub(super) fn plain_command(part: &str, listed_apart: bool) -> Option<()> {
    let first = part.split_whitespace().next()?;
    // A redirection glued to it (`python3<<EOF`, `cat>f`) ends the word
    // for bash, not for this reading: no plain word.
    if first.contains(['=', '\'', '"', '\\', '$', '*', '?', '[', '!', '#', '<', '>']) {
        return None;
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    let runs_others = RUNS_OTHERS.contains(&name) && !listed_apart;
    if runs_others || KEYWORDS.contains(&first) || runs_bash_code(part) {
        return None;
    }
    Some(())
}

/// `part` without the assignments before its program (`DJANGO_SETTINGS_MODULE=x
/// python3 -c ...`), when each is harmless: a plain name that changes
/// neither what runs nor what it loads ([`crate::shell::is_risky_variable`])
/// and a value of plain characters. `None` for any other assignment, or
/// when nothing follows.
pub(super) fn without_assignments(part: &str) -> Option<&str> {
    let mut rest = part;
    loop {
        let word = rest.split_whitespace().next()?;
        let Some((name, value)) = word.split_once('=') else {
            return Some(rest);
        };
        let plain_name = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        if !plain_name
            || crate::shell::is_risky_variable(name)
            || crate::shell::names_a_program(name)
            || value.contains(['\'', '"', '\\', '$', '`', '*', '?', '[', '~', '{'])
        {
            return None;
        }
        rest = rest[word.len()..].trim_start();
    }
}
