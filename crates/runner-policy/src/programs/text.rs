//! Text tools whose first operand is program text, not a file: `grep` and
//! `rg` (a pattern), `sed` (a script; `-i` writes every file operand),
//! `awk` (a program), `jq` (a filter). The text can also come from an
//! option (`-e`) or a file (`-f FILE`, itself read).

use super::spec::{Spec, reader};

/// The shapes of the text tools.
pub(super) const SPECS: &[Spec] = &[
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
];
