//! GNU `parallel`: what it runs, read from its words.
//!
//! `parallel [OPTIONS] COMMAND [ARGS] [::: VALUES...] [:::: FILES...]`
//! joins COMMAND and ARGS with spaces and hands the text to a shell, once
//! for each value: put in place of a replacement string (`{}`, `{.}`,
//! `{/}`, `{1}` ...) or appended. Values come after `:::`, from the lines
//! of the files after `::::` or `-a FILE`, or from stdin. With no
//! COMMAND, each line read is itself a command. Options that send the
//! command to other machines, wrap it (`--shebang`), export functions
//! (`--env`) or change its folder (`--wd`) leave what runs unknown: the
//! caller fails closed, as it does on an option this model does not know.

/// What a `parallel` call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParallelCall {
    /// COMMAND and ARGS as given; empty when the lines read are commands.
    pub command: Vec<String>,
    /// `-q`: the command runs as these words, not as shell text.
    pub quoted: bool,
    /// The values after `:::` (each run of the command gets one).
    pub values: Vec<String>,
    /// Files whose lines are values (`::::`, `-a`): read.
    pub arg_files: Vec<String>,
    /// Files and folders `parallel` itself writes (`--results`,
    /// `--joblog`), with whether each is a folder.
    pub writes: Vec<(String, bool)>,
    /// The replacement string (`-I`), when not `{}`.
    pub replace: Option<String>,
}

impl ParallelCall {
    /// Whether values come from stdin (neither `:::` nor a file of them).
    pub fn reads_stdin(&self) -> bool {
        self.values.is_empty() && self.arg_files.is_empty()
    }
}

/// Options whose value is the next word (or attached: `-j4`, `--jobs=4`).
const VALUE: &[&str] = &[
    "-j",
    "-P",
    "--jobs",
    "--max-procs",
    "-n",
    "--max-args",
    "-N",
    "-C",
    "--colsep",
    "-d",
    "--delimiter",
    "-E",
    "--eof",
    "-L",
    "--max-lines",
    "-s",
    "--max-chars",
    "--halt",
    "--halt-on-error",
    "--timeout",
    "--retries",
    "--delay",
    "--tagstring",
    "--header",
    "--block",
    "--blocksize",
    "--recstart",
    "--recend",
    "--load",
    "--memfree",
    "--termseq",
    "--tmpdir",
    "--tempdir",
    "--seqreplace",
    "--limit",
    "--ctag",
    "--ctagstring",
];

/// Options that take no value.
const FLAGS: &[&str] = &[
    "-k",
    "--keep-order",
    "-X",
    "-m",
    "-0",
    "--null",
    "--pipe",
    "--spreadstdin",
    "--dry-run",
    "--dryrun",
    "--bar",
    "--eta",
    "--progress",
    "-v",
    "--verbose",
    "-t",
    "--tag",
    "--line-buffer",
    "--lb",
    "-u",
    "--ungroup",
    "--group",
    "--xargs",
    "--no-notice",
    "--will-cite",
    "--noswap",
    "--round-robin",
    "--rr",
    "-r",
    "--no-run-if-empty",
    "--plus",
    "--files",
    "--compress",
    "--silent",
    "--keep",
    "--shuf",
    "--group-by",
    "--fg",
    "--bg",
    "--citation",
    "--colour",
    "--color",
    "--quote",
    "-q",
    "-i",
];

/// Options after which what runs, or where, is not in the words.
const UNKNOWABLE: &[&str] = &[
    "-S",
    "--sshlogin",
    "--sshloginfile",
    "--slf",
    "--basefile",
    "--bf",
    "--transferfile",
    "--tf",
    "--return",
    "--cleanup",
    "--trc",
    "--env",
    "--shebang",
    "--shebang-wrap",
    "--nonall",
    "--onall",
    "--ssh",
    "--sshdelay",
    "--workdir",
    "--wd",
    "--filter-hosts",
    "--pipepart",
    "--fifo",
    "--cat",
    "--profile",
    "-J",
    "--embed",
    "--record-env",
    "--session",
    "--env-parallel",
];

/// Why what a `parallel` call runs cannot be read from its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unreadable(String);

