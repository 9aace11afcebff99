//! `find` and `xargs`: the two programs that run other commands on file
//! names they produce. The commands in `find -exec` and in `xargs`'s
//! arguments are unwrapped by the shell walk: the `{}` of `find -exec`
//! stands for anything beneath find's roots (so `find . -exec cat {} +`
//! reads the whole tree), and words `xargs` appends at run time cannot be
//! seen (so a program that takes files fails closed behind it). Here are
//! the files `find` itself reads and writes (`-delete` removes beneath its
//! roots, `-fprint FILE` writes FILE), its roots, and the options of
//! `xargs` that take a value.

use super::spec::FileOperands;

/// `find ROOTS... EXPRESSION`: the roots are read, and written when the
/// expression has `-delete`; `-fprint FILE` and its kind write FILE.
pub(super) fn find(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let (roots, mut i) = roots_and_rest(args);
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
        out.tree_writes.extend(roots);
    } else {
        out.reads.extend(roots);
    }
    out
}

/// The folders `find ARGS...` starts from (`.` when none is named).
pub fn roots(args: &[String]) -> Vec<String> {
    roots_and_rest(args).0
}

fn roots_and_rest(args: &[String]) -> (Vec<String>, usize) {
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
    (roots, i)
}

/// Options of `xargs` followed by a value.
pub const XARGS_VALUE_OPTIONS: &[&str] = &[
    "-I",
    "-n",
    "-L",
    "-P",
    "-d",
    "-E",
    "-s",
    "-a",
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-procs",
    "--replace",
    "--max-lines",
    "--eof",
    "--max-chars",
];

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn find_roots_and_writes() {
        assert_eq!(ops("find src -name x"), "read src");
        assert_eq!(ops("find -L a b -delete"), "tree-write a b");
        assert_eq!(ops("find -fprint out"), "read .; write out");
        assert_eq!(
            super::roots(&["-L".into(), "a".into(), "-type".into(), "f".into()]),
            ["a"]
        );
    }
}
