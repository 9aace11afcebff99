//! The shape most programs share: options (some taking a value, in every
//! spelling: `-o FILE`, `-oFILE`, `--output FILE`, `--output=FILE`, short
//! options clustered as `-rf`), then operands, some of which are files read
//! or written. One [`Spec`] describes a program's shape; [`Spec::operands`]
//! reads a command's words with it. An unknown option is taken for a flag,
//! which at worst adds a signature and so only makes a decision stricter.

pub use super::operands::FileOperands;

/// The folder a program is in after changing to `next` from `prev`
/// (`git -C a -C b` is in `a/b`): from the one before, unless absolute.
pub(super) fn change_dir(prev: Option<String>, next: &str) -> String {
    match prev {
        Some(prev) if !next.starts_with('/') => format!("{prev}/{next}"),
        _ => next.to_string(),
    }
}

/// One word of a command line, read with a program's options.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Arg<'a> {
    /// `-x`, `--long`, with its value when it takes one.
    Opt {
        name: String,
        value: Option<&'a str>,
    },
    /// Anything else, and everything after `--`.
    Operand(&'a str),
}

/// Long flags (taking no value) that change what a modelled program reads,
/// writes or runs, so that their abbreviations are read as them.
pub(super) const LONG_FLAGS: &[&str] = &[
    "--in-place",
    "--recursive",
    "--dereference-recursive",
    "--remove-files",
    "--create",
    "--extract",
    "--append",
    "--update",
    "--catenate",
    "--concatenate",
    "--delete",
    "--move",
    "--recurse-paths",
    "--test",
    "--stdout",
    "--to-stdout",
    "--force",
    "--search-zip",
    "--pre",
    "--no-dereference",
    "--symbolic",
    "--target-directory",
    "--exec",
];

/// How a program's options take values.
#[derive(Clone, Copy)]
pub(super) struct Options {
    /// Short options followed by a value (`"nof"` for `-n N -o F -f F`).
    pub(super) short_values: &'static str,
    /// Long options followed by a value (`"--output"`).
    pub(super) long_values: &'static [&'static str],
    /// Options whose value is optional and only ever attached (`sed
    /// -i[SUFFIX]`, `--in-place[=SUFFIX]`).
    pub(super) optional: &'static [&'static str],
}

impl Options {
    /// The long option an abbreviation stands for: GNU's getopt takes any
    /// unambiguous prefix (`--to-com` is `--to-command`, `--in-pl` is
    /// `--in-place`). Resolved against the options with values and the
    /// long flags the models react to ([`LONG_FLAGS`]); an ambiguous one
    /// takes the first, which can only be stricter (getopt refuses it).
    /// One letter is a prefix too: `sed --i` is `sed --in-place`.
    fn resolve_long(&self, name: String) -> String {
        let known = || {
            self.long_values
                .iter()
                .chain(self.optional)
                .chain(LONG_FLAGS)
        };
        if name.len() < 3 || known().any(|k| *k == name) {
            return name;
        }
        known()
            .find(|k| k.starts_with(&name))
            .map_or(name, |k| k.to_string())
    }

    /// Splits `args` into options and operands.
    pub(super) fn parse<'a>(&self, args: &'a [String]) -> Vec<Arg<'a>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            i += 1;
            if a == "--" {
                out.extend(args[i..].iter().map(|s| Arg::Operand(s.as_str())));
                break;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (name, attached) = match long.split_once('=') {
                    Some((n, v)) => (format!("--{n}"), Some(v)),
                    None => (a.to_string(), None),
                };
                let name = self.resolve_long(name);
                let value = if attached.is_some() {
                    attached
                } else if self.long_values.contains(&name.as_str()) {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                } else {
                    None
                };
                out.push(Arg::Opt { name, value });
                continue;
            }
            if a.len() < 2 || !a.starts_with('-') {
                out.push(Arg::Operand(a));
                continue;
            }
            // A cluster of short options: `-rf`, `-oFILE`, `-n5`.
            for (at, c) in a.char_indices().skip(1) {
                let name = format!("-{c}");
                let rest = &a[at + c.len_utf8()..];
                if self.optional.contains(&name.as_str()) {
                    out.push(Arg::Opt {
                        name,
                        value: Some(rest),
                    });
                    break;
                }
                if self.short_values.contains(c) {
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(String::as_str)
                    } else {
                        Some(rest)
                    };
                    out.push(Arg::Opt { name, value });
                    break;
                }
                out.push(Arg::Opt { name, value: None });
            }
        }
        out
    }
}

/// Which operands a program writes.
#[derive(Clone, Copy)]
pub(super) enum Writes {
    None,
    /// Every operand (`rm`, `touch`, `tee`).
    All,
    /// Every operand, and everything beneath it (`mv`).
    AllTrees,
    /// The last operand when there are two or more, and anything beneath
    /// it when it is a folder (`cp`, `ln`, `install`).
    Last,
    /// The second operand (`uniq IN OUT`).
    Second,
}

