//! Words as the shell would see them before running: quotes removed, and
//! whatever is only known at run time (variables, substitutions, tildes,
//! arithmetic) marked dynamic. Substitutions inside a word are walked as
//! scripts of their own: `echo $(rm -rf /)` runs `rm`.

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::state::{Walker, WordValue};

impl Walker {
    pub(super) fn arithmetic(&mut self, text: &str) {
        // Array subscripts in arithmetic are expanded, and `$(...)` there runs.
        if text.contains("$(") || text.contains('`') {
            self.opaque("a command substitution inside an arithmetic expression");
        }
    }

    /// Evaluates a word: its fixed text, and any substitutions inside it are
    /// walked as scripts of their own.
    pub(super) fn word(&mut self, w: &ast::Word) -> WordValue {
        self.word_text(&w.value)
    }

    pub(super) fn word_text(&mut self, raw: &str) -> WordValue {
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
}
