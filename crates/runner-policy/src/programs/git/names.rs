//! The other names a git subcommand runs by, so that a rule naming it
//! (`deny Bash(git push:*)`) meets it under each:
//! - `git-push ARGS` is `git push ARGS`. git installs its subcommands
//!   under these names (in `git --exec-path`), and runs the one its own
//!   name (`argv[0]`) ends in, with no option between;
//! - `git send-pack` and `git http-push` push as `git push` does (the
//!   plumbing it runs), so they are a push too.

use crate::words::base_name;

/// `git-SUB ARGS…` as `git SUB ARGS…`, the folder kept; none for any
/// other name.
pub fn dashed(words: &[String]) -> Option<Vec<String>> {
    let program = words.first()?;
    let name = base_name(program);
    let sub = dashed_subcommand(name)?;
    let folder = &program[..program.len() - name.len()];
    let mut out = Vec::with_capacity(words.len() + 1);
    out.push(format!("{folder}git"));
    out.push(sub.to_string());
    out.extend(words[1..].iter().cloned());
    Some(out)
}

/// The program a command name runs as, for the rules that name it: `git`
/// for `git-SUB`, the name itself otherwise.
pub fn program_of(name: &str) -> &str {
    match dashed_subcommand(name) {
        Some(_) => "git",
        None => name,
    }
}

/// `SUB` of the name `git-SUB`.
fn dashed_subcommand(name: &str) -> Option<&str> {
    name.strip_prefix("git-").filter(|s| !s.is_empty())
}

/// `git … push …` for a git command (its words, `git` first) whose
/// subcommand pushes under another name; none for any other.
pub fn as_push(words: &[String]) -> Option<Vec<String>> {
    let args = words.get(1..)?;
    let i = super::subcommand_index(args)?;
    if !matches!(args[i].as_str(), "send-pack" | "http-push") {
        return None;
    }
    let mut out = words.to_vec();
    out[i + 1] = "push".into();
    Some(out)
}

/// What one git process does by itself, as the exec wall decides it.
#[derive(Debug, PartialEq, Eq)]
pub enum Runs {
    /// `git SUB ARGS…`: its subcommand, git's own options dropped.
    Subcommand(Vec<String>),
    /// No subcommand: git prints something (`--exec-path`, its usage)
    /// and ends.
    Nothing,
    /// An option of git's own not known here: which word is the
    /// subcommand cannot be told.
    Unknown,
}

/// The subcommand a git process (its words, `git` or `git-SUB` first)
/// runs itself. git's own options are dropped, whatever they set: the
/// configuration, another repository or a pager makes git run other
/// programs only by starting them, each start decided in turn. That
/// includes an alias, which git runs as a new `git` process with the
/// alias's words (a builtin subcommand cannot be aliased).
pub fn by_itself(words: &[String]) -> Runs {
    let dashed = dashed(words);
    let words = dashed.as_deref().unwrap_or(words);
    let Some(args) = words.get(1..) else {
        return Runs::Nothing;
    };
    match super::globals(args).last() {
        Some(super::Global::Subcommand(i)) => {
            let mut out = vec![words[0].clone()];
            out.extend(args[i..].iter().cloned());
            Runs::Subcommand(out)
        }
        Some(super::Global::Unknown(_)) => Runs::Unknown,
        _ => Runs::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_subcommand_is_known_by_its_other_names() {
        assert_eq!(
            dashed(&words("git-push origin main")),
            Some(words("git push origin main"))
        );
        assert_eq!(
            dashed(&words("/usr/lib/git-core/git-send-pack r")),
            Some(words("/usr/lib/git-core/git send-pack r"))
        );
        for w in ["git push", "git-", "gitpush", "/x/git-/y", "my-git-push"] {
            assert_eq!(dashed(&words(w)), None, "{w}");
        }
        assert_eq!(program_of("git-push"), "git");
        assert_eq!(program_of("git-"), "git-");
        assert_eq!(program_of("curl"), "curl");
        assert_eq!(
            as_push(&words("git send-pack r main")),
            Some(words("git push r main"))
        );
        assert_eq!(
            as_push(&words("git --namespace n http-push u main")),
            Some(words("git --namespace n push u main"))
        );
        for w in [
            "git push r",
            "git status",
            "git",
            "git --bogus send-pack",
            "git log send-pack",
        ] {
            assert_eq!(as_push(&words(w)), None, "{w}");
        }
    }

    #[test]
    fn a_git_process_is_what_its_subcommand_does() {
        let runs = |s: &str| by_itself(&words(s));
        let sub = |s: &str| Runs::Subcommand(words(s));
        assert_eq!(runs("git status"), sub("git status"));
        assert_eq!(
            runs("git -c alias.p=push --git-dir=x -C y p origin"),
            sub("git p origin")
        );
        assert_eq!(runs("git --bare --namespace n push"), sub("git push"));
        assert_eq!(runs("git-push origin"), sub("git push origin"));
        assert_eq!(runs("/x/git-send-pack r"), sub("/x/git send-pack r"));
        assert_eq!(runs("git --exec-path"), Runs::Nothing);
        assert_eq!(runs("git -C x"), Runs::Nothing);
        assert_eq!(runs("git"), Runs::Nothing);
        assert_eq!(runs("git --super-prefix p push"), Runs::Unknown);
    }
}
