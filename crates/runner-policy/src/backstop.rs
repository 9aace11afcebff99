//! Backstops: the walls behind deny rules that do not depend on the
//! analysis seeing what a command does.
//!
//! A run can hold three (see the runner's `workspace::isolate`,
//! `run::denied_changes` and `contain::sandbox`):
//!
//! - **reads**: what the policy denies reading is not in the agent's copy,
//!   and the original workspace is unreadable to commands. It does not
//!   hold for a tracked file (git's object store still has it) or without
//!   Landlock.
//! - **edits**: after the agent stops, a change to a path the policy
//!   denies editing is reverted and fails the task. Every run holds it.
//! - **confinement**: Landlock lets commands write only in the copy and
//!   their temp folder, and `no_new_privs` keeps `sudo` from gaining
//!   anything; with **network off**, no command reaches the network.
//! - **exec**: the runner's supervisor decides every exec of a command on
//!   its real argv against the `Bash` deny rules, so a program deny rule
//!   (`Bash(git push:*)`) holds whatever starts the program.
//!
//! When every deny rule of every layer has its backstop, the analysis need
//! not refuse what it cannot see into (inline code, a script too complex to
//! check): whatever the code does, what the rules deny cannot happen or
//! cannot leave the copy. So an opaque command is then decided like any
//! other by the allow rules and the default, and a recursive read is
//! decided by its folder alone. Where some deny rule has no backstop, the
//! analysis stays the only wall and decides as before.

use crate::policy::Policy;
use crate::signature::Family;
use crate::words::split_words;

/// Which backstops hold in this run. The default (none) is what `runner
/// check` and a policy alone assume. In the transcript, so that `runner
/// replay` decides again as the run did.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(default)]
pub struct Backstops {
    /// Read-denied files are absent from the copy and unreadable in the
    /// original (and none of them is tracked by git).
    pub reads: bool,
    /// Changes to edit-denied paths are reverted on the result.
    pub edits: bool,
    /// Commands write only in the copy and their temp folder, and cannot
    /// gain privileges.
    pub confined: bool,
    /// Commands have no network.
    pub network_off: bool,
    /// Every exec of a command is decided on its real argv against the
    /// `Bash` deny rules (the runner's supervisor): a program deny rule
    /// holds whatever code starts the program.
    pub exec: bool,
}

/// Programs that run another program their words name: an allow rule for
/// one of them does not cover what it runs (the analysis decides that
/// program on its own when it can see it).
const RUNS_OTHERS: &[&str] = &[
    "xargs", "env", "sudo", "doas", "su", "runuser", "timeout", "nice", "ionice", "chrt", "stdbuf",
    "nohup", "setsid", "builtin", "exec", "time", "command", "unbuffer", "find", "watch", "eval",
    "trap", "source", ".", "parallel", "flock", "chroot", "unshare", "nsenter", "script", "expect",
    "strace", "ltrace", "gdb", "valgrind", "fakeroot", "busybox", "sh", "bash", "dash", "zsh",
    "ksh", "mksh", "fish", "csh", "tcsh", "rbash", "ash", "yash",
];

/// Words that begin a compound command, not a program: a list holding one
/// is no plain list (`if x; then rm y; fi` runs `rm`, not `then`).
const KEYWORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "coproc", "[[", "]]",
];

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
/// (`-v`, `-R`).
fn runs_bash_code(part: &str) -> bool {
    let mut words = part.split_whitespace();
    let first = words.next().unwrap_or("");
    if !BUILTINS.contains(&first) {
        return false;
    }
    match first {
        "echo" | "true" | "false" | ":" | "pwd" => false,
        "printf" | "test" | "[" => words.any(|w| w.contains("-v") || w.contains("-R")),
        _ => true,
    }
}

/// The most simple commands an opaque list may have to be decided command
/// by command.
const MAX_COMMANDS: usize = 64;

/// The simple commands of `text` when it is a plain list of them (joined by
/// `|`, `&&`, `||`, `;`, `&` or newlines) whose opaque part is a
/// program's own code (`python3 -c "$SCRIPT"`, `sed 'e ...'`): no command
/// or process substitution, no subshell or group, no heredoc, no `$'...'`,
/// no assignment before a command, `${...}` only around a plain name, and
/// no program that runs others. Under backstops each must then be allowed
/// on its own (by the rule for its program, or the default); anything
/// else (`None`) only by the layer's default.
///
/// Where this reading and bash's could differ, it splits more (a `;` in a
/// comment, `$'\''`), never less: a command it splits off must be allowed
/// too.
pub fn simple_commands(text: &str) -> Option<Vec<&str>> {
    // Each command is matched against every rule: a list longer than a
    // script people write is left to the default (benches/gate.rs,
    // `opaque-list-backstops`).
    let (mut single, mut double, mut escaped) = (false, false, false);
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    let mut i = 0;
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
    for part in &parts {
        let first = part.split_whitespace().next()?;
        if first.contains('=') || first.contains(['\'', '"', '\\', '$', '*', '?', '[', '!', '#']) {
            return None;
        }
        let name = first.rsplit('/').next().unwrap_or(first);
        if RUNS_OTHERS.contains(&name) || KEYWORDS.contains(&first) || runs_bash_code(part) {
            return None;
        }
    }
    Some(parts)
}

/// Programs (first words) that do nothing without the network.
const NETWORK_PROGRAMS: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet",
    "ftp", "http", "https", "xh", "aria2c",
];

/// Subcommands that do nothing without the network.
const NETWORK_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &["push", "fetch", "pull", "clone", "ls-remote", "send-email"],
    ),
    ("cargo", &["publish", "yank", "owner", "login"]),
    (
        "npm",
        &["publish", "unpublish", "login", "adduser", "deprecate"],
    ),
    ("docker", &["push", "pull", "login"]),
    ("gh", &[]),
    ("twine", &["upload"]),
];

