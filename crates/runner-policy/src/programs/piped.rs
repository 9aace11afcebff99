//! What `xargs` is given when the command feeding it is known (issue 73):
//! a reader of the paths `find` or a file list prints reads beneath where
//! they lie, rather than words that cannot be checked.

use super::find_xargs::roots;

/// Readers whose every option only reads: whatever words a producer
/// prints, even ones that look like options, they read and write nothing.
const ANY_WORD_READERS: &[&str] = &[
    "grep",
    "egrep",
    "fgrep",
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "file",
    "stat",
    "du",
    "nl",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "basename",
    "dirname",
    "realpath",
    "readlink",
];

/// `find` options after which its output is not the paths it found.
const FIND_PRINTS_OTHER: &[&str] = &[
    "-printf", "-fprintf", "-fprint", "-fprint0", "-ls", "-fls", "-exec", "-execdir", "-ok",
    "-okdir",
];

/// Where the files lie that `xargs INNER...` gets from `producer`, the
/// command whose output it reads (issue 73): `find`'s roots, whose paths
/// start with them (so none can be an option), for any program the model
/// says only reads; or the workspace (`.`) for the lists of `git
/// ls-files`, `git diff --name-only`, `grep -l`, `rg -l`/`--files` and
/// `fd`, whose names could be spelled as options, for a program every
/// option of which only reads. `None` when neither holds: the words stay
/// unknown.
pub fn xargs_reads(producer: Option<&[String]>, inner: &[String]) -> Option<Vec<String>> {
    let producer = producer?;
    let (name, args) = producer.split_first()?;
    let name = name.rsplit('/').next().unwrap_or(name);
    // With a word of the producer's appended, as xargs does: `sed -i`
    // writes what it is given, `grep` reads it.
    let mut given = inner.to_vec();
    given.push("./x".to_string());
    if !super::only_reads(&given) {
        return None;
    }
    let has = |o: &str| args.iter().any(|a| a == o);
    match name {
        "find" if !args.iter().any(|a| FIND_PRINTS_OTHER.contains(&a.as_str())) => {
            let found = roots(args);
            (!found.iter().any(|r| r.contains(['$', '`', '*', '?', '[']))).then_some(found)
        }
        _ => {
            let program = inner.first()?;
            let program = program.rsplit('/').next().unwrap_or(program);
            let lists = match name {
                "git" => {
                    matches!(args.first().map(String::as_str), Some("ls-files"))
                        || (args.first().is_some_and(|a| a == "diff") && has("--name-only"))
                }
                "grep" | "egrep" | "fgrep" => has("-l") || has("-L") || has("--files-with-matches"),
                "rg" => has("-l") || has("--files") || has("--files-with-matches"),
                "fd" | "fdfind" => true,
                _ => false,
            };
            (lists && ANY_WORD_READERS.contains(&program)).then(|| vec![".".to_string()])
        }
    }
}

/// Whether `producer` separates what it prints with NUL (`find -print0`,
/// `git ls-files -z`, `grep -lZ`, `rg -l0`, `fd -0`): read by `xargs -0`,
/// each word is then one whole path, as printed.
pub fn prints_nul(producer: &[String]) -> bool {
    let Some((name, args)) = producer.split_first() else {
        return false;
    };
    let has = |o: &[&str]| args.iter().any(|a| o.contains(&a.as_str()));
    match name.rsplit('/').next().unwrap_or(name) {
        "find" => has(&["-print0"]) && !has(&["-print"]),
        "git" => has(&["-z"]),
        "grep" | "egrep" | "fgrep" => has(&["-Z", "--null"]),
        "rg" => has(&["-0", "--null"]),
        "fd" | "fdfind" => has(&["-0", "--print0"]),
        _ => false,
    }
}

/// Whether `xargs`'s options (the words before its command) split its
/// input at NUL only (`-0`, `--null`, `-0r` ...).
pub fn xargs_splits_at_nul(options: &[String]) -> bool {
    options.iter().any(|a| {
        a == "--null"
            || (a.starts_with('-')
                && !a.starts_with("--")
                && a.len() > 1
                && a[1..].contains('0')
                && a[1..].chars().all(|c| "0prtxo".contains(c)))
    })
}

/// Where the files lie that `xargs INNER...` writes, given `find`'s
/// paths (each starts with one of its roots, so none is an option): the
/// roots, for a program whose model writes the word it is given and
/// neither starts a program nor leaves anything unknown (`sed -i`,
/// `touch`, `chmod`). `None` for any other producer or program.
pub fn xargs_writes(producer: Option<&[String]>, inner: &[String]) -> Option<Vec<String>> {
    let (name, args) = producer?.split_first()?;
    if name.rsplit('/').next() != Some("find")
        || args.iter().any(|a| FIND_PRINTS_OTHER.contains(&a.as_str()))
    {
        return None;
    }
    let (program, words) = inner.split_first()?;
    let mut given = words.to_vec();
    given.push("./x".to_string());
    let o = super::file_operands(program.rsplit('/').next().unwrap_or(program), &given);
    let writes_it = o.writes.iter().chain(&o.tree_writes).any(|w| w == "./x");
    let found = roots(args);
    (writes_it
        && o.opaque.is_none()
        && !o.starts
        && !found.iter().any(|r| r.contains(['$', '`', '*', '?', '['])))
    .then_some(found)
}