/// Reads `parallel`'s words; the reason when what runs cannot be read.
pub fn parallel_call(args: &[String]) -> Result<ParallelCall, Unreadable> {
    let mut call = ParallelCall {
        command: Vec::new(),
        quoted: false,
        values: Vec::new(),
        arg_files: Vec::new(),
        writes: Vec::new(),
        replace: None,
    };
    let mut i = 0;
    // Options, up to the command (or a separator).
    while i < args.len() {
        let a = args[i].as_str();
        if !a.starts_with('-') || a == "-" || a.starts_with(":::") {
            break;
        }
        if a == "--" {
            i += 1;
            break;
        }
        if a.contains(['$', '`']) {
            return Err(Unreadable(format!(
                "`parallel {a}`: an option only known when the script runs"
            )));
        }
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        // A short option with its value attached (`-j4`, `-I{}`).
        let (name, attached) = if attached.is_none()
            && !a.starts_with("--")
            && a.len() > 2
            && VALUE
                .iter()
                .chain(["-I", "-a"].iter())
                .any(|v| *v == &a[..2])
        {
            (&a[..2], Some(a[2..].to_string()))
        } else {
            (name, attached)
        };
        if UNKNOWABLE.contains(&name) {
            return Err(Unreadable(format!(
                "`parallel {name}` runs the command elsewhere or wrapped: what runs cannot be checked"
            )));
        }
        let mut value = || -> Result<String, Unreadable> {
            match &attached {
                Some(v) => Ok(v.clone()),
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| Unreadable(format!("`parallel {name}` without its value")))
                }
            }
        };
        match name {
            "-q" | "--quote" => call.quoted = true,
            "-a" | "--arg-file" | "--arg-file-sep" => call.arg_files.push(value()?),
            "-I" | "--replace" => call.replace = Some(value()?),
            "--results" | "--res" | "--result" => call.writes.push((value()?, true)),
            "--joblog" => call.writes.push((value()?, false)),
            n if VALUE.contains(&n) => {
                value()?;
            }
            n if FLAGS.contains(&n) => {}
            other => {
                return Err(Unreadable(format!(
                    "`parallel {other}`: an option whose effect on what runs is not modelled"
                )));
            }
        }
        i += 1;
    }
    // The command, up to the first separator.
    while i < args.len() && !args[i].starts_with(":::") {
        call.command.push(args[i].clone());
        i += 1;
    }
    // Separators and their values.
    let mut files = false;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            ":::" | ":::+" => files = false,
            "::::" | "::::+" => files = true,
            v if files => call.arg_files.push(v.to_string()),
            v => call.values.push(v.to_string()),
        }
        i += 1;
    }
    Ok(call)
}

/// Whether `word` is one of `parallel`'s replacement strings (`{}`,
/// `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{1}`, `{2.}` ...).
pub fn is_replacement(word: &str) -> bool {
    let Some(inner) = word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) else {
        return false;
    };
    let rest = inner.trim_start_matches(|c: char| c.is_ascii_digit());
    matches!(rest, "" | "." | "/" | "//" | "/." | "#" | "%")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(s: &str) -> Result<ParallelCall, Unreadable> {
        let words: Vec<String> = s.split_whitespace().map(String::from).collect();
        parallel_call(&words)
    }

    #[test]
    fn the_command_values_and_files_are_read_from_the_words() {
        let c = call("-j4 -k grep -l X ::: a.py b.py").unwrap();
        assert_eq!(c.command, ["grep", "-l", "X"]);
        assert_eq!(c.values, ["a.py", "b.py"]);
        assert!(!c.reads_stdin());
        let c = call("--jobs=2 rm {}").unwrap();
        assert_eq!(c.command, ["rm", "{}"]);
        assert!(c.reads_stdin());
        let c = call("-a list.txt wc -l").unwrap();
        assert_eq!(c.arg_files, ["list.txt"]);
        let c = call("echo :::: names.txt").unwrap();
        assert_eq!(c.arg_files, ["names.txt"]);
        let c = call("--results out -I@@ cat @@").unwrap();
        assert_eq!(c.writes, [("out".to_string(), true)]);
        assert_eq!(c.replace.as_deref(), Some("@@"));
        // No command: each line read is one.
        assert!(call("-j8").unwrap().command.is_empty());
    }

    #[test]
    fn what_runs_elsewhere_or_unmodelled_fails_closed() {
        for s in [
            "-S host rm x",
            "--sshlogin=host echo",
            "--env f f",
            "--shebang x",
            "--wd /tmp rm x",
            "--frobnicate rm",
            "-$X rm",
        ] {
            assert!(call(s).is_err(), "{s}");
        }
    }

    #[test]
    fn replacement_strings_are_known() {
        for w in [
            "{}", "{.}", "{/}", "{//}", "{/.}", "{#}", "{%}", "{1}", "{2.}",
        ] {
            assert!(is_replacement(w), "{w}");
        }
        for w in ["{x}", "{", "}", "a{}", "{}b"] {
            assert!(!is_replacement(w), "{w}");
        }
    }
}
