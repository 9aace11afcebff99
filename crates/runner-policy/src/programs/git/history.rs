//! git subcommands that print what the object store holds: file content
//! from commits other than the work tree's, or every object there is.
//!
//! A file the policy denies reading may have been committed once and
//! removed since; its content stays in every commit before. So a reader
//! of history reads, beneath its pathspecs (everything without one), what
//! any of those commits held: a [`crate::Signature::history`] read. Where
//! the copy's git view is known to hold none of the denied content
//! ([`crate::Backstops::history`]) it is decided by its folder alone;
//! elsewhere strictly, as a recursive read that any read deny beneath it
//! refuses.
//!
//! Readers: `log`/`whatchanged` with a patch or a content search (`-p`,
//! `-u`, `--patch`, `-c`, `--cc`, `-G`, `-S`, `-L`, `--word-diff`), `show`
//! (a commit's patch; `show REV:PATH` reads PATH alone, and `-s`,
//! `--stat`, `--name-only` show none), `diff` with a revision (`diff REV`,
//! `diff A B`, `diff A..B`), `format-patch`, `archive`, `bundle`,
//! `fast-export`, `range-diff`, `grep` with a revision or `--cached`,
//! `cat-file` of an object named by its id or read from stdin
//! (`--batch`, `--batch-all-objects`), `stash show -p`, `unpack-file`, and
//! `fsck --lost-found` (which writes every dangling blob into `.git`).

/// Options of `log` that print or search content.
fn shows_patches(args: &[String]) -> bool {
    args.iter().any(|a| {
        matches!(
            a.as_str(),
            "-p" | "-u" | "--patch" | "-c" | "--cc" | "-m" | "--patch-with-stat" | "--patch-with-raw"
        ) || ["-G", "-S", "-L", "--word-diff", "--color-words", "--find-object"]
            .iter()
            .any(|p| a.starts_with(p))
            // Short flags run together: `-pn`.
            || (a.starts_with('-') && !a.starts_with("--") && a.len() > 2 && a[1..].starts_with('p'))
    })
}

/// Options that keep `git show` from printing a patch.
fn shows_no_patch(args: &[String]) -> bool {
    args.iter().any(|a| {
        matches!(
            a.as_str(),
            "-s" | "--no-patch"
                | "--stat"
                | "--shortstat"
                | "--numstat"
                | "--name-only"
                | "--name-status"
                | "--summary"
                | "--raw"
        )
    }) && !shows_patches(args)
}

/// Whether an operand before `--` names a file rather than a revision:
/// its last segment has a dot (`src/a.rs`, `README.md`) and it has none of
/// a revision's syntax (`~`, `^`, `@`, `:`, `..`). Anything else (`main`,
/// `origin/main`, `v1`, `src`) is taken for a revision: a read of all
/// history, the stricter reading.
pub(crate) fn names_a_file(operand: &str) -> bool {
    let last = operand.rsplit('/').next().unwrap_or(operand);
    last.contains('.')
        && !last.starts_with('.')
        && !operand.contains(['~', '^', '@', ':'])
        && !operand.contains("..")
}

/// The folders whose history `git SUB ARGS` reads: the pathspecs after
/// `--` (or the operands before it that name files), or the whole tree
/// (`.`); empty when it reads no history. `positional` are the operands
/// before `--` (options' values left out).
pub(super) fn history_reads(
    sub: &str,
    args: &[String],
    positional: &[&str],
    pathspecs: &[&str],
) -> Vec<String> {
    let has = |o: &str| args.iter().any(|a| a == o);
    // `git diff HEAD~1 src/a.rs`, `git log -p a.rs`: files, past the
    // revisions.
    let (files, revs): (Vec<&str>, Vec<&str>) =
        if matches!(sub, "diff" | "log" | "show" | "whatchanged") {
            positional.iter().partition(|p| names_a_file(p))
        } else {
            (Vec::new(), positional.to_vec())
        };
    let pathspecs: Vec<&str> = pathspecs.iter().copied().chain(files).collect();
    let positional = &revs[..];
    let reads = match sub {
        "log" | "whatchanged" => shows_patches(args),
        // `git show REV:PATH` reads PATH (a read the caller adds);
        // anything else shows a commit, its patch included.
        "show" => {
            !shows_no_patch(args)
                && (positional.is_empty() || !positional.iter().all(|p| p.contains(':')))
        }
        "diff" => !has("--no-index") && !positional.is_empty(),
        "format-patch" | "archive" | "bundle" | "fast-export" | "range-diff" | "unpack-file" => {
            true
        }
        // The first operand is the pattern unless `-e`/`-f` gave it.
        "grep" => {
            let pattern_given = args
                .iter()
                .any(|a| matches!(a.as_str(), "-e" | "-f") || a.starts_with("--regexp"));
            let revs = if pattern_given {
                positional.len()
            } else {
                positional.len().saturating_sub(1)
            };
            revs > 0 || has("--cached")
        }
        // `-t`, `-s`, `-e` tell an object's type, size or existence.
        "cat-file" => {
            let shows = args.iter().any(|a| {
                matches!(a.as_str(), "-p" | "blob" | "tree" | "commit" | "tag")
                    || a.starts_with("--textconv")
                    || a.starts_with("--filters")
            });
            args.iter().any(|a| a.starts_with("--batch"))
                || (shows
                    && positional.iter().any(|p| {
                        !p.contains(':') && !matches!(*p, "blob" | "tree" | "commit" | "tag")
                    }))
        }
        "stash" => positional.first() == Some(&"show") && shows_patches(args),
        "fsck" => has("--lost-found"),
        _ => false,
    };
    if !reads {
        Vec::new()
    } else if pathspecs.is_empty() {
        vec![".".into()]
    } else {
        pathspecs.iter().map(|p| p.to_string()).collect()
    }
}
