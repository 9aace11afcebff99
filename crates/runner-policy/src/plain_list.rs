//! Plain lists of simple commands: how a script the analysis cannot see
//! into is decided under backstops (see [`crate::backstop`]).
//!
//! When every deny rule has its backstop, an opaque script is decided
//! command by command if it is a plain list (`python3 -c "$S" | tee log`,
//! `python3 <<'EOF' ... EOF`): each command must be allowed on its own, by
//! the rule for its program or the default. This text-level reading is
//! deliberately narrower than bash's: where they could differ it splits
//! more, or gives up (`None`, and the default alone decides).

use std::borrow::Cow;

mod command;
mod wrapped;

pub use command::is_shell_word;
use command::{plain_command, without_assignments};
use wrapped::{shell_script, timeout_command};

/// The most simple commands an opaque list may have to be decided command
/// by command.
const MAX_COMMANDS: usize = 64;

/// The simple commands of `text` when it is a plain list of them (joined by
/// `|`, `&&`, `||`, `;`, `&` or newlines) whose opaque part is a
/// program's own code (`python3 -c "$SCRIPT"`, `python3 <<'EOF'`, `sed 'e
/// ...'`): no command or process substitution, no subshell or group, no
/// heredoc but as a program's stdin (its body is data, not split), no `$'...'`,
/// no assignment before a command but a harmless one (dropped: `A=1 cmd`
/// is `cmd`), `${...}` only around a plain name, and no program that runs
/// others but `timeout` (whose program is listed too) and a shell's `-c`
/// script (whose commands are listed too, read as a plain list in turn;
/// see [`wrapped`]). `cd` runs nothing and is left out. Under backstops each must then be allowed on its own
/// (by the rule for its program, or the default); anything else (`None`)
/// only by the layer's default.
///
/// Where this reading and bash's could differ, it splits more (a `;` in a
/// comment, `$'\''`), never less: a command it splits off must be allowed
/// too.
pub fn simple_commands(text: &str) -> Option<Vec<Cow<'_, str>>> {
    commands_of(text, 0)
}

/// How deep shells' scripts are read (`bash -c "sh -c 'x'"` is 2).
const MAX_DEPTH: usize = 3;

