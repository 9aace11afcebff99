//! The shape most programs share: options (some taking a value), then
//! operands, some of which are files read or written. One [`Spec`] describes
//! a program's shape; [`Spec::operands`] reads a command's words with it.
//! Options that take a value are skipped with their value; an unknown option
//! is taken for a flag, which at worst adds a signature and so only makes a
//! decision stricter.

/// The file operands of one command.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FileOperands {
    /// Files (or folders) it reads.
    pub reads: Vec<String>,
    /// Files (or folders) it writes, creates or deletes.
    pub writes: Vec<String>,
}

/// Which operands a program writes.
#[derive(Clone, Copy)]
pub(super) enum Writes {
    None,
    /// Every operand (`rm`, `touch`, `tee`, `mv`).
    All,
    /// The last operand when there are two or more (`cp`, `ln`, `install`).
    Last,
    /// The second operand (`uniq IN OUT`).
    Second,
}

pub(super) struct Spec {
    pub(super) programs: &'static [&'static str],
    /// Operands before the files that are not files (a pattern, a mode),
    /// unless the program text came from an option.
    pub(super) leading: usize,
    /// Options followed by a value that is not a file.
    pub(super) value_opts: &'static [&'static str],
    /// Options whose value is the program text (`grep -e`, `sed -e`).
    pub(super) text_opts: &'static [&'static str],
    /// Options whose value is a file read as program text (`-f`).
    pub(super) text_file_opts: &'static [&'static str],
    /// Options whose value is a file written (`sort -o`, `cp -t`).
    pub(super) write_opts: &'static [&'static str],
    pub(super) writes: Writes,
    /// Flags that turn every file operand into a written one (`sed -i`).
    pub(super) in_place: &'static [&'static str],
}

pub(super) const fn reader(
    programs: &'static [&'static str],
    value_opts: &'static [&'static str],
) -> Spec {
    Spec {
        programs,
        leading: 0,
        value_opts,
        text_opts: &[],
        text_file_opts: &[],
        write_opts: &[],
        writes: Writes::None,
        in_place: &[],
    }
}

pub(super) const fn writer(
    programs: &'static [&'static str],
    leading: usize,
    writes: Writes,
    value_opts: &'static [&'static str],
) -> Spec {
    Spec {
        programs,
        leading,
        value_opts,
        text_opts: &[],
        text_file_opts: &[],
        write_opts: &["-t", "--target-directory"],
        writes,
        in_place: &[],
    }
}

impl Spec {
    /// The files read and written by a command of this shape.
    pub(super) fn operands(&self, args: &[String]) -> FileOperands {
        let spec = self;
        let mut out = FileOperands::default();
        let mut operands: Vec<&String> = Vec::new();
        let mut text_given = false;
        let mut in_place = false;
        let mut options_done = false;
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            let value = args.get(i + 1);
            if options_done || !a.starts_with('-') || a == "-" {
                operands.push(&args[i]);
            } else if a == "--" {
                options_done = true;
            } else if spec.text_opts.contains(&a) {
                text_given = true;
                i += 1;
            } else if spec.text_file_opts.contains(&a) {
                text_given = true;
                out.reads.extend(value.cloned());
                i += 1;
            } else if spec.write_opts.contains(&a) {
                out.writes.extend(value.cloned());
                i += 1;
            } else if spec.value_opts.contains(&a) {
                i += 1;
            } else if spec
                .in_place
                .iter()
                .any(|f| a == *f || (f.len() == 2 && a.starts_with(f)))
            {
                in_place = true;
            } else if let Some((opt, v)) = a.split_once('=') {
                // `--output=FILE`, `--file=FILE`
                if spec.write_opts.contains(&opt) {
                    out.writes.push(v.to_string());
                } else if spec.text_file_opts.contains(&opt) {
                    text_given = true;
                    out.reads.push(v.to_string());
                } else if spec.text_opts.contains(&opt) {
                    text_given = true;
                }
            }
            i += 1;
        }
        let skip = if text_given { 0 } else { spec.leading };
        let files: Vec<String> = operands.into_iter().skip(skip).cloned().collect();
        match (spec.writes, in_place) {
            (_, true) | (Writes::All, _) => out.writes.extend(files),
            (Writes::Last, _) if files.len() >= 2 => {
                let (last, rest) = files.split_last().expect("two or more");
                out.reads.extend(rest.iter().cloned());
                out.writes.push(last.clone());
            }
            (Writes::Second, _) if files.len() >= 2 => {
                out.reads.push(files[0].clone());
                out.writes.push(files[1].clone());
            }
            _ => out.reads.extend(files),
        }
        out
    }
}
