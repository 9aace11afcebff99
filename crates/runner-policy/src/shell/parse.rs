//! From a script's text to bash's tokens, within the budgets: the first
//! step of every walk over a script (see [`super::walk`]). Heredoc bodies
//! are counted apart from code ([`super::heredoc`]), and a heredoc left
//! open at the end is closed where bash closes it.

use super::Walker;
use super::budget::{MAX_NESTING, too_complex};
use super::heredoc::{self, MAX_DATA_CHARS};
use super::state::MAX_SCRIPT_CHARS;

/// `text` ending in a newline of its own, as bash reads a script to its
/// end.
///
/// brush-parser's tokenizer loops for ever, growing a vector until memory
/// runs out, on a here-document whose tag is empty when the input ends
/// before the line does (`$(<< ($(`, ten bytes, found by the property
/// tests): it never leaves the state "the next line is the document".
/// With a newline at the end it always does. A newline at the end changes
/// nothing bash does, but after a lone backslash, which joins it to the
/// line (so a newline escaped that way does not count): there the
/// backslash is doubled, which bash reads as the same literal backslash.
pub(super) fn ended(text: &str) -> String {
    let escaped = |t: &str| t.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1;
    let mut out = String::with_capacity(text.len() + 2);
    out.push_str(text);
    match text.strip_suffix('\n') {
        Some(line) if !escaped(line) => return out,
        Some(_) => {}
        None if escaped(text) => out.push('\\'),
        None => {}
    }
    out.push('\n');
    out
}

impl Walker {
    /// bash's tokens of the script `given` ([`ended`]), within the budgets
    /// (counted on `given`, not on what is added to end it):
    /// the code (the text but its heredoc bodies, see [`super::heredoc`])
    /// of the script the tool was given within [`MAX_SCRIPT_CHARS`], every
    /// script's code within the parse budget, the bodies within
    /// [`MAX_DATA_CHARS`], and brackets nested no deeper than
    /// [`MAX_NESTING`] outside bodies. A heredoc left open at the end of
    /// the script ends there, as bash ends it (with a warning): its
    /// delimiter is added as the line bash takes the end of input for.
    /// With the text the tokens index; `None` when the script is opaque.
    pub(super) fn tokens(&mut self, given: &str) -> Option<(String, Vec<brush_parser::Token>)> {
        let top = self.depth == 0;
        let given_chars = given.chars().count();
        let text = ended(given);
        let options = brush_parser::ParserOptions::default().tokenizer_options();
        let tokenize = |t: &str| {
            std::panic::catch_unwind(|| brush_parser::uncached_tokenize_str(t, &options))
                .unwrap_or(Err(brush_parser::TokenizerError::FailedDecoding))
        };
        let mut closed_early = None;
        if top && text.len() > MAX_SCRIPT_CHARS {
            // Refused before tokenizing by a quick count of the bodies.
            let scan = heredoc::scan(&text);
            let chars = text.chars().count();
            if let Some(why) = over_budget(given_chars.saturating_sub(scan.data), scan.data) {
                self.opaque(why);
                return None;
            }
            // A long heredoc left open: closed before the one tokenizing,
            // if bash's tokens then end its body where the text ends.
            if let Some(delimiter) = scan.open {
                let closed = format!("{text}{delimiter}\n");
                if let Ok(tokens) = tokenize(&closed)
                    && heredoc::body_spans(&tokens).any(|(_, end)| end >= chars)
                {
                    closed_early = Some((closed, tokens));
                }
            }
        }
        let tokenized = match closed_early {
            Some(done) => Ok(done),
            None => match tokenize(&text) {
                Ok(tokens) => Ok((text, tokens)),
                Err(e) => Err((text, e)),
            },
        };
        let (text, tokens) = match tokenized {
            Ok(done) => done,
            Err((text, brush_parser::TokenizerError::UnterminatedHereDocuments(tag, _)))
                if !tag.contains(',') =>
            {
                let closed = format!("{text}{}\n", brush_parser::unquote_str(&tag));
                match tokenize(&closed) {
                    Ok(tokens) => (closed, tokens),
                    Err(e) => {
                        self.opaque(tokenizer_error(&e));
                        return None;
                    }
                }
            }
            Err((_, e)) => {
                self.opaque(tokenizer_error(&e));
                return None;
            }
        };
        if let Some(tag) = heredoc::misread_tag(&text, &tokens) {
            self.opaque(format!(
                "a here-document's tag is not read here as bash reads it (the parser took `{tag}` for it)"
            ));
            return None;
        }
        let data = heredoc::body_chars(&tokens, given_chars);
        let code = given_chars.saturating_sub(data);
        if top && let Some(why) = over_budget(code, data) {
            self.opaque(why);
            return None;
        }
        if !self.parse_budget(code) {
            return None;
        }
        if heredoc::code_nesting(&text, &tokens) > MAX_NESTING {
            self.opaque(too_complex(&format!(
                "brackets nested more than {MAX_NESTING} deep"
            )));
            return None;
        }
        Some((text, tokens))
    }
}

