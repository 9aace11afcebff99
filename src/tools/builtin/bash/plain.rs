//! A script that is one plain command (`cat small.txt`, `cargo test
//! --quiet`) runs without bash in front of it.
//!
//! `bash -c 'cat small.txt'` ends by exec-ing `cat` (bash runs a lone
//! command in place of itself), so the shell's whole part is its start:
//! the binary mapped, the locale's files read (12 of them with
//! `LANG=C.UTF-8`), and one more exec for the sandbox's supervisor to
//! follow. On this project's VM that is about half of a `bash` turn's
//! cost. Where the script is a command bash would run as those words,
//! the runner starts the program itself, with the environment bash would
//! have given it.
//!
//! **When.** Words of plain characters only (letters, digits, `_ . / : @
//! % + , = -`), split on spaces: nothing bash would expand, quote, glob,
//! redirect, split or comment. The program is no builtin or keyword of
//! bash, no assignment, and is found on `PATH` (or named by a path) as an
//! executable file, as bash would find it. Anything else, or a program
//! that cannot be found (bash says `command not found` and exits 127),
//! goes to bash as before. The policy decides the script's text either
//! way; the walls decide what the kernel runs either way.

use std::path::{Path, PathBuf};

/// Whether bash reads `b` as itself in a word, in every place of one.
fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_./:@%+,=-".contains(&b)
}

/// A command to start in place of `bash -c SCRIPT`.
#[derive(Debug)]
pub(super) struct Plain {
    /// The program word as typed, then its arguments.
    pub argv: Vec<String>,
    /// The environment bash would have given it.
    pub env: Vec<(String, String)>,
}

/// What to start for `script` in place of `bash -c script`; `None` where
/// bash must run it.
pub(super) fn plain_command(script: &str, env: &[(String, String)], cwd: &Path) -> Option<Plain> {
    let bytes = script.as_bytes();
    if bytes.is_empty() || !bytes.iter().all(|&b| b == b' ' || plain_byte(b)) {
        return None;
    }
    let words: Vec<String> = script
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    let program = words.first()?;
    if runner_policy::is_shell_word(program) || program.contains('=') {
        return None;
    }
    let path = find_program(program, env, cwd)?;
    let mut env: Vec<(String, String)> = (env.iter())
        .filter(|(k, _)| !matches!(k.as_str(), "PWD" | "_"))
        .cloned()
        .collect();
    // What bash sets before it execs a lone command.
    env.push(("PWD".into(), cwd.display().to_string()));
    if !env.iter().any(|(k, _)| k == "SHLVL") {
        env.push(("SHLVL".into(), "0".into()));
    }
    // `_` is the path bash executes: a program named by a path as typed,
    // one found on PATH with its folder.
    let underscore = match program.contains('/') {
        true => program.clone(),
        false => path.display().to_string(),
    };
    env.push(("_".into(), underscore));
    // The program word as typed is its `argv[0]` (what `ps` shows), as
    // bash gives it; the child's `PATH` finds the same file.
    Some(Plain { argv: words, env })
}

/// Where bash would find `program`: a path as given (from `cwd`), else
/// the first executable file of that name in `PATH`'s absolute folders.
fn find_program(program: &str, env: &[(String, String)], cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let path = cwd.join(program);
        return executable(&path).then_some(path);
    }
    let path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())?;
    for dir in path.split(':') {
        // An empty or relative entry is the folder bash is in: leave it
        // to bash.
        if !dir.starts_with('/') {
            return None;
        }
        let candidate = Path::new(dir).join(program);
        if executable(&candidate) {
            return Some(candidate);
        }
    }
    None
}

/// A regular file this process may execute.
fn executable(path: &Path) -> bool {
    let Ok(meta) = path.metadata() else {
        return false;
    };
    meta.is_file() && crate::sys::may_execute(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(String, String)> {
        vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("PWD".into(), "/elsewhere".into()),
        ]
    }

    #[test]
    fn a_plain_command_runs_as_its_words_with_what_bash_would_set() {
        let Plain { argv, env } =
            plain_command("cat  small.txt --x=1", &env(), Path::new("/w")).unwrap();
        assert_eq!(argv, ["cat", "small.txt", "--x=1"]);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PWD"), Some("/w"));
        assert_eq!(get("SHLVL"), Some("0"));
        assert!(get("_").is_some_and(|p| p.ends_with("/cat")), "{env:?}");
        assert_eq!(env.iter().filter(|(k, _)| k == "PWD").count(), 1);
    }

    #[test]
    fn anything_bash_reads_otherwise_goes_to_bash() {
        for script in [
            "cat 'a b'",
            "cat a|wc",
            "cat a; ls",
            "cat $HOME",
            "cat *.txt",
            "cat ~/x",
            "cat a > b",
            "cat {a,b}",
            "cat a # note",
            "A=1 cat a",
            "echo hi",
            "cd src",
            "true",
            "time ls",
            "coproc ls",
            "[ -f a ]",
            "if",
            "cat\ta",
            "cat a\nls",
            "no-such-program-here x",
            "",
            "   ",
            "cat a\\ b",
            "cat \"a\"",
            "ls é",
        ] {
            assert!(
                plain_command(script, &env(), Path::new("/w")).is_none(),
                "{script:?}"
            );
        }
    }

    /// The differential check: each script of the corpus run as a plain
    /// command and by `bash -c`, from the same folder and environment,
    /// prints the same (its words, each bracketed, and its environment).
    #[test]
    fn plain_commands_run_as_bash_runs_them() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let show = d.join("show");
        std::fs::write(
            &show,
            "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done\n",
        )
        .unwrap();
        std::fs::set_permissions(&show, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::copy("/usr/bin/env", d.join("sub/envcopy")).unwrap();
        let base: Vec<(String, String)> = vec![
            ("PATH".into(), format!("/usr/bin:/bin:{}", d.display())),
            ("PWD".into(), "/somewhere/else".into()),
            ("HOME".into(), "/nonexistent".into()),
            ("LANG".into(), "C".into()),
        ];
        let run = |argv: &[&str], env: &[(String, String)]| {
            let o = std::process::Command::new(argv[0])
                .args(&argv[1..])
                .current_dir(d)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .output()
                .unwrap();
            let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(String::from)
                .collect();
            // An environment's order is no difference; words' order is.
            if lines.iter().any(|l| l.starts_with("PATH=")) {
                lines.sort();
            }
            (o.status.code(), lines)
        };
        let mut plain = 0;
        for script in [
            "./show a b=c --x=1 %:@+ ,comma trailing-",
            "show  two   spaces",
            "./show -- -n -e",
            "sub/../show .. . ./x",
            "show a:b@c%d+e,f=g",
            "env",
            "/usr/bin/env",
            "sub/envcopy",
            "./sub/envcopy",
            "show 'quoted'",
            "show a*b",
            "show ~",
            "show a#b",
            "show {a,b}",
            "show $x",
        ] {
            let by_bash = run(&["bash", "-c", script], &base);
            let Some(p) = plain_command(script, &base, d) else {
                continue;
            };
            plain += 1;
            let argv: Vec<&str> = p.argv.iter().map(String::as_str).collect();
            assert_eq!(run(&argv, &p.env), by_bash, "{script:?}");
        }
        assert_eq!(plain, 9, "the plain ones of the corpus");
    }

    #[test]
    fn a_relative_path_entry_leaves_the_search_to_bash() {
        let env = vec![("PATH".into(), ".:/usr/bin".into())];
        assert!(plain_command("cat a", &env, Path::new("/w")).is_none());
    }
}
