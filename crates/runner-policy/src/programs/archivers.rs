//! Archivers and compressors.
//!
//! - `tar`: in create mode (`-c`, `-r`, `-u`) it reads whole folders and
//!   writes the archive (`-f`; `--remove-files` deletes what it read); in
//!   extract mode (`-x`) it reads the archive and writes anything beneath
//!   the folder it extracts into (`-C DIR`, else the current one), where the
//!   archive says; `-t` and `-d` only read. The old spelling without a dash
//!   (`tar czf a.tgz src`) is read too. Options that run commands fail
//!   closed: `--to-command`, `--checkpoint-action=exec=`,
//!   `--use-compress-program`/`-I`, `--info-script`/`-F`,
//!   `--new-volume-script`, `--rsh-command`; so do file lists read at run
//!   time (`-T FILE`).
//! - `zip ARCHIVE FILES`: reads the files (`-r`: whole folders), writes the
//!   archive; `-m` deletes what it read; `-T`/`-TT` runs a test command.
//!   `unzip ARCHIVE [-d DIR]`: writes beneath DIR (or the current folder),
//!   unless it only lists or tests (`-l`, `-t`, `-v`, `-p`, `-Z`).
//! - `gzip`, `bzip2`, `xz`, `zstd`, `lz4` and their `un` forms replace each
//!   operand (`-c`, `-t`, `-l` only read; `-r` whole folders).

use super::spec::{Arg, FileOperands, Options};

const TAR_OPTIONS: Options = Options {
    short_values: "fCTXIFbgKLNVH",
    long_values: &[
        "--file",
        "--directory",
        "--files-from",
        "--exclude-from",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--blocking-factor",
        "--listed-incremental",
        "--starting-file",
        "--tape-length",
        "--newer",
        "--after-date",
        "--label",
        "--format",
        "--owner",
        "--group",
        "--mode",
        "--mtime",
        "--transform",
        "--xform",
        "--exclude",
        "--to-command",
        "--checkpoint-action",
        "--rsh-command",
        "--index-file",
        "--volno-file",
        "--strip-components",
    ],
    optional: &[],
};

/// `tar`.
pub(super) fn tar(args: &[String]) -> FileOperands {
    // `tar czf a.tgz src`: the first word is a cluster of options.
    let mut owned;
    let args = match args.first() {
        Some(first)
            if !first.starts_with('-') && first.chars().all(|c| c.is_ascii_alphabetic()) =>
        {
            owned = vec![format!("-{first}")];
            owned.extend(args[1..].iter().cloned());
            owned.as_slice()
        }
        _ => args,
    };
    let mut out = FileOperands::default();
    let (mut create, mut extract, mut remove) = (false, false, false);
    let mut archive = None;
    let mut into = None;
    let mut operands = Vec::new();
    for arg in TAR_OPTIONS.parse(args) {
        let (name, value) = match arg {
            Arg::Operand(o) => {
                operands.push(o.to_string());
                continue;
            }
            Arg::Opt { name, value } => (name, value.map(str::to_string)),
        };
        match name.as_str() {
            "-c" | "--create" | "-r" | "--append" | "-u" | "--update" | "-A" | "--catenate"
            | "--concatenate" => create = true,
            "-x" | "--extract" | "--get" => extract = true,
            "--remove-files" => remove = true,
            "-f" | "--file" => archive = value,
            "-C" | "--directory" => into = value,
            "-X" | "--exclude-from" => out.reads.extend(value),
            "-g" | "--listed-incremental" | "--index-file" | "--volno-file" => {
                out.writes.extend(value)
            }
            "-T" | "--files-from" => {
                out.opaque("`tar -T` reads the names of the files to archive at run time")
            }
            "-I"
            | "--use-compress-program"
            | "--to-command"
            | "-F"
            | "--info-script"
            | "--new-volume-script"
            | "--rsh-command" => out.starts(format!("`tar {name}` runs a command")),
            "--checkpoint-action" if value.as_deref().is_some_and(|v| v.starts_with("exec")) => {
                out.starts("`tar --checkpoint-action=exec` runs a command")
            }
            "-O" | "--to-stdout" => into = Some("/dev/stdout".into()),
            _ => {}
        }
    }
    let archive = archive.filter(|a| a != "-");
    // Operands are relative to `-C DIR` when creating.
    let under = |p: &str| match (&into, p.starts_with('/')) {
        (Some(d), false) if d != "/dev/stdout" => format!("{d}/{p}"),
        _ => p.to_string(),
    };
    if create {
        out.writes.extend(archive);
        let trees: Vec<String> = operands.iter().map(|p| under(p)).collect();
        if remove {
            out.tree_writes.extend(trees.clone());
        }
        out.tree_reads.extend(trees);
    } else if extract {
        out.reads.extend(archive);
        match into.as_deref() {
            Some("/dev/stdout") => {}
            Some(d) => out.tree_writes.push(d.to_string()),
            None => out.tree_writes.push(".".into()),
        }
    } else {
        // List or compare: reads the archive (and, comparing, the files).
        out.reads.extend(archive);
        out.reads.extend(operands.iter().map(|p| under(p)));
    }
    out
}