/// [`simple_commands`] of a script read `depth` shells deep.
fn commands_of(text: &str, depth: usize) -> Option<Vec<Cow<'_, str>>> {
    // Each command is matched against every rule: a list longer than a
    // script people write is left to the default (benches/gate.rs,
    // `opaque-list-backstops`).
    let (mut single, mut double, mut escaped) = (false, false, false);
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
    // Heredocs whose bodies start after the current line.
    let mut pending: Vec<(Vec<u8>, bool, bool)> = Vec::new();
    while i < bytes.len() {
        let b = bytes[i];
        let next = bytes.get(i + 1).copied();
        if escaped {
            escaped = false;
            i += 1;
            continue;
        }
        match b {
            b'\\' if !single => escaped = true,
            b'\'' if !double => {
                if !single && i > 0 && bytes[i - 1] == b'$' {
                    return None;
                }
                single = !single;
            }
            b'"' if !single => double = !double,
            b'`' if !single => return None,
            b'$' if !single && next == Some(b'(') => return None,
            b'$' if !single && next == Some(b'{') => {
                let close = text[i + 2..].find('}')? + i + 2;
                let name = &text[i + 2..close];
                if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                {
                    return None;
                }
                i = close;
            }
            _ if single || double => {}
            b'<' if next == Some(b'<') && bytes.get(i + 2) != Some(&b'<') => {
                // A heredoc: its body, read at the end of the line, is the
                // program's stdin (`python3 <<'EOF'`: its own code).
                let strip = bytes.get(i + 2) == Some(&b'-');
                let mut j = i + if strip { 3 } else { 2 };
                while matches!(bytes.get(j), Some(b' ' | b'\t')) {
                    j += 1;
                }
                let (word, quoted, end) = crate::shell::heredoc_delimiter(bytes, j)?;
                pending.push((word, strip, quoted));
                i = end;
                continue;
            }
            b'\n' if !pending.is_empty() => {
                parts.push(&text[start..i]);
                i += 1;
                for (word, strip, quoted) in pending.drain(..) {
                    let body_start = i;
                    i = crate::shell::heredoc_body_end(bytes, i, &word, strip, quoted)?.next;
                    // Bash runs the substitutions of an unquoted body.
                    if !quoted && crate::shell::expands_code(&text[body_start..i]) {
                        return None;
                    }
                }
                start = i;
                continue;
            }
            b'(' | b')' | b'{' | b'}' => return None,
            b'<' | b'>' if matches!(next, Some(b'(' | b'<')) => return None,
            b'&' if next == Some(b'>') || (i > 0 && bytes[i - 1] == b'>') => {}
            b'|' | b'&' | b';' | b'\n' | b'\r' => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if single || double || escaped {
        return None;
    }
    parts.push(&text[start..]);
    let parts: Vec<&str> = parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() || parts.len() > MAX_COMMANDS {
        return None;
    }
    let mut commands = Vec::with_capacity(parts.len());
    for part in parts {
        let command = without_assignments(part)?;
        // `timeout 10 python3 -c x`: the rule for `timeout` and the one for
        // what it runs must both allow it.
        let inner = timeout_command(command);
        // `bash -lc 'cd /w && pytest'`: the rule for the shell and those
        // for each command of its script.
        let script = match inner {
            None if depth < MAX_DEPTH => shell_script(command),
            _ => None,
        };
        plain_command(command, inner.is_some() || script.is_some())?;
        // `cd DIR` runs nothing: as in the analysis, no rule need allow it.
        if command.split_whitespace().next() == Some("cd") {
            continue;
        }
        commands.push(Cow::Borrowed(command));
        if let Some(inner) = inner {
            plain_command(inner, false)?;
            commands.push(Cow::Borrowed(inner));
        }
        if let Some(script) = script {
            let listed = commands_of(&script, depth + 1)?;
            commands.extend(listed.into_iter().map(|c| Cow::Owned(c.into_owned())));
        }
    }
    if commands.is_empty() || commands.len() > MAX_COMMANDS {
        return None;
    }
    Some(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lists_of_commands_and_their_own_code() {
        let some = |v: &[&'static str]| Some(v.to_vec());
        for (text, want) in [
            (
                "python3 -c \"print(1); import os\"",
                some(&["python3 -c \"print(1); import os\""]),
            ),
            ("sed 's/x/y/e' src/a", some(&["sed 's/x/y/e' src/a"])),
            // A redirection glued to the program's word: bash's word ends
            // there, this reading's does not, so it gives up.
            ("python3<<EOF\nprint(1)\nEOF", None),
            ("cat>out x", None),
            ("node -e 'a|b; c>d'", some(&["node -e 'a|b; c>d'"])),
            (
                "cargo metadata | python3 -c \"$S\"",
                some(&["cargo metadata", "python3 -c \"$S\""]),
            ),
            ("rm -rf \"${x}\"", some(&["rm -rf \"${x}\""])),
            (
                "python3 -c x 2>&1 | tee log",
                some(&["python3 -c x 2>&1", "tee log"]),
            ),
            (
                "python3 -c x &> log && ls",
                some(&["python3 -c x &> log", "ls"]),
            ),
            (
                "python3 -c x & rm -rf y",
                some(&["python3 -c x", "rm -rf y"]),
            ),
            ("a\nb;c||d", some(&["a", "b", "c", "d"])),
            ("ls | xargs rm", None),
            ("xargs -a list rm", None),
            ("python3 -c \"$(cat x)\"", None),
            ("python3 -c `cat x`", None),
            ("python3 -c \"${x@P}\"", None),
            ("python3 $'a\\' ; rm x'", None),
            ("python3 <(cat x)", None),
            // A heredoc on a program's stdin is its own code, not split.
            (
                "python3 <<'EOF'\nimport os; os.system('x') | y\nEOF\nls",
                some(&["python3 <<'EOF'", "ls"]),
            ),
            ("python3 <<EOF\nx; $HOME\nEOF", some(&["python3 <<EOF"])),
            ("node <<-X >out\n\ta;b\n\tX", some(&["node <<-X >out"])),
            // Left open, it ends at the end.
            ("python3 <<'EOF'\nx;y", some(&["python3 <<'EOF'"])),
            (
                "python3 <<A; ruby <<'B'\na\nA\nb;c\nB\nls",
                some(&["python3 <<A", "ruby <<'B'", "ls"]),
            ),
            // An unquoted body runs its substitutions in the outer shell.
            ("python3 <<EOF\n$(rm x)\nEOF", None),
            ("python3 <<EOF\n`rm x`\nEOF", None),
            ("python3 <<EOF\na\\\nEOF\nrm x\nEOF", None),
            ("python3 <<$X\nx\n$X", None),
            ("(python3 -c x)", None),
            ("{ python3 -c x; }", None),
            ("A=1 python3 -c x", some(&["python3 -c x"])),
            (
                "cd /w && DJANGO_SETTINGS_MODULE=a.b python3 -c x",
                some(&["python3 -c x"]),
            ),
            ("cd /w", None),
            ("cd $(rm x) && python3 -c x", None),
            ("PATH=/tmp python3 -c x", None),
            ("LD_PRELOAD=/tmp/x.so python3 -c x", None),
            ("CC=x make", None),
            ("A=$B python3 -c x", None),
            ("A='1 2' python3 -c x", None),
            ("A=1", None),
            (
                "timeout 10 python3 -c x || echo $?",
                some(&["timeout 10 python3 -c x", "python3 -c x", "echo $?"]),
            ),
            (
                "timeout -s KILL --foreground 2.5m node -e x",
                some(&["timeout -s KILL --foreground 2.5m node -e x", "node -e x"]),
            ),
            ("timeout 10 bash -c x", None),
            ("timeout 10 xargs rm", None),
            ("timeout $T python3 -c x", None),
            ("timeout --bogus 10 python3 -c x", None),
            ("timeout 10", None),
            (
                "timeoutx 10 python3 -c x",
                some(&["timeoutx 10 python3 -c x"]),
            ),
            // A shell's script: the shell and each command of it.
            (
                "bash -c 'rm -rf /'",
                some(&["bash -c 'rm -rf /'", "rm -rf /"]),
            ),
            (
                "/bin/zsh -lc \"cd /w && python3 - <<'PY'\na;b\nPY\" 2>&1 | tail",
                some(&[
                    "/bin/zsh -lc \"cd /w && python3 - <<'PY'\na;b\nPY\" 2>&1",
                    "python3 - <<'PY'",
                    "tail",
                ]),
            ),
            (
                "bash -c \"sh -c 'git push'\"",
                some(&[
                    "bash -c \"sh -c 'git push'\"",
                    "sh -c 'git push'",
                    "git push",
                ]),
            ),
            ("bash -c 'xargs rm'", None),
            ("bash -c 'a $(b)'", None),
            ("bash -c 'x' y", None),
            ("bash -c \"$S\"", None),
            ("timeout 5 bash -c 'x'", None),
            (
                r#"bash -c "bash -c \"bash -c 'y'\"""#,
                some(&[
                    r#"bash -c "bash -c \"bash -c 'y'\"""#,
                    r#"bash -c "bash -c 'y'""#,
                    "bash -c 'y'",
                    "y",
                ]),
            ),
            // Three shells deep at most.
            (r#"bash -c "bash -c \"bash -c \\\"bash -c 'y'\\\"\"""#, None),
            ("/usr/bin/env python3 -c x", None),
            ("python3 -c 'x", None),
            ("$P -c x", None),
            ("! python3 -c x", None),
            ("if python3 -c x; then rm y; fi", None),
            ("let 'a[$(touch p)]'", None),
            ("printf -v 'a[$(touch p)]' x", None),
            ("test -v 'a[$(touch p)]'", None),
            ("hash -p /bin/rm ls; ls", None),
            (
                "echo x | python3 -c \"$S\"",
                some(&["echo x", "python3 -c \"$S\""]),
            ),
            ("for f in a; do rm $f; done", None),
            // Activation: a file's code, decided by the rule naming it.
            (
                "source .venv/bin/activate && pytest -q",
                some(&["source .venv/bin/activate", "pytest -q"]),
            ),
            (
                ". venv/bin/activate; pip list",
                some(&[". venv/bin/activate", "pip list"]),
            ),
            (&"a;".repeat(64), Some(vec!["a"; 64])),
            (&"a;".repeat(65), None),
            // 65 parts, 64 commands: the parts are bounded too.
            (&format!("cd a;{}", "a;".repeat(64)), None),
            // Quotes, escapes and `$'...'` as bash reads them (mutants).
            (
                "printf '%s' x | python3 -c y",
                some(&["printf '%s' x", "python3 -c y"]),
            ),
            ("echo a\\;b", some(&["echo a\\;b"])),
            (
                "python3 -c 'a\\' ; rm x",
                some(&["python3 -c 'a\\'", "rm x"]),
            ),
            ("echo \\\" ; rm x", some(&["echo \\\"", "rm x"])),
            ("echo \"it's\" ; rm x", some(&["echo \"it's\"", "rm x"])),
            ("echo 'a\"b' ; rm x", some(&["echo 'a\"b'", "rm x"])),
            ("echo 'a`b'", some(&["echo 'a`b'"])),
            ("echo $'a'", None),
            ("'ls'", None),
            ("& ls", some(&["ls"])),
            ("python3 -c \"x", None),
            ("ls \\", None),
            ("cat <<< x", None),
            // Heredocs: a lone `<` is none; a space before the word, `<<-`.
            (
                "python3 -c x < in.txt\nrm y",
                some(&["python3 -c x < in.txt", "rm y"]),
            ),
            ("a <b<<A\nx\nA", some(&["a <b<<A"])),
            ("cat <<A <b\nx\nA", some(&["cat <<A <b"])),
            (
                "python3 << EOF\nx\nEOF\nrm y",
                some(&["python3 << EOF", "rm y"]),
            ),
            ("node <<-X\n\ta\n\tX\nrm y", some(&["node <<-X", "rm y"])),
            ("cat <<F\nx\nF", some(&["cat <<F"])),
            // An empty word (`<<''`) is refused, not read.
            ("cat <<''\nx\n\nrm y", None),
            // Assignments and durations that are not plain.
            ("=x python3 -c y", None),
            ("1A=x python3 -c y", None),
            ("timeout s python3 -c x", None),
            ("timeout 5ss python3 -c x", None),
            ("timeout x python3 -c y", None),
            (
                "timeout 5s python3 -c x",
                some(&["timeout 5s python3 -c x", "python3 -c x"]),
            ),
        ] {
            let got = simple_commands(text);
            let got: Option<Vec<&str>> =
                got.as_ref().map(|v| v.iter().map(|c| c.as_ref()).collect());
            assert_eq!(got, want, "{text:?}");
        }
    }
}
