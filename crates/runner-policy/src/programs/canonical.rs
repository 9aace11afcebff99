//! How a command is spelled for rules, so that the rules people write
//! match what they mean:
//! - git's global options that change nothing a rule cares about are
//!   dropped (`git -C sub --no-pager status` is `git status`; the folder
//!   `-C` names is already where its paths resolve, and `-c` with a key
//!   that runs nothing is plain git);
//! - a program run from a virtual environment or `node_modules/.bin`
//!   (`.venv/bin/pytest`, `~/venv/bin/pip`) is the program it is
//!   (`pytest`), as an allow rule names it.

use std::borrow::Cow;

use super::git::{Global, changes_what_runs, globals};
use crate::words::base_name;

/// The words rules match for a command.
pub fn canonical_words(words: &[String]) -> Cow<'_, [String]> {
    let Some(program) = words.first() else {
        return Cow::Borrowed(words);
    };
    let mut out: Option<Vec<String>> = None;
    if let Some(name) = environment_program(program) {
        let mut w = words.to_vec();
        w[0] = name.to_string();
        out = Some(w);
    }
    let current = out.as_deref().unwrap_or(words);
    if base_name(&current[0]) == "git" {
        let args = &current[1..];
        let mut kept_from = args.len();
        let mut at = 0;
        for global in globals(args) {
            match global {
                // Options that change nothing a rule cares about are
                // dropped (`-C`: its folder is already where the paths
                // below resolve; the pager `-p` runs is `PAGER`'s, decided
                // where it is set). The others stay, and the model makes
                // the command opaque.
                Global::Option { name, value, next }
                    if changes_what_runs(name, value).is_none() =>
                {
                    at = next
                }
                _ => {
                    kept_from = at;
                    break;
                }
            }
        }
        if kept_from > 0 {
            let mut kept = vec![current[0].clone()];
            kept.extend(args[kept_from..].iter().cloned());
            out = Some(kept);
        }
    }
    match out {
        Some(w) => Cow::Owned(w),
        None => Cow::Borrowed(words),
    }
}

/// The name of a program run from a Python virtual environment
/// (`.venv/bin/NAME`, `venv/bin/NAME`, `.tox/ENV/bin/NAME`, `~/venv/bin/NAME`)
/// or from `node_modules/.bin/NAME`.
fn environment_program(program: &str) -> Option<&str> {
    let (dir, name) = program.rsplit_once('/')?;
    if name.is_empty() || program.contains("..") {
        return None;
    }
    let parent = dir.rsplit('/').nth(1).unwrap_or("");
    let last = dir.rsplit('/').next().unwrap_or(dir);
    let in_venv = last == "bin"
        && (matches!(parent, ".venv" | "venv" | "env" | ".env" | "virtualenv")
            || dir.contains(".tox/"));
    // `./node_modules/.bin` ends with the second.
    let in_node = dir == "node_modules/.bin" || dir.ends_with("/node_modules/.bin");
    (in_venv || in_node).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        let w: Vec<String> = s.split_whitespace().map(String::from).collect();
        canonical_words(&w).join(" ")
    }

    #[test]
    fn spelled_as_rules_name_them() {
        assert_eq!(c("git -C sub --no-pager status"), "git status");
        assert_eq!(c("git -c user.email=a@b commit -m x"), "git commit -m x");
        assert_eq!(c("git -c core.pager=sh log"), "git -c core.pager=sh log");
        assert_eq!(c("git status"), "git status");
        assert_eq!(c(".venv/bin/pytest -x"), "pytest -x");
        assert_eq!(c("~/venv/bin/pip install ."), "pip install .");
        assert_eq!(c("./node_modules/.bin/eslint ."), "eslint .");
        assert_eq!(c(".tox/py312/bin/python -m pytest"), "python -m pytest");
        assert_eq!(c("tools/bin/run"), "tools/bin/run");
        // `-C` without its folder: git prints its usage; kept as written.
        assert_eq!(c("git -C"), "git -C");
        // Every option git takes before its subcommand, with its value.
        assert_eq!(
            c("git --namespace n --attr-source=HEAD -p push"),
            "git push"
        );
        assert_eq!(c("git --no-advice -C a push"), "git push");
        assert_eq!(c("git --bare push"), "git --bare push");
        assert_eq!(c("git --super-prefix x push"), "git --super-prefix x push");
        assert_eq!(c("git -p"), "git");
        assert_eq!(c("git --no-pager"), "git");
        assert_eq!(c("git --no-pager -P log"), "git log");
        assert_eq!(c("node_modules/.bin/eslint ."), "eslint .");
        assert_eq!(c("web/node_modules/.bin/tsc -p ."), "tsc -p .");
        assert_eq!(c("node_modules/eslint ."), "node_modules/eslint .");
        assert_eq!(c("env/bin/pip list"), "pip list");
        assert_eq!(c("tools/venv/lib/x"), "tools/venv/lib/x");
        assert_eq!(c("../.venv/bin/pytest"), "../.venv/bin/pytest");
    }
}