/// Programs that only raise privileges, which `no_new_privs` refuses.
const PRIVILEGE_PROGRAMS: &[&str] = &["sudo", "su", "doas", "pkexec", "runuser"];

impl Backstops {
    /// The first deny rule (`deny PATTERN`, with its layer) that has no
    /// backstop here; `None` when every one has. Without confinement no
    /// backstop counts (an opaque command could write anywhere), which the
    /// caller must check as well: with no deny rule, this is `None`.
    pub fn unbacked_deny(&self, layers: &[Policy]) -> Option<(String, String)> {
        for layer in layers {
            for rule in layer.rules.iter().filter(|r| !r.allow) {
                if !self.confined || !self.backs(rule.pattern.family, &rule.pattern.text) {
                    return Some((format!("deny {}", rule.pattern.text), layer.source.clone()));
                }
            }
        }
        None
    }

    /// Whether the deny rule `pattern` has a backstop here.
    pub fn backs_rule(&self, pattern: &crate::Pattern) -> bool {
        self.confined && self.backs(pattern.family, &pattern.text)
    }

    fn backs(&self, family: Family, text: &str) -> bool {
        match family {
            Family::Read => self.reads,
            Family::Edit => self.edits,
            Family::Bash if self.exec => true,
            Family::Bash => {
                let inner = text
                    .strip_prefix("Bash(")
                    .and_then(|t| t.strip_suffix(')'))
                    .unwrap_or("");
                let inner = inner.strip_suffix(":*").unwrap_or(inner);
                let words = split_words(inner);
                let first = words.first().map(|w| w.as_str()).unwrap_or("");
                if PRIVILEGE_PROGRAMS.contains(&first) {
                    return true;
                }
                self.network_off
                    && (NETWORK_PROGRAMS.contains(&first)
                        || NETWORK_SUBCOMMANDS.iter().any(|(p, subs)| {
                            *p == first
                                && (subs.is_empty()
                                    || words.get(1).is_some_and(|s| subs.contains(&s.as_str())))
                        }))
            }
            // Calls of other kinds are not made by commands: an opaque
            // command cannot call an MCP tool of the run or save a memory.
            Family::Memory | Family::Mcp | Family::Tool | Family::Fetch | Family::Agent => true,
        }
    }

    /// How the reason names the backstops that held.
    pub fn describe(&self) -> &'static str {
        "every deny rule has a backstop in this task (read-denied files are not in the copy, edit-denied changes are reverted on the result, commands write only in the copy and the network rules hold by the sandbox)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_policy_yaml;

    fn layer(yaml: &str) -> Policy {
        parse_policy_yaml(yaml, std::path::Path::new("p.yaml")).unwrap()
    }

    #[test]
    fn plain_lists_of_commands_and_their_own_code() {
        let some = |v: &[&'static str]| Some(v.to_vec());
        for (text, want) in [
            (
                "python3 -c \"print(1); import os\"",
                some(&["python3 -c \"print(1); import os\""]),
            ),
            ("sed 's/x/y/e' src/a", some(&["sed 's/x/y/e' src/a"])),
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
            ("python3 <<EOF\nx\nEOF", None),
            ("(python3 -c x)", None),
            ("{ python3 -c x; }", None),
            ("A=1 python3 -c x", None),
            ("bash -c 'rm -rf /'", None),
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
            (&"a;".repeat(64), Some(vec!["a"; 64])),
            (&"a;".repeat(65), None),
        ] {
            assert_eq!(simple_commands(text), want, "{text:?}");
        }
    }

    #[test]
    fn each_deny_needs_its_own_backstop() {
        let all = Backstops {
            reads: true,
            edits: true,
            confined: true,
            network_off: true,
            exec: false,
        };
        let p = layer(
            "default: allow\nrules:\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\", \"Bash(git push:*)\", \"Bash(sudo:*)\", \"Bash(curl:*)\"]\n",
        );
        assert_eq!(all.unbacked_deny(std::slice::from_ref(&p)), None);
        let network_on = Backstops {
            network_off: false,
            ..all
        };
        assert_eq!(
            network_on
                .unbacked_deny(std::slice::from_ref(&p))
                .unwrap()
                .0,
            "deny Bash(git push:*)"
        );
        // The supervisor's exec wall backs every program deny rule, with
        // the network on too, and only under confinement.
        let supervised = Backstops {
            exec: true,
            ..network_on
        };
        assert_eq!(supervised.unbacked_deny(std::slice::from_ref(&p)), None);
        let rm = layer("default: allow\nrules:\n  - deny: [\"Bash(rm -rf /:*)\"]\n");
        assert_eq!(supervised.unbacked_deny(std::slice::from_ref(&rm)), None);
        assert!(
            Backstops {
                confined: false,
                ..supervised
            }
            .unbacked_deny(std::slice::from_ref(&rm))
            .is_some()
        );
        let tracked = Backstops {
            reads: false,
            ..all
        };
        assert_eq!(
            tracked.unbacked_deny(std::slice::from_ref(&p)).unwrap().0,
            "deny Read(.env)"
        );
        let unconfined = Backstops {
            confined: false,
            ..all
        };
        assert!(unconfined.unbacked_deny(std::slice::from_ref(&p)).is_some());
        let rm = layer("default: allow\nrules:\n  - deny: [\"Bash(rm:*)\"]\n");
        assert_eq!(all.unbacked_deny(&[rm]).unwrap().0, "deny Bash(rm:*)");
        let none = layer("default: allow\n");
        assert_eq!(
            Backstops {
                confined: true,
                ..Default::default()
            }
            .unbacked_deny(&[none]),
            None
        );
    }
}
