//! Loops over the paths a known producer prints (issue 73, item 1):
//! `for f in $(find src -name '*.py'); do grep -l X "$f"; done` and
//! `find src -name '*.py' | while read -r f; do wc -l "$f"; done` give a
//! reader words only known when the script runs, as `xargs` does. Where
//! the producer is one whose output is paths beneath known folders (see
//! `programs::xargs_reads`), the reader is decided as reading beneath
//! them; anything else stays opaque.

use brush_parser::ast;

use super::state::Walker;
use crate::programs;
use crate::words::{base_name, split_words};

impl Walker {
    /// What `xargs XARGS_OPTIONS INNER...` does with the words it reads
    /// (`replace`: `-I`'s string, lines put in its place): a reader or a
    /// writer given a known producer's paths uses them beneath where they
    /// lie; anything else fails closed.
    pub(super) fn xargs_words(
        &mut self,
        inner: &[String],
        xargs_options: &[String],
        replace: Option<&str>,
    ) {
        let program = base_name(&inner[0]);
        let piped = self.piped_from.as_deref();
        match replace {
            None => {
                if let Some(roots) = programs::xargs_reads(piped, inner) {
                    self.producer_reads(&roots, Some(xargs_options), program);
                    return;
                }
                if let Some(roots) = programs::xargs_writes(piped, inner) {
                    self.producer_writes(&roots, Some(xargs_options), program);
                    return;
                }
            }
            // `-I {}`: one line in place of each whole `{}` word (a line,
            // never a whole path for sure: a name may hold a newline).
            Some(r) if !r.is_empty() && inner.iter().any(|w| w == r) => {
                let whole = inner.iter().all(|w| w == r || !w.contains(r));
                let rest: Vec<String> = inner.iter().filter(|w| *w != r).cloned().collect();
                if let (true, Some(roots)) = (whole, programs::xargs_reads(piped, &rest)) {
                    self.producer_reads(&roots, None, program);
                    return;
                }
            }
            Some(_) => {}
        }
        self.opaque(format!(
            "`xargs` gives `{program}` words read when the script runs; which files they name cannot be checked"
        ));
    }

    /// Writes by `program` of the paths a producer prints: beneath its
    /// roots when each word is one whole path; split at blanks they could
    /// name any file, so unknown (decided as opaque, which the edit
    /// backstop covers where every deny rule has one).
    fn producer_writes(
        &mut self,
        roots: &[String],
        xargs_options: Option<&[String]>,
        program: &str,
    ) {
        if self.whole_paths(xargs_options) {
            roots.iter().for_each(|r| self.add_path(true, r, true));
            return;
        }
        self.opaque(format!(
            "`xargs` gives `{program}` words split from the paths a command prints; which files it writes cannot be checked"
        ));
    }

    /// Whether each word `xargs` gives is one whole path as printed: it
    /// splits at NUL (`xargs_options`) and the producer prints NUL.
    fn whole_paths(&self, xargs_options: Option<&[String]>) -> bool {
        xargs_options.is_some_and(programs::xargs_splits_at_nul)
            && self.piped_from.as_deref().is_some_and(programs::prints_nul)
    }

    fn split_paths(&mut self, program: &str) {
        self.out.split_paths.get_or_insert_with(|| {
            format!(
                "`{program}` is given words split from the paths a command prints: a name with a blank or a newline in it can name any file"
            )
        });
    }

    /// Reads by `program` of the paths a producer prints, lying beneath
    /// `roots`: exactly there when each word is one whole path (`find
    /// -print0 | xargs -0`: `xargs_options` split at NUL and the producer
    /// prints NUL); otherwise a name with a blank or a newline in it could
    /// be split into words naming any file, so reads of the whole
    /// workspace, and beyond it only where commands are confined.
    pub(super) fn producer_reads(
        &mut self,
        roots: &[String],
        xargs_options: Option<&[String]>,
        program: &str,
    ) {
        if self.whole_paths(xargs_options) {
            roots.iter().for_each(|r| self.add_path(false, r, true));
            return;
        }
        self.add_path(false, ".", true);
        self.split_paths(program);
    }

    /// Whether operand `f` of `prog args` is a loop variable bound to a
    /// producer's paths, now added as reads beneath where they lie. Only
    /// reads: a writer given them stays opaque.
    pub(super) fn produced_operand(
        &mut self,
        prog: &str,
        args: &[String],
        write: bool,
        f: &str,
    ) -> bool {
        let Some(name) = variable_of(f) else {
            return false;
        };
        let Some((_, producer)) = self.produced.iter().rev().find(|(n, _)| n == name) else {
            return false;
        };
        if write {
            return false;
        }
        let mut inner = vec![prog.to_string()];
        inner.extend(args.iter().filter(|a| *a != f).cloned());
        match programs::xargs_reads(Some(producer), &inner) {
            Some(roots) => {
                // Words split by the shell, or lines read: never whole paths.
                self.producer_reads(&roots, None, prog);
                true
            }
            None => false,
        }
    }

    /// Whether the script (or one around it) defines a function: a call
    /// can assign a loop's variable where the loop's text does not show
    /// it, so loops bind nothing then (`g() { f=.env; }; for f in a; do
    /// g; cat $f; done`).
    pub(super) fn script_has_functions(&self) -> bool {
        self.texts
            .iter()
            .any(|t| t.contains("()") || t.split_whitespace().any(|w| w == "function"))
    }

    /// The producer of `for VAR in $(PRODUCER)`: its words, when the list
    /// is that one substitution of one simple command.
    pub(super) fn substituted_producer(values: &[ast::Word]) -> Option<Vec<String>> {
        let [word] = values else {
            return None;
        };
        let inner = word
            .value
            .strip_prefix("$(")
            .and_then(|w| w.strip_suffix(')'))?;
        if inner.contains(['|', ';', '&', '$', '`', '(', ')', '<', '>', '\n']) {
            return None;
        }
        let words = split_words(inner);
        (!words.is_empty()).then_some(words)
    }

    /// The variable of `while read [-r] VAR` (a condition of that one
    /// command), which takes the lines of what the loop reads.
    pub(super) fn read_variable(condition: &ast::CompoundList) -> Option<String> {
        let [item] = condition.0.as_slice() else {
            return None;
        };
        let and_or = &item.0;
        if !and_or.additional.is_empty() {
            return None;
        }
        let [ast::Command::Simple(s)] = and_or.first.seq.as_slice() else {
            return None;
        };
        if s.word_or_name.as_ref().map(|w| w.value.as_str()) != Some("read") || s.prefix.is_some() {
            return None;
        }
        let mut names = Vec::new();
        for item in s.suffix.iter().flat_map(|x| x.0.iter()) {
            let ast::CommandPrefixOrSuffixItem::Word(w) = item else {
                return None;
            };
            match w.value.as_str() {
                "-r" => {}
                n if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !n.is_empty() => {
                    names.push(n.to_string())
                }
                _ => return None,
            }
        }
        match names.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        }
    }
}

/// `NAME` of an operand that is exactly `$NAME` or `${NAME}`.
fn variable_of(f: &str) -> Option<&str> {
    let name = f.strip_prefix('$')?;
    let name = name
        .strip_prefix('{')
        .and_then(|n| n.strip_suffix('}'))
        .unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}
