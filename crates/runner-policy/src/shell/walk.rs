//! The walk over a parsed script: lists, pipelines, compound commands,
//! simple commands with their assignments and redirections, and `cd`.
//! Words are evaluated in [`super::word`]; each simple command's words go to
//! [`super::wrappers`], which records the command and looks inside it.

use brush_parser::ast;

use super::arith::arithmetic_readings;
use super::folders::is_lone_cd;
use super::state::{MAX_DEPTH, Origin, PROCESS_SUBSTITUTION, Walker, WordValue};
use super::variables::{harmless_value, is_risky_variable, names_a_program, runner_words};

impl Walker {
    pub(super) fn script(&mut self, text: &str) {
        if self.done() {
            return;
        }
        if self.depth > MAX_DEPTH {
            self.opaque("commands nested too deeply to check");
            return;
        }
        let Some((text, tokens)) = self.tokens(text) else {
            return;
        };
        self.depth += 1;
        let options = brush_parser::ParserOptions::default();
        let parsed = std::panic::catch_unwind(|| brush_parser::parse_tokens(&tokens, &options));
        self.texts.push(text);
        match parsed {
            Ok(Ok(program)) => {
                for cc in &program.complete_commands {
                    self.compound_list(cc);
                }
            }
            Ok(Err(e)) => {
                // The line just past the script's own (its newline was
                // added): where the parser reports an input that ended in
                // the middle of something.
                let lines = self.texts.last().map_or(0, |t| t.lines().count());
                let past = format!("(detected near line {} col 1)", lines + 1);
                self.opaque(format!(
                    "the script does not parse as bash: {}",
                    e.to_string().replace(&past, "(at the end of the script)")
                ))
            }
            Err(_) => self.opaque("the script could not be parsed"),
        }
        self.texts.pop();
        self.depth -= 1;
    }

