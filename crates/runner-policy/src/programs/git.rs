//! git: the subcommands that only read, and the files git writes outside
//! its own folder (`--output`, `format-patch -o`).

use super::spec::FileOperands;

/// git writes files named by `--output` (diff, log, show) and by
/// `format-patch -o`; the other writes of git stay inside `.git` and the
/// worktree that git subcommand rules govern.
pub(super) fn operands(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let format_patch = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|sub| sub == "format-patch");
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--output-directory="))
        {
            out.writes.push(v.to_string());
        } else if a == "--output" || a == "--output-directory" || (format_patch && a == "-o") {
            out.writes.extend(args.get(i + 1).cloned());
            i += 1;
        } else if format_patch
            && let Some(v) = a.strip_prefix("-o")
            && !v.is_empty()
        {
            out.writes.push(v.to_string());
        }
        i += 1;
    }
    out
}

/// git subcommands that only read.
pub const READ_ONLY_GIT: &[&str] = &[
    "status",
    "diff",
    "log",
    "show",
    "blame",
    "rev-parse",
    "ls-files",
    "branch",
    "describe",
    "grep",
    "shortlog",
    "cat-file",
];

/// True for a git command that only reads.
pub(super) fn only_reads(args: &[String]) -> bool {
    args.first()
        .is_some_and(|s| READ_ONLY_GIT.contains(&s.as_str()))
        && !args
            .iter()
            .any(|w| w == "--output" || w.starts_with("--output="))
}
