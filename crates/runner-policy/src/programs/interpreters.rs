//! Shells, interpreters and build tools: programs whose argument or input
//! is a program.
//!
//! - A shell's `-c` script is analysed as bash (by the shell walk); a
//!   script file is read and run; a script from stdin or a heredoc cannot
//!   be seen and fails closed.
//! - Another language's inline code (`python -c`, `node -e`, `perl -e`,
//!   `ruby -e`, `php -r` ...) runs what the policy cannot see: it fails
//!   closed, so only a rule naming the exact command allows it. A script
//!   file is read (`Read(script.py)`) and run: a rule allowing the
//!   interpreter allows whatever the script does.
//! - Build tools (`make`, `cargo`, `npm`, `npx`, `pip`, `go`, `docker`) run
//!   project code (Makefile recipes, build scripts, tests, package scripts):
//!   a rule allowing them allows that code. Their file options are modelled
//!   (`make -f`, `docker run -v SRC:DST` writes beneath SRC), and `docker
//!   run --privileged` fails closed. `patch` writes the files its patch
//!   names: anywhere beneath the folder it runs in.

use super::spec::{Arg, FileOperands, Options, change_dir};

/// Shells: `-c SCRIPT` is a script of its own, a file operand runs a file,
/// and with neither they read their script from stdin.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "fish", "mksh", "ash", "busybox",
];

/// An interpreter of another language, and how its command line gives it
/// code: the options whose value is code, and the short-option letters
/// that give code inside a cluster (`perl -ne`, `python3 -Bc`). One table
/// for the gate (an interpreter's words, a heredoc fed to it) and the lint
/// (an allow rule that names inline code).
#[derive(Debug, Clone, Copy)]
pub struct Interpreter {
    /// Its program's name (`python3`; versioned names go by it too).
    pub name: &'static str,
    /// Options (or, for `deno`, the subcommand) whose value is code.
    pub inline: &'static [&'static str],
    /// Short-option letters that give code inside a cluster.
    pub letters: &'static str,
}

const fn interp(
    name: &'static str,
    inline: &'static [&'static str],
    letters: &'static str,
) -> Interpreter {
    Interpreter {
        name,
        inline,
        letters,
    }
}

const PYTHON: &[&str] = &["-c"];
const PERL: &[&str] = &["-e", "-E"];
const E: &[&str] = &["-e"];
const NODE: &[&str] = &["-e", "--eval", "-p", "--print"];

/// Interpreters of other languages: code given inline, a script file, or
/// stdin (which cannot be checked). `deno` takes code by its `eval`
/// subcommand, PowerShell by `-Command`/`-EncodedCommand` in any case
/// (see [`interpreter`]).
pub const INTERPRETER_TABLE: &[Interpreter] = &[
    interp("python", PYTHON, "ceE"),
    interp("python2", PYTHON, "ceE"),
    interp("python3", PYTHON, "ceE"),
    interp("perl", PERL, "ceE"),
    interp("ruby", E, "ceE"),
    interp("node", NODE, "ep"),
    interp("nodejs", NODE, "ep"),
    interp("php", &["-r"], "r"),
    interp("lua", E, "ceE"),
    interp("luajit", E, "ceE"),
    interp("Rscript", &["-e", "--expr"], "ceE"),
    interp("deno", &["eval"], ""),
    interp("bun", NODE, "ep"),
    interp("tclsh", &[], "ceE"),
    interp("osascript", E, "ceE"),
    interp("nu", &["-c", "--commands"], "ceE"),
    interp("pwsh", &["-Command", "-c", "-EncodedCommand", "-ec"], ""),
    interp(
        "powershell",
        &["-Command", "-c", "-EncodedCommand", "-ec"],
        "",
    ),
    interp("julia", &["-e", "--eval", "-E", "--print"], "ceE"),
    interp("elixir", &["-e", "--eval"], "e"),
    interp("guile", &["-c"], "ceE"),
    interp("racket", &["-e", "--eval"], "e"),
];

