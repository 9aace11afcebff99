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
mod expand;
mod state;
mod variables;
mod walk;
mod word;
mod wrappers;

pub use analysis::{PathUse, ShellAnalysis, SimpleCommand};
pub use state::MAX_SCRIPT_CHARS;
use state::Walker;

/// Analyses a bash script.
pub fn analyze(script: &str) -> ShellAnalysis {
    let mut w = Walker::new(script);
    if script.chars().count() > MAX_SCRIPT_CHARS {
        w.opaque(format!(
            "the script is longer than {MAX_SCRIPT_CHARS} characters"
        ));
        return w.out;
    }
    w.script(script);
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(s: &str) -> Vec<String> {
        let a = analyze(s);
        assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
        a.commands.iter().map(|c| c.words.join(" ")).collect()
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
            "bash <<EOF\nrm -rf /\nEOF",
            "if then fi (",
            "{rm,-rf,/}",
            "/bin/r? -rf /",
        ] {
            assert!(analyze(s).opaque.is_some(), "{s}");
        }
    }
}
