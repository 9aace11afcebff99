//! Options whose value is a number, a count or free text, per program: a
//! value only known at run time (`make -j$(nproc)`, `git tag
//! --message=v"$VERSION"`) names no file and runs nothing, so it leaves the
//! command checkable. Options whose value is a path or a program are never
//! here: theirs stays strict (see the shell walk's `file_operands`).
//!
//! Each entry is what the program's manual says the value is; the model of
//! the program (this module's siblings) still reads the option and its
//! value apart, so an option a model does not know to take a value makes
//! the value an operand, which fails closed when only known at run time.

/// `(programs, options)`: options whose value is a number or text.
const VALUE_OPTIONS: &[(&[&str], &[&str])] = &[
    (
        &["make", "gmake"],
        &["-j", "--jobs", "-l", "--load-average", "--max-load"],
    ),
    (&["ninja"], &["-j", "-l", "-k"]),
    (&["cmake", "ctest"], &["-j", "--parallel"]),
    (
        &["cargo"],
        &[
            "-j",
            "--jobs",
            "--color",
            "--message-format",
            "--test-threads",
        ],
    ),
    (
        &["git"],
        &[
            "-m",
            "--message",
            "-n",
            "--max-count",
            "--depth",
            "--deepen",
            "--author",
            "--since",
            "--until",
            "--date",
            "-j",
            "--jobs",
            "--format",
            "--pretty",
            "--abbrev",
        ],
    ),
    (&["head", "tail"], &["-n", "-c", "--lines", "--bytes"]),
    (
        &["grep", "egrep", "fgrep", "rg"],
        &[
            "-m",
            "--max-count",
            "-A",
            "-B",
            "-C",
            "--after-context",
            "--before-context",
            "--context",
        ],
    ),
    (&["sort"], &["--parallel", "-S", "--buffer-size", "-t"]),
    (
        &["cut"],
        &["-f", "-d", "-c", "-b", "--fields", "--delimiter"],
    ),
    (
        &["xz", "zstd", "gzip", "pigz", "bzip2"],
        &["-T", "--threads"],
    ),
];

/// Whether `option` (`-j`, `--jobs`) of `program` takes a number or text.
pub fn takes_plain_value(program: &str, option: &str) -> bool {
    VALUE_OPTIONS
        .iter()
        .any(|(programs, options)| programs.contains(&program) && options.contains(&option))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_text_but_never_paths_or_programs() {
        for (p, o) in [
            ("make", "-j"),
            ("make", "--jobs"),
            ("cargo", "--jobs"),
            ("git", "--message"),
            ("git", "-m"),
            ("head", "-n"),
            ("grep", "-m"),
        ] {
            assert!(takes_plain_value(p, o), "{p} {o}");
        }
        for (p, o) in [
            ("make", "-f"),
            ("make", "-C"),
            ("make", "--file"),
            ("git", "-C"),
            ("git", "-c"),
            ("git", "--exec-path"),
            ("cargo", "--manifest-path"),
            ("grep", "-f"),
            ("sort", "-o"),
            ("tar", "-f"),
            ("rsync", "-e"),
            ("unknown", "-j"),
        ] {
            assert!(!takes_plain_value(p, o), "{p} {o}");
        }
    }
}
