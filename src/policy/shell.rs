//! Shell analysis: every simple command a bash script would run.
//!
//! A script is parsed with a real bash grammar (brush-parser) and walked in
//! full: lists, pipelines, subshells, groups, `if`/`for`/`while`/`case`,
//! function bodies, `$(...)`, backticks, process substitutions, heredocs and
//! here-strings. Wrappers (`env`, `sudo`, `timeout`, `xargs`, `find -exec`,
//! `bash -c`, `eval` ...) are unwrapped so the wrapped command is checked as
//! well as the wrapper. Redirections that write become `Edit(path)`, those
//! that read and the file operands of well-known readers become `Read(path)`.
//!
//! Whatever cannot be known before running (a command word built from a
//! variable or substitution, a glob or brace in the command word, `source`,
//! a syntax error, a risky assignment such as `PATH=`, an interpreter reading
//! its script from stdin) makes the whole script *opaque*: one signature that
//! only a rule naming the exact text can allow. When unsure, deny.

use std::path::Path;

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::expand::{MAX_EXPANSION, expand_glob, has_glob};
use super::programs::{self, READ_ONLY_GIT, READ_ONLY_PROGRAMS};
use super::signature::{Family, Signature};
use crate::workspace::Workspace;

/// The word that stands for `<(...)`/`>(...)` among a command's arguments.
const PROCESS_SUBSTITUTION: &str = "<(...)";

/// Scripts longer than this are not analysed (fail closed).
pub const MAX_SCRIPT_CHARS: usize = 10_000;
const MAX_DEPTH: usize = 16;

/// One simple command: its words with quotes removed (dynamic parts kept as
/// written, e.g. `$HOME`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<String>,
}

impl SimpleCommand {
    pub fn program(&self) -> &str {
        self.words.first().map(String::as_str).unwrap_or("")
    }
}

/// The result of analysing a script.
#[derive(Debug, Clone, Default)]
pub struct ShellAnalysis {
    pub text: String,
    pub commands: Vec<SimpleCommand>,
    /// Files written by redirections or `tee`, as written (relative to the
    /// folder the script starts in unless absolute), with the folders the
    /// script may have `cd`-ed into.
    pub writes: Vec<(String, Vec<String>)>,
    /// Files read by `<` or by well-known readers.
    pub reads: Vec<(String, Vec<String>)>,
    /// Why the script cannot be analysed, when it cannot.
    pub opaque: Option<String>,
}

/// Variables whose assignment changes what a command runs or loads.
fn is_risky_variable(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "PATH",
        "BASH_ENV",
        "ENV",
        "PAGER",
        "GIT_PAGER",
        "EDITOR",
        "VISUAL",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "PS4",
        "CDPATH",
        "LESSOPEN",
        "LESSCLOSE",
        "MANPAGER",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "HOME",
        "SHELL",
        "GLOBIGNORE",
        "BROWSER",
        "TERMINFO",
        "HISTFILE",
    ];
    EXACT.contains(&name)
        || name.starts_with("LD_")
        || name.starts_with("GIT_")
        || name.starts_with("DYLD_")
        || name.starts_with("BASH_FUNC_")
}

const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "fish", "mksh", "ash", "busybox",
];
const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "Rscript",
    "deno",
    "bun",
    "tclsh",
    "osascript",
];

/// The base name of a program word: `/bin/rm` is `rm`.
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

struct Walker {
    out: ShellAnalysis,
    /// Folders the script may be in, relative to where it started; `None`
    /// once a `cd` went somewhere unknown.
    cwds: Option<Vec<String>>,
    depth: usize,
}

/// The value of a word when it is fixed before running.
struct WordValue {
    text: String,
    /// Holds expansions (variables, substitutions, tildes, arithmetic).
    dynamic: bool,
    /// Holds unquoted glob or brace characters.
    unquoted_magic: bool,
}

impl Walker {
    fn opaque(&mut self, why: impl Into<String>) {
        if self.out.opaque.is_none() {
            self.out.opaque = Some(why.into());
        }
    }

