//! Text tools whose first operand is program text, not a file: `grep` and
//! `rg` (a pattern; `-r` and `rg` itself search whole folders), `sed` (a
//! script; `-i` writes every file operand), `awk` (a program), `jq` (a
//! filter). The text can also come from an option (`-e`) or a file (`-f
//! FILE`, itself read).
//!
//! sed and awk are languages of their own, read by [`super::sed`] and
//! [`super::awk`] with the shapes kept here.

use super::spec::{Arg, FileOperands, Spec, reader};

/// The shapes of the text tools.
pub(super) const SPECS: &[Spec] = &[
    Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        recursive: &["-r", "-R", "--recursive", "--dereference-recursive"],
        recursive_dot: true,
        ..reader(
            &["grep", "egrep", "fgrep"],
            "ABCmefdD",
            &[
                "--after-context",
                "--before-context",
                "--context",
                "--max-count",
                "--include",
                "--exclude",
                "--exclude-from",
                "--exclude-dir",
                "--label",
                "--regexp",
                "--file",
                "--devices",
                "--directories",
                "--binary-files",
                "--color",
                "--colour",
            ],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--expression"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["sed"],
            "elf",
            &["--expression", "--file", "--line-length"],
        )
    },
    Spec {
        leading: 1,
        text_opts: &["-e", "--source"],
        text_file_opts: &["-f", "--file", "-i", "--include", "-E", "--exec"],
        ..reader(
            &["awk", "gawk", "mawk", "nawk"],
            "Ffveil",
            &[
                "--field-separator",
                "--assign",
                "--file",
                "--source",
                "--include",
                "--exec",
                "--load",
            ],
        )
    },
    Spec {
        leading: 1,
        text_file_opts: &["-f", "--from-file"],
        ..reader(&["jq"], "fL", &["--indent", "--from-file"])
    },
];

/// `rg PATTERN [PATH...]`: searches whole folders (the current one when no
/// path is given); `--pre CMD` runs a command on every file.
pub(super) fn rg(args: &[String]) -> FileOperands {
    let spec = Spec {
        leading: 1,
        text_opts: &["-e", "--regexp"],
        text_file_opts: &["-f", "--file"],
        ..reader(
            &["rg"],
            "ABCmegtTMjEfr",
            &[
                "--after-context",
                "--before-context",
                "--context",
                "--max-count",
                "--regexp",
                "--glob",
                "--iglob",
                "--type",
                "--type-not",
                "--max-columns",
                "--threads",
                "--encoding",
                "--file",
                "--replace",
                "--pre",
                "--pre-glob",
                "--hostname-bin",
                "--ignore-file",
                "--type-add",
                "--sort",
                "--sortr",
                "--max-depth",
                "--color",
                "--colors",
            ],
        )
    };
    let mut out = spec.operands(args);
    let mut ignore_files = Vec::new();
    for arg in spec.options.parse(args) {
        let Arg::Opt { name, value } = arg else {
            continue;
        };
        match name.as_str() {
            "--pre" => out.starts("`rg --pre` runs a command on every file it searches"),
            "--hostname-bin" => out.starts("`rg --hostname-bin` runs a program"),
            "-z" | "--search-zip" => {
                out.starts("`rg -z` runs decompression programs on compressed files")
            }
            "--ignore-file" => ignore_files.extend(value.map(str::to_string)),
            _ => {}
        }
    }
    let paths = std::mem::take(&mut out.reads);
    if paths.is_empty() && !args.iter().any(|a| a == "--files" || a == "--type-list") {
        out.tree_reads.push(".".into());
    } else {
        out.tree_reads.extend(paths);
    }
    out.reads.extend(ignore_files);
    out
}

/// `jq`: `--rawfile NAME FILE` and `--slurpfile NAME FILE` read FILE.
pub(super) fn jq(args: &[String]) -> FileOperands {
    let mut rest = Vec::new();
    let mut extra = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--rawfile" | "--slurpfile" => {
                extra.extend(args.get(i + 2).cloned());
                i += 3;
            }
            "--arg" | "--argjson" => i += 3,
            _ => {
                rest.push(args[i].clone());
                i += 1;
            }
        }
    }
    let mut out = SPECS[3].operands(&rest);
    out.reads.extend(extra);
    out
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn searchers() {
        assert_eq!(ops("grep -n foo a b"), "read a b");
        assert_eq!(ops("grep -e foo a"), "read a");
        assert_eq!(ops("grep -r x ."), "tree-read .");
        assert_eq!(ops("grep -rn x src"), "tree-read src");
        assert_eq!(ops("rg TODO"), "tree-read .");
        assert_eq!(ops("rg -n TODO src"), "tree-read src");
        assert!(ops("rg --pre cat x").starts_with("opaque"));
        assert!(ops("rg --pre=cat x").starts_with("opaque"));
        assert!(ops("rg --hostname-bin /tmp/x TODO").starts_with("opaque"));
        assert!(ops("rg -z TODO").starts_with("opaque"));
        assert!(ops("rg -inz TODO").starts_with("opaque"));
        assert!(ops("rg --search-zip TODO").starts_with("opaque"));
        assert_eq!(ops("jq . a.json"), "read a.json");
        assert_eq!(ops("jq --rawfile k .env . a.json"), "read a.json .env");
    }

    /// A pattern or program given by an option (`-e`, `--source`) leaves
    /// the first operand a file; one read from a file (`-f`) reads it.
    #[test]
    fn patterns_and_programs_from_options_and_files() {
        let of = |w: &[&str]| super::super::tests::ops_of(w);
        assert_eq!(ops("grep -f pats a"), "read pats a");
        assert_eq!(ops("grep --file=pats a"), "read pats a");
        assert_eq!(of(&["awk", "-e", "{print}", "a"]), "read a");
        assert_eq!(of(&["awk", "--source", "{print}", "a"]), "read a");
        assert_eq!(ops("jq -f prog.jq a.json"), "read prog.jq a.json");
        assert_eq!(ops("rg -e x src"), "tree-read src");
        // (rg reads whatever it names as trees, the pattern file too.)
        assert_eq!(ops("rg -f pats src"), "tree-read pats src");
        assert_eq!(
            ops("rg --ignore-file .env x src"),
            "read .env; tree-read src"
        );
        // Listing names reads no file's text.
        assert_eq!(ops("rg --files"), "");
        assert_eq!(ops("rg --type-list"), "");
        // `--arg NAME VALUE` and `--argjson` take two words, no file.
        assert_eq!(ops("jq --arg k .env . a.json"), "read a.json");
        assert_eq!(ops("jq --argjson k 1 . a.json"), "read a.json");
        assert_eq!(ops("jq -n --arg k v ."), "");
        // A sed script from a file: opaque for that reason.
        assert_eq!(
            ops("sed -f s.sed f"),
            "opaque: `sed -f FILE` runs a program from a file the policy cannot see into"
        );
    }
}
