//! Coreutils and their kin: readers (`cat`, `head`, `wc`, `sha256sum`
//! ...), writers of every operand (`rm`, `touch`, `tee`, `mkdir`, `chmod`),
//! movers (`mv`, whose operands are whole folders), copiers whose last
//! operand is written and may be a folder (`cp`, `ln`, `install`; `-t DIR`),
//! `split`/`csplit` (an output prefix), and `dd`, which names its files as
//! `if=`/`of=`. `-r`/`-R`/`-a` make operands whole folders.

use super::spec::{FileOperands, Spec, Writes, reader, writer};

const RECURSIVE: &[&str] = &["-r", "-R", "--recursive", "-a", "--archive"];

/// The long options of `cp`, `ln` and `install` that take a value.
const COPY_VALUES: &[&str] = &[
    "--target-directory",
    "--suffix",
    "--mode",
    "--owner",
    "--group",
    "--backup",
    "--reflink",
    "--sparse",
    "--preserve",
    "--no-preserve",
    "--strip-program",
    "--context",
];

/// The shapes of coreutils.
pub(super) const SPECS: &[Spec] = &[
    // Readers whose options take no value, or whose valued options are
    // rare: an unknown option's value is taken for a file, which can only
    // add a signature.
    reader(
        &[
            "cat",
            "nl",
            "tac",
            "less",
            "more",
            "strings",
            "file",
            "wc",
            "comm",
            "rev",
            "tsort",
            "readlink",
            "realpath",
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "cksum",
            "sum",
            "base32",
            "basenc",
            "expand",
            "unexpand",
            "pr",
            "ptx",
        ],
        "",
        &["--files0-from"],
    ),
    reader(
        &["od"],
        "AjNtwS",
        &[
            "--address-radix",
            "--skip-bytes",
            "--read-bytes",
            "--format",
            "--width",
            "--strings",
        ],
    ),
    reader(&["xxd"], "cglso", &["-cols", "-groupsize", "-len", "-seek"]),
    reader(&["fold", "fmt"], "wpg", &["--width"]),
    // GNU's `base64 [-w COLS] [FILE]`; BSD's and macOS's `-i FILE` reads
    // and `-o FILE` writes (`-b COUNT` breaks lines).
    Spec {
        read_opts: &["-i", "--input"],
        write_opts: &["-o", "--output"],
        ..reader(
            &["base64", "base32", "basenc"],
            "wbio",
            &["--wrap", "--break", "--input", "--output"],
        )
    },
    reader(&["paste"], "d", &["--delimiters"]),
    // `ls` reads the folders it lists (their names and metadata): inside
    // the workspace that is what the agent's own tools show; elsewhere it
    // is the machine's layout.
    reader(
        &["ls", "dir", "vdir"],
        "IwT",
        &[
            "--ignore",
            "--hide",
            "--width",
            "--tabsize",
            "--block-size",
            "--format",
            "--sort",
            "--time",
            "--time-style",
            "--color",
            "--indicator-style",
            "--quoting-style",
        ],
    ),
    reader(
        &["column"],
        "scoN",
        &["--separator", "--output-separator", "--table-columns"],
    ),
    reader(&["join"], "tj12oe", &[]),
    reader(&["cmp"], "in", &["--ignore-initial", "--bytes"]),
    reader(&["stat"], "c", &["--format", "--printf"]),
    Spec {
        read_opts: &["-X", "--exclude-from"],
        ..reader(
            &["du"],
            "dBtX",
            &[
                "--max-depth",
                "--block-size",
                "--threshold",
                "--exclude",
                "--exclude-from",
            ],
        )
    },
    Spec {
        write_opts: &["-o", "--output"],
        read_opts: &["--random-source"],
        ..reader(
            &["shuf"],
            "noi",
            &[
                "--head-count",
                "--output",
                "--input-range",
                "--random-source",
            ],
        )
    },
    reader(
        &["head", "tail"],
        "ncs",
        &["--lines", "--bytes", "--sleep-interval", "--pid"],
    ),
    reader(
        &["cut"],
        "dfcb",
        &["--delimiter", "--fields", "--characters", "--bytes"],
    ),
    Spec {
        recursive: &["-r", "--recursive"],
        ..reader(
            &["diff", "diff3", "sdiff"],
            "CUFIxSWLD",
            &[
                "--context",
                "--unified",
                "--label",
                "--exclude",
                "--exclude-from",
                "--from-file",
                "--to-file",
                "--starting-file",
                "--ignore-matching-lines",
                "--width",
                "--horizon-lines",
            ],
        )
    },
    Spec {
        write_opts: &["-o", "--output"],
        ..reader(
            &["sort"],
            "ktSTo",
            &[
                "--key",
                "--field-separator",
                "--buffer-size",
                "--temporary-directory",
                "--output",
                "--files0-from",
                "--parallel",
                "--compress-program",
                "--random-source",
                "--batch-size",
            ],
        )
    },
    Spec {
        writes: Writes::Second,
        ..reader(
            &["uniq"],
            "fsw",
            &["--skip-fields", "--skip-chars", "--check-chars"],
        )
    },
    Spec {
        tree_write_opts: &["-t", "--target-directory"],
        recursive: RECURSIVE,
        ..writer(&["cp", "ln"], 0, Writes::Last, "tSmogb", COPY_VALUES)
    },
    // `install -d DIR...` makes (or changes the mode of) every operand.
    Spec {
        tree_write_opts: &["-t", "--target-directory"],
        in_place: &["-d", "--directory"],
        ..writer(&["install"], 0, Writes::Last, "tSmogb", COPY_VALUES)
    },
    Spec {
        tree_write_opts: &["-t", "--target-directory"],
        ..writer(
            &["mv"],
            0,
            Writes::AllTrees,
            "tSb",
            &["--target-directory", "--suffix", "--backup"],
        )
    },
    Spec {
        recursive: RECURSIVE,
        ..writer(
            &["rm", "rmdir", "unlink", "shred"],
            0,
            Writes::All,
            "nsu",
            &["--iterations", "--size", "--random-source", "--interactive"],
        )
    },
    Spec {
        read_opts: &["-r", "--reference"],
        ..writer(
            &["touch"],
            0,
            Writes::All,
            "rdt",
            &["--reference", "--date", "--time"],
        )
    },
    writer(
        &["mkdir", "mkfifo", "mknod"],
        0,
        Writes::All,
        "mZ",
        &["--mode", "--context"],
    ),
    writer(&["tee"], 0, Writes::All, "", &["--output-error"]),
    Spec {
        read_opts: &["-r", "--reference"],
        ..writer(
            &["truncate"],
            0,
            Writes::All,
            "sr",
            &["--size", "--reference"],
        )
    },
    Spec {
        recursive: &["-R", "--recursive"],
        ..writer(
            &["chmod", "chown", "chgrp"],
            1,
            Writes::All,
            "",
            &["--reference", "--from"],
        )
    },
];

