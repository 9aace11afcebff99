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
//! [`coreutils`], [`text`] tools (with the [`sed`] and [`awk`] languages),
//! [`find_xargs`], [`archivers`], [`git`], [`network`] tools, and
//! [`interpreters`] and build tools; [`spec`] is the option-and-operand
//! shape most of them share, with every spelling of an option.
//!
//! A program with a model of its own is known to read or write files named
//! by its operands: behind `xargs` (which appends operands read at run
//! time) such a program fails closed.

mod archivers;
mod awk;
mod canonical;
mod compilers;
mod config_keys;
mod container_names;
mod coreutils;
mod find_xargs;
mod git;
mod interpreters;
pub mod loader;
mod network;
mod npm;
mod operands;
mod parallel;
mod piped;
mod sed;
mod spec;
mod text;
mod values;

pub use canonical::canonical_words;
pub use find_xargs::{RunTimeOption, XargsCall, roots as find_roots, xargs_call};
pub use git::READ_ONLY_GIT;
pub use git::names as git_names;
pub(crate) use git::names_a_file as git_names_a_file;
pub use interpreters::{
    INLINE_CODE, INTERPRETER_TABLE, INTERPRETERS, Interpreter, SHELLS, inline_code_word,
    interpreter_of, is_interpreter, unseen_script,
};
pub use parallel::{ParallelCall, is_replacement as is_parallel_replacement, parallel_call};
pub use piped::{prints_nul, xargs_reads, xargs_splits_at_nul, xargs_writes};
pub use spec::FileOperands;
pub use values::takes_plain_value;

/// Programs modelled by a function of their own rather than a table row.
const MODELLED: &[&str] = &[
    "dd",
    "split",
    "csplit",
    "find",
    "git",
    "sed",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "rg",
    "jq",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "bzip2",
    "bunzip2",
    "xz",
    "unxz",
    "zstd",
    "unzstd",
    "lz4",
    "make",
    "patch",
    "docker",
    "podman",
    "curl",
    "wget",
    "rsync",
    "scp",
    "ssh",
    "redis-server",
];

/// The other words a command (its words, its program `prog` first) runs
/// as, for deny rules ([`crate::Signature::deny_only`]): `git send-pack`
/// is also `git push`, `npm pub` is `npm publish`, `docker push` is
/// `docker image push`.
pub fn read_also_as(prog: &str, words: &[String]) -> Vec<Vec<String>> {
    match prog {
        "git" => git::names::as_push(words).into_iter().collect(),
        "npm" => npm::abbreviations(words),
        "docker" | "podman" => container_names::other_names(words),
        _ => Vec::new(),
    }
}

/// What `program` (a base name) reads, writes and runs, given its
/// arguments. A program without a model reads and writes no operand the
/// policy can see (its `Bash(...)` signature is all there is).
pub fn file_operands(program: &str, args: &[String]) -> FileOperands {
    match program {
        "dd" => coreutils::dd(args),
        "split" | "csplit" => coreutils::split(program, args),
        "find" => find_xargs::find(args),
        "git" => git::operands(args),
        "sed" => sed::sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk::awk(args),
        "rg" => text::rg(args),
        "jq" => text::jq(args),
        "tar" => archivers::tar(args),
        "zip" => archivers::zip(args),
        "unzip" => archivers::unzip(args),
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "zstd" | "unzstd" | "lz4" => {
            archivers::compressor(args)
        }
        "make" => interpreters::make(args),
        "patch" => interpreters::patch(args),
        "docker" | "podman" => interpreters::docker(args),
        "go" => {
            let mut out = interpreters::build_tool(program, args);
            out.tree_writes.extend(compilers::go(args).tree_writes);
            out
        }
        "cargo" | "npm" | "npx" | "pnpm" | "yarn" => interpreters::build_tool(program, args),
        "redis-server" => compilers::redis_server(args),
        "curl" => network::curl(args),
        "wget" => network::wget(args),
        "rsync" | "scp" => network::copy_remote(program, args),
        "ssh" => network::ssh(args),
        p if is_interpreter(p) => interpreters::interpreter(p, args),
        _ => coreutils::SPECS
            .iter()
            .chain(text::SPECS)
            .chain(COMPILER_SPECS)
            .find(|s| s.programs.contains(&program))
            .map(|s| s.operands(args))
            .unwrap_or_default(),
    }
}

/// Compilers whose options name what they write.
const COMPILER_SPECS: &[spec::Spec] = &[
    compilers::CC,
    compilers::RUSTC,
    compilers::JAVAC,
    compilers::TSC,
];

/// True when `program` reads or writes files named by its operands, so
/// that operands appended at run time (`xargs`) cannot be checked.
pub fn takes_files(program: &str) -> bool {
    MODELLED.contains(&program)
        || is_interpreter(program)
        || SHELLS.contains(&program)
        || coreutils::SPECS
            .iter()
            .chain(text::SPECS)
            .chain(COMPILER_SPECS)
            .any(|s| s.programs.contains(&program))
}

/// True when a command (its words, program first) only reads: calls made of
/// such commands may run in parallel.
pub fn only_reads(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    match crate::words::base_name(program) {
        "git" => git::only_reads(&words[1..]),
        p => {
            READ_ONLY_PROGRAMS.contains(&p) && {
                let o = file_operands(p, &words[1..]);
                o.writes.is_empty() && o.tree_writes.is_empty() && o.opaque.is_none()
            }
        }
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
pub(super) mod tests {
    use super::*;

    /// A command's model in words: `read a b; write c; tree-read d`, or
    /// `opaque: why`.
    pub(crate) fn ops(cmd: &str) -> String {
        ops_of(&cmd.split_whitespace().collect::<Vec<_>>())
    }

    /// [`ops`] of words as given (a word may hold spaces and newlines).
    pub(crate) fn ops_of(words: &[&str]) -> String {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let o = file_operands(&words[0], &words[1..]);
        if let Some(why) = o.opaque {
            return format!("opaque: {why}");
        }
        [
            ("read", o.reads),
            ("write", o.writes),
            ("tree-read", o.tree_reads),
            ("tree-write", o.tree_writes),
            ("history", o.history_reads),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k} {}", v.join(" ")))
        .collect::<Vec<_>>()
        .join("; ")
    }

    #[test]
    fn programs_without_a_model_show_no_files() {
        assert_eq!(ops("make all"), "");
        assert_eq!(ops("echo hi"), "");
        assert!(!takes_files("echo"));
        assert!(takes_files("rm") && takes_files("sed") && takes_files("python3"));
        assert!(only_reads(&["cat".into(), "a".into()]));
        assert!(!only_reads(&[
            "sed".into(),
            "-i".into(),
            "p".into(),
            "a".into()
        ]));
    }
}