/// The interpreters' names.
pub const INTERPRETERS: &[&str] = &{
    let mut out = [""; INTERPRETER_TABLE.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = INTERPRETER_TABLE[i].name;
        i += 1;
    }
    out
};

/// The table's entry for `program`, versioned names too (`python3.12`).
pub fn interpreter_of(program: &str) -> Option<&'static Interpreter> {
    INTERPRETER_TABLE.iter().find(|i| {
        program == i.name
            || program
                .strip_prefix(i.name)
                .is_some_and(|v| v.starts_with('.'))
    })
}

/// True for an interpreter's name, versioned ones too (`python3.12`).
pub fn is_interpreter(program: &str) -> bool {
    interpreter_of(program).is_some()
}

/// The word of `args` that gives `program` code inline (`-c`, `-pe`,
/// `--eval=...`), if one does.
pub fn inline_code_word<'a>(program: &str, args: &'a [String]) -> Option<&'a str> {
    let i = interpreter_of(program)?;
    if matches!(i.name, "pwsh" | "powershell") {
        return args
            .iter()
            .find(|a| {
                let l = a.to_ascii_lowercase();
                l.starts_with("-c") || l.starts_with("-e") || l.starts_with("/c")
            })
            .map(String::as_str);
    }
    if i.name == "deno" {
        return args
            .iter()
            .find(|a| !a.starts_with('-'))
            .filter(|a| *a == "eval" || *a == "repl")
            .map(String::as_str);
    }
    for a in args {
        let name = a.split('=').next().unwrap_or(a);
        let cluster = a.len() > 1 && a.starts_with('-') && !a.starts_with("--");
        // Its own options, and (stricter) those that give code to any.
        let gives = i.inline.contains(&name) || INLINE_CODE.contains(&a.as_str());
        if gives || (cluster && a[1..].contains(|c| i.letters.contains(c))) {
            return Some(a);
        }
        // Past the first operand (a script) or `-m` (a module) the words
        // are the program's own.
        if !a.starts_with('-') || a == "-m" {
            return None;
        }
    }
    None
}

/// The options that give an interpreter inline code, in every
/// interpreter (the lint's and a heredoc's quick check).
pub const INLINE_CODE: &[&str] = &["-c", "-e", "-E", "--eval", "-p", "--print", "-r"];

/// Whether a script operand names no file the policy can see before the
/// command runs: a process substitution (`bash <(curl URL)`, read as
/// `curl URL | bash` is) or a descriptor (`/dev/stdin`, `/dev/fd/N`,
/// `/proc/self/fd/N`).
pub fn unseen_script(operand: &str) -> bool {
    operand.contains("<(...)")
        || operand == "/dev/stdin"
        || operand.starts_with("/dev/fd/")
        || (operand.starts_with("/proc/") && operand.contains("/fd/"))
}

/// What an interpreter's words show: inline code fails closed, a script
/// file is read.
pub(super) fn interpreter(program: &str, args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    if program == "deno" {
        return deno(args);
    }
    if let Some(a) = inline_code_word(program, args) {
        out.opaque(format!(
            "`{program} {a}` runs inline code the policy cannot see into"
        ));
        return out;
    }
    if matches!(program, "pwsh" | "powershell") {
        // Its options are words (`-File X`, `-NoProfile`), not clusters.
        match args.iter().find(|a| !a.starts_with('-')) {
            Some(a) if unseen_script(a) => out.opaque(format!(
                "`{program}` runs a script only known when the command runs (`{a}`)"
            )),
            Some(a) => out.reads.push(a.clone()),
            None => {}
        }
        return out;
    }
    for a in args {
        if a == "-m" {
            // `python -m MODULE`: runs an installed module.
            return out;
        }
        if !a.starts_with('-') {
            if unseen_script(a) {
                out.opaque(format!(
                    "`{program}` runs a script only known when the command runs (`{a}`)"
                ));
                return out;
            }
            out.reads.push(a.clone());
            return out;
        }
    }
    out
}