/// `dd if=IN of=OUT`.
pub(super) fn dd(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    for a in args {
        if let Some(f) = a.strip_prefix("if=") {
            out.reads.push(f.to_string());
        } else if let Some(f) = a.strip_prefix("of=") {
            out.writes.push(f.to_string());
        }
    }
    out
}

/// `split [OPTIONS] [INPUT [PREFIX]]` and `csplit [-f PREFIX] INPUT
/// PATTERN...`: the input is read, files named PREFIX... are written.
pub(super) fn split(program: &str, args: &[String]) -> FileOperands {
    let spec = reader(
        &["split"],
        "abClnfdx",
        &[
            "--prefix",
            "--suffix-length",
            "--bytes",
            "--lines",
            "--line-bytes",
            "--number",
            "--additional-suffix",
            "--filter",
            "--separator",
        ],
    );
    let mut out = FileOperands::default();
    let mut operands = Vec::new();
    let mut prefix = None;
    for arg in spec.options.parse(args) {
        match arg {
            super::spec::Arg::Operand(o) => operands.push(o.to_string()),
            super::spec::Arg::Opt { name, value } => match name.as_str() {
                "-f" | "--prefix" if program == "csplit" => prefix = value.map(str::to_string),
                "--filter" => out.starts("`split --filter` runs a command on each piece"),
                _ => {}
            },
        }
    }
    let mut operands = operands.into_iter();
    out.reads.extend(operands.next());
    let prefix = match program {
        "split" => prefix.or(operands.next()).unwrap_or_else(|| "x".into()),
        _ => prefix.unwrap_or_else(|| "xx".into()),
    };
    out.writes.push(format!("{prefix}*"));
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn readers_writers_and_folders() {
        assert_eq!(ops("head -n 5 f"), "read f");
        assert_eq!(ops("head -n5 f"), "read f");
        assert_eq!(ops("cut -d , -f 1 f"), "read f");
        assert_eq!(ops("sort -o out in"), "read in; write out");
        // BSD/macOS base64 names its input and output with options.
        assert_eq!(ops("base64 -i in -o out"), "read in; write out");
        assert_eq!(ops("base64 --decode -o out in"), "read in; write out");
        assert_eq!(ops("base64 -w 0 in"), "read in");
        assert_eq!(ops("sort --output=out in"), "read in; write out");
        // Without -r: exactly DEST or DEST/NAME (issue 29, item 4).
        assert_eq!(ops("cp a b dest"), "read a b; write dest dest/a dest/b");
        assert_eq!(ops("cp src/a.rs out/"), "read src/a.rs; write out/a.rs");
        assert_eq!(ops("ln -s ../a link"), "read ../a; write link link/a");
        assert_eq!(ops("cp src/*.rs out"), "read src/*.rs; tree-write out");
        assert_eq!(ops("cp --parents src/a out"), "read src/a; tree-write out");
        assert_eq!(ops("cp -r src out"), "tree-read src; tree-write out");
        assert_eq!(ops("cp -t dir a b"), "read a b; write dir/a dir/b");
        assert_eq!(ops("cp --target-directory=dir a"), "read a; write dir/a");
        assert_eq!(ops("cp -rt dir a"), "tree-read a; tree-write dir");
        assert_eq!(ops("mv a b"), "tree-write a b");
        assert_eq!(ops("rm -rf x y"), "tree-write x y");
        assert_eq!(ops("rm x"), "write x");
        assert_eq!(ops("chmod 755 f"), "write f");
        assert_eq!(ops("chmod -R 755 d"), "tree-write d");
        assert_eq!(ops("touch -r ref f"), "read ref; write f");
        assert_eq!(ops("dd if=a of=b"), "read a; write b");
        assert_eq!(ops("split -l 10 in part"), "read in; write part*");
        assert_eq!(ops("diff -r a b"), "tree-read a b");
        assert_eq!(ops("sha256sum f"), "read f");
        assert_eq!(ops("uniq in out"), "read in; write out");
        assert_eq!(ops("uniq in"), "read in");
        // One operand: `ln -s TARGET` makes ./NAME (`cp` and `install`
        // refuse it: stricter).
        assert_eq!(
            ops("ln -s ../../evil.yml"),
            "read ../../evil.yml; write ./evil.yml"
        );
        assert_eq!(ops("cp a"), "read a; write ./a");
        assert_eq!(ops("cp"), "");
        assert_eq!(ops("install -d .github/x"), "write .github/x");
        assert_eq!(ops("install -t bin a b"), "read a b; write bin/a bin/b");
        assert_eq!(ops("install -m 644 a out/"), "read a; write out/a");
        assert_eq!(ops("cp -d a b"), "read a; write b b/a");
    }

    /// Files named by options: an exclusion list, a random source, a
    /// reference, an output, a target folder; and split's prefix.
    #[test]
    fn files_named_by_options() {
        assert_eq!(ops("du -X .env src"), "read .env src");
        assert_eq!(ops("shuf -o out in"), "read in; write out");
        assert_eq!(ops("shuf --random-source=.env in"), "read .env in");
        assert_eq!(ops("mv -t dir a"), "tree-write dir a");
        assert_eq!(ops("truncate -r .env f"), "read .env; write f");
        assert_eq!(ops("csplit -f pre in 5"), "read in; write pre*");
        assert_eq!(ops("csplit --prefix=pre in 5"), "read in; write pre*");
        assert!(ops("split --filter=sh in").starts_with("opaque: `split --filter`"));
    }
}
