//! git, per subcommand.
//!
//! - git's own options are read as git reads them ([`globals`]). Those
//!   that change what git runs or where fail closed: `-c key=value`
//!   (aliases, pagers, diff drivers, `core.sshCommand`), `--exec-path`,
//!   `--config-env`, `--git-dir`, `--work-tree`, `--bare`, and an option
//!   git does not know. `-C DIR` moves every path below into DIR.
//! - git's other names for a subcommand (`git-push`) and the plumbing
//!   that pushes (`send-pack`) are in [`names`].
//! - Reads: `show REV:PATH`, `cat-file -p REV:PATH`, the paths after `--`
//!   of `diff`, `log`, `show`, `blame`, `grep` (whole folders), `diff
//!   --no-index A B`.
//! - Reads of history ([`history`]): `log -p`, `show REV`, `diff A B`,
//!   `archive`, `cat-file -p SHA` and the like read what any commit held.
//! - Writes: `--output FILE` (diff, log, show, format-patch `-o DIR`, archive
//!   `-o FILE`), the pathspecs of `checkout -- PATH`, `restore`, `rm`, `mv`,
//!   `clean` (the whole tree without one), `clone URL DIR`.
//! - Subcommands that run commands: `rebase --exec`, `bisect run`,
//!   `submodule foreach`, `filter-branch`, `difftool`, `mergetool`,
//!   `--ext-diff`, `--upload-pack`/`--receive-pack`/`--exec`, and `config`
//!   when it sets a value (it changes what git runs from then on).
//!
//! git's own writes inside `.git` (the index, refs, objects) are governed by
//! the rule that allows the subcommand (`Bash(git commit:*)`).

use super::spec::{Arg, FileOperands, Options, change_dir};

mod globals;
mod history;
pub mod names;

pub(crate) use history::names_a_file;

pub(crate) use globals::{Global, changes_what_runs, globals, subcommand_index};

/// git subcommands that only read.
pub const READ_ONLY_GIT: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "annotate",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "describe",
    "grep",
    "shortlog",
    "cat-file",
    "reflog",
    "merge-base",
    "name-rev",
    "for-each-ref",
    "show-ref",
    "count-objects",
    "whatchanged",
];

/// What `git ARGS...` reads, writes and runs.
pub(super) fn operands(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let mut dir: Option<String> = None;
    let mut sub = None;
    for global in globals(args) {
        match global {
            Global::Option { name, value, .. } => {
                if let Some(why) = changes_what_runs(name, value) {
                    out.starts(why);
                } else if name == "-C" {
                    dir = Some(change_dir(dir, value.unwrap_or("")));
                }
            }
            Global::Unknown(o) => out.opaque(format!(
                "`git {o}` is an option of git's own this reading does not know, so its subcommand cannot be told"
            )),
            Global::Ends => {}
            Global::Subcommand(i) => sub = Some(i),
        }
    }
    let Some(i) = sub else {
        return out;
    };
    let rest = &args[i + 1..];
    subcommand(&args[i], rest, &mut out);
    if let Some(d) = dir {
        out.beneath(&d);
    }
    out
}

/// The options of subcommands that take a value (so that the value is not
/// read as a revision or a path).
const SUB_OPTIONS: Options = Options {
    short_values: "mCFnSoOLUG",
    long_values: &[
        "--message",
        "--file",
        "--author",
        "--date",
        "--format",
        "--pretty",
        "--since",
        "--until",
        "--grep",
        "--max-count",
        "--skip",
        "--output",
        "--output-directory",
        "--exec",
        "--upload-pack",
        "--receive-pack",
        "--template",
        "--reference",
        "--depth",
        "--branch",
        "--origin",
        "--prefix",
        "--remote",
        "--strategy",
        "--strategy-option",
        "--onto",
        "--diff-filter",
        "--abbrev",
        "--source",
        "--worktree",
        "--contents",
    ],
    optional: &[],
};

