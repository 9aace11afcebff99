//! Words as the shell would see them before running: quotes removed, and
//! whatever is only known at run time (variables, substitutions, tildes,
//! arithmetic) marked dynamic. Substitutions inside a word are walked as
//! scripts of their own: `echo $(rm -rf /)` runs `rm`.

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::state::{Walker, WordValue};

impl Walker {
    /// Evaluates a word: its fixed text, and any substitutions inside it are
    /// walked as scripts of their own.
    pub(super) fn word(&mut self, w: &ast::Word) -> WordValue {
        self.word_text(&w.value)
    }

    pub(super) fn word_text(&mut self, raw: &str) -> WordValue {
        if !self.step() || !self.parse_budget(raw.len()) {
            return WordValue {
                text: raw.to_string(),
                dynamic: true,
                ..Default::default()
            };
        }
        let pieces = match brush_parser::word::parse(raw, &brush_parser::ParserOptions::default()) {
            Ok(p) => p,
            Err(_) => {
                self.opaque(format!("the word `{raw}` could not be parsed"));
                return WordValue {
                    text: raw.to_string(),
                    dynamic: true,
                    ..Default::default()
                };
            }
        };
        let mut v = WordValue::default();
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
            if self.done() {
                return;
            }
            let src = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    if !quoted && is_glob_text(t) {
                        v.unquoted_magic = true;
                    }
                    if expansion_left_as_text(raw, p.start_index, t) {
                        self.opaque(format!(
                            "`{raw}` holds an expansion the parser read as text, which bash would expand"
                        ));
                        return;
                    }
                    literal(v, t);
                }
                WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => literal(v, t),
                WordPiece::EscapeSequence(t) => {
                    literal(v, t.strip_prefix('\\').unwrap_or(t));
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
                    let o = self.parameter(src);
                    v.origin.runtime |= o.runtime;
                    v.origin.copies.extend(o.copies);
                    v.text.push_str(src);
                }
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    v.dynamic = true;
                    // Inside backquotes, `\$`, `\``, `\\` lose their backslash
                    // before the script is read.
                    let s = if matches!(p.piece, WordPiece::BackquotedCommandSubstitution(_)) {
                        unescape_backquoted(s)
                    } else {
                        s.clone()
                    };
                    let s = &s;
                    self.in_subshell(|w| w.script(s));
                    if !Self::numeric_substitution(s) {
                        v.origin.runtime = true;
                    }
                    v.text.push_str(src);
                }
                WordPiece::ArithmeticExpression(e) => {
                    v.dynamic = true;
                    if src.len() < 3 || !src.ends_with(')') {
                        self.opaque(format!("`{src}` could not be read as bash reads it"));
                    } else {
                        let (plain, quoted) = super::arith::arithmetic_readings(src, "$((");
                        if plain || quoted {
                            self.arithmetic(&e.value);
                        }
                        if !plain || !quoted {
                            // `$((cmd) )`: bash reads a command substitution
                            // whose first command is a subshell.
                            self.in_subshell(|w| w.script(&src[2..src.len() - 1]));
                            v.origin.runtime = true;
                        }
                    }
                    v.text.push_str(src);
                }
            }
        }
    }
}

/// Appends literal text; text that holds a command substitution is code
/// if bash ever evaluates it (see [`super::arith`]).
/// The script of a backquoted substitution as bash reads it: a backslash
/// before `$`, a backquote or a backslash is removed.
fn unescape_backquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '$' | '`' | '\\')
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// Names in it are copies too: arithmetic reads a value's names as
/// variables (`y=x; (( y ))` evaluates `x`).
fn literal(v: &mut WordValue, t: &str) {
    if t.contains("$(") || t.contains('`') {
        v.origin.runtime = true;
    }
    if t.contains(|c: char| c.is_ascii_alphabetic() || c == '_') {
        v.origin.copies.extend(super::arith::names_in_arithmetic(t));
    }
    v.text.push_str(t);
}

/// Whether plain text holds a `$` that bash would read as the start of an
/// expansion (`${`, `$(`, `$[`, `$name`, `$1`, `$?`): the parser gave up on
/// an expansion it could not read (`${a[($x]}`) and left it as text.
fn expansion_left_as_text(raw: &str, start: usize, t: &str) -> bool {
    t.match_indices('$').any(|(i, _)| {
        let next = t[i + 1..]
            .chars()
            .next()
            .or_else(|| raw.get(start + t.len()..).and_then(|r| r.chars().next()));
        next.is_some_and(|c| c.is_ascii_alphanumeric() || "{([_?#@*!$-".contains(c))
    })
}

/// Unquoted text that bash would expand as a glob or brace pattern: `*`,
/// `?`, braces, or a `[` that a `]` closes (a lone `[`, the `test`
/// builtin's name, is literal).
fn is_glob_text(t: &str) -> bool {
    t.contains(['*', '?', '{', '}'])
        || t.find('[').is_some_and(|i| t[i + 1..].contains(']'))
        || ["@(", "+(", "!("].iter().any(|x| t.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_and_brace_text() {
        for t in [
            "*.rs", "a?", "{a,b}", "}", "a[1]", "[ab]x", "@(a|b)", "+(a)", "!(a)",
        ] {
            assert!(is_glob_text(t), "{t}");
        }
        for t in ["[", "a[", "]", "plain", "a(b)", "!x"] {
            assert!(!is_glob_text(t), "{t}");
        }
    }

    #[test]
    fn backquoted_scripts_lose_their_escapes() {
        assert_eq!(unescape_backquoted(r"a\$b\`c\\d\e"), r"a$b`c\d\e");
        assert_eq!(unescape_backquoted(r"end\"), r"end\");
    }
}
