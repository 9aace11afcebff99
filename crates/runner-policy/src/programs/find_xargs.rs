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
            // A primary's value: text, never an expression of its own.
            p if FIND_VALUES.contains(&p) => i += 1,
            // The command's own words (looked into as a command of its own).
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                while i + 1 < args.len() && !matches!(args[i + 1].as_str(), ";" | "+") {
                    i += 1;
                }
                i += 1;
            }
            // `$x-exec` with `x` empty is `-exec`: an expression only known
            // when the script runs could run or delete anything.
            w if w.contains(['$', '`']) => {
                out.opaque(format!(
                    "`find {w}`: an expression only known when the script runs (it could be `-exec` or `-delete`)"
                ));
                return out;
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

/// `find`'s primaries that take the next word as their value.
const FIND_VALUES: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-newer",
    "-anewer",
    "-cnewer",
    "-perm",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-used",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
    "-context",
    "-printf",
    "-regextype",
    "-files0-from",
];

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

/// How `xargs` is called: the files its words come from (`-a`), whether
/// it puts them in place of a string (`-I`), and where its command starts.
#[derive(Debug, PartialEq, Eq)]
pub struct XargsCall {
    /// Files read for the words (`-a FILE`, `--arg-file=FILE`).
    pub arg_files: Vec<String>,
    /// `-I`/`-i`/`--replace`: words go where the string is.
    pub replace: bool,
    /// That string (`{}` unless `-I` names another).
    pub replace_with: Option<String>,
    /// The index of the command's first word in the arguments.
    pub command: usize,
}

/// An `xargs` option whose text is only known when the script runs
/// (`-a$X`): which file it reads, or what it means, cannot be seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`xargs {0}`: an option only known when the script runs")]
pub struct RunTimeOption(pub String);

/// Reads `xargs`'s options as GNU xargs does: clusters (`-0a FILE`),
/// values attached or not, optional values (`-i[STR]`, `-e[EOF]`,
/// `-l[N]`), long options by any unambiguous prefix (`--arg` is
/// `--arg-file`), and the first word that is not an option starts the
/// command. An option only known at run time (`-a$X`) is an error.
pub fn xargs_call(args: &[String]) -> Result<XargsCall, RunTimeOption> {
    const SHORT_VALUES: &str = "adEILnPs";
    const SHORT_OPTIONAL: &str = "eil";
    const LONG: &[(&str, bool)] = &[
        ("--arg-file", true),
        ("--delimiter", true),
        ("--max-args", true),
        ("--max-procs", true),
        ("--max-chars", true),
        ("--process-slot-var", true),
        ("--replace", false),
        ("--max-lines", false),
        ("--eof", false),
        ("--null", false),
        ("--interactive", false),
        ("--no-run-if-empty", false),
        ("--verbose", false),
        ("--exit", false),
        ("--show-limits", false),
        ("--open-tty", false),
    ];
    let mut call = XargsCall {
        arg_files: Vec::new(),
        replace: false,
        replace_with: None,
        command: args.len(),
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            call.command = i + 1;
            return Ok(call);
        }
        if !a.starts_with('-') || a == "-" {
            call.command = i;
            return Ok(call);
        }
        if a.contains(['$', '`']) {
            return Err(RunTimeOption(a.to_string()));
        }
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some(&(full, takes)) = LONG.iter().find(|(l, _)| l[2..].starts_with(name)) else {
                continue;
            };
            let value = match attached {
                Some(v) => Some(v.to_string()),
                None if takes => {
                    i += 1;
                    args.get(i - 1).cloned()
                }
                None => None,
            };
            match full {
                "--arg-file" => call.arg_files.extend(value),
                "--replace" => {
                    call.replace = true;
                    call.replace_with = Some(value.unwrap_or_else(|| "{}".into()));
                }
                _ => {}
            }
            continue;
        }
        for (at, c) in a.char_indices().skip(1) {
            let rest = &a[at + 1..];
            if SHORT_OPTIONAL.contains(c) {
                if c == 'i' {
                    call.replace = true;
                    let with = if rest.is_empty() { "{}" } else { rest };
                    call.replace_with = Some(with.to_string());
                }
                break;
            }
            if SHORT_VALUES.contains(c) {
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned()
                } else {
                    Some(rest.to_string())
                };
                match c {
                    'a' => call.arg_files.extend(value),
                    'I' => {
                        call.replace = true;
                        call.replace_with = value;
                    }
                    _ => {}
                }
                break;
            }
        }
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::super::tests::ops;

    #[test]
    fn xargs_options_as_gnu_reads_them() {
        let call = |s: &str| {
            let w: Vec<String> = s.split_whitespace().map(String::from).collect();
            super::xargs_call(&w)
        };
        let c = call("-0 -a list rm -f").unwrap();
        assert_eq!((c.arg_files, c.command), (vec!["list".to_string()], 3));
        let c = call("--a list rm").unwrap();
        assert_eq!((c.arg_files, c.command), (vec!["list".to_string()], 2));
        let c = call("-0alist -n1 rm").unwrap();
        assert_eq!((c.arg_files, c.command), (vec!["list".to_string()], 2));
        assert!(call("-i rm {}").unwrap().replace);
        assert!(call("-a$X list rm").is_err());
        // Options only, no command: the command would start past the end.
        assert_eq!(call("-0").unwrap().command, 1);
        // After `--`, the next word starts the command.
        assert_eq!(call("-0 -- rm").unwrap().command, 2);
        // A long option without a value takes no word; `--replace` and
        // `-I STR` put the words in place of a string.
        let c = call("--null rm").unwrap();
        assert_eq!((c.command, c.replace), (1, false));
        assert!(call("--replace rm {}").unwrap().replace);
        let c = call("-I {} rm {}").unwrap();
        assert_eq!((c.command, c.replace), (2, true));
        assert!(!call("-n 1 rm").unwrap().replace);
    }

    #[test]
    fn find_roots_and_writes() {
        assert_eq!(ops("find src -name x"), "read src");
        assert_eq!(ops("find -L a b -delete"), "tree-write a b");
        assert_eq!(ops("find -fprint out"), "read .; write out");
        // A value is not read as an action: this writes a file `-delete`.
        assert_eq!(ops("find . -fprint -delete"), "read .; write -delete");
        // Roots or leading options up to the last word.
        assert_eq!(ops("find src"), "read src");
        assert_eq!(ops("find -L"), "read .");
        assert_eq!(
            super::roots(&["-L".into(), "a".into(), "-type".into(), "f".into()]),
            ["a"]
        );
    }
}
