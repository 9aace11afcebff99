//! Commands inside commands. Each simple command is recorded, then looked
//! into: wrappers (`env`, `sudo`, `timeout`, `nice`, `xargs`, `find -exec`
//! ...) run the command in their arguments, shells run the script of `-c`,
//! `eval` and `trap` run their arguments as a script; interpreters fed code
//! on stdin, `source` and `alias` cannot be checked. The file operands of
//! well-known programs come from [`crate::programs`].

use super::analysis::SimpleCommand;
use super::state::{MAX_DEPTH, PROCESS_SUBSTITUTION, Walker};
use crate::programs::{self, SHELLS};
use crate::words::base_name;

impl Walker {
    /// Records a command and looks inside it; `level` counts the wrappers around it.
    pub(super) fn command_words(&mut self, words: &[String], heredoc: bool, level: usize) {
        if words.is_empty() {
            return;
        }
        if level > MAX_DEPTH {
            self.opaque("wrappers nested too deeply to check");
            return;
        }
        if !self.step() {
            return;
        }
        // A wrapped program named only at run time (`env $CMD`, `nohup
        // x<(y)`), or by a glob.
        if level > 0 && is_runtime_word(&words[0]) {
            self.opaque(format!(
                "the command word `{}` is only known when the script runs",
                words[0]
            ));
            return;
        }
        // `git-push …` is `git push …` (git runs the subcommand its name
        // ends in): recorded under its own name, then read as git.
        if let Some(git) = programs::git_names::dashed(words) {
            self.out.commands.push(SimpleCommand {
                words: words.to_vec(),
            });
            return self.command_words(&git, heredoc, level);
        }
        let prog = base_name(&words[0]);
        let args = &words[1..];
        if !SHELLS.contains(&prog) && !PASS_STDIN.contains(&prog) {
            // Only a shell takes its script from stdin, and only these
            // wrappers hand it theirs (`xargs` reads it itself).
            self.stdin_script = None;
        }
        self.variable_builtin(prog, args);
        if matches!(
            prog,
            "export" | "declare" | "typeset" | "local" | "readonly"
        ) {
            for (name, value) in args.iter().filter_map(|a| a.split_once('=')) {
                self.set_variable(name, value, !is_runtime_word(value), level);
            }
        }
        if is_script_step(prog, args) {
            // Part of the script, not a program: nothing to decide.
            return;
        }
        self.out.commands.push(SimpleCommand {
            words: words.to_vec(),
        });
        // `git send-pack` pushes, `npm pub` publishes: a rule on `git
        // push` or `npm publish` meets them.
        for also in programs::read_also_as(prog, words) {
            self.out.also_read_as.push(SimpleCommand { words: also });
        }
        match prog {
            "source" | "." => {
                self.opaque(format!(
                    "`{prog}` runs a script file the policy cannot see into"
                ));
            }
            "alias" | "enable" => {
                self.opaque(format!("`{prog}` changes what command names mean"));
            }
            // `hash -p FILE NAME`: NAME then runs FILE.
            "hash" => {
                self.opaque("`hash -p` changes what command names mean");
            }
            "eval" => {
                let script = args.join(" ");
                self.script(&script);
            }
            "trap" => {
                if let Some(s) = args.iter().find(|a| !a.starts_with('-')) {
                    self.script(s);
                }
            }
            "env" => self.unwrap_env(args, heredoc, level),
            "sudo" | "doas" => {
                let rest = skip_options(
                    args,
                    &[
                        "-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
                    ],
                );
                if args
                    .iter()
                    .any(|a| a == "-s" || a == "-i" || a == "--shell" || a == "--login")
                {
                    self.opaque(format!("`{prog} -s/-i` starts a shell"));
                }
                self.command_words(rest, heredoc, level + 1);
            }
            "timeout" => {
                let rest = skip_options(args, TIMEOUT_VALUE_OPTIONS);
                self.command_words(rest.get(1..).unwrap_or(&[]), heredoc, level + 1);
            }
            "nice" | "ionice" | "chrt" => {
                let rest = skip_options(
                    args,
                    &["-n", "--adjustment", "-c", "-p", "--class", "--classdata"],
                );
                self.command_words(rest, heredoc, level + 1);
            }
            "stdbuf" => {
                let rest = skip_options(args, &["-i", "-o", "-e"]);
                self.command_words(rest, heredoc, level + 1);
            }
            "nohup" | "setsid" | "builtin" | "exec" | "time" | "command" | "unbuffer" => {
                // Options with a value: `exec -a NAME`, GNU time's `-f FORMAT`, `-o FILE`.
                let values: &[&str] = match prog {
                    "exec" => &["-a"],
                    "time" => &["-f", "-o", "--format", "--output"],
                    _ => &[],
                };
                let rest = skip_options(args, values);
                if prog == "time" {
                    // /usr/bin/time -o FILE writes FILE (`-oFILE`,
                    // `--output=FILE` too).
                    for f in time_outputs(&args[..args.len() - rest.len()]) {
                        self.add_path(true, &f, false);
                    }
                }
                self.command_words(rest, heredoc, level + 1);
            }
            "xargs" => self.unwrap_xargs(args, heredoc, level),
            "parallel" => self.unwrap_parallel(args, heredoc, level),
            p if programs::loader::is_loader_name(p) => self.unwrap_loader(words, heredoc, level),
            "find" => self.unwrap_find(args, level),
            "watch" => {
                let rest = skip_options(args, &["-n", "-d", "--interval"]);
                self.script(&rest.join(" "));
            }
            p if SHELLS.contains(&p) => self.unwrap_shell(args, heredoc, prog),
            p if programs::is_interpreter(p) && only_asks_version(p, args) => {}
            p if programs::is_interpreter(p) => {
                let has_code = programs::inline_code_word(p, args).is_some();
                let has_file = args.iter().any(|a| !a.starts_with('-'));
                if heredoc && !has_code {
                    self.opaque(format!("`{prog}` is fed its program through a heredoc"));
                } else if !has_code && !has_file {
                    self.opaque(format!("`{prog}` reads its program from stdin"));
                }
            }
            _ => {}
        }
        self.file_operands(prog, args);
    }

