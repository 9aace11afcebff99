//! What well-known programs do with their operands.
//!
//! The shell analysis turns a command's words into `Read(path)` and
//! `Edit(path)` signatures from this table: the files a reader reads (`cat`,
//! `grep PATTERN FILE`, `sed -f SCRIPT`), and the files a writer writes
//! (`sed -i`, `sort -o`, the target of `cp`, every operand of `rm`, `mv`,
//! `touch`, `tee`, `find -delete`, `git diff --output`). So a deny rule on a
//! path holds whichever program touches it. Options that take a value are skipped with their value; an
//! unknown option is taken for a flag, which at worst adds a signature and
//! so only makes a decision stricter.

/// Which operands a program writes.
#[derive(Clone, Copy)]
enum Writes {
    None,
    /// Every operand (`rm`, `touch`, `tee`, `mv`).
    All,
    /// The last operand when there are two or more (`cp`, `ln`, `install`).
    Last,
    /// The second operand (`uniq IN OUT`).
    Second,
}

struct Spec {
    programs: &'static [&'static str],
    /// Operands before the files that are not files (a pattern, a mode),
    /// unless the program text came from an option.
    leading: usize,
    /// Options followed by a value that is not a file.
    value_opts: &'static [&'static str],
    /// Options whose value is the program text (`grep -e`, `sed -e`).
    text_opts: &'static [&'static str],
    /// Options whose value is a file read as program text (`-f`).
    text_file_opts: &'static [&'static str],
    /// Options whose value is a file written (`sort -o`, `cp -t`).
    write_opts: &'static [&'static str],
    writes: Writes,
    /// Flags that turn every file operand into a written one (`sed -i`).
    in_place: &'static [&'static str],
}

const fn reader(programs: &'static [&'static str], value_opts: &'static [&'static str]) -> Spec {
    Spec {
        programs,
        leading: 0,
        value_opts,
        text_opts: &[],
        text_file_opts: &[],
        write_opts: &[],
        writes: Writes::None,
        in_place: &[],
    }
}

const fn writer(
    programs: &'static [&'static str],
    leading: usize,
    writes: Writes,
    value_opts: &'static [&'static str],
) -> Spec {
    Spec {
        programs,
        leading,
        value_opts,
        text_opts: &[],
        text_file_opts: &[],
        write_opts: &["-t", "--target-directory"],
        writes,
        in_place: &[],
    }
}

const SPECS: &[Spec] = &[
    reader(
        &[
            "cat",
            "nl",
            "tac",
            "less",
            "more",
            "od",
            "xxd",
            "hexdump",
            "strings",
            "base64",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "file",
            "wc",
            "diff",
            "cmp",
            "comm",
            "paste",
            "column",
            "fold",
            "expand",
            "rev",
        ],
        &["-n", "-w", "-s", "-j", "-N", "-t", "-U"],
    ),
    reader(&["head", "tail"], &["-n", "-c", "--lines", "--bytes"]),
    reader(
        &["cut"],
        &["-d", "-f", "-c", "-b", "--delimiter", "--fields"],
    ),
    Spec {
        write_opts: &["-o", "--output"],
        ..reader(
            &["sort"],
            &["-k", "-t", "-S", "-T", "--key", "--field-separator"],
        )
    },
    Spec {
        writes: Writes::Second,
        ..reader(&["uniq"], &["-f", "-s", "-w"])
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["grep", "egrep", "fgrep"],
            &[
                "-A",
                "-B",
                "-C",
                "-m",
                "--max-count",
                "--include",
                "--exclude",
                "--label",
            ],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["rg"],
            &[
                "-A",
                "-B",
                "-C",
                "-m",
                "-g",
                "-t",
                "-T",
                "-M",
                "--glob",
                "--type",
                "--max-count",
            ],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--expression"],
        text_file_opts: &["-f", "--file"],
        in_place: &["-i", "--in-place"],
        ..reader(&["sed"], &["-l", "--line-length"])
    },
    Spec {
        leading: 1,
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["awk", "gawk", "mawk"],
            &["-F", "-v", "--field-separator", "--assign"],
        )
    },
    Spec {
        leading: 1,
        text_file_opts: &["-f", "--from-file"],
        ..reader(&["jq"], &["--arg", "--argjson", "--indent"])
    },
    writer(
        &["cp", "ln", "install"],
        0,
        Writes::Last,
        &["-m", "-o", "-g", "-S", "--mode", "--suffix"],
    ),
    writer(
        &[
            "mv", "rm", "rmdir", "unlink", "touch", "mkdir", "shred", "tee",
        ],
        0,
        Writes::All,
        &["-m", "-d", "-r", "-t", "--mode", "--date", "--reference"],
    ),
    writer(
        &["truncate"],
        0,
        Writes::All,
        &["-s", "--size", "-r", "--reference"],
    ),
    writer(
        &["chmod", "chown", "chgrp"],
        1,
        Writes::All,
        &["--reference"],
    ),
];

/// The file operands of one command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FileOperands {
    pub reads: Vec<String>,
    pub writes: Vec<String>,
}

