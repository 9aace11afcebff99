//! Where bash evaluates text as code without a `$(...)` in sight.
//!
//! Bash evaluates arithmetic (`(( x ))`, `$(( $x + 1 ))`, `for ((...))`,
//! `let`, array subscripts, substring offsets, `[[ a -eq b ]]`, values
//! assigned to `declare -i` variables) by reading every variable it names
//! as an arithmetic expression in turn, and an array subscript in such a
//! value is expanded: `x='a[$(touch p)]'; (( x ))` runs `touch`. So does
//! indirection (`${!x}` where `x` names `a[$(...)]`), every builtin that
//! takes a variable name (`read`, `printf -v`, `declare`, `unset`,
//! `test -v` ...), and prompt expansion (`${x@P}` runs the substitutions
//! in the value).
//!
//! The walk records every variable such a context reads
//! ([`super::state::Walker::evaluated`]) and where each assignment's value
//! came from; at the end, a read variable whose value may hold text the
//! script does not fix (a command's output, `read`, a positional parameter,
//! or literal text holding a substitution), directly or through copies,
//! makes the script opaque. Variables the script never assigns come from
//! the environment, which the runner clears of such values before any
//! command runs (`contain::env`).

use std::collections::{HashMap, HashSet};

use super::state::{Origin, Walker};

/// Programs whose output is a number or a fixed format, never text an
/// attacker chose: their substitution may be evaluated as arithmetic.
const NUMERIC_OUTPUT: &[&str] = &["wc", "nproc", "getconf", "id", "date"];

impl Walker {
    /// An arithmetic expression bash will evaluate.
    pub(super) fn arithmetic(&mut self, text: &str) {
        // Array subscripts in arithmetic are expanded, and `$(...)` there runs.
        if text.contains("$(") || text.contains('`') || text.contains("<(") {
            self.opaque("a command substitution inside an arithmetic expression");
            return;
        }
        for name in names_in_arithmetic(text) {
            self.evaluated.push(name);
        }
    }

    /// A word bash evaluates as arithmetic once expanded (`[[ $a -eq 1 ]]`,
    /// a key of `a=([k]=v)`): its text as an expression, and the value
    /// of any substitution in it must be fixed.
    pub(super) fn arithmetic_value(&mut self, v: &super::state::WordValue) {
        if v.origin.runtime {
            self.opaque(format!(
                "bash evaluates `{}` as arithmetic, and its value is only known when the script runs (an array subscript in it would run commands)",
                v.text
            ));
            return;
        }
        self.evaluated.extend(v.origin.copies.iter().cloned());
        if !v.text.contains("$(") && !v.text.contains('`') {
            self.arithmetic(&v.text);
        }
    }