    /// The dynamic loader run as a program (`ld.so [OPTIONS] PROG ARGS`): `PROG ARGS`
    /// runs; `--preload`, `--audit`, `--library-path` leave what runs unknown.
    fn unwrap_loader(&mut self, words: &[String], heredoc: bool, level: usize) {
        use programs::loader::{Loads, reading};
        let Loads::Program {
            program,
            argv,
            maps_code,
        } = reading(words, &[])
        else {
            return;
        };
        if maps_code {
            self.opaque("the loader is given code to map into the program (`--preload`, `--audit`, `--library-path`)");
            return;
        }
        let mut run = vec![program];
        run.extend(argv.into_iter().skip(1));
        self.command_words(&run, heredoc, level + 1);
    }

    /// `Read`/`Edit` paths for the file operands of well-known programs. A
    /// file operand only known at run time (`cat $F`) fails closed: the
    /// policy could not tell which file it is. Inside `find -exec`, `{}`
    /// stands for anything beneath find's roots.
    fn file_operands(&mut self, prog: &str, args: &[String]) {
        // An option whose value is a number or text
        // ([`programs::takes_plain_value`]) with that value attached and
        // only known at run time (`-j$(nproc)`, `--message=v"$V"`) is read
        // as the option and its value apart (`-j $(nproc)`), as getopt
        // reads it. Any other option only known at run time (a path or a
        // program as its value, `-xf$F` clustered, or a name not written
        // out: `-$X`, `--$X=1`) may be any option, and make any word its
        // value or an operand: opaque.
        let split: Vec<String>;
        let mut args = args;
        if programs::takes_files(prog) && args.iter().any(|a| a.starts_with('-') && runtime_text(a))
        {
            let mut out = Vec::with_capacity(args.len() + 2);
            for a in args {
                if !(a.starts_with('-') && runtime_text(a)) {
                    out.push(a.clone());
                    continue;
                }
                let Some((option, value)) =
                    attached_value(a).filter(|(o, _)| programs::takes_plain_value(prog, o))
                else {
                    self.opaque(format!(
                        "`{prog} {a}`: an option only known when the script runs"
                    ));
                    return;
                };
                out.push(option.to_string());
                out.push(value.to_string());
            }
            split = out;
            args = &split;
        }
        let ops = programs::file_operands(prog, args);
        if let Some(why) = ops.opaque {
            self.out.starts |= ops.starts;
            self.opaque(why);
            return;
        }
        for f in &ops.history_reads {
            if f.contains(['$', '`']) || f.starts_with('~') {
                self.opaque(format!(
                    "`{prog}` reads `{f}` in git's history, a path only known when the script runs"
                ));
                return;
            }
            // A file's history holds that file, not a folder's.
            self.add_history_path(f, !programs::git_names_a_file(f));
        }
        for (write, tree, list) in [
            (false, false, ops.reads),
            (true, false, ops.writes),
            (false, true, ops.tree_reads),
            (true, true, ops.tree_writes),
        ] {
            for f in list {
                if self.done() {
                    return;
                }
                if f == PROCESS_SUBSTITUTION {
                    continue;
                }
                if f.contains("{}")
                    && let Some(roots) = self.find_roots.clone()
                {
                    for r in roots {
                        self.add_path(write, &r, true);
                    }
                    continue;
                }
                if super::expand::has_glob(&f) {
                    self.glob_operand = true;
                }
                if let Some(values) = self.bound_values(&f) {
                    for v in values {
                        self.add_path(write, &v, tree);
                    }
                    continue;
                }
                if crate::world::in_home(&f) && !f.contains(['$', '`']) {
                    self.add_path(write, &f, tree); // outside the world
                    continue;
                }
                if self.produced_operand(prog, args, write, &f) {
                    continue;
                }
                if f.contains(['$', '`']) || f.starts_with('~') {
                    let verb = if write { "writes" } else { "reads" };
                    self.opaque(format!(
                        "`{prog}` {verb} `{f}`, a file only known when the script runs"
                    ));
                    continue;
                }
                self.add_path(write, &f, tree);
            }
        }
    }

