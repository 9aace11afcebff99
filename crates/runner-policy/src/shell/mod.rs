//! Shell analysis: every simple command a bash script would run.
//!
//! A script is parsed with a real bash grammar (brush-parser) and walked in
//! full: lists, pipelines, subshells, groups, `if`/`for`/`while`/`case`,
//! function bodies, `$(...)`, backticks, process substitutions, heredocs and
//! here-strings. Wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`,
//! `bash -c`, `eval` ...) are unwrapped so the wrapped command is checked as
//! well as the wrapper. Redirections that write become `Edit(path)`, those
//! that read and the file operands of well-known readers become `Read(path)`.
//!
//! Whatever cannot be known before running (a command word built from a
//! variable or substitution, a glob or brace in the command word, `source`,
//! a syntax error, a risky assignment such as `PATH=`, an interpreter reading
//! its script from stdin) makes the whole script *opaque*: one signature that
//! only a rule naming the exact text can allow. When unsure, deny.

mod analysis;
mod arith;
mod budget;
mod builtins;
mod expand;
mod folders;
mod heredoc;
mod parse;
mod redirect;
mod shells;
mod state;
mod variables;
mod walk;
mod word;
mod wrappers;

pub use analysis::{PathUse, ShellAnalysis, SimpleCommand};
pub use budget::{MAX_NESTING, MAX_SIGNATURES};
pub use heredoc::MAX_DATA_CHARS;
pub(crate) use heredoc::{body_end as heredoc_body_end, delimiter as heredoc_delimiter};
pub(crate) use redirect::expands_code;
pub use state::MAX_SCRIPT_CHARS;
use state::Walker;
pub(crate) use variables::{is_risky_variable, names_a_program};
pub(crate) use wrappers::{SCRIPT_STEPS, TIMEOUT_VALUE_OPTIONS};