    /// A parameter expansion `src` (`$x`, `${x...}`) inside a word: its
    /// subscripts and offsets are arithmetic, `${!x}` evaluates the value
    /// of `x` as a name, `${x@P}` runs what the value holds. Returns where
    /// the expansion's value comes from.
    pub(super) fn parameter(&mut self, src: &str) -> Origin {
        if src.contains("$(") || src.contains('`') || src.contains("<(") {
            self.opaque("a command substitution inside a parameter expansion");
            return Origin::runtime();
        }
        let Some(body) = src.strip_prefix('$') else {
            return Origin::runtime();
        };
        let inner = match body.strip_prefix('{') {
            Some(b) => b.strip_suffix('}').unwrap_or(b),
            // `$x`, `$1`, `$?`.
            None => return plain_origin(body),
        };
        if inner
            .strip_prefix('!')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*'))
        {
            // `${!1}`, `${!@}`: a positional parameter's value is read as a
            // variable name, and `a[$(cmd)]` there runs `cmd`.
            self.evaluated.push(POSITIONAL.to_string());
            return Origin::runtime();
        }
        let (indirect, rest) = match inner.strip_prefix('!') {
            Some(r) if r.starts_with(is_name_start) => (true, r),
            _ => (false, inner.strip_prefix('#').unwrap_or(inner)),
        };
        let name_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, mut after) = rest.split_at(name_len);
        if name.is_empty() {
            // `${@}`, `${#}`, `${?}` ...
            return plain_origin(rest);
        }
        if after.starts_with('[') {
            let end = matching_bracket(after).unwrap_or(after.len());
            let sub = &after[1..end.saturating_sub(1).max(1)];
            if !matches!(sub, "@" | "*") {
                self.arithmetic(sub);
            }
            after = &after[end.min(after.len())..];
        }
        if indirect && !matches!(after, "*" | "@") && !rest.ends_with("[@]") {
            // `${!x}`: the value of `x` is read as a variable name.
            self.evaluated.push(name.to_string());
        }
        if after.starts_with(":=") || after.starts_with('=') {
            // `${PATH:=/tmp}` assigns when the variable is unset.
            self.set_variable(name, "", false, 0);
        }
        if after.starts_with("@P") {
            self.opaque(format!(
                "`{src}` expands the value as a prompt, which runs the command substitutions it holds"
            ));
        } else if let Some(range) = after.strip_prefix(':')
            && !range.starts_with(['-', '=', '?', '+'])
        {
            // `${x:offset:length}`.
            self.arithmetic(range);
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return Origin::runtime();
        }
        Origin {
            runtime: indirect,
            copies: vec![name.to_string()],
        }
    }

    /// The name operand of a builtin that assigns or tests a variable by
    /// name (`read NAME`, `printf -v NAME`, `unset NAME`, `test -v NAME`):
    /// a name only known at run time fails closed, a subscript is
    /// arithmetic. `assigns`: the variable gets a value read at run time.
    pub(super) fn variable_operand(&mut self, word: &str, assigns: bool) {
        let base_len = word
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(word.len());
        let (base, rest) = word.split_at(base_len);
        let valid = !base.is_empty()
            && base.starts_with(is_name_start)
            && (rest.is_empty() || (rest.starts_with('[') && rest.ends_with(']')));
        if !valid {
            self.opaque(format!(
                "`{word}` is not a variable name fixed before running; bash would evaluate it"
            ));
            return;
        }
        if assigns {
            self.set_variable(base, "", false, 0);
        }
        if assigns && !self.done() {
            self.assign(word, Origin::runtime());
        } else if !rest.is_empty() {
            self.arithmetic(&rest[1..rest.len() - 1]);
        }
    }

    /// Whether the script `s`, whose output a substitution takes, prints
    /// only numbers or a fixed format: one pipeline ending in one of
    /// [`NUMERIC_OUTPUT`] with no file operand (`$(wc -l < f)`,
    /// `$(git ls-files | wc -l)`, `$(nproc)`).
    pub(super) fn numeric_substitution(s: &str) -> bool {
        let last = s.rsplit('|').next().unwrap_or(s).trim();
        if s.contains([';', '&', '\n', '`']) || s.contains("$(") {
            return false;
        }
        // `wc -l < FILE` prints the count alone.
        let command = last.split('<').next().unwrap_or(last);
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            return false;
        };
        NUMERIC_OUTPUT.contains(&program) && words.all(|w| w.starts_with(['-', '+']))
    }

    /// After the walk: every variable an arithmetic context, an indirection
    /// or a name operand evaluates must hold a value the script fixes.
    pub(super) fn check_evaluated(&mut self) {
        // Every value assigned to a `declare -i` variable is arithmetic.
        let integers = std::mem::take(&mut self.integers);
        self.evaluated.extend(integers);
        if self.evaluated.is_empty() || self.done() {
            return;
        }
        let runtime = self.runtime_variables();
        if let Some(name) = self.evaluated.iter().find(|n| runtime.contains(*n)) {
            let name = name.clone();
            self.opaque(format!(
                "bash evaluates the value of `{name}` as arithmetic or as a variable name, and that value is only known when the script runs (an array subscript in it would run commands)"
            ));
        }
    }

    /// Variables that may hold a value only known at run time: assigned
    /// one directly, or copying one that may.
    fn runtime_variables(&self) -> HashSet<String> {
        let mut runtime: HashSet<String> = self
            .assigned
            .iter()
            .filter(|(_, origins)| origins.iter().any(|o| o.runtime))
            .map(|(n, _)| n.clone())
            .collect();
        // Positional parameters are the words a function was called with.
        runtime.insert(POSITIONAL.to_string());
        let copies: HashMap<&str, Vec<&str>> = self
            .assigned
            .iter()
            .map(|(n, os)| {
                (
                    n.as_str(),
                    os.iter()
                        .flat_map(|o| o.copies.iter().map(String::as_str))
                        .collect(),
                )
            })
            .collect();
        loop {
            let before = runtime.len();
            for (name, from) in &copies {
                if !runtime.contains(*name) && from.iter().any(|f| runtime.contains(*f)) {
                    runtime.insert(name.to_string());
                }
            }
            if runtime.len() == before {
                return runtime;
            }
        }
    }
}