/// The program text of a program with a language of its own (a sed script,
/// an awk program), checked for what it runs and writes.
pub(super) type Language = fn(&str, &mut FileOperands);

#[derive(Clone, Copy)]
pub(super) struct Spec {
    pub(super) programs: &'static [&'static str],
    pub(super) options: Options,
    /// Operands before the files that are not files (a pattern, a mode),
    /// unless the program text came from an option.
    pub(super) leading: usize,
    /// Options whose value is the program text (`grep -e`, `sed -e`).
    pub(super) text_opts: &'static [&'static str],
    /// Options whose value is a file read as program text (`-f`).
    pub(super) text_file_opts: &'static [&'static str],
    /// Options whose value is a file read (`touch -r REF`, `jq --rawfile`).
    pub(super) read_opts: &'static [&'static str],
    /// Options whose value is a file written (`sort -o`).
    pub(super) write_opts: &'static [&'static str],
    /// Options whose value is a folder written beneath (`cp -t DIR`).
    pub(super) tree_write_opts: &'static [&'static str],
    pub(super) writes: Writes,
    /// Flags that turn every file operand into a written one (`sed -i`).
    pub(super) in_place: &'static [&'static str],
    /// Flags that make operands whole folders (`-r`, `-R`, `--recursive`).
    pub(super) recursive: &'static [&'static str],
    /// With a recursive flag and no file operand, the current folder is
    /// searched (GNU `grep -r PATTERN`).
    pub(super) recursive_dot: bool,
    /// Checks program text (leading operands or `text_opts` values).
    pub(super) language: Option<Language>,
    /// True when program text from a file cannot be seen, so the command
    /// fails closed (`sed -f`, `awk -f`).
    pub(super) opaque_text_file: bool,
}

/// A program that reads its file operands.
pub(super) const fn reader(
    programs: &'static [&'static str],
    short_values: &'static str,
    long_values: &'static [&'static str],
) -> Spec {
    Spec {
        programs,
        options: Options {
            short_values,
            long_values,
            optional: &[],
        },
        leading: 0,
        text_opts: &[],
        text_file_opts: &[],
        read_opts: &[],
        write_opts: &[],
        tree_write_opts: &[],
        writes: Writes::None,
        in_place: &[],
        recursive: &[],
        recursive_dot: false,
        language: None,
        opaque_text_file: false,
    }
}

/// A program that writes some of its file operands.
pub(super) const fn writer(
    programs: &'static [&'static str],
    leading: usize,
    writes: Writes,
    short_values: &'static str,
    long_values: &'static [&'static str],
) -> Spec {
    Spec {
        leading,
        writes,
        ..reader(programs, short_values, long_values)
    }
}