    fn script(&mut self, text: &str) {
        if self.depth > MAX_DEPTH {
            self.opaque("commands nested too deeply to check");
            return;
        }
        self.depth += 1;
        let parsed = std::panic::catch_unwind(|| {
            let mut parser = brush_parser::Parser::new(
                std::io::BufReader::new(text.as_bytes()),
                &brush_parser::ParserOptions::default(),
            );
            parser.parse_program()
        });
        match parsed {
            Ok(Ok(program)) => {
                for cc in &program.complete_commands {
                    self.compound_list(cc);
                }
            }
            Ok(Err(e)) => self.opaque(format!("the script does not parse as bash: {e}")),
            Err(_) => self.opaque("the script could not be parsed"),
        }
        self.depth -= 1;
    }

    fn compound_list(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            self.and_or(&item.0);
        }
    }

    fn and_or(&mut self, list: &ast::AndOrList) {
        self.pipeline(&list.first);
        for next in &list.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        for c in &p.seq {
            self.command(c);
        }
    }

    fn command(&mut self, c: &ast::Command) {
        match c {
            ast::Command::Simple(s) => self.simple(s),
            ast::Command::Compound(cc, redirs) => {
                self.compound(cc);
                if let Some(r) = redirs {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
            ast::Command::Function(f) => {
                self.compound(&f.body.0);
                if let Some(r) = &f.body.1 {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
            ast::Command::ExtendedTest(t, redirs) => {
                self.extended_test(&t.expr);
                if let Some(r) = redirs {
                    for io in &r.0 {
                        self.redirect(io);
                    }
                }
            }
        }
    }

    fn extended_test(&mut self, e: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.extended_test(a),
            E::UnaryTest(_, w) => {
                self.word(w);
            }
            E::BinaryTest(_, a, b) => {
                self.word(a);
                self.word(b);
            }
        }
    }

    fn compound(&mut self, cc: &ast::CompoundCommand) {
        use ast::CompoundCommand as C;
        match cc {
            C::Arithmetic(a) => self.arithmetic(&a.expr.value),
            C::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.compound_list(&f.body.list);
            }
            C::BraceGroup(b) => self.compound_list(&b.list),
            C::Subshell(s) => self.compound_list(&s.list),
            C::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w);
                }
                self.compound_list(&f.body.list);
            }
            C::CaseClause(c) => {
                self.word(&c.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.compound_list(cmd);
                    }
                }
            }
            C::IfClause(i) => {
                self.compound_list(&i.condition);
                self.compound_list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c);
                    }
                    self.compound_list(&e.body);
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.compound_list(&w.0);
                self.compound_list(&w.1.list);
            }
            C::Coprocess(c) => self.command(&c.body),
        }
    }

    fn arithmetic(&mut self, text: &str) {
        // Array subscripts in arithmetic are expanded, and `$(...)` there runs.
        if text.contains("$(") || text.contains('`') {
            self.opaque("a command substitution inside an arithmetic expression");
        }
    }

    /// Evaluates a word: its fixed text, and any substitutions inside it are
    /// walked as scripts of their own.
    fn word(&mut self, w: &ast::Word) -> WordValue {
        self.word_text(&w.value)
    }

    fn word_text(&mut self, raw: &str) -> WordValue {
        let pieces = match brush_parser::word::parse(raw, &brush_parser::ParserOptions::default()) {
            Ok(p) => p,
            Err(_) => {
                self.opaque(format!("the word `{raw}` could not be parsed"));
                return WordValue {
                    text: raw.to_string(),
                    dynamic: true,
                    unquoted_magic: false,
                };
            }
        };
        let mut v = WordValue {
            text: String::new(),
            dynamic: false,
            unquoted_magic: false,
        };
        self.pieces(raw, &pieces, &mut v, false);
        v
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        v: &mut WordValue,
        quoted: bool,
    ) {
        for p in pieces {
            let src = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    if !quoted && t.contains(['*', '?', '[', '{', '}']) {
                        v.unquoted_magic = true;
                    }
                    v.text.push_str(t);
                }
                WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => {
                    v.text.push_str(t)
                }
                WordPiece::EscapeSequence(t) => {
                    v.text.push_str(t.strip_prefix('\\').unwrap_or(t));
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, v, true);
                }
                WordPiece::TildeExpansion(_) => {
                    v.dynamic = true;
                    v.text.push_str(src);
                }
                WordPiece::ParameterExpansion(_) => {
                    v.dynamic = true;
                    if src.contains("$(") || src.contains('`') || src.contains("<(") {
                        self.opaque("a command substitution inside a parameter expansion");
                    }
                    v.text.push_str(src);
                }
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    v.dynamic = true;
                    self.script(s);
                    v.text.push_str(src);
                }
                WordPiece::ArithmeticExpression(e) => {
                    v.dynamic = true;
                    self.arithmetic(&e.value);
                    v.text.push_str(src);
                }
            }
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand) {
        let mut words: Vec<WordValue> = Vec::new();
        let mut heredoc = false;
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (i, true))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(|i| (i, false)));
        let mut pending_word = s.word_or_name.as_ref();
        let mut redirects = Vec::new();
        for (item, is_prefix) in items {
            if !is_prefix && let Some(w) = pending_word.take() {
                let v = self.word(w);
                words.push(v);
            }
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(io) => {
                    if matches!(io, ast::IoRedirect::HereDocument(..)) {
                        heredoc = true;
                    }
                    redirects.push(io);
                }
                ast::CommandPrefixOrSuffixItem::Word(w) => {
                    let v = self.word(w);
                    words.push(v);
                }
                ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                    if is_prefix {
                        self.assignment(a);
                    } else {
                        // `env A=1 cmd`, `export A=1`: an argument that looks
                        // like an assignment; the program decides.
                        let v = self.word(w);
                        words.push(v);
                    }
                }
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                    self.compound_list(&sub.list);
                    words.push(WordValue {
                        text: PROCESS_SUBSTITUTION.into(),
                        dynamic: true,
                        unquoted_magic: false,
                    });
                }
            }
        }
        if let Some(w) = pending_word.take() {
            let v = self.word(w);
            words.push(v);
        }
        let program_is_cd = words
            .first()
            .is_some_and(|w| matches!(w.text.as_str(), "cd" | "pushd" | "popd"));
        for io in redirects {
            self.redirect(io);
        }
        if let Some(first) = words.first() {
            if first.dynamic {
                self.opaque(format!(
                    "the command word `{}` is only known when the script runs",
                    first.text
                ));
                return;
            }
            if first.unquoted_magic {
                self.opaque(format!(
                    "the command word `{}` holds glob or brace characters the shell would expand",
                    first.text
                ));
                return;
            }
            let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
            self.command_words(&texts, heredoc, 0);
            if program_is_cd {
                self.cd(&words[1..]);
            }
        }
    }

    fn assignment(&mut self, a: &ast::Assignment) {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, idx) => {
                self.arithmetic(idx);
                n.clone()
            }
        };
        if is_risky_variable(&name) {
            self.opaque(format!("it sets {name}, which changes what commands run"));
        }
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                self.word(w);
            }
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(k);
                    }
                    self.word(v);
                }
            }
        }
    }

    fn cd(&mut self, args: &[WordValue]) {
        let target = args
            .iter()
            .find(|w| !w.text.starts_with('-') || w.text == "-");
        match target {
            Some(t) if !t.dynamic && t.text != "-" => {
                if let Some(cwds) = &mut self.cwds {
                    let mut next = cwds.clone();
                    for c in cwds.iter() {
                        let joined = if t.text.starts_with('/') {
                            t.text.clone()
                        } else {
                            format!("{c}/{}", t.text)
                        };
                        if !next.contains(&joined) {
                            next.push(joined);
                        }
                    }
                    *cwds = next;
                }
            }
            _ => self.cwds = None,
        }
    }

    fn add_path(&mut self, write: bool, path: &str) {
        if is_stream_path(path) {
            return;
        }
        let cwds = match &self.cwds {
            Some(c) => c.clone(),
            None if path.starts_with('/') => vec![".".into()],
            None => {
                let what = if write { "writes" } else { "reads" };
                self.opaque(format!(
                    "it {what} `{path}` after a `cd` to a folder not known before running"
                ));
                return;
            }
        };
        let entry = (path.to_string(), cwds);
        if write {
            self.out.writes.push(entry);
        } else {
            self.out.reads.push(entry);
        }
    }

    fn redirect(&mut self, io: &ast::IoRedirect) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match io {
            R::File(_, kind, target) => match target {
                T::Filename(w) => {
                    let v = self.word(w);
                    if v.dynamic || v.unquoted_magic {
                        if matches!(kind, K::Read | K::DuplicateInput) {
                            self.opaque(format!(
                                "it reads from `{}`, a path only known when the script runs",
                                v.text
                            ));
                        } else {
                            self.opaque(format!(
                                "it writes to `{}`, a path only known when the script runs",
                                v.text
                            ));
                        }
                        return;
                    }
                    match kind {
                        K::Read => self.add_path(false, &v.text),
                        K::Write | K::Append | K::Clobber | K::DuplicateOutput => {
                            self.add_path(true, &v.text)
                        }
                        K::ReadAndWrite => {
                            self.add_path(false, &v.text);
                            self.add_path(true, &v.text);
                        }
                        K::DuplicateInput => {}
                    }
                }
                T::Fd(_) => {}
                T::Duplicate(w) => {
                    let v = self.word(w);
                    let t = v.text.trim_end_matches('-');
                    if !t.is_empty() && !t.chars().all(|c| c.is_ascii_digit()) {
                        if v.dynamic {
                            self.opaque(
                                "a redirection to a target only known when the script runs",
                            );
                        } else if matches!(kind, K::DuplicateOutput) {
                            self.add_path(true, t);
                        }
                    }
                }
                T::ProcessSubstitution(_, sub) => self.compound_list(&sub.list),
            },
            R::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    self.word_text(&format!("\"{}\"", doc.doc.value.replace('"', "\\\"")));
                }
            }
            R::HereString(_, w) => {
                self.word(w);
            }
            R::OutputAndError(w, _) => {
                let v = self.word(w);
                if v.dynamic || v.unquoted_magic {
                    self.opaque(format!(
                        "it writes to `{}`, a path only known when the script runs",
                        v.text
                    ));
                } else {
                    self.add_path(true, &v.text);
                }
            }
        }
    }

    /// Records a command and unwraps wrappers; `skip` is how deep we are.
    fn command_words(&mut self, words: &[String], heredoc: bool, level: usize) {
        if words.is_empty() {
            return;
        }
        if level > MAX_DEPTH {
            self.opaque("wrappers nested too deeply to check");
            return;
        }
        self.out.commands.push(SimpleCommand {
            words: words.to_vec(),
        });
        let prog = base_name(&words[0]);
        let args = &words[1..];
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
                        self.add_path(true, &f);
                    }
                }
                self.command_words(rest, heredoc, level + 1);
            }
            "xargs" => {
                let rest = skip_options(
                    args,
                    &[
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
                    ],
                );
                if rest.is_empty() {
                    self.command_words(&["echo".to_string()], heredoc, level + 1);
                } else {
                    self.command_words(rest, heredoc, level + 1);
                }
            }
            "find" => self.unwrap_find(args, level),
            "watch" => {
                let rest = skip_options(args, &["-n", "-d", "--interval"]);
                self.script(&rest.join(" "));
            }
            "git" if args.iter().any(|a| a.starts_with("--exec-path")) => {
                self.opaque("`git --exec-path` changes which programs git runs");
            }
            p if SHELLS.contains(&p) => self.unwrap_shell(args, heredoc, prog),
            p if INTERPRETERS
                .iter()
                .any(|i| p == *i || p.starts_with(&format!("{i}."))) =>
            {
                let has_code = args
                    .iter()
                    .any(|a| matches!(a.as_str(), "-c" | "-e" | "-E" | "--eval" | "-p" | "-r"));
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
    /// policy could not tell which file it is.
    fn file_operands(&mut self, prog: &str, args: &[String]) {
        let ops = programs::file_operands(prog, args);
        for (write, list) in [(false, ops.reads), (true, ops.writes)] {
            for f in list {
                if f == PROCESS_SUBSTITUTION {
                    continue;
                }
                if f.contains(['$', '`']) || f.starts_with('~') {
                    let verb = if write { "writes" } else { "reads" };
                    self.opaque(format!(
                        "`{prog}` {verb} `{f}`, a file only known when the script runs"
                    ));
                    continue;
                }
                self.add_path(write, &f);
            }
        }
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
                    self.command_words(&args[start..end], false, level + 1);
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

fn is_stream_path(p: &str) -> bool {
    matches!(
        p,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/stdin" | "/dev/tty" | "-"
    ) || p.starts_with("/dev/fd/")
}

/// Analyses a bash script.
pub fn analyze(script: &str) -> ShellAnalysis {
    let mut w = Walker {
        out: ShellAnalysis {
            text: script.to_string(),
            ..Default::default()
        },
        cwds: Some(vec![".".to_string()]),
        depth: 0,
    };
    if script.chars().count() > MAX_SCRIPT_CHARS {
        w.opaque(format!(
            "the script is longer than {MAX_SCRIPT_CHARS} characters"
        ));
        return w.out;
    }
    w.script(script);
    w.out
}

impl ShellAnalysis {
    /// True when nothing in the script writes: every command is a known
    /// reader and no redirection writes.
    pub fn is_read_only(&self) -> bool {
        self.opaque.is_none()
            && self.writes.is_empty()
            && !self.commands.is_empty()
            && self.commands.iter().all(|c| {
                let p = base_name(c.program());
                if p == "git" {
                    return c
                        .words
                        .get(1)
                        .is_some_and(|s| READ_ONLY_GIT.contains(&s.as_str()))
                        && !c
                            .words
                            .iter()
                            .any(|w| w == "--output" || w.starts_with("--output="));
                }
                READ_ONLY_PROGRAMS.contains(&p)
            })
    }

    /// The signatures of the script run from `cwd` (workspace-relative).
    pub fn signatures(&self, ws: &Workspace, cwd: &str) -> Vec<Signature> {
        if let Some(why) = &self.opaque {
            return vec![Signature::opaque(
                Family::Bash,
                self.text.clone(),
                why.clone(),
            )];
        }
        let mut out: Vec<Signature> = Vec::new();
        let mut push = |s: Signature| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        for c in &self.commands {
            push(Signature::new(
                Family::Bash,
                super::words::join_words(&c.words),
            ));
        }
        for (family, list) in [(Family::Edit, &self.writes), (Family::Read, &self.reads)] {
            for (path, cwds) in list {
                for c in cwds {
                    let dir = Path::new(cwd).join(c);
                    let paths = if has_glob(path) {
                        match expand_glob(&ws.root().join(&dir), path) {
                            Some(p) => p,
                            None => {
                                let why =
                                    format!("`{path}` matches more than {MAX_EXPANSION} files");
                                return vec![Signature::opaque(
                                    Family::Bash,
                                    self.text.clone(),
                                    why,
                                )];
                            }
                        }
                    } else {
                        vec![path.clone()]
                    };
                    for path in paths {
                        let joined = if path.starts_with('/') {
                            path
                        } else {
                            dir.join(path).to_string_lossy().into_owned()
                        };
                        for p in ws.signature_paths(&joined) {
                            push(Signature::new(family, p));
                        }
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(s: &str) -> Vec<String> {
        let a = analyze(s);
        assert!(a.opaque.is_none(), "{s}: {:?}", a.opaque);
        a.commands.iter().map(|c| c.words.join(" ")).collect()
    }

    #[test]
    fn splits_compound_commands() {
        assert_eq!(cmds("git status && rm -rf /"), ["git status", "rm -rf /"]);
        assert_eq!(
            cmds("git status; curl x | sh -c 'rm a'"),
            ["git status", "curl x", "sh -c rm a", "rm a"]
        );
        assert_eq!(cmds("echo $(cat .env)"), ["cat .env", "echo $(cat .env)"]);
        assert_eq!(cmds("rm </dev/null -rf /"), ["rm -rf /"]);
        assert_eq!(cmds("FOO=1 rm -rf /"), ["rm -rf /"]);
        assert_eq!(cmds("env A=1 rm -rf /"), ["env A=1 rm -rf /", "rm -rf /"]);
        assert_eq!(
            cmds("find . -exec rm {} \\;"),
            ["find . -exec rm {} ;", "rm {}"]
        );
        assert_eq!(cmds("\\rm -rf /"), ["rm -rf /"]);
    }

    #[test]
    fn fails_closed() {
        for s in [
            "$X -rf /",
            "source x.sh",
            "PATH=/tmp git status",
            "bash <<EOF\nrm -rf /\nEOF",
            "if then fi (",
            "{rm,-rf,/}",
            "/bin/r? -rf /",
        ] {
            assert!(analyze(s).opaque.is_some(), "{s}");
        }
    }
}
