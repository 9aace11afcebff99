//! What well-known programs do with their operands.
//!
//! The shell analysis turns a command's words into `Read(path)` and
//! `Edit(path)` signatures from these models: the files a reader reads
//! (`cat`, `grep PATTERN FILE`, `sed -f SCRIPT`), and the files a writer
//! writes (`sed -i`, `sort -o`, the target of `cp`, every operand of `rm`,
//! `mv`, `touch`, `tee`, `find -delete`, `git diff --output`). So a deny
//! rule on a path holds whichever program touches it.
//!
//! One file per family of programs, each with its table and its tests:
//! [`coreutils`], [`text`] tools, [`find_xargs`], [`git`], and
//! [`interpreters`]; [`spec`] is the option-and-operand shape most of them
//! share.

mod coreutils;
mod find_xargs;
mod git;
mod interpreters;
mod spec;
mod text;

pub use find_xargs::XARGS_VALUE_OPTIONS;
pub use git::READ_ONLY_GIT;
pub use interpreters::{INTERPRETERS, SHELLS};
pub use spec::FileOperands;

/// What `program` (a base name) reads and writes, given its arguments.
/// A program without a model reads and writes no operand the policy can see
/// (its `Bash(...)` signature is all there is).
pub fn file_operands(program: &str, args: &[String]) -> FileOperands {
    match program {
        "dd" => coreutils::dd(args),
        "find" => find_xargs::find(args),
        "git" => git::operands(args),
        _ => coreutils::SPECS
            .iter()
            .chain(text::SPECS)
            .find(|s| s.programs.contains(&program))
            .map(|s| s.operands(args))
            .unwrap_or_default(),
    }
}

/// True when a command (its words, program first) only reads: calls made of
/// such commands may run in parallel.
pub fn only_reads(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    match crate::words::base_name(program) {
        "git" => git::only_reads(&words[1..]),
        p => READ_ONLY_PROGRAMS.contains(&p),
    }
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