/// What `program` (a base name) reads and writes, given its arguments.
pub fn file_operands(program: &str, args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    if program == "dd" {
        for a in args {
            if let Some(f) = a.strip_prefix("if=") {
                out.reads.push(f.to_string());
            } else if let Some(f) = a.strip_prefix("of=") {
                out.writes.push(f.to_string());
            }
        }
        return out;
    }
    if program == "find" {
        return find_operands(args);
    }
    if program == "git" {
        return git_operands(args);
    }
    let Some(spec) = SPECS.iter().find(|s| s.programs.contains(&program)) else {
        return out;
    };
    let mut operands: Vec<&String> = Vec::new();
    let mut text_given = false;
    let mut in_place = false;
    let mut options_done = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let value = args.get(i + 1);
        if options_done || !a.starts_with('-') || a == "-" {
            operands.push(&args[i]);
        } else if a == "--" {
            options_done = true;
        } else if spec.text_opts.contains(&a) {
            text_given = true;
            i += 1;
        } else if spec.text_file_opts.contains(&a) {
            text_given = true;
            out.reads.extend(value.cloned());
            i += 1;
        } else if spec.write_opts.contains(&a) {
            out.writes.extend(value.cloned());
            i += 1;
        } else if spec.value_opts.contains(&a) {
            i += 1;
        } else if spec
            .in_place
            .iter()
            .any(|f| a == *f || (f.len() == 2 && a.starts_with(f)))
        {
            in_place = true;
        } else if let Some((opt, v)) = a.split_once('=') {
            // `--output=FILE`, `--file=FILE`
            if spec.write_opts.contains(&opt) {
                out.writes.push(v.to_string());
            } else if spec.text_file_opts.contains(&opt) {
                text_given = true;
                out.reads.push(v.to_string());
            } else if spec.text_opts.contains(&opt) {
                text_given = true;
            }
        }
        i += 1;
    }
    let skip = if text_given { 0 } else { spec.leading };
    let files: Vec<String> = operands.into_iter().skip(skip).cloned().collect();
    match (spec.writes, in_place) {
        (_, true) | (Writes::All, _) => out.writes.extend(files),
        (Writes::Last, _) if files.len() >= 2 => {
            let (last, rest) = files.split_last().expect("two or more");
            out.reads.extend(rest.iter().cloned());
            out.writes.push(last.clone());
        }
        (Writes::Second, _) if files.len() >= 2 => {
            out.reads.push(files[0].clone());
            out.writes.push(files[1].clone());
        }
        _ => out.reads.extend(files),
    }
    out
}

/// `find ROOTS... EXPRESSION`: the roots are read, and written when the
/// expression has `-delete`; `-fprint FILE` and its kind write FILE.
fn find_operands(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let mut i = 0;
    // Leading `-H`, `-L`, `-P`, `-D debug`, `-Olevel`.
    while i < args.len() && matches!(args[i].as_str(), "-H" | "-L" | "-P" | "-D" | "--")
        || args.get(i).is_some_and(|a| a.starts_with("-O"))
    {
        i += if args[i] == "-D" { 2 } else { 1 };
    }
    let mut roots = Vec::new();
    while i < args.len()
        && !args[i].starts_with('-')
        && !matches!(args[i].as_str(), "(" | "!" | ",")
    {
        roots.push(args[i].clone());
        i += 1;
    }
    if roots.is_empty() {
        roots.push(".".to_string());
    }
    let mut deletes = false;
    while i < args.len() {
        match args[i].as_str() {
            "-delete" => deletes = true,
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                out.writes.extend(args.get(i + 1).cloned());
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    if deletes {
        out.writes.extend(roots);
    } else {
        out.reads.extend(roots);
    }
    out
}

/// git writes files named by `--output` (diff, log, show) and by
/// `format-patch -o`; the other writes of git stay inside `.git` and the
/// worktree that git subcommand rules govern.
fn git_operands(args: &[String]) -> FileOperands {
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

/// Programs that only read (for concurrency: calls made of these may run in
/// parallel), unless their operands show a write.
pub const READ_ONLY_PROGRAMS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "echo",
    "printf",
    "pwd",
    "true",
    "false",
    "sleep",
    "stat",
    "file",
    "du",
    "df",
    "tree",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "which",
    "type",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "printenv",
    "whoami",
    "id",
    "uname",
    "nl",
    "tac",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "jq",
    "test",
    "[",
    "less",
    "more",
    "column",
    "seq",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "sed",
    "awk",
];

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

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(cmd: &str) -> (Vec<String>, Vec<String>) {
        let words: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        let o = file_operands(&words[0], &words[1..]);
        (o.reads, o.writes)
    }

    #[test]
    fn readers_and_writers() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(ops("grep -n foo a b"), (v(&["a", "b"]), v(&[])));
        assert_eq!(ops("grep -e foo a"), (v(&["a"]), v(&[])));
        assert_eq!(ops("head -n 5 f"), (v(&["f"]), v(&[])));
        assert_eq!(ops("sed -i s/a/b/ f"), (v(&[]), v(&["f"])));
        assert_eq!(ops("sed s/a/b/ f"), (v(&["f"]), v(&[])));
        assert_eq!(ops("sort -o out in"), (v(&["in"]), v(&["out"])));
        assert_eq!(ops("cp a b dest"), (v(&["a", "b"]), v(&["dest"])));
        assert_eq!(ops("rm -rf x y"), (v(&[]), v(&["x", "y"])));
        assert_eq!(ops("chmod 755 f"), (v(&[]), v(&["f"])));
        assert_eq!(ops("dd if=a of=b"), (v(&["a"]), v(&["b"])));
        assert_eq!(ops("cut -d , -f 1 f"), (v(&["f"]), v(&[])));
        assert_eq!(ops("make all"), (v(&[]), v(&[])));
        assert_eq!(ops("find src -name x"), (v(&["src"]), v(&[])));
        assert_eq!(ops("find -L a b -delete"), (v(&[]), v(&["a", "b"])));
        assert_eq!(ops("find -fprint out"), (v(&["."]), v(&["out"])));
        assert_eq!(ops("git diff --output=o"), (v(&[]), v(&["o"])));
        assert_eq!(ops("git log --output o"), (v(&[]), v(&["o"])));
        assert_eq!(ops("git format-patch -o dir HEAD~1"), (v(&[]), v(&["dir"])));
        assert_eq!(ops("git commit -o x"), (v(&[]), v(&[])));
    }
}