fn subcommand(sub: &str, args: &[String], out: &mut FileOperands) {
    let dashdash = args.iter().position(|a| a == "--");
    let (before, pathspecs): (&[String], Vec<&str>) = match dashdash {
        Some(d) => (
            &args[..d],
            args[d + 1..].iter().map(String::as_str).collect(),
        ),
        None => (args, Vec::new()),
    };
    let mut positional: Vec<&str> = Vec::new();
    for arg in SUB_OPTIONS.parse(before) {
        match arg {
            Arg::Opt { name, value } => match name.as_str() {
                "--output" => out.writes.extend(value.map(str::to_string)),
                "--output-directory" => out.tree_writes.extend(value.map(str::to_string)),
                "-o" if sub == "format-patch" => out.tree_writes.extend(value.map(str::to_string)),
                "-o" if sub == "archive" => out.writes.extend(value.map(str::to_string)),
                "--ext-diff" | "--exec" | "--upload-pack" | "--receive-pack" => {
                    out.starts(format!("`git {sub} {name}` runs a program git is told of"))
                }
                "-x" if sub == "rebase" => out.starts("`git rebase -x` runs a command"),
                "--contents" => out.reads.extend(value.map(str::to_string)),
                "-F" | "--file" if sub == "commit" || sub == "tag" => {
                    out.reads.extend(value.map(str::to_string))
                }
                _ => {}
            },
            Arg::Operand(o) => positional.push(o),
        }
    }
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // `REV:PATH` names a file's content at a revision.
    let rev_paths = |v: &[&str]| {
        v.iter()
            .filter_map(|p| {
                p.split_once(':')
                    .map(|(_, path)| path.trim_start_matches("./").to_string())
            })
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
    };
    out.history_reads
        .extend(history::history_reads(sub, args, &positional, &pathspecs));
    match sub {
        "diff" if args.iter().any(|a| a == "--no-index") => {
            out.tree_reads.extend(owned(&positional));
            out.tree_reads.extend(owned(&pathspecs));
        }
        "diff" | "log" | "whatchanged" | "shortlog" | "show" | "blame" | "annotate" => {
            out.reads.extend(owned(&pathspecs));
            out.reads.extend(rev_paths(&positional));
            if matches!(sub, "blame" | "annotate") && dashdash.is_none() {
                // `git blame [REV] PATH`: the last operand is the path.
                out.reads.extend(positional.last().map(|s| s.to_string()));
            }
        }
        "grep" => {
            if pathspecs.is_empty() {
                out.tree_reads.push(".".into());
            } else {
                out.tree_reads.extend(owned(&pathspecs));
            }
        }
        // What git hashes it reads: `git add PATHS` (`.`, `-A`, `-u`: the
        // whole tree), `git commit -a`, `git stash` (push).
        "add" => {
            let named: Vec<&str> = positional.iter().chain(&pathspecs).copied().collect();
            let all = args
                .iter()
                .any(|a| matches!(a.as_str(), "-A" | "--all" | "-u" | "--update"));
            if named.is_empty() && all {
                out.tree_reads.push(".".into());
            }
            out.tree_reads.extend(owned(&named));
        }
        "commit" if args.iter().any(|a| commits_all(a)) => out.tree_reads.push(".".into()),
        "stash" if matches!(positional.first(), None | Some(&"push" | &"save")) => {
            out.tree_reads.push(".".into());
        }
        // An object named by its id (or on stdin) may hold any file: a
        // read of history (see `history`); `REV:PATH` reads PATH.
        "cat-file" => {
            let names: Vec<&str> = positional
                .iter()
                .copied()
                .filter(|p| !matches!(*p, "blob" | "tree" | "commit" | "tag"))
                .collect();
            out.reads.extend(rev_paths(&names));
        }
        // A pathspec may be a folder: everything beneath it is written.
        "checkout" | "restore" if !pathspecs.is_empty() || sub == "restore" => {
            out.tree_writes.extend(owned(&pathspecs));
            if sub == "restore" {
                out.tree_writes.extend(owned(&positional));
            }
        }
        // A patch (or a mailbox of them) names its own files: anywhere.
        "apply" | "am" => {
            if !args
                .iter()
                .any(|a| matches!(a.as_str(), "--check" | "--stat" | "--numstat" | "--summary"))
            {
                out.tree_writes.push(".".into());
            }
            out.reads.extend(positional.iter().map(|s| s.to_string()));
        }
        // `add PATH [COMMIT]` makes a folder, `move` moves one, `remove`
        // deletes one, `repair` writes in them. Their operands, past the
        // options' values (`-b`/`-B BRANCH`, `--reason TEXT`), are
        // folders written beneath, but for `add`'s commit-ish.
        "worktree" => {
            let mut words = args.iter().map(String::as_str);
            let action = words.find(|w| !w.starts_with('-'));
            let mut operands = Vec::new();
            while let Some(w) = words.next() {
                if matches!(w, "-b" | "-B" | "--reason") {
                    words.next();
                } else if !w.starts_with('-') {
                    operands.push(w.to_string());
                }
            }
            match action {
                Some("add") => out.tree_writes.extend(operands.into_iter().take(1)),
                Some("move" | "remove" | "repair") => out.tree_writes.extend(operands),
                _ => {}
            }
        }
        "rm" => {
            let all = [positional.as_slice(), pathspecs.as_slice()].concat();
            if args.iter().any(|a| a == "-r") {
                out.tree_writes.extend(owned(&all));
            } else {
                out.writes.extend(owned(&all));
            }
        }
        "mv" => {
            out.tree_writes.extend(owned(&positional));
            out.tree_writes.extend(owned(&pathspecs));
        }
        "clean" => {
            if pathspecs.is_empty() && positional.is_empty() {
                out.tree_writes.push(".".into());
            } else {
                out.tree_writes.extend(owned(&positional));
                out.tree_writes.extend(owned(&pathspecs));
            }
        }
        "clone" => {
            // `git clone URL [DIR]`: DIR, or a folder named after the URL.
            match positional.get(1) {
                Some(d) => out.tree_writes.push(d.to_string()),
                None => out
                    .tree_writes
                    .push(clone_folder(positional.first().copied())),
            }
        }
        "config" => {
            let reads_only = args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "get" | "list"
                )
            }) || (positional.len() <= 1
                && !args
                    .iter()
                    .any(|a| a.starts_with("--unset") || a == "--edit" || a == "-e"));
            // `git config [--global|--local|set] KEY VALUE`.
            let setting: Vec<&str> = positional
                .iter()
                .copied()
                .filter(|p| !matches!(*p, "set" | "unset"))
                .collect();
            let harmless = match setting.as_slice() {
                [key] => super::config_keys::git_key_runs_nothing(key, None),
                [key, value] => super::config_keys::git_key_runs_nothing(key, Some(value)),
                _ => false,
            };
            if !reads_only && !harmless {
                out.opaque("`git config` sets values that change what git runs (aliases, pagers, diff drivers, hooks)");
            }
        }
        "bisect" if positional.first() == Some(&"run") => {
            out.starts("`git bisect run` runs a command")
        }
        "submodule" if positional.contains(&"foreach") => {
            out.starts("`git submodule foreach` runs a command in every submodule")
        }
        "filter-branch" | "filter-repo" | "difftool" | "mergetool" | "daemon" | "instaweb"
        | "web--browse" => out.starts(format!("`git {sub}` runs commands the policy cannot see")),
        _ => {}
    }
}

