//! Coreutils and their kin: readers (`cat`, `head`, `wc`, `sha256sum`
//! ...), writers of every operand (`rm`, `mv`, `touch`, `tee`, `mkdir`,
//! `chmod`), copiers whose last operand is written (`cp`, `ln`,
//! `install`), and `dd`, which names its files as `if=`/`of=`.

use super::spec::{FileOperands, Spec, Writes, reader, writer};

/// The shapes of coreutils.
pub(super) const SPECS: &[Spec] = &[
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
