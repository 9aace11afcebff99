//! git's own options, before the subcommand, read as git's
//! `handle_options` (git.c, 2.47) reads them: which take a value and how,
//! after which git prints something and ends, and where the subcommand
//! starts.
//!
//! The rules' spelling ([`super::super::canonical_words`]) and the
//! subcommand's model ([`super::operands`]) both walk the options through
//! here, so they never disagree on which word is the subcommand. Where
//! they did, `git --namespace x push` and `git -p push` were read as
//! something other than a push, and passed `deny Bash(git push:*)`. An
//! option git does not know (a later git's, or one an older git took a
//! value for) leaves the subcommand unknown: the reading fails closed.

/// One of git's own options, or what ends them.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Global<'a> {
    /// An option and its value (after `=` or as the next word); `next`
    /// is the index of the word after them.
    Option {
        name: &'a str,
        value: Option<&'a str>,
        next: usize,
    },
    /// git prints something and ends (`--exec-path`, `--html-path`,
    /// `--list-cmds=…`, an option missing its value): no subcommand runs.
    Ends,
    /// An option git (as read here) does not know.
    Unknown(&'a str),
    /// The subcommand, at this index (`-v`/`--version` and `-h`/`--help`
    /// are git's `version` and `help`).
    Subcommand(usize),
}

/// Why an option of git's own (`name`, with its `value`) makes what git
/// does depend on more than its words: it sets configuration that can
/// run programs, or points git at another repository or other programs.
/// None for the others (`-C`, `--namespace`, `-p`, a `-c` key that runs
/// nothing), which the rules' spelling drops.
pub(crate) fn changes_what_runs(name: &str, value: Option<&str>) -> Option<String> {
    match name {
        "-c" => {
            let s = value.unwrap_or("");
            let (key, value) = s.split_once('=').map_or((s, None), |(k, v)| (k, Some(v)));
            (!super::super::config_keys::git_key_runs_nothing(key, value)).then(|| {
                "`git -c` sets configuration that can make git run other programs".to_string()
            })
        }
        "--config-env" => Some(
            "`git --config-env` sets configuration that can make git run other programs".into(),
        ),
        "--exec-path" => Some("`git --exec-path` changes which programs git runs".into()),
        "--git-dir" | "--work-tree" | "--bare" | "--shallow-file" => {
            Some(format!("`git {name}` points git at another repository"))
        }
        _ => None,
    }
}

/// Options without a value.
const FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
    "--bare",
    "--literal-pathspecs",
    "--no-literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-optional-locks",
];

/// Options whose value is the next word or follows `=`.
const VALUES: &[&str] = &[
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--attr-source",
    "--config-env",
];

/// Options whose value is the next word only (`-Cdir` is an unknown
/// option to git).
const NEXT_VALUES: &[&str] = &["-C", "-c", "--shallow-file"];

/// Options after which git prints a path and ends.
const PRINTS: &[&str] = &["--html-path", "--man-path", "--info-path"];

/// git's own options in `args` (the words after `git`), in order; the
/// last item is the subcommand, [`Global::Ends`] or [`Global::Unknown`],
/// unless the options run out first (git then prints its usage).
pub(crate) fn globals(args: &[String]) -> impl Iterator<Item = Global<'_>> {
    let mut i = 0;
    let mut done = false;
    std::iter::from_fn(move || {
        if done || i >= args.len() {
            return None;
        }
        let item = read(args, i);
        match item {
            Global::Option { next, .. } => i = next,
            _ => done = true,
        }
        Some(item)
    })
}

/// The word at `i` (and its value).
fn read(args: &[String], i: usize) -> Global<'_> {
    let a = args[i].as_str();
    if !a.starts_with('-') || matches!(a, "-v" | "--version" | "-h" | "--help") {
        return Global::Subcommand(i);
    }
    if FLAGS.contains(&a) {
        return Global::Option {
            name: a,
            value: None,
            next: i + 1,
        };
    }
    if let Some((name, value)) = a.split_once('=')
        && VALUES.contains(&name)
    {
        return Global::Option {
            name,
            value: Some(value),
            next: i + 1,
        };
    }
    if VALUES.contains(&a) || NEXT_VALUES.contains(&a) {
        return match args.get(i + 1) {
            Some(v) => Global::Option {
                name: a,
                value: Some(v),
                next: i + 2,
            },
            None => Global::Ends,
        };
    }
    // `--exec-path=DIR` sets the folder; `--exec-path` and any other word
    // it begins prints it.
    if let Some(rest) = a.strip_prefix("--exec-path") {
        return match rest.strip_prefix('=') {
            Some(dir) => Global::Option {
                name: "--exec-path",
                value: Some(dir),
                next: i + 1,
            },
            None => Global::Ends,
        };
    }
    if PRINTS.contains(&a) || a.starts_with("--list-cmds=") {
        return Global::Ends;
    }
    Global::Unknown(a)
}

/// The index of the subcommand in `args` (the words after `git`), when
/// one can be told.
pub(crate) fn subcommand_index(args: &[String]) -> Option<usize> {
    match globals(args).last()? {
        Global::Subcommand(i) => Some(i),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    /// Each spelling as git 2.47 reads it (checked with `git OPTION
    /// zzz`: "'zzz' is not a git command" means the option and its value
    /// were taken, "unknown option" that git knows no such option).
    #[test]
    fn options_are_read_as_git_reads_them() {
        let sub = |s: &str| subcommand_index(&words(s));
        assert_eq!(sub("push origin"), Some(0));
        assert_eq!(sub("--namespace x push"), Some(2));
        assert_eq!(sub("--namespace=x push"), Some(1));
        assert_eq!(sub("--attr-source HEAD push"), Some(2));
        assert_eq!(sub("--attr-source=HEAD push"), Some(1));
        assert_eq!(sub("-p push"), Some(1));
        assert_eq!(sub("--paginate --bare --no-advice push"), Some(3));
        assert_eq!(sub("-C a -c k=v --git-dir x --work-tree=y push"), Some(7));
        assert_eq!(sub("--shallow-file f push"), Some(2));
        assert_eq!(sub("--config-env k=V push"), Some(2));
        assert_eq!(sub("--config-env=k=V push"), Some(1));
        assert_eq!(sub("--exec-path=/x push"), Some(1));
        assert_eq!(sub("--version"), Some(0));
        assert_eq!(sub("-h push"), Some(0));
        // No subcommand: git prints and ends, or its usage.
        for s in [
            "--exec-path push",
            "--exec-pathx push",
            "--html-path push",
            "--list-cmds=main push",
            "-C",
            "--namespace",
            "-p",
            "",
        ] {
            assert_eq!(sub(s), None, "{s}");
        }
        // What git calls unknown: no subcommand can be told.
        for s in [
            "--super-prefix x push",
            "-Cdir push",
            "-ck=v push",
            "--shallow-file=f push",
            "--bare=x push",
            "--namespac x push",
        ] {
            let w = words(s);
            let all: Vec<Global> = globals(&w).collect();
            assert!(
                matches!(all.last(), Some(Global::Unknown(_))),
                "{s}: {all:?}"
            );
        }
        let w = words("-c k=v --namespace=n push x");
        let all: Vec<Global> = globals(&w).collect();
        assert_eq!(
            all,
            [
                Global::Option {
                    name: "-c",
                    value: Some("k=v"),
                    next: 2
                },
                Global::Option {
                    name: "--namespace",
                    value: Some("n"),
                    next: 3
                },
                Global::Subcommand(3),
            ]
        );
    }
}