impl Spec {
    /// What a command of this shape reads and writes.
    pub(super) fn operands(&self, args: &[String]) -> FileOperands {
        let mut out = FileOperands::default();
        let mut operands: Vec<&str> = Vec::new();
        let mut text_given = false;
        let mut in_place = false;
        let mut recursive = false;
        let mut target_given = false;
        let mut target_dir: Option<String> = None;
        // `cp --parents a/b DIR` writes DIR/a/b: beneath DIR, as a tree.
        let parents = args.iter().any(|a| a == "--parents");
        for arg in self.options.parse(args) {
            let (name, value) = match arg {
                Arg::Operand(o) => {
                    operands.push(o);
                    continue;
                }
                Arg::Opt { name, value } => (name, value),
            };
            let is = |list: &[&str]| list.contains(&name.as_str());
            let value = value.map(str::to_string);
            if is(self.text_opts) {
                text_given = true;
                if let (Some(lang), Some(v)) = (self.language, &value) {
                    lang(v, &mut out);
                }
            } else if is(self.text_file_opts) {
                text_given = true;
                out.reads.extend(value);
                if self.opaque_text_file {
                    out.opaque(format!(
                        "`{} {name} FILE` runs a program from a file the policy cannot see into",
                        self.programs[0]
                    ));
                }
            } else if is(self.read_opts) {
                out.reads.extend(value);
            } else if is(self.write_opts) {
                out.writes.extend(value);
            } else if is(self.tree_write_opts) {
                target_given = true;
                target_dir = value;
            } else if is(self.in_place) {
                in_place = true;
            } else if is(self.recursive) {
                recursive = true;
            }
        }
        let skip = if text_given { 0 } else { self.leading };
        if let Some(lang) = self.language {
            for text in operands.iter().take(skip) {
                lang(text, &mut out);
            }
        }
        let files: Vec<String> = operands
            .into_iter()
            .skip(skip)
            .map(str::to_string)
            .collect();
        // Without a recursive option, `cp`/`ln`/`install` write exactly
        // DEST or DEST/basename(SOURCE) (a glob's names are not known, nor
        // `--parents`' folders: then anything beneath DEST).
        let exact = matches!(self.writes, Writes::Last)
            && !recursive
            && !parents
            && !files.iter().any(|f| f.contains(['*', '?', '[', '{']));
        if let Some(dir) = target_dir {
            let sources: &[String] = if files.is_empty() { &[] } else { &files };
            if exact {
                for f in sources {
                    out.writes.push(join_basename(&dir, f));
                }
            } else {
                out.tree_writes.push(dir);
            }
        }
        if recursive && self.recursive_dot && files.is_empty() {
            out.tree_reads.push(".".into());
        }
        let (reads, writes) = if recursive {
            (&mut out.tree_reads, &mut out.tree_writes)
        } else {
            (&mut out.reads, &mut out.writes)
        };
        match (self.writes, in_place) {
            // `cp -t DIR a b`: every operand is a source.
            (Writes::Last, _) if target_given => reads.extend(files),
            (_, true) | (Writes::All, _) => writes.extend(files),
            (Writes::AllTrees, _) => out.tree_writes.extend(files),
            (Writes::Last, _) if files.len() >= 2 => {
                let (last, rest) = files.split_last().expect("two or more");
                reads.extend(rest.iter().cloned());
                if exact {
                    // `DEST/` must be a folder: only DEST/NAME is written.
                    if !last.ends_with('/') {
                        out.writes.push(last.clone());
                    }
                    for f in rest {
                        out.writes.push(join_basename(last, f));
                    }
                } else {
                    out.tree_writes.push(last.clone());
                }
            }
            // `ln -s TARGET`: a link named after TARGET in the current
            // folder (`cp` and `install` refuse one operand).
            (Writes::Last, _) if files.len() == 1 => {
                out.writes.push(join_basename(".", &files[0]));
                reads.extend(files);
            }
            (Writes::Second, _) if files.len() >= 2 => {
                reads.push(files[0].clone());
                writes.push(files[1].clone());
            }
            _ => reads.extend(files),
        }
        out
    }
}

/// `DIR/NAME` for the last name of `source` (what `cp SOURCE DIR` makes).
fn join_basename(dir: &str, source: &str) -> String {
    let name = source
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(source);
    format!("{}/{name}", dir.trim_end_matches('/'))
}

/// How many of a program's first plain words may be its subcommand (the
/// others an option's value: `npm --loglevel silent publish`), for the
/// programs read by their subcommand's other names.
const SUBCOMMAND_AT_MOST: usize = 3;

/// The indices of a command's first words (after its program) that do not
/// start with `-`: where its subcommand may be.
pub(super) fn subcommand_places(words: &[String]) -> Vec<usize> {
    (1..words.len())
        .filter(|&i| !words[i].starts_with('-'))
        .take(SUBCOMMAND_AT_MOST)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_spelling_of_an_option() {
        let o = Options {
            short_values: "o",
            long_values: &["--output"],
            optional: &["-i"],
        };
        let opt = |n: &str, v: Option<&'static str>| Arg::Opt {
            name: n.into(),
            value: v,
        };
        for (cmd, want) in [
            ("-o F", opt("-o", Some("F"))),
            ("-oF", opt("-o", Some("F"))),
            ("--output F", opt("--output", Some("F"))),
            ("--output=F", opt("--output", Some("F"))),
            ("-rfoF", opt("-o", Some("F"))),
            ("-ni.bak", opt("-i", Some(".bak"))),
        ] {
            let w = words(cmd);
            assert!(o.parse(&w).contains(&want), "{cmd}: {:?}", o.parse(&w));
        }
        // GNU's abbreviations of long options.
        for (cmd, want) in [
            ("--out F", opt("--output", Some("F"))),
            ("--outp=F", opt("--output", Some("F"))),
            ("--in-pl", opt("--in-place", None)),
            ("--o F", opt("--output", Some("F"))),
            ("--i", opt("--in-place", None)),
            // No name at all is no prefix.
            ("--=F", opt("--", Some("F"))),
        ] {
            let w = words(cmd);
            assert!(o.parse(&w).contains(&want), "{cmd}: {:?}", o.parse(&w));
        }
        // A name given whole is that option, though another starts with it.
        let o2 = Options {
            short_values: "",
            long_values: &["--output-dir", "--output"],
            optional: &[],
        };
        assert_eq!(o2.parse(&words("--output F")), [opt("--output", Some("F"))]);
        assert_eq!(
            o2.parse(&words("--outp F")),
            [opt("--output-dir", Some("F"))]
        );
        let w = words("-r -- -o x");
        assert_eq!(
            o.parse(&w),
            [opt("-r", None), Arg::Operand("-o"), Arg::Operand("x")]
        );
    }
}