/// `deno eval CODE` and the REPL run code given inline or on stdin, and
/// `deno run URL` code fetched from the network: opaque. `deno run FILE`
/// reads and runs FILE.
fn deno(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str);
    match sub {
        None | Some("eval" | "repl") => {
            out.opaque("`deno eval` (or its REPL) runs code the policy cannot see into");
            return out;
        }
        _ => {}
    }
    let operands: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .skip(1)
        .collect();
    if let Some(u) = operands.iter().find(|a| {
        ["http://", "https://", "npm:", "jsr:", "data:"]
            .iter()
            .any(|p| a.starts_with(p))
    }) {
        out.opaque(format!(
            "`deno` runs code from `{u}`, which the policy cannot see"
        ));
        return out;
    }
    out.reads.extend(operands.first().map(|s| s.to_string()));
    out
}

/// `make [-f FILE] [-C DIR] [TARGET...]`.
pub(super) fn make(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "fCIjlWo",
        long_values: &[
            "--file",
            "--makefile",
            "--directory",
            "--include-dir",
            "--jobs",
            "--load-average",
            "--what-if",
            "--old-file",
            "--assume-new",
            "--assume-old",
            "--eval",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut dir: Option<String> = None;
    for arg in opts.parse(args) {
        if let Arg::Opt { name, value } = arg {
            match name.as_str() {
                "-f" | "--file" | "--makefile" => out.reads.extend(value.map(str::to_string)),
                "--eval" => out.opaque("`make --eval` runs make code given on the command line"),
                // Each `-C` changes folder (from the one before) before the
                // makefiles are read.
                "-C" | "--directory" => {
                    if let Some(v) = value {
                        dir = Some(change_dir(dir, v));
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(d) = dir {
        out.beneath(&d);
    }
    out
}

/// Build tools: they run project code, allowed by the rule on the tool;
/// options that name other programs to run fail closed (`cargo --config`
/// can set runners and wrappers, `go -exec`/`-toolexec`, npm's
/// `--script-shell`); `--manifest-path` is read.
pub(super) fn build_tool(program: &str, args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    for (i, a) in args.iter().enumerate() {
        let name = a.split('=').next().unwrap_or(a);
        let runs = match program {
            "cargo" => {
                (name == "--config"
                    && !cargo_config_value(args, i)
                        .is_some_and(super::config_keys::cargo_config_runs_nothing))
                    || a.starts_with("-Zhost-config")
                    || a.starts_with("-Ztarget-applies-to-host")
            }
            "go" => matches!(name, "-exec" | "-toolexec" | "--exec" | "--toolexec"),
            _ => matches!(
                name,
                "--script-shell" | "--shell" | "--node-options" | "--userconfig" | "--globalconfig"
            ),
        };
        if runs {
            out.opaque(format!("`{program} {name}` names other programs to run"));
        }
        if name == "--manifest-path" {
            match a.split_once('=') {
                Some((_, v)) => out.reads.push(v.to_string()),
                None => out.reads.extend(args.get(i + 1).cloned()),
            }
        }
    }
    out
}

/// The value of `cargo --config VALUE` or `--config=VALUE` at `args[i]`.
fn cargo_config_value(args: &[String], i: usize) -> Option<&str> {
    match args[i].split_once('=') {
        Some(("--config", v)) => Some(v),
        _ => args.get(i + 1).map(String::as_str),
    }
}

/// `patch [-p N] [-i PATCH] [-o OUT] [-d DIR] [FILE]`: writes the files the
/// patch names, anywhere beneath DIR (or the current folder).
pub(super) fn patch(args: &[String]) -> FileOperands {
    let opts = Options {
        short_values: "pidoBDFrVYzgxc",
        long_values: &[
            "--strip",
            "--input",
            "--directory",
            "--output",
            "--prefix",
            "--reject-file",
            "--suffix",
            "--basename-prefix",
            "--fuzz",
            "--version-control",
            "--get",
            "--debug",
            "--ifdef",
            "--quoting-style",
            "--read-only",
        ],
        optional: &[],
    };
    let mut out = FileOperands::default();
    let mut dir = None;
    let mut dry = false;
    let mut output = None;
    let mut operands = Vec::new();
    for arg in opts.parse(args) {
        match arg {
            Arg::Operand(o) => operands.push(o.to_string()),
            Arg::Opt { name, value } => match name.as_str() {
                "-i" | "--input" => out.reads.extend(value.map(str::to_string)),
                // Each `-d` changes folder before anything is read or
                // written, from the folder the one before it changed to.
                "-d" | "--directory" => {
                    if let Some(v) = value {
                        dir = Some(change_dir(dir, v));
                    }
                }
                "-o" | "--output" => output = value.map(str::to_string),
                "-r" | "--reject-file" => out.writes.extend(value.map(str::to_string)),
                "--dry-run" | "-C" | "--check" => dry = true,
                _ => {}
            },
        }
    }
    let mut operands = operands.into_iter();
    let target = operands.next();
    out.reads.extend(operands);
    if !dry {
        match (output, target) {
            (Some(o), t) => {
                out.writes.push(o);
                out.reads.extend(t);
            }
            (None, Some(t)) => out.writes.push(t),
            (None, None) => out.tree_writes.push(".".into()),
        }
    }
    // Every name is the folder `-d` changed to's (`patch -d .github
    // workflows/ci.yml` writes `.github/workflows/ci.yml`).
    if let Some(d) = dir {
        out.beneath(&d);
    }
    out
}

/// `docker run|create ... -v SRC:DST`: the container may write beneath SRC.
/// A mount's source that names a folder (not a named volume): a path, or
/// one spelled with a variable or substitution (`$PWD`, `$(pwd)`, `$HOME`,
/// `~`), which the walk then fails closed on.
fn is_mount_path(src: &str) -> bool {
    src.contains(['/', '.', '$', '~', '`'])
}

/// docker's short options that take a value (`docker run --help`): `-a`,
/// `-c`, `-e`, `-h`, `-l`, `-m`, `-p`, `-u`, `-v`, `-w`.
const DOCKER_SHORT_VALUES: &str = "acehlmpuvw";

/// The value of `-v` in a cluster of short options, as docker's flag
/// parser (pflag) reads it: `-v SRC:DST`, `-vSRC:DST`, `-v=SRC:DST`,
/// `-itv SRC:DST`. The first letter that takes a value ends the cluster,
/// so in `-ev` the `v` is `-e`'s value.
fn short_volume(word: &str, next: Option<&String>) -> Option<String> {
    let cluster = word.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
    let (at, letter) = cluster
        .char_indices()
        .find(|(_, c)| DOCKER_SHORT_VALUES.contains(*c))?;
    if letter != 'v' {
        return None;
    }
    let rest = &cluster[at + 1..];
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    if rest.is_empty() {
        next.cloned()
    } else {
        Some(rest.to_string())
    }
}

pub(super) fn docker(args: &[String]) -> FileOperands {
    let mut out = FileOperands::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        // Only long options are matched by name (`-v` is read below).
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a, None),
        };
        let value = || attached.clone().or_else(|| args.get(i + 1).cloned());
        match name {
            "--volume" => {
                if let Some(v) = value() {
                    let src = v.split(':').next().unwrap_or("").to_string();
                    // A named volume (a plain name) is not a path.
                    if is_mount_path(&src) {
                        out.tree_writes.push(src);
                    }
                }
            }
            "--mount" => {
                if let Some(v) = value() {
                    for kv in v.split(',') {
                        if let Some(src) = kv
                            .strip_prefix("source=")
                            .or_else(|| kv.strip_prefix("src="))
                        {
                            out.tree_writes.push(src.to_string());
                        }
                    }
                }
            }
            "--privileged" | "--cap-add" | "--device" | "--pid" | "--security-opt" => {
                out.opaque(format!(
                    "`docker {name}` gives the container the host's powers"
                ));
            }
            _ => {}
        }
        if let Some(v) = short_volume(a, args.get(i + 1)) {
            let src = v.split(':').next().unwrap_or("");
            if is_mount_path(src) {
                out.tree_writes.push(src.to_string());
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests;