    pub(super) fn compound_list(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            if !self.step() {
                return;
            }
            self.and_or(&item.0);
        }
    }

    fn and_or(&mut self, list: &ast::AndOrList) {
        // A `cd` whose failure skips what follows (`cd DIR && ...`, or
        // under `set -e` with nothing to catch it) leaves the script in
        // DIR only; otherwise it may still be where it was.
        let next_is_and = matches!(list.additional.first(), Some(ast::AndOr::And(_)));
        let checked = next_is_and || (self.errexit && list.additional.is_empty());
        self.cd_must_succeed = checked && is_lone_cd(&list.first);
        self.pipeline(&list.first);
        self.cd_must_succeed = false;
        for next in &list.additional {
            match next {
                ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        // In a pipeline of several commands each runs in a subshell: a
        // `cd` there does not outlast it.
        let alone = p.seq.len() == 1;
        let mut producer: Option<Vec<String>> = None;
        for c in &p.seq {
            let before = self.out.commands.len();
            let outer = std::mem::replace(&mut self.piped_from, producer.take());
            if alone {
                self.command(c);
            } else {
                self.in_subshell(|w| w.command(c));
            }
            self.piped_from = outer;
            // What the next command reads: this one's output, when it was
            // one simple command.
            if matches!(c, ast::Command::Simple(_)) {
                producer = self.out.commands.get(before).map(|c| c.words.clone());
            }
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
            E::UnaryTest(op, w) => {
                let v = self.word(w);
                if matches!(op.to_string().as_str(), "-v" | "-R") {
                    self.variable_operand(&v.text, false);
                }
            }
            E::BinaryTest(op, a, b) => {
                let a = self.word(a);
                let b = self.word(b);
                // `[[ a -eq b ]]` evaluates both sides as arithmetic.
                if matches!(
                    op.to_string().as_str(),
                    "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge"
                ) {
                    self.arithmetic_value(&a);
                    self.arithmetic_value(&b);
                }
            }
        }
    }

    fn compound(&mut self, cc: &ast::CompoundCommand) {
        self.compound_depth += 1;
        self.compound_inner(cc);
        self.compound_depth -= 1;
    }

    fn compound_inner(&mut self, cc: &ast::CompoundCommand) {
        use ast::CompoundCommand as C;
        match cc {
            C::Arithmetic(a) => {
                // brush-parser reads `( ( cmd ) )` and `((cmd) )` as
                // arithmetic; bash reads them as nested subshells. Take the
                // command's own text and read it as bash does.
                let src = self
                    .texts
                    .last()
                    .and_then(|t| t.get(a.loc.start.index..a.loc.end.index))
                    .map(str::to_string);
                match src {
                    Some(src) if src.starts_with('(') && src.ends_with(')') => {
                        let (plain, quoted) = arithmetic_readings(&src, "((");
                        if plain || quoted {
                            self.arithmetic(&a.expr.value);
                        }
                        if !plain || !quoted {
                            self.script(&src[1..src.len() - 1]);
                        }
                    }
                    _ => self.opaque("an arithmetic command whose text cannot be located"),
                }
            }
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
            C::Subshell(s) => {
                // `((...))` that brush-parser read as subshells, where bash
                // may read arithmetic (which expands `$(...)` even inside
                // quotes).
                let src = self
                    .texts
                    .last()
                    .and_then(|t| t.get(s.loc.start.index..s.loc.end.index))
                    .map(str::to_string);
                if let Some(src) = src
                    && src.len() >= 4
                    && src.ends_with("))")
                {
                    let (plain, quoted) = arithmetic_readings(&src, "((");
                    if plain || quoted {
                        self.arithmetic(&src[2..src.len() - 2]);
                    }
                }
                self.in_subshell(|w| w.compound_list(&s.list))
            }
            C::ForClause(f) => {
                // Without `in`, the loop takes the positional parameters.
                let mut origin = Origin::default();
                let mut literal = Some(Vec::new());
                match &f.values {
                    Some(values) => {
                        for w in values {
                            let v = self.word(w);
                            origin.runtime |= v.origin.runtime || v.unquoted_magic;
                            origin.copies.extend(v.origin.copies);
                            match &mut literal {
                                Some(l) if !v.dynamic && !v.unquoted_magic => l.push(v.text),
                                _ => literal = None,
                            }
                        }
                    }
                    None => {
                        origin.runtime = true;
                        literal = None;
                    }
                }
                self.set_variable(&f.variable_name, "", false, 0);
                self.assign(&f.variable_name, origin);
                // `for x in a b; do cat $x; done`: in the body, `$x` is one
                // of the listed words, unless the body assigns it.
                let body = self
                    .texts
                    .last()
                    .and_then(|t| t.get(f.loc.start.index..f.loc.end.index))
                    .unwrap_or("");
                // A function (called in the body, or wrapping the loop) may
                // assign it where the body's text does not show it.
                let reassigned = self.script_has_functions()
                    || body.contains(&format!("{}=", f.variable_name))
                    || [
                        "read",
                        "mapfile",
                        "readarray",
                        "printf",
                        "getopts",
                        "declare",
                        "local",
                    ]
                    .iter()
                    .any(|b| body.contains(b));
                let producer = f.values.as_deref().and_then(Self::substituted_producer);
                match (literal, producer) {
                    (Some(values), _) if !reassigned => {
                        self.bindings.push((f.variable_name.clone(), values));
                        self.compound_list(&f.body.list);
                        self.bindings.pop();
                    }
                    // `for f in $(find src -name '*.py')`: the paths it prints.
                    (_, Some(p)) if !reassigned => {
                        self.produced.push((f.variable_name.clone(), p));
                        self.compound_list(&f.body.list);
                        self.produced.pop();
                    }
                    _ => self.compound_list(&f.body.list),
                }
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
                // `PRODUCER | while read -r f`: `$f` is a path it prints.
                let produced = (matches!(cc, C::WhileClause(_)) && !self.script_has_functions())
                    .then(|| Some((Self::read_variable(&w.0)?, self.piped_from.clone()?)))
                    .flatten();
                self.compound_list(&w.0);
                let bound = produced.map(|p| self.produced.push(p)).is_some();
                self.compound_list(&w.1.list);
                if bound {
                    self.produced.pop();
                }
            }
            C::Coprocess(c) => self.command(&c.body),
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand) {
        if !self.step() {
            return;
        }
        let mut words: Vec<WordValue> = Vec::new();
        let mut heredoc = false;
        // The heredoc on stdin (the last one wins, as in bash).
        let mut stdin_doc: Option<&ast::IoHereDocument> = None;
        let items = s
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(|i| (i, true))
            .chain(s.suffix.iter().flat_map(|p| p.0.iter()).map(|i| (i, false)));
        if self.glued_process_substitution(s) {
            self.opaque(
                "a process substitution glued to a word makes one word bash names at run time",
            );
            return;
        }
        let mut pending_word = s.word_or_name.as_ref();
        let mut redirects = Vec::new();
        for (item, is_prefix) in items {
            if !is_prefix && let Some(w) = pending_word.take() {
                let v = self.word(w);
                words.push(v);
            }
            match item {
                ast::CommandPrefixOrSuffixItem::IoRedirect(io) => {
                    if let ast::IoRedirect::HereDocument(fd, doc) = io {
                        heredoc = true;
                        if matches!(fd, None | Some(0)) {
                            stdin_doc = Some(doc);
                        }
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
                    self.in_subshell(|w| w.compound_list(&sub.list));
                    words.push(WordValue {
                        text: PROCESS_SUBSTITUTION.into(),
                        dynamic: true,
                        ..Default::default()
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
            // What a shell reading its script from stdin runs: the body as
            // written, when bash changes nothing in it.
            self.stdin_script = stdin_doc
                .filter(|d| !d.requires_expansion || !d.doc.value.contains(['$', '`', '\\']))
                .map(|d| d.doc.value.clone());
            self.command_words(&texts, heredoc, 0);
            self.stdin_script = None;
            if program_is_cd {
                self.cd(&words[1..]);
            }
        }
    }

    /// Whether a word of `s` touches a process substitution (`a<(b)c`):
    /// bash makes one word of them (`a/dev/fd/63c`), the parser two.
    fn glued_process_substitution(&self, s: &ast::SimpleCommand) -> bool {
        let items = s.prefix.iter().flat_map(|p| p.0.iter());
        let items = items.chain(s.suffix.iter().flat_map(|p| p.0.iter()));
        let mut words = s.word_or_name.iter().collect::<Vec<_>>();
        let mut has_substitution = false;
        for i in items {
            match i {
                ast::CommandPrefixOrSuffixItem::Word(w) => words.push(w),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(..) => has_substitution = true,
                _ => {}
            }
        }
        let Some(text) = self.texts.last() else {
            return has_substitution;
        };
        has_substitution
            && words.iter().any(|w| match &w.loc {
                Some(loc) => {
                    let after = text.get(loc.end.index..).unwrap_or("");
                    let before = text.get(..loc.start.index).unwrap_or("");
                    after.starts_with("<(") || after.starts_with(">(") || before.ends_with(')')
                }
                None => true,
            })
    }

    /// An assignment of `value` to `name` (`fixed`: known before running):
    /// a variable that names a program (`CC=clang`) is decided as that
    /// command; one that changes what runs fails closed unless the value
    /// is harmless (`RUSTFLAGS=--cfg x`, `PATH=$PATH:...`). Every way a
    /// script assigns (plain, `export`, `env`, `read`, `for`, `${x:=}`)
    /// comes here.
    pub(super) fn set_variable(&mut self, name: &str, value: &str, fixed: bool, level: usize) {
        // No longer (only) a path a producer printed.
        let base = name.split('[').next().unwrap_or(name);
        self.produced.retain(|(n, _)| n != base);
        if fixed && names_a_program(name) {
            let words = runner_words(name, value);
            self.command_words(&words, false, level + 1);
        } else if is_risky_variable(name) && !harmless_value(name, value) {
            self.opaque(format!("it sets {name}, which changes what commands run"));
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
        let mut origin = Origin::default();
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let v = self.word(w);
                let fixed = !v.dynamic && !v.unquoted_magic;
                self.set_variable(&name, &v.text, fixed, 0);
                origin = v.origin;
            }
            ast::AssignmentValue::Array(items) => {
                self.set_variable(&name, "", false, 0);
                for (k, v) in items {
                    if let Some(k) = k {
                        let k = self.word(k);
                        self.arithmetic_value(&k);
                    }
                    let v = self.word(v);
                    origin.runtime |= v.origin.runtime || v.unquoted_magic;
                    origin.copies.extend(v.origin.copies);
                }
            }
        }
        self.assign(&name, origin);
    }
}