    /// `xargs [OPTIONS] [COMMAND [ARGS]]`: the command runs with words read at run time
    /// appended (or in place of `-I`'s); which files they name cannot be seen.
    fn unwrap_xargs(&mut self, args: &[String], heredoc: bool, level: usize) {
        let call = match programs::xargs_call(args) {
            Ok(c) => c,
            Err(why) => {
                self.opaque(why.to_string());
                return;
            }
        };
        for f in &call.arg_files {
            self.add_path(false, f, false);
        }
        let echo = ["echo".to_string()];
        let rest = args.get(call.command..).unwrap_or(&[]);
        let inner = if rest.is_empty() { &echo[..] } else { rest };
        let program = base_name(&inner[0]);
        if call.replace || programs::takes_files(program) {
            // A known producer's paths: read or written beneath where they
            // lie (issue 73); otherwise unknown words.
            let with = call
                .replace
                .then(|| call.replace_with.clone().unwrap_or_default());
            self.xargs_words(inner, &args[..call.command], with.as_deref());
        }
        self.command_words(inner, heredoc, level + 1);
    }

    fn unwrap_find(&mut self, args: &[String], level: usize) {
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            match a {
                "-exec" | "-execdir" | "-ok" | "-okdir" => {
                    let start = i + 1;
                    let mut end = start;
                    while end < args.len() && args[end] != ";" && args[end] != "+" {
                        end += 1;
                    }
                    let outer = self.find_roots.replace(programs::find_roots(args));
                    self.command_words(&args[start..end], false, level + 1);
                    self.find_roots = outer;
                    i = end;
                }
                // Files find writes (`-delete`, `-fprint`) come from
                // `programs::file_operands`.
                _ => {}
            }
            i += 1;
        }
    }
}

/// An option word with its value attached, apart: `-j$(nproc)` is `-j`
/// and `$(nproc)`, `--jobs=$N` is `--jobs` and `$N`. `None` when the
/// option's name is not written out (`-$X`, `--$X=1`, `--=x`).
fn attached_value(a: &str) -> Option<(&str, &str)> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if let Some(long) = a.strip_prefix("--") {
        let (name, _) = long.split_once('=')?;
        if name.is_empty() || !name.chars().all(name_char) {
            return None;
        }
        return Some((&a[..2 + name.len()], &a[3 + name.len()..]));
    }
    let c = a[1..].chars().next()?;
    if !c.is_ascii_alphanumeric() {
        return None;
    }
    Some((&a[..2], &a[2..]))
}