/// Analyses a bash script.
pub fn analyze(script: &str) -> ShellAnalysis {
    let mut w = Walker::new(script);
    if script.len() > MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS {
        w.opaque(format!(
            "the script is longer than {} characters",
            MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS
        ));
        return w.out;
    }
    w.script(script);
    w.check_evaluated();
    if w.glob_options && w.glob_operand {
        w.opaque("`shopt` changes how globs match, and the script has glob operands");
    }
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands of a script the analysis must see into.
    pub(super) fn cmds(s: &str) -> Vec<String> {
        let a = analyze(s);
        assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
        a.commands.iter().map(|c| c.words.join(" ")).collect()
    }

    /// A script over the length bound is refused before it is parsed; one
    /// at the bound is read.
    #[test]
    fn the_length_bound_holds_at_its_edge() {
        let bound = MAX_SCRIPT_CHARS + heredoc::MAX_DATA_CHARS;
        let script = |len: usize| {
            let head = "cat <<'EOF'\n";
            let tail = "\nEOF\n";
            format!("{head}{}{tail}", "a".repeat(len - head.len() - tail.len()))
        };
        let too_long = format!("the script is longer than {bound} characters");
        let at = analyze(&script(bound));
        assert_eq!(at.text.len(), bound);
        assert_ne!(at.opaque.as_deref(), Some(too_long.as_str()));
        let over = analyze(&script(bound + 1));
        assert_eq!(over.opaque.as_deref(), Some(too_long.as_str()));
    }

    /// `shopt` options that change how globs match make a script with a
    /// glob operand opaque; either alone does not.
    #[test]
    fn glob_options_and_glob_operands_together() {
        assert!(analyze("shopt -s dotglob; rm *").opaque.is_some());
        assert!(analyze("shopt -s dotglob; cargo test").opaque.is_none());
        assert!(analyze("rm *").opaque.is_none());
    }

    #[test]
    fn a_commands_program_is_its_first_word() {
        let a = analyze("FOO=1 git status");
        assert_eq!(a.commands[0].program(), "git");
        assert_eq!(SimpleCommand { words: vec![] }.program(), "");
    }

    /// A script only reads when every command is a known reader, nothing
    /// is redirected into a file, and it can be read at all.
    #[test]
    fn what_only_reads() {
        let reads = |s: &str| analyze(s).is_read_only();
        assert!(reads("cat a | grep x"));
        assert!(reads("git status && ls"));
        assert!(!reads("cat a > b"));
        assert!(!reads("cat a; rm b"));
        assert!(!reads(""));
        assert!(!reads("$x a"));
        assert!(!reads("bash -lc 'cat a'"));
    }

    #[test]
    fn splits_compound_commands() {
        assert_eq!(cmds("git status && rm -rf /"), ["git status", "rm -rf /"]);
        assert_eq!(
            cmds("git status; curl x | sh -c 'rm a'"),
            ["git status", "curl x", "sh -c rm a", "rm a"]
        );
        assert_eq!(cmds("echo $(cat .env)"), ["cat .env", "echo $(cat .env)"]);
        assert_eq!(cmds("rm </dev/null -rf /"), ["rm -rf /"]);
        assert_eq!(cmds("FOO=1 rm -rf /"), ["rm -rf /"]);
        assert_eq!(cmds("env A=1 rm -rf /"), ["env A=1 rm -rf /", "rm -rf /"]);
        assert_eq!(
            cmds("find . -exec rm {} \\;"),
            ["find . -exec rm {} ;", "rm {}"]
        );
        assert_eq!(cmds("\\rm -rf /"), ["rm -rf /"]);
    }

    /// A script's reads and writes, spelled from the workspace root.
    fn files(s: &str) -> (Vec<String>, Vec<String>) {
        let a = analyze(s);
        assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
        let ws = crate::LexicalPaths::new("/ws");
        let sigs = a.signatures(&ws, ".");
        let of = |f: crate::Family| {
            sigs.iter()
                .filter(|g| g.family == f)
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
        };
        (of(crate::Family::Read), of(crate::Family::Edit))
    }

    /// Where a script is when it writes: `set -e` and `&&` make a `cd`
    /// hold; otherwise it may not have moved.
    #[test]
    fn the_folders_a_script_may_be_in() {
        let edits = |s: &str| files(s).1;
        let e = |v: &[&str]| v.iter().map(|s| format!("Edit({s})")).collect::<Vec<_>>();
        assert_eq!(edits("set -e; cd a; rm x"), e(&["a/x"]));
        assert_eq!(edits("set -o errexit; cd a; rm x"), e(&["a/x"]));
        assert_eq!(edits("set -eo pipefail; cd a; rm x"), e(&["a/x"]));
        assert_eq!(edits("set -uo errexit; cd a; rm x"), e(&["a/x"]));
        assert_eq!(edits("cd a && rm x"), e(&["a/x"]));
        // Not under errexit: `set +e`, `set -- -e` (that is `$1`), `set
        // x -e`, `set --e` (refused), `set -u`, a `set -e` in a block.
        for s in [
            "set -e; set +e; cd a; rm x",
            "set -e; set +o errexit; cd a; rm x",
            "set -- -e; cd a; rm x",
            "set - -e; cd a; rm x",
            "set x -e; cd a; rm x",
            "set --e; cd a; rm x",
            "set -u; cd a; rm x",
            "set -o pipefail errexit; cd a; rm x",
            "if true; then set -e; fi; cd a; rm x",
            "cd a; rm x",
            // A `cd` with an assignment before it is no lone `cd`.
            "FOO=1 cd a && rm x",
        ] {
            assert_eq!(edits(s), e(&["x", "a/x"]), "{s}");
        }
        // `cd DIR || true` doubles the folders, up to a bound.
        let cds = |n: usize| {
            let mut s: String = (0..n).map(|k| format!("cd d{k} || true; ")).collect();
            s.push_str("rm x");
            s
        };
        assert_eq!(edits(&cds(6)).len(), 64);
        assert!(analyze(&cds(7)).opaque.is_some());
        // `cd`'s options are not its folder.
        assert_eq!(edits("cd -P a && rm x"), e(&["a/x"]));
        assert_eq!(edits("cd /abs && rm x"), e(&["/abs/x"]));
    }

    /// A `cd` to a folder only known at run time, or `cd -`, leaves the
    /// folder unknown: a relative path is then no path the rules can see.
    #[test]
    fn an_unknown_folder() {
        for s in ["cd $d; rm x", "cd -; rm x", "cd; rm x", "cd -P; rm x"] {
            assert!(analyze(s).opaque.is_some(), "{s}");
            // Without a relative path the folder does not matter.
            let quiet = s.replace("rm x", "rm /tmp/x");
            assert_eq!(analyze(&quiet).opaque, None, "{quiet}");
        }
    }

    /// Redirections: what they read and write, and what makes them opaque.
    #[test]
    fn redirections_read_and_write() {
        let edits = |s: &str| files(s).1;
        let reads = |s: &str| files(s).0;
        assert_eq!(reads("cat - a"), ["Read(a)"]);
        assert_eq!(edits("echo x >&out"), ["Edit(out)"]);
        assert_eq!(edits("echo x >&2"), Vec::<String>::new());
        assert_eq!(edits("echo x >&-"), Vec::<String>::new());
        assert_eq!(edits("echo x 2>&1 >/dev/null"), Vec::<String>::new());
        assert_eq!(
            edits("echo x >/dev/fd/2 >/dev/stderr"),
            Vec::<String>::new()
        );
        assert_eq!(edits("echo x >/dev/fdx"), ["Edit(/dev/fdx)"]);
        for body in ["$(x)", "${x}", "$[1]", "`x`"] {
            assert!(expands_code(body), "{body}");
        }
        assert!(!expands_code("$x and $y"));
        assert_eq!(edits("echo x &>log"), ["Edit(log)"]);
        let why = |s: &str| analyze(s).opaque.unwrap_or_default();
        for (s, path) in [
            ("echo x > $f", "$f"),
            ("echo x > *.txt", "*.txt"),
            ("echo x &> $f", "$f"),
            ("echo x &> *.log", "*.log"),
        ] {
            assert_eq!(
                why(s),
                format!("it writes to `{path}`, a path only known when the script runs"),
                "{s}"
            );
        }
        assert_eq!(
            why("cat < $f"),
            "it reads from `$f`, a path only known when the script runs"
        );
        assert_eq!(
            why("echo x >& $f"),
            "a redirection to a target only known when the script runs"
        );
        // A quoted heredoc is data: nothing in it runs.
        assert_eq!(cmds("cat <<'EOF'\n$(rm x)\nEOF"), ["cat"]);
        assert_eq!(cmds("cat <<EOF\n$(rm x)\nEOF"), ["rm x", "cat"]);
    }

    /// Each file a script names is a signature per folder it may be in:
    /// past the bound, the script is opaque.
    #[test]
    fn the_bound_on_files_named() {
        let script = |files: usize| {
            let mut s: String = (0..6).map(|k| format!("cd d{k} || true; ")).collect();
            s.push_str("cat");
            for f in 0..files {
                s.push_str(&format!(" f{f}"));
            }
            s
        };
        // 64 folders times 64 files is the bound.
        assert_eq!(analyze(&script(64)).opaque, None);
        assert_eq!(
            analyze(&script(65)).opaque.as_deref(),
            Some("too complex to check safely (it names more than 4096 files and folders)")
        );
    }

    /// Scripts nested in scripts, up to a depth; siblings do not add up.
    #[test]
    fn nesting_depth_of_scripts() {
        let deep = |n: usize| format!("{}true", "eval ".repeat(n));
        let too_deep = Some("commands nested too deeply to check");
        let boundary = (1..40)
            .find(|&n| analyze(&deep(n)).opaque.as_deref() == too_deep)
            .expect("some depth is too deep");
        assert_eq!(boundary, state::MAX_DEPTH + 1);
        // Siblings each go one level down and come back.
        let siblings = vec!["eval true"; state::MAX_DEPTH + 2].join("; ");
        assert_eq!(analyze(&siblings).opaque, None);
        // A compound command's block ends too: `set -e` after it is at
        // the top.
        assert_eq!(
            files("if true; then :; fi; set -e; cd a; rm x").1,
            ["Edit(a/x)"]
        );
    }

    /// `((...))` read both as arithmetic and as a subshell where the two
    /// readings differ; `$((...))` likewise.
    #[test]
    fn arithmetic_read_both_ways() {
        let a = analyze("(( x == \")\" ))");
        assert!(
            a.commands.iter().any(|c| c.words.join(" ") == "x == )"),
            "{a:?}"
        );
        assert_eq!(
            analyze("(( $(id) == ')' ))").opaque.as_deref(),
            Some("a command substitution inside an arithmetic expression")
        );
        let a = analyze("echo $(( x == ')' ))");
        assert_eq!(a.opaque, None);
        assert!(
            a.commands.iter().any(|c| c.words.join(" ") == "x == )"),
            "{a:?}"
        );
        assert_eq!(
            analyze("echo $(( $(id) == ')' ))").opaque.as_deref(),
            Some("a command substitution inside an arithmetic expression")
        );
        assert_eq!(
            analyze("echo $[1+2]").opaque.as_deref(),
            Some("`$[1+2]` could not be read as bash reads it")
        );
    }

    /// Assignments: a program-naming variable is its command; a risky one
    /// with a value only known at run time is opaque; an array's values
    /// carry their origins.
    #[test]
    fn assignments_and_their_values() {
        assert!(cmds("CC=clang make").contains(&"clang".to_string()));
        let sets_cc = Some("it sets CC, which changes what commands run");
        assert_eq!(analyze("CC=$X make").opaque.as_deref(), sets_cc);
        assert_eq!(analyze("CC=*.sh make").opaque.as_deref(), sets_cc);
        assert!(analyze("a=($(cat f)); (( a ))").opaque.is_some());
        assert!(analyze("a=(*); (( a ))").opaque.is_some());
        assert_eq!(analyze("a=(1 2); (( a ))").opaque, None);
    }

    /// Process substitutions: walked, standing for a file name; glued to a
    /// word, bash makes one word of them, named at run time.
    #[test]
    fn process_substitutions() {
        assert_eq!(cmds("cat <(ls)"), ["ls", "cat <(...)"]);
        // A file operand named at run time: no path the rules can see.
        let rm = analyze("rm <(ls)");
        assert!(rm.writes.is_empty(), "{rm:?}");
        assert_eq!(files("cat <(ls)").0, Vec::<String>::new());
        let glued =
            Some("a process substitution glued to a word makes one word bash names at run time");
        assert_eq!(analyze("cat a<(ls)").opaque.as_deref(), glued);
        assert_eq!(analyze("cat <(ls)b").opaque.as_deref(), glued);
        assert_eq!(analyze("cat >(ls)b").opaque.as_deref(), glued);
        assert_eq!(analyze("cat <(ls) b").opaque, None);
        assert_eq!(analyze("A=1 cat <(ls) b").opaque, None);
        // Backquotes: the script inside, its escapes removed.
        assert!(cmds("echo `rm x`").contains(&"rm x".to_string()));
        assert!(cmds("echo `echo \\`rm y\\``").contains(&"rm y".to_string()));
    }

    /// Every wrapper's command is looked into, past the wrapper's options.
    #[test]
    fn each_wrapper_runs_its_command() {
        for s in [
            "sudo -u root rm x",
            "doas rm x",
            "timeout -s KILL 5 rm x",
            "nice -n 5 rm x",
            "ionice -c 3 rm x",
            "stdbuf -o L rm x",
            "nohup rm x",
            "setsid -f rm x",
            "builtin rm x",
            "exec -a name rm x",
            "time -p rm x",
            "command rm x",
            "unbuffer rm x",
            "/usr/bin/time -f %e -a -o log rm x",
            "/usr/bin/time --append --output=log rm x",
            "watch -n 1 rm x",
            "eval rm x",
            "eval 'rm x'",
            "trap 'rm x' EXIT",
            "trap -- 'rm x' EXIT",
        ] {
            assert!(cmds(s).contains(&"rm x".to_string()), "{s}: {:?}", cmds(s));
        }
        assert_eq!(cmds("trap -p"), ["trap -p"]);
        // `command -v/-V NAME` prints; `command -p` runs NAME.
        assert_eq!(cmds("command -v git; command -V git"), Vec::<String>::new());
        assert!(cmds("command -p rm x").contains(&"rm x".to_string()));
        assert!(cmds("sudo -- rm x").contains(&"rm x".to_string()));
        assert_eq!(cmds("sudo -n"), ["sudo -n"]);
        // `hash` without `-p` only remembers paths: part of the script.
        assert_eq!(cmds("hash git; hash -r; git status"), ["git status"]);
        assert!(cmds("xargs -0 echo hi").contains(&"echo hi".to_string()));
        assert_eq!(
            analyze("xargs -I{} echo {}").opaque.as_deref(),
            Some(
                "`xargs` gives `echo` words read when the script runs; which files they name cannot be checked"
            )
        );
        // `find -exec` without its `;` runs what follows to the end.
        assert!(
            analyze("find . -exec rm {}")
                .commands
                .iter()
                .any(|c| c.words == ["rm", "{}"])
        );
        // GNU time writes its `-o` file in every spelling.
        for s in [
            "/usr/bin/time -o log rm x",
            "/usr/bin/time -olog rm x",
            "/usr/bin/time --output log rm x",
            "/usr/bin/time --output=log -a rm x",
        ] {
            assert_eq!(files(s).1, ["Edit(log)", "Edit(x)"], "{s}");
        }
        assert_eq!(files("exec -a -ofile rm x").1, ["Edit(x)"]);
        for (s, why) in [
            ("sudo -s", "`sudo -s/-i` starts a shell"),
            ("sudo -i", "`sudo -s/-i` starts a shell"),
            ("doas --shell", "`doas -s/-i` starts a shell"),
            ("sudo --login", "`sudo -s/-i` starts a shell"),
            ("alias ls=rm", "`alias` changes what command names mean"),
            ("enable -n echo", "`enable` changes what command names mean"),
            (
                "hash -p /usr/bin/curl git; git x",
                "`hash -p` changes what command names mean",
            ),
            (
                "hash -rp /usr/bin/curl git",
                "`hash -p` changes what command names mean",
            ),
            ("python3 -u", "`python3` reads its program from stdin"),
        ] {
            assert_eq!(analyze(s).opaque.as_deref(), Some(why), "{s}");
        }
        assert_eq!(analyze("python3 -u x.py").opaque, None);
        // An exported program-naming variable is its command.
        assert!(cmds("export CC=clang; make").contains(&"clang".to_string()));
        assert!(analyze("export CC=$X").opaque.is_some());
        // An option only known at run time matters only to a program that
        // takes files.
        assert_eq!(analyze("echo -n$X").opaque, None);
    }

    /// env's options as getopt reads them: the command after them, and the
    /// folder `-C` moves it to, in every spelling.
    #[test]
    fn env_options_in_every_spelling() {
        for s in [
            "env -u HOME rm x",
            "env -uHOME rm x",
            "env --unset HOME rm x",
            "env --unset=HOME rm x",
            "env --u HOME rm x",
            "env -i A=1 rm x",
            "env -iu HOME rm x",
            "env - rm x",
            "env -- rm x",
            "env -a name rm x",
            "env --argv0=name rm x",
            "env -0v rm x",
        ] {
            assert_eq!(files(s).1, ["Edit(x)"], "{s}");
        }
        let moved = Some("it writes `x` after a `cd` to a folder not known before running");
        for s in [
            "env -C .github rm x",
            "env -C.github rm x",
            "env -iC.github rm x",
            "env -iC .github rm x",
            "env --chdir=.github rm x",
            "env --chdir .github rm x",
            "env --ch .github rm x",
        ] {
            assert_eq!(analyze(s).opaque.as_deref(), moved, "{s}");
        }
        let split = Some("`env -S` splits a string into a command");
        for s in [
            "env -S 'rm x'",
            "env -vS'rm x'",
            "env --split-string='rm x'",
            "env --sp 'rm x'",
        ] {
            assert_eq!(analyze(s).opaque.as_deref(), split, "{s}");
        }
        assert_eq!(
            analyze("env -P /tmp rm x").opaque.as_deref(),
            Some("`env -P` names the folders programs are found in")
        );
    }

    /// Wrappers around wrappers, up to a depth; a wrapped program named
    /// only at run time.
    #[test]
    fn wrappers_nested_and_named_at_run_time() {
        let wrapped = |n: usize| format!("{}true", "env ".repeat(n));
        let too_deep = Some("wrappers nested too deeply to check");
        let first = (1..40)
            .find(|&n| analyze(&wrapped(n)).opaque.as_deref() == too_deep)
            .expect("some depth is too deep");
        assert_eq!(first, state::MAX_DEPTH + 1);
        // Each wrapper counts.
        for w in [
            "sudo ",
            "timeout 1 ",
            "nice ",
            "stdbuf -o L ",
            "nohup ",
            "xargs ",
        ] {
            let n = state::MAX_DEPTH + 1;
            assert_eq!(
                analyze(&format!("{}true", w.repeat(n))).opaque.as_deref(),
                too_deep,
                "{w}"
            );
            assert_eq!(
                analyze(&format!("{}true", w.repeat(n - 1))).opaque,
                None,
                "{w}"
            );
        }
        assert_eq!(
            analyze("env $CMD").opaque.as_deref(),
            Some("the command word `$CMD` is only known when the script runs")
        );
        // A program whose name is the text `$x` (quoted) is that name.
        assert_eq!(analyze("'$x' a").opaque, None);
    }

    /// Text the word parser left alone: an expansion it could not read
    /// is still one to bash; a `$` at a word's end is a `$`.
    #[test]
    fn expansions_left_as_text() {
        let why = analyze("echo ${a[($x]}").opaque.unwrap_or_default();
        assert!(
            why.contains("holds an expansion the parser read as text"),
            "{why}"
        );
        assert_eq!(analyze("echo a$").opaque, None);
        assert_eq!(analyze("echo a$ b").opaque, None);
        // A name in literal text is a copy (`_` too), for arithmetic.
        assert!(analyze("read x; y=x; (( y ))").opaque.is_some());
        assert!(analyze("read _; y=_; (( y ))").opaque.is_some());
        assert_eq!(analyze("read x; y=1; (( y ))").opaque, None);
    }

    /// A loop variable bound to literal words gives each of its values.
    #[test]
    fn loop_variables_bound_to_words() {
        let edits = |s: &str| files(s).1;
        assert_eq!(
            edits("for f in a b; do rm src/${f}.rs; done"),
            ["Edit(src/a.rs)", "Edit(src/b.rs)"]
        );
        assert_eq!(edits("for f in a; do rm $f$f; done"), ["Edit(aa)"]);
        // Up to 64 values; past them, or with a substitution, the word
        // is not known.
        let eight = "1 2 3 4 5 6 7 8";
        assert_eq!(
            edits(&format!(
                "for f in {eight}; do for g in {eight}; do rm $f$g; done; done"
            ))
            .len(),
            64
        );
        assert!(
            analyze(&format!(
                "for f in {eight} 9; do for g in {eight}; do rm $f$g; done; done"
            ))
            .opaque
            .is_some()
        );
        assert!(
            analyze("for f in a; do rm \"$(echo x)$f\"; done")
                .opaque
                .is_some()
        );
        assert!(
            analyze("for f in a; do rm \"`echo x`$f\"; done")
                .opaque
                .is_some()
        );
    }

    #[test]
    fn ordinary_shell_is_read_as_ordinary() {
        // Builtins that change nothing outside the script are no programs.
        assert_eq!(cmds("set -euo pipefail; cargo test"), ["cargo test"]);
        assert_eq!(
            cmds("if [ -z \"$v\" ]; then echo empty; fi"),
            ["echo empty"]
        );
        assert_eq!(
            cmds(": ; true; shift; unset x; shopt -s nullglob; exit 0"),
            Vec::<String>::new()
        );
        assert_eq!(
            cmds("command -v cargo && cargo --version"),
            ["cargo --version"]
        );
        assert_eq!(cmds("IFS=, read -r a b <<< \"x,y\"; echo $a"), ["echo $a"]);
        assert!(cmds("python3 --version; node -v; bash --version").len() == 3);
        assert_eq!(
            cmds("RUSTFLAGS=\"--cfg tokio_unstable\" cargo test"),
            ["cargo test"]
        );
        assert_eq!(
            cmds("export PATH=$PATH:$(pwd)/target/release; mytool"),
            ["mytool"]
        );
        // `cd DIR && ...`: paths resolve from DIR only.
        assert_eq!(files("cd sub && echo x > ../f").1, ["Edit(f)"]);
        assert_eq!(files("set -e\ncd sub\necho x > ../f").1, ["Edit(f)"]);
        // Without a check, the script may still be where it was.
        assert_eq!(files("cd sub; echo x > ../f").1, ["Edit(/f)", "Edit(f)"]);
        // A subshell's `cd` does not outlast it.
        assert_eq!(files("(cd sub && make); cat ../x").0, ["Read(/x)"]);
        assert_eq!(files("cd sub && make | cd other; cat x").0, ["Read(sub/x)"]);
        // A loop over a literal list: the variable is each value.
        assert_eq!(
            files("for f in a b; do cat src/$f.rs; done").0,
            ["Read(src/a.rs)", "Read(src/b.rs)"]
        );
        assert!(
            analyze("for f in a b; do f=.env; cat $f; done")
                .opaque
                .is_some()
        );
    }

    #[test]
    fn a_script_cut_short_is_said_to_end_there() {
        // The parser sees the script with a newline of its own added (see
        // `ended`): its error is not placed on a line the script lacks.
        for s in ["echo $((1+(2)", "echo \"a", "$(<< ($("] {
            let why = analyze(s).opaque.expect("opaque");
            assert!(why.contains("(at the end of the script)"), "{s}: {why}");
            assert!(!why.contains("line 2"), "{s}: {why}");
        }
    }

    #[test]
    fn many_cds_stay_bounded_and_fail_closed() {
        // Each `cd` may double the folders; unbounded, 40 of them would
        // need 2^40 entries. Past the bound the folder is unknown.
        let script: Vec<String> = (0..40).map(|i| format!("cd d{i}")).collect();
        let a = analyze(&format!("{}; cat f", script.join("; ")));
        assert!(a.opaque.is_some(), "{a:?}");
        let a = analyze("cd a; cd b; cat f");
        assert!(a.opaque.is_none());
    }

    #[test]
    fn fails_closed() {
        for s in [
            "$X -rf /",
            "source x.sh",
            "PATH=/tmp git status",
            "bash <<EOF\n$CMD\nEOF",
            "bash <<EOF\n`x`\nEOF",
            "if then fi (",
            "{rm,-rf,/}",
            "/bin/r? -rf /",
            // Bash evaluates these values as code (see `arith`).
            "x='a[$(touch p)]'; (( x ))",
            "x=$(cat f); echo $(( x + 1 ))",
            "read x < f; [[ $x -eq 1 ]]",
            "x=$(cat f); echo ${!x}",
            "x=$(cat f); y=$x; echo ${a[y]}",
            "x='$(touch p)'; echo ${x@P}",
            "echo ${HOME@P}",
            "declare 'a[$(touch p)]=1'",
            "printf -v 'a[$(touch p)]' x",
            "read 'a[$(touch p)]' <<< x",
            "unset 'a[$(touch p)]'",
            "test -v 'a[$(touch p)]'",
            "[[ -v a[$(touch p)] ]]",
            "let 'a[$(touch p)]'",
            "declare -n r='a[$(touch p)]'; echo $r",
            "read -r n; declare -i x=n",
            "f() { echo $(( $1 )); }; f 1",
            "for x in $(cat f); do echo $(( x )); done",
            "shopt -s dotglob\ncat *",
            "python3 -v",
            "export PATH=$PWD/bin:$PATH",
            "RUSTFLAGS='-C linker=./x' cargo build",
            "for f in $(ls); do cat $f; done",
            // Assignments to what changes what runs, spelled as builtins.
            "printf -v PATH /tmp; git status",
            "read PATH <<< /tmp; git status",
            "declare -n r=PATH; r=/tmp; git status",
            "local -n r; r=PATH",
            "for PATH in /tmp; do git status; done",
            "unset PATH; : ${PATH:=/tmp}; git status",
            "mapfile -t LD_PRELOAD < f",
            // Past the budget.
            &format!("{}x{}", "( ".repeat(20), " )".repeat(20)),
            &format!("{} x;{}", "{ ".repeat(1_500), " }".repeat(1_500)),
            &"( (( (( (( (( (( (( (( ((".repeat(3),
        ] {
            assert!(analyze(s).opaque.is_some(), "{s}");
        }
    }

    /// Heredocs as bash reads them (issue 42): a shell's is its script, one
    /// left open ends at the end, a body is data however long (within its
    /// own cap), and the code around it keeps the script budget.
    #[test]
    fn heredocs_are_read_as_bash_reads_them() {
        assert_eq!(cmds("bash <<'EOF'\nrm -rf /\nEOF"), ["bash", "rm -rf /"]);
        assert_eq!(cmds("sh -s <<EOF\ngit push\nEOF\n"), ["sh -s", "git push"]);
        assert_eq!(
            cmds("timeout 9 bash <<'X'\ngit push $1\nX"),
            ["timeout 9 bash", "bash", "git push $1"]
        );
        // `bash -c` reads its script from the word; stdin is data to it.
        assert_eq!(
            cmds("bash -c 'cat' <<'EOF'\ngit push\nEOF"),
            ["bash -c cat", "cat"]
        );
        // A heredoc on another descriptor is no script.
        assert!(analyze("bash 3<<'EOF'\nls\nEOF").opaque.is_some());
        // `xargs` reads the heredoc itself: bash gets no script from it.
        assert!(
            !cmds_or_opaque("xargs bash <<'EOF'\ngit push\nEOF").contains(&"git push".to_string())
        );
        // Left open: it ends at the end, as bash ends it.
        assert_eq!(files("cat <<'EOF' > out.txt\nhello").1, ["Edit(out.txt)"]);
        assert_eq!(cmds("bash <<'EOF'\ngit push"), ["bash", "git push"]);
        assert_eq!(cmds("cat <<-EOF >a\n\tx\n\tEOF\nls"), ["cat", "ls"]);
        // A substitution in an unquoted body runs; a plain variable reads.
        assert_eq!(cmds("cat <<EOF > f\n$(git push)\nEOF"), ["git push", "cat"]);
        assert_eq!(cmds("cat <<EOF > f\nhome is $HOME\nEOF"), ["cat"]);
        // A body is data: far past the script budget, decided as the
        // `cat > path` it is.
        let body = "print(\"(x) {y}\")\n".repeat(50_000);
        assert!(body.len() > 10 * MAX_SCRIPT_CHARS);
        let big = format!("mkdir -p t && cat <<'EOF' > t/gen.py\n{body}EOF\npython3 t/gen.py");
        assert_eq!(files(&big).1, ["Edit(t)", "Edit(t/gen.py)"]);
        let open = format!("cat > t/gen.py <<'EOF'\n{body}");
        assert_eq!(files(&open).1, ["Edit(t/gen.py)"]);
        // Code past the budget is refused, bodies aside or not.
        let code = "echo hello world; ".repeat(MAX_SCRIPT_CHARS / 10);
        let why = analyze(&format!("{code}\ncat <<'EOF' > f\n{body}EOF\n"))
            .opaque
            .unwrap();
        assert!(why.contains("heredoc bodies aside"), "{why}");
        let huge = "x\n".repeat(MAX_DATA_CHARS / 2 + 1);
        let why = analyze(&format!("cat <<'EOF' > f\n{huge}EOF\n"))
            .opaque
            .unwrap();
        assert!(why.contains("heredoc bodies are longer"), "{why}");
        // Brackets nested deep in a body are data too.
        let deep = format!(
            "cat <<'EOF' > f.json\n{}1{}\nEOF\n",
            "[{".repeat(30),
            "}]".repeat(30)
        );
        assert_eq!(files(&deep).1, ["Edit(f.json)"]);
    }

    /// An option's value attached and only known at run time is read as
    /// the value apart (issue 42): a number or text is no path; a path or
    /// an option whose name is not written out stays strict.
    #[test]
    fn option_values_known_at_run_time() {
        for s in [
            "make -j$(nproc)",
            "make -j\"$(nproc)\" test",
            "make -j$((N + 1)) -l$(nproc)",
            "make -j$(expr $(nproc) + 1)",
            "cargo build --jobs=$(nproc)",
            "cargo test -j$(nproc) --release",
            "git tag --message=v\"$VERSION\" v1",
            "git commit --message=\"$MSG\"",
            "git commit -m\"$MSG\"",
        ] {
            assert!(analyze(s).opaque.is_none(), "{s}: {:?}", analyze(s).opaque);
        }
        assert_eq!(files("make -j$(nproc) -C sub").0, Vec::<String>::new());
        for s in [
            "make -f$F",
            "make --file=$F",
            "tar -xf$F",
            "grep -f$F x",
            "cat --$X=1 a",
            "make -$X",
            "sort -o$OUT x",
            "git -C$D status",
        ] {
            assert!(analyze(s).opaque.is_some(), "{s}");
        }
    }

    fn cmds_or_opaque(s: &str) -> Vec<String> {
        analyze(s)
            .commands
            .iter()
            .map(|c| c.words.join(" "))
            .collect()
    }

    #[test]
    fn nested_subshells_are_read_as_bash_reads_them() {
        // brush-parser reads these as arithmetic; bash runs `touch`.
        assert_eq!(cmds("( ( touch p ) )"), ["touch p"]);
        assert_eq!(cmds("((touch p) )"), ["touch p"]);
        assert_eq!(
            cmds("echo $((touch p) )"),
            ["touch p", "echo $((touch p) )"]
        );
        assert_eq!(cmds("x=$((touch p);(touch q))"), ["touch p", "touch q"]);
        // Arithmetic stays arithmetic.
        assert!(cmds("(( i++ )); echo $(( (1 + 2) * 3 ))").len() == 1);
        assert!(cmds("((x = (1 + 2) ))").is_empty());
    }

    #[test]
    fn values_the_script_fixes_may_be_evaluated() {
        for s in [
            "i=0; (( i++ )); echo $i",
            "n=$(nproc); make -j$((n + 1))",
            "c=$(git ls-files | wc -l); [[ $c -gt 0 ]] && echo many",
            "for i in 1 2 3; do echo $(( i * 2 )); done",
            "for ((i = 0; i < 3; i++)); do echo $i; done",
            "declare -i n=3; n=n+1",
            "a=(1 2 3); echo ${a[1]} ${#a[@]} ${a[@]:1:2}",
            "x=$(cat f); echo \"$x\" ${x:-none} ${#x}",
            "read -r line < f; echo \"$line\"",
            "echo ${!prefix*}",
            "[ \"$(cat f)\" -eq 1 ]",
            "if [ -z \"$v\" ]; then echo empty; fi",
        ] {
            assert!(analyze(s).opaque.is_none(), "{s}: {:?}", analyze(s).opaque);
        }
    }
}