/// Why a script of `code` characters of code and `data` characters of
/// heredoc bodies is past its budget.
fn over_budget(code: usize, data: usize) -> Option<String> {
    if code > MAX_SCRIPT_CHARS {
        Some(format!(
            "the script is longer than {MAX_SCRIPT_CHARS} characters (heredoc bodies aside)"
        ))
    } else if data > MAX_DATA_CHARS {
        Some(format!(
            "its heredoc bodies are longer than {MAX_DATA_CHARS} characters"
        ))
    } else {
        None
    }
}

/// A tokenizer error as the model is told it; an input that ends in the
/// middle of something is said to end there.
fn tokenizer_error(e: &brush_parser::TokenizerError) -> String {
    if e.is_incomplete() {
        format!("the script does not parse as bash: {e} (at the end of the script)")
    } else {
        format!("the script does not parse as bash: {e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::analyze;

    #[test]
    fn a_script_ends_in_a_newline_of_its_own() {
        for (text, want) in [
            ("a", "a\n"),
            ("a\n", "a\n"),
            // A lone backslash would join the added newline: doubled.
            ("a\\", "a\\\\\n"),
            ("a\\\\", "a\\\\\n"),
            ("a\\\\\\", "a\\\\\\\\\n"),
            // An escaped newline at the end does not end the script.
            ("a\\\n", "a\\\n\n"),
            ("a\\\\\n", "a\\\\\n"),
        ] {
            assert_eq!(ended(text), want, "{text:?}");
        }
    }

    /// The budgets hold at their bounds: exactly the bound passes, one
    /// more does not.
    #[test]
    fn budgets_at_their_bounds() {
        let code = |n: usize| format!("{}\n", "x".repeat(n - 1));
        assert!(analyze(&code(MAX_SCRIPT_CHARS)).opaque.is_none());
        let why = analyze(&code(MAX_SCRIPT_CHARS + 1)).opaque.unwrap();
        assert!(why.contains("longer than"), "{why}");
        // Without a newline at the end (the one added to end it is not
        // the script's), or with a heredoc left open.
        let line = |n: usize| format!("echo {}", "a".repeat(n - 5));
        assert!(analyze(&line(MAX_SCRIPT_CHARS)).opaque.is_none());
        assert!(analyze(&line(MAX_SCRIPT_CHARS + 1)).opaque.is_some());
        // Its body (`x`) is data; the delimiter added to close it is not
        // the script's either.
        let open = |n: usize| format!("{}\ncat <<EOF >f\nx", "x".repeat(n - 15));
        assert_eq!(open(MAX_SCRIPT_CHARS + 1).len(), MAX_SCRIPT_CHARS + 1);
        assert!(analyze(&open(MAX_SCRIPT_CHARS + 1)).opaque.is_none());
        assert!(analyze(&open(MAX_SCRIPT_CHARS + 2)).opaque.is_some());
        // Heredoc bodies: exactly the cap (the body and its delimiter line).
        let body = |n: usize| format!("{}\nEOF\n", "y".repeat(n - 5));
        let doc = |n: usize| format!("cat <<'EOF' > f\n{}", body(n));
        assert_eq!(body(MAX_DATA_CHARS).len(), MAX_DATA_CHARS);
        assert!(analyze(&doc(MAX_DATA_CHARS)).opaque.is_none());
        let why = analyze(&doc(MAX_DATA_CHARS + 1)).opaque.unwrap();
        assert!(why.contains("heredoc bodies are longer"), "{why}");
        // Brackets: 12 deep is read, 13 is too complex; a body's do not count.
        let nest = |n: usize| format!("{}x{}", "( ".repeat(n), " )".repeat(n));
        assert!(analyze(&nest(MAX_NESTING)).opaque.is_none());
        assert!(analyze(&nest(MAX_NESTING + 1)).opaque.is_some());
        let deep = format!(
            "cat <<'EOF' > f\n{}\nEOF\n{}",
            "(".repeat(40),
            nest(MAX_NESTING)
        );
        assert!(analyze(&deep).opaque.is_none());
    }
}
