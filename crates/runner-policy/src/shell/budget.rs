//! Bounds on the work of one analysis.
//!
//! A command is text from a model, and a few bytes of it can make a naive
//! analysis hang or abort: brush-parser backtracks exponentially in the
//! depth of unclosed parentheses (`( (( (( ((` doubles per level), braces
//! nested a thousand deep overflow the stack, and `cd`s times operands,
//! `find` roots times `{}`, or `*` in a large folder multiply signatures.
//! So every analysis has a budget: the nesting depth is measured before
//! parsing, and the text parsed, the steps of the walk, the folder entries
//! listed and the signatures produced are counted as they go. Past any of
//! them the script is opaque, "too complex to check safely": denied unless
//! a rule names its exact text. Never a hang, an abort or a panic.
//!
//! The bounds are far above what real scripts need (a CI step nests
//! brackets four or five deep) and low enough that the worst case stays
//! within the goals in docs/src/performance-log.md (under 50 ms for any script up
//! to [`super::MAX_SCRIPT_CHARS`]).

/// Deepest nesting of `(`/`)` and `{`/`}` (every bracket counted) that is
/// parsed at all. brush-parser's cost grows about 2.5x per level of
/// unclosed parentheses; at this depth its worst case is a few milliseconds.
pub const MAX_NESTING: usize = 12;

/// Most characters parsed over one analysis, nested scripts (`bash -c`,
/// `$(...)`, `eval`) parsed again included.
pub(super) const MAX_PARSED_CHARS: usize = 100_000;

/// Most steps (commands, words, list items) of one walk.
pub(super) const MAX_STEPS: usize = 50_000;

/// Most folder entries listed to expand glob operands, over one analysis.
pub(super) const MAX_DIR_ENTRIES: usize = 100_000;

/// Most signatures one script may produce.
pub const MAX_SIGNATURES: usize = 4_096;

/// The reason given for a script past its budget.
pub(super) fn too_complex(what: &str) -> String {
    format!("too complex to check safely ({what})")
}

/// How deeply `(`/`{` nest in `text`, every bracket counted (quotes and
/// escapes too: reading them as bash would is the parser's job, and a
/// scanner that skipped quoted text could be led to skip code). Closers
/// without an opener are ignored; what never closes still counts, which is
/// the shape that makes the parser backtrack.
pub(super) fn nesting_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    for b in text.bytes() {
        match b {
            b'(' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_what_the_parser_nests() {
        assert_eq!(nesting_depth("echo hi"), 0);
        assert_eq!(nesting_depth("echo $(( (1+2) * 3 ))"), 3);
        assert_eq!(nesting_depth("( (( (( (("), 7);
        assert_eq!(nesting_depth("awk '{ if ((x)) print }'"), 3);
        assert_eq!(nesting_depth(")))((("), 3);
        assert_eq!(nesting_depth("(a) (b) {c;}"), 1);
        assert_eq!(too_complex("x"), "too complex to check safely (x)");
    }
}