/// `timeout`'s options that take a value (the next word, or attached).
pub(crate) const TIMEOUT_VALUE_OPTIONS: &[&str] = &["-s", "-k", "--signal", "--kill-after"];

/// Wrappers whose command gets their stdin.
const PASS_STDIN: &[&str] = &[
    "env", "sudo", "doas", "timeout", "nice", "ionice", "chrt", "stdbuf", "nohup", "setsid",
    "builtin", "exec", "time", "command",
];

/// Builtins that are always part of the script (see [`is_script_step`]).
pub(crate) const SCRIPT_STEPS: &[&str] = &[
    ":",
    "true",
    "false",
    "set",
    "shopt",
    "exit",
    "return",
    "shift",
    "unset",
    "cd",
    "pushd",
    "popd",
    "dirs",
    "export",
    "local",
    "declare",
    "typeset",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "wait",
    "break",
    "continue",
    "test",
    "[",
    "let",
    "getopts",
    "umask",
    "type",
    "unalias",
    "pwd",
];

/// Builtins that change nothing outside the shell (its options, folder,
/// variables, flow), when used that way: part of the script, not programs
/// a rule must allow. What they do to variables is checked by
/// [`super::builtins`]; `cd` moves the folder paths resolve from. The risky
/// ones (`eval`, `source`, `exec`, `trap`, `enable`, `builtin`, `command`
/// with a program, `hash -p`, `alias`) stay modelled.
fn is_script_step(prog: &str, args: &[String]) -> bool {
    match prog {
        p if SCRIPT_STEPS.contains(&p) => true,
        "hash" => !args.iter().any(|a| a.starts_with('-') && a.contains('p')),
        // `command -v NAME` prints where NAME is; it runs nothing.
        "command" => args.first().is_some_and(|a| a == "-v" || a == "-V"),
        _ => false,
    }
}

/// `python3 --version`, `node -v`, `ruby --help`: the interpreter prints
/// and exits, running no program.
fn only_asks_version(prog: &str, args: &[String]) -> bool {
    let [flag] = args else {
        return false;
    };
    matches!(
        flag.as_str(),
        "--version" | "-V" | "--help" | "-h" | "-help"
    ) || (flag == "-v" && !prog.starts_with("python"))
}

/// Whether a word holds text only known at run time other than a number
/// (`$((...))` expands to digits only).
fn runtime_text(w: &str) -> bool {
    let mut rest = w;
    let mut plain = String::new();
    while let Some(i) = rest.find("$((") {
        plain.push_str(&rest[..i]);
        match rest[i..].find("))") {
            Some(j) => rest = &rest[i + j + 2..],
            None => return true,
        }
    }
    plain.push_str(rest);
    plain.contains(['$', '`'])
}

/// A word whose value bash fixes only when it runs: expansions, globs,
/// braces, a process substitution.
pub(super) fn is_runtime_word(w: &str) -> bool {
    w.contains(['$', '`', '*', '?', '{', '~']) || w.contains(PROCESS_SUBSTITUTION) || {
        w.find('[').is_some_and(|i| w[i + 1..].contains(']'))
    }
}

/// The files GNU time's options before its command name: `-o FILE`,
/// `-oFILE`, `--output FILE`, `--output=FILE`.
fn time_outputs(options: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = options.iter();
    while let Some(a) = words.next() {
        if a == "-o" || a == "--output" {
            out.extend(words.next().cloned());
        } else if let Some(f) = a.strip_prefix("--output=") {
            out.push(f.to_string());
        } else if let Some(f) = a.strip_prefix("-o").filter(|f| !f.is_empty()) {
            out.push(f.to_string());
        } else if a == "-f" || a == "--format" {
            words.next();
        }
    }
    out
}

/// Skips leading options (and the values of the named ones) of a wrapper.
fn skip_options<'a>(args: &'a [String], with_value: &[&str]) -> &'a [String] {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--" {
            return &args[i + 1..];
        }
        if !a.starts_with('-') || a == "-" {
            break;
        }
        if with_value.contains(&a) {
            i += 2;
        } else {
            i += 1;
        }
    }
    args.get(i..).unwrap_or(&[])
}

#[cfg(test)]
mod tests;