/// Where a value spelled `text` (quotes removed, expansions as written)
/// comes from: what `$(`, backticks and `$NAME` in it say. It can only
/// over-state: a single-quoted `'$x'` counts as a copy of `x`.
pub(super) fn origin_of_text(text: &str) -> Origin {
    let mut o = Origin {
        runtime: text.contains("$(") || text.contains('`'),
        copies: names_in_arithmetic(text),
    };
    for (i, _) in text.match_indices('$') {
        let rest = text[i + 1..].trim_start_matches(['{', '!', '#']);
        let n = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        match rest.chars().next() {
            Some(c) if is_name_start(c) => o.copies.push(rest[..n].to_string()),
            Some(c) if c.is_ascii_digit() || c == '@' || c == '*' => o.runtime = true,
            _ => {}
        }
    }
    o
}

/// How bash may read `src` (which starts with `open`, `((` or `$((`, and
/// ends with `)`): as arithmetic only when `open` is written together and
/// the parenthesis its last `(` opens is closed by a `)` followed at once
/// by the final `)`; otherwise as a subshell (or a command substitution)
/// whose first command is itself a subshell: `( (cmd) )`, `((cmd) )`,
/// `$((cmd) )`. Whether quotes hide parentheses from that count is read
/// both ways: `(plain, quotes skipped)`; where the two differ, the caller
/// checks both readings.
pub(super) fn arithmetic_readings(src: &str, open: &str) -> (bool, bool) {
    let Some(body) = src.strip_prefix(open) else {
        return (false, false);
    };
    (
        closes_as_arithmetic(body, false),
        closes_as_arithmetic(body, true),
    )
}

fn closes_as_arithmetic(body: &str, skip_quotes: bool) -> bool {
    let mut depth = 1usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if skip_quotes {
            if escaped {
                escaped = false;
                continue;
            }
            match (quote, c) {
                (Some('\''), '\'') | (Some('"'), '"') => {
                    quote = None;
                    continue;
                }
                (Some(_), '\\') if quote == Some('"') => {
                    escaped = true;
                    continue;
                }
                (Some(_), _) => continue,
                (None, '\'' | '"') => {
                    quote = Some(c);
                    continue;
                }
                (None, '\\') => {
                    escaped = true;
                    continue;
                }
                _ => {}
            }
        }
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &body[i..] == "))";
                }
            }
            _ => {}
        }
    }
    false
}

/// The name standing for positional parameters among evaluated variables.
pub(super) const POSITIONAL: &str = "@";

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

/// The origin of `$x`, `$1`, `$@`, `$?` (without the `$`).
fn plain_origin(s: &str) -> Origin {
    match s.chars().next() {
        Some(c) if is_name_start(c) => Origin {
            runtime: false,
            copies: vec![s.to_string()],
        },
        // Positional parameters and `$@`/`$*`.
        Some(c) if c.is_ascii_digit() || c == '@' || c == '*' => Origin::runtime(),
        // `$?`, `$#`, `$$`, `$!`, `$-`: numbers and flags.
        _ => Origin::default(),
    }
}

/// The length of `[...]` at the start of `s`, brackets nested.
fn matching_bracket(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The variables an arithmetic expression reads: bare names and `$name`,
/// `${name...}`; positional parameters as [`POSITIONAL`]. Numbers
/// (`0x1F`, `16#ff`) are not names.
pub(super) fn names_in_arithmetic(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_digit() {
            // A number, in any base: `0x1F`, `16#ff`, `2#1010`.
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'#' || b[i] == b'_') {
                i += 1;
            }
            continue;
        }
        if c == '$' {
            let next = b.get(i + 1).map(|&c| c as char);
            match next {
                Some(d) if d.is_ascii_digit() || d == '@' || d == '*' => {
                    out.push(POSITIONAL.to_string());
                    i += 2;
                    continue;
                }
                Some('{') => {
                    let rest = &text[i + 2..];
                    let rest = rest.trim_start_matches(['!', '#']);
                    if rest.starts_with(|c: char| c.is_ascii_digit() || c == '@' || c == '*') {
                        out.push(POSITIONAL.to_string());
                    }
                    i += 2;
                    continue;
                }
                _ => {
                    i += 1;
                    continue;
                }
            }
        }
        if is_name_start(c) {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(text[start..i].to_string());
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests;