/// `zip [OPTIONS] ARCHIVE FILES...`.
pub(super) fn zip(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "bntxiPZ",
        long_values: &[
            "--temp-path",
            "--suffixes",
            "--exclude",
            "--include",
            "--password",
            "--unzip-command",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let (mut recursive, mut moves) = (false, false);
    let mut operands = Vec::new();
    for arg in opts.parse(args) {
        match arg {
            Arg::Operand(o) => operands.push(o.to_string()),
            Arg::Opt { name, .. } => match name.as_str() {
                "-r" | "-R" | "--recurse-paths" => recursive = true,
                "-m" | "--move" => moves = true,
                "-T" | "--test" | "--unzip-command" => out.opaque("`zip -T` runs a test command"),
                _ => {}
            },
        }
    }
    let mut operands = operands.into_iter();
    out.writes.extend(operands.next());
    let files: Vec<String> = operands.collect();
    if moves {
        out.tree_writes.extend(files.clone());
    }
    if recursive {
        out.tree_reads.extend(files);
    } else {
        out.reads.extend(files);
    }
    out
}

/// `unzip ARCHIVE [MEMBERS] [-d DIR]`.
pub(super) fn unzip(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "dxP",
        long_values: &[],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut into = None;
    let mut only_reads = false;
    let mut operands = Vec::new();
    for arg in opts.parse(args) {
        match arg {
            Arg::Operand(o) => operands.push(o.to_string()),
            Arg::Opt { name, value } => match name.as_str() {
                "-d" => into = value.map(str::to_string),
                "-l" | "-t" | "-v" | "-p" | "-Z" | "-z" => only_reads = true,
                _ => {}
            },
        }
    }
    out.reads.extend(operands.into_iter().next());
    if !only_reads {
        out.tree_writes.push(into.unwrap_or_else(|| ".".into()));
    }
    out
}

/// Compressors: each operand is replaced by its compressed (or
/// decompressed) form unless the output goes to stdout.
pub(super) fn compressor(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "SbBTMo",
        long_values: &[
            "--output",
            "--suffix",
            "--threads",
            "--memlimit",
            "--format",
            "--block-size",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let (mut stdout, mut recursive) = (false, false);
    let mut files = Vec::new();
    for arg in opts.parse(args) {
        match arg {
            Arg::Operand(o) => files.push(o.to_string()),
            Arg::Opt { name, value } => match name.as_str() {
                "-c" | "--stdout" | "--to-stdout" | "-t" | "--test" | "-l" | "--list" => {
                    stdout = true
                }
                "-r" | "--recursive" => recursive = true,
                "-o" | "--output" => out.writes.extend(value.map(str::to_string)),
                _ => {}
            },
        }
    }
    match (stdout, recursive) {
        (true, true) => out.tree_reads.extend(files),
        (true, false) => out.reads.extend(files),
        (false, true) => out.tree_writes.extend(files),
        (false, false) => out.writes.extend(files),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn archives() {
        assert_eq!(ops("tar -czf a.tgz src"), "write a.tgz; tree-read src");
        assert_eq!(ops("tar czf a.tgz src"), "write a.tgz; tree-read src");
        assert_eq!(ops("tar -cf - ."), "tree-read .");
        assert_eq!(
            ops("tar -C sub -cf a.tar ."),
            "write a.tar; tree-read sub/."
        );
        assert_eq!(ops("tar -xf a.tar"), "read a.tar; tree-write .");
        assert_eq!(ops("tar -xzf a.tgz -C out"), "read a.tgz; tree-write out");
        assert_eq!(
            ops("tar --extract --file=a.tar --directory=out"),
            "read a.tar; tree-write out"
        );
        assert_eq!(ops("tar -tf a.tar"), "read a.tar");
        assert_eq!(ops("tar -xOf a.tar x"), "read a.tar");
        assert_eq!(
            ops("tar -cf a.tar --remove-files d"),
            "write a.tar; tree-read d; tree-write d"
        );
        assert!(ops("tar -xf a.tar --to-command=sh").starts_with("opaque"));
        assert!(
            ops("tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=sh d").starts_with("opaque")
        );
        assert!(ops("tar -I zstd -cf a.tar d").starts_with("opaque"));
        assert!(ops("tar --use-compress-program=sh -cf a d").starts_with("opaque"));
        assert!(ops("tar -cf a.tar -T list").starts_with("opaque"));
        assert_eq!(ops("zip -r a.zip src"), "write a.zip; tree-read src");
        assert!(ops("zip -T -TT sh a.zip f").starts_with("opaque"));
        assert_eq!(ops("unzip a.zip -d out"), "read a.zip; tree-write out");
        assert_eq!(ops("unzip -l a.zip"), "read a.zip");
        assert_eq!(ops("gzip f"), "write f");
        assert_eq!(ops("gzip -c f"), "read f");
        assert_eq!(ops("gunzip -r d"), "tree-write d");
    }

    /// Each option that names a file, and what only looks like one: a
    /// first word that is no option cluster, a checkpoint action that runs
    /// nothing, operands beside `-O` (not under `/dev/stdout`).
    #[test]
    fn archive_options_that_name_files() {
        assert_eq!(ops("tar ./d"), "read ./d");
        assert_eq!(
            ops("tar -cf a.tar -X skip.txt d"),
            "read skip.txt; write a.tar; tree-read d"
        );
        assert_eq!(
            ops("tar -cf a.tar -g snap d"),
            "write snap a.tar; tree-read d"
        );
        assert_eq!(
            ops("tar -cf a.tar --checkpoint=1 --checkpoint-action=dot d"),
            "write a.tar; tree-read d"
        );
        assert_eq!(ops("tar -t -O -f a.tar x"), "read a.tar x");
        assert_eq!(ops("zip -m a.zip f"), "read f; write a.zip; tree-write f");
        assert_eq!(ops("zstd f -o out.zst"), "write out.zst f");
        // `-o FILE` is written even where the operands are only read.
        assert_eq!(ops("zstd -c -o out.zst f"), "read f; write out.zst");
        assert_eq!(ops("zstd -c --output out.zst f"), "read f; write out.zst");
    }
}
