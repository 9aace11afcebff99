//! Commands of a plain list that run a command their words hold: what
//! `timeout` runs, and the script of `bash -c 'SCRIPT'`. The plain list
//! decides both the wrapper (by the rule for its program) and what it
//! wraps; anything this reading is unsure of is `None`, and the wrapper is
//! then no plain command at all.

use crate::shell::TIMEOUT_VALUE_OPTIONS;

/// What `timeout [options] DURATION PROGRAM ...` runs, when every word
/// before it is plain (`-s SIG`, `-k DUR`, `--foreground` ...) and the
/// duration a number with an optional unit.
pub(super) fn timeout_command(part: &str) -> Option<&str> {
    let mut rest = part.strip_prefix("timeout")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let mut takes_value = false;
    loop {
        rest = rest.trim_start();
        let word = rest.split_whitespace().next()?;
        if word.contains(['\'', '"', '\\', '$', '`']) {
            return None;
        }
        rest = &rest[word.len()..];
        if takes_value {
            takes_value = false;
        } else if TIMEOUT_VALUE_OPTIONS.contains(&word) {
            takes_value = true;
        } else if word.starts_with('-') {
            // A flag, or an option with its value attached (`-sKILL`,
            // `--kill-after=5`).
            let known = ["--foreground", "--preserve-status", "-v", "--verbose"].contains(&word)
                || TIMEOUT_VALUE_OPTIONS.iter().any(|o| word.starts_with(o));
            if !known {
                return None;
            }
        } else {
            let number = word.trim_end_matches(['s', 'm', 'h', 'd']);
            let duration = !number.is_empty()
                && number.bytes().all(|c| c.is_ascii_digit() || c == b'.')
                && word.len() - number.len() <= 1;
            let inner = rest.trim_start();
            return (duration && !inner.is_empty()).then_some(inner);
        }
    }
}

/// Shells whose `-c` takes the next word as a script in bash's grammar.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh"];

/// Option letters that change neither where the script comes from nor
/// what it means as text: `-c` itself, `-l` (a login shell: its startup
/// files are decided by the backstop, not here), `-e`, `-u`, `-x`, `-v`.
const PLAIN_LETTERS: &str = "celuxv";

/// The script of `SHELL [options] -c 'SCRIPT' [redirections]`, as the
/// shell receives it (`"` quotes undone as bash undoes them), when the
/// options are plain ([`PLAIN_LETTERS`], `--login`, `-o pipefail`) and
/// the script is the last word but for redirections: a word after it
/// would be the script's `$0` and arguments, which it may run.
///
/// `None` when anything is outside that: a double-quoted script with an
/// unescaped `$` or `` ` `` (the outer shell expands them first), a script
/// of several quoted pieces, an option that reads a file or stdin.
pub(super) fn shell_script(part: &str) -> Option<String> {
    let first = part.split_whitespace().next()?;
    let name = first.rsplit('/').next().unwrap_or(first);
    if !SHELLS.contains(&name) {
        return None;
    }
    let mut rest = &part[first.len()..];
    let mut has_c = false;
    let mut takes_name = false;
    loop {
        rest = rest.trim_start();
        if rest.starts_with(['\'', '"']) {
            break;
        }
        let word = rest.split_whitespace().next()?;
        rest = &rest[word.len()..];
        if takes_name {
            takes_name = false;
            if !["pipefail", "errexit", "nounset", "xtrace"].contains(&word) {
                return None;
            }
        } else if word == "--login" {
        } else if let Some(letters) = word.strip_prefix('-') {
            let (letters, o) = match letters.strip_suffix('o') {
                Some(l) => (l, true),
                None => (letters, false),
            };
            if (letters.is_empty() && !o) || !letters.chars().all(|c| PLAIN_LETTERS.contains(c)) {
                return None;
            }
            has_c |= letters.contains('c');
            takes_name = o;
        } else {
            return None;
        }
    }
    if !has_c || takes_name {
        return None;
    }
    let (script, after) = quoted_word(rest)?;
    redirections_only(after).then_some(script)
}

/// The quoted word at the start of `text` (`'...'` or `"..."`, nothing
/// joined to it) as the shell reads it, and the text after it.
fn quoted_word(text: &str) -> Option<(String, &str)> {
    let mut chars = text.char_indices();
    let (_, quote) = chars.next()?;
    let mut word = String::new();
    let end = loop {
        let (i, c) = chars.next()?;
        match c {
            _ if c == quote => break i + 1,
            '$' | '`' if quote == '"' => return None,
            '\\' if quote == '"' => {
                let (_, next) = chars.next()?;
                match next {
                    '$' | '`' | '"' | '\\' => word.push(next),
                    '\n' => {}
                    _ => {
                        word.push('\\');
                        word.push(next);
                    }
                }
            }
            _ => word.push(c),
        }
    };
    let after = &text[end..];
    if after.starts_with(|c: char| !c.is_whitespace()) {
        return None;
    }
    Some((word, after))
}

/// Whether every word of `text` is a redirection of the shell's own
/// (`2>&1`, `> log`, `</dev/null`): nothing that becomes an argument.
fn redirections_only(text: &str) -> bool {
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        let op = word.trim_start_matches(|c: char| c.is_ascii_digit());
        let target = ["&>>", "&>", ">>", ">&", "<&", ">|", ">", "<"]
            .iter()
            .find_map(|o| op.strip_prefix(o));
        match target {
            Some("") if words.next().is_none() => return false,
            Some(_) => {}
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shells_script_as_the_shell_receives_it() {
        for (part, want) in [
            ("bash -c 'ls | wc'", Some("ls | wc")),
            (
                "/bin/zsh -lc \"python3 - <<'PY'\nx\nPY\"",
                Some("python3 - <<'PY'\nx\nPY"),
            ),
            ("sh -c \"a \\\"b\\\" \\\\ \\x\"", Some("a \"b\" \\ \\x")),
            ("bash -l -c 'x' 2>&1", Some("x")),
            ("bash -euo pipefail -c 'x' > log", Some("x")),
            ("bash --login -c 'x' </dev/null", Some("x")),
            ("dash -ec \"a\\\nb\"", Some("ab")),
            // The outer shell expands these before the script exists.
            ("bash -c \"echo $HOME\"", None),
            ("bash -c \"`x`\"", None),
            // Words after the script are its $0 and arguments.
            ("bash -c 'x' y", None),
            ("bash -c 'x' >", None),
            ("bash -c 'a''b'", None),
            ("bash -c 'a'b", None),
            ("bash -c x", None),
            ("bash -l 'x'", None),
            ("bash -s 'x'", None),
            ("bash -o posix -c 'x'", None),
            ("bash --rcfile f -c 'x'", None),
            ("bash -c 'x", None),
            ("fish -c 'x'", None),
            ("bash -sc 'x'", None),
            ("bash - -c 'x'", None),
            // Single quotes take `$` and `\\` as they are.
            ("bash -c 'echo $HOME'", Some("echo $HOME")),
            ("bash -c 'a\\$b'", Some("a\\$b")),
            ("bash -c 'a\\' >&2", Some("a\\")),
            ("bashx -c 'x'", None),
        ] {
            assert_eq!(shell_script(part).as_deref(), want, "{part:?}");
        }
    }
}