/// The folder `git clone URL` makes: the URL's last segment without
/// `.git` (`.` when none can be told, which covers everything).
fn clone_folder(url: Option<&str>) -> String {
    let name = url
        .map(|u| u.trim_end_matches('/'))
        .and_then(|u| u.rsplit(['/', ':']).next())
        .map(|n| n.strip_suffix(".git").unwrap_or(n))
        .unwrap_or("");
    if name.is_empty() || name == "." || name == ".." || name.contains(['$', '`']) {
        ".".into()
    } else {
        name.to_string()
    }
}

/// True for a git command that only reads.
pub(super) fn only_reads(args: &[String]) -> bool {
    let o = operands(args);
    o.opaque.is_none()
        && o.writes.is_empty()
        && o.tree_writes.is_empty()
        && subcommand_index(args).is_some_and(|i| READ_ONLY_GIT.contains(&args[i].as_str()))
}

/// Whether `arg` of `git commit` is `-a`/`--all`, alone or among short
/// flags before one that takes a value (`-am MSG`).
fn commits_all(arg: &str) -> bool {
    if arg == "--all" {
        return true;
    }
    let Some(flags) = arg.strip_prefix('-').filter(|f| !f.starts_with('-')) else {
        return false;
    };
    flags
        .chars()
        .take_while(|c| !"mFCctS".contains(*c))
        .any(|c| c == 'a')
}

#[cfg(test)]
mod tests;
