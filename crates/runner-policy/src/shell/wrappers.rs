//! Commands inside commands. Each simple command is recorded, then looked
//! into: wrappers (`env`, `sudo`, `timeout`, `nice`, `xargs`, `find -exec`
//! ...) run the command in their arguments, shells run the script of `-c`,
//! `eval` and `trap` run their arguments as a script; interpreters fed code
//! on stdin, `source` and `alias` cannot be checked. The file operands of
//! well-known programs come from [`crate::programs`].

use super::analysis::SimpleCommand;
use super::state::{MAX_DEPTH, PROCESS_SUBSTITUTION, Walker};
use super::variables::is_risky_variable;
use crate::programs::{self, INLINE_CODE, SHELLS};
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
        self.out.commands.push(SimpleCommand {
            words: words.to_vec(),
        });
        let prog = base_name(&words[0]);
        let args = &words[1..];
        self.variable_builtin(prog, args);
        match prog {
            "source" | "." => {
                self.opaque(format!(
                    "`{prog}` runs a script file the policy cannot see into"
                ));
            }
            "alias" | "enable" => {
                self.opaque(format!("`{prog}` changes what command names mean"));
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
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                for a in args {
                    let name = a.split('=').next().unwrap_or("");
                    if a.contains('=') && is_risky_variable(name) {
                        self.opaque(format!("it sets {name}, which changes what commands run"));
                    }
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
                let rest = skip_options(args, &["-s", "-k", "--signal", "--kill-after"]);
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
                let rest = skip_options(args, &["-a", "-o", "-f"]);
                if prog == "time" {
                    // /usr/bin/time -o FILE writes FILE.
                    if let Some(i) = args.iter().position(|a| a == "-o" || a == "--output")
                        && let Some(f) = args.get(i + 1)
                    {
                        let f = f.clone();
                        self.add_path(true, &f, false);
                    }
                }
                self.command_words(rest, heredoc, level + 1);
            }
            "xargs" => self.unwrap_xargs(args, heredoc, level),
            "find" => self.unwrap_find(args, level),
            "watch" => {
                let rest = skip_options(args, &["-n", "-d", "--interval"]);
                self.script(&rest.join(" "));
            }
            p if SHELLS.contains(&p) => self.unwrap_shell(args, heredoc, prog),
            p if programs::is_interpreter(p) => {
                let has_code = args.iter().any(|a| INLINE_CODE.contains(&a.as_str()));
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

    /// `Read`/`Edit` paths for the file operands of well-known programs. A
    /// file operand only known at run time (`cat $F`) fails closed: the
    /// policy could not tell which file it is. Inside `find -exec`, `{}`
    /// stands for anything beneath find's roots.
    fn file_operands(&mut self, prog: &str, args: &[String]) {
        let ops = programs::file_operands(prog, args);
        if let Some(why) = ops.opaque {
            self.opaque(why);
            return;
        }
        for (write, tree, list) in [
            (false, false, ops.reads),
            (true, false, ops.writes),
            (false, true, ops.tree_reads),
            (true, true, ops.tree_writes),
        ] {
            for f in list {
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

    /// `xargs [OPTIONS] [COMMAND [ARGS]]`: the command runs with words read
    /// at run time appended (or put in place of `-I`'s string). Which files
    /// they name cannot be seen: a command that takes files fails closed.
    fn unwrap_xargs(&mut self, args: &[String], heredoc: bool, level: usize) {
        let mut replace = false;
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') && args[i] != "--" {
            let a = args[i].as_str();
            if a == "-a" || a == "--arg-file" {
                if let Some(f) = args.get(i + 1) {
                    let f = f.clone();
                    self.add_path(false, &f, false);
                }
            } else if let Some(f) = a.strip_prefix("--arg-file=") {
                self.add_path(false, f, false);
            }
            if a.starts_with("-I") || a.starts_with("-i") || a.starts_with("--replace") {
                replace = true;
            }
            i += 1;
        }
        let rest = skip_options(args, programs::XARGS_VALUE_OPTIONS);
        let echo = ["echo".to_string()];
        let inner = if rest.is_empty() { &echo[..] } else { rest };
        let program = base_name(&inner[0]);
        if replace || programs::takes_files(program) {
            self.opaque(format!(
                "`xargs` gives `{program}` words read when the script runs; which files they name cannot be checked"
            ));
        }
        self.command_words(inner, heredoc, level + 1);
    }

    fn unwrap_env(&mut self, args: &[String], heredoc: bool, level: usize) {
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            if a == "--" {
                i += 1;
                break;
            } else if a == "-S"
                || a.starts_with("--split-string")
                || (a.starts_with("-S") && a.len() > 2)
            {
                self.opaque("`env -S` splits a string into a command");
                return;
            } else if matches!(a.as_str(), "-u" | "--unset" | "-C" | "--chdir") {
                if a == "-C" || a == "--chdir" {
                    self.cwds = None;
                }
                i += 2;
                continue;
            } else if a.starts_with('-') {
                i += 1;
                continue;
            } else if let Some((name, _)) = a.split_once('=') {
                if is_risky_variable(name) {
                    self.opaque(format!("it sets {name}, which changes what commands run"));
                }
                i += 1;
                continue;
            }
            break;
        }
        self.command_words(args.get(i..).unwrap_or(&[]), heredoc, level + 1);
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

    fn unwrap_shell(&mut self, args: &[String], heredoc: bool, prog: &str) {
        let mut i = 0;
        let mut script: Option<&String> = None;
        let mut operand = false;
        while i < args.len() {
            let a = &args[i];
            if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
                i += 2;
                continue;
            }
            if a == "--" {
                operand = args.len() > i + 1;
                break;
            }
            if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 && !a.starts_with("--") {
                if a[1..].contains('c') {
                    script = args.get(i + 1);
                    if script.is_none() {
                        self.opaque(format!("`{prog} -c` without a script"));
                    }
                    break;
                }
                if a[1..].contains('s') {
                    break;
                }
                i += 1;
                continue;
            }
            if a.starts_with("--") {
                i += 1;
                continue;
            }
            operand = true;
            break;
        }
        if let Some(s) = script {
            let s = s.clone();
            self.script(&s);
        } else if operand {
            // `bash file.sh`: runs a file; the signature is the command itself.
        } else if heredoc {
            self.opaque(format!("`{prog}` is fed its script through a heredoc"));
        } else {
            self.opaque(format!("`{prog}` reads its script from stdin"));
        }
    }
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
