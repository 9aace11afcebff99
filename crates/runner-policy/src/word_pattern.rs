//! One word of a `Bash(...)` rule, and the match of a rule's words against
//! a command's: `*` alone is any run of words, a glob matches inside one
//! word, anything else is literal.

use globset::GlobMatcher;

/// One word of a `Bash(...)` pattern.
#[derive(Debug, Clone)]
pub(crate) enum WordPat {
    Any,
    Literal(String),
    Glob(GlobMatcher),
}

impl WordPat {
    pub(crate) fn matches(&self, w: &str) -> bool {
        match self {
            WordPat::Any => true,
            WordPat::Literal(l) => l == w,
            WordPat::Glob(g) => g.is_match(w),
        }
    }
}

/// A `[...]` bracket class in a word (a lone `[` is a literal word).
pub(crate) fn is_bracket_class(w: &str) -> bool {
    w.find('[').is_some_and(|i| w[i + 1..].contains(']'))
}

/// Matches words against patterns where [`WordPat::Any`] is any run of
/// words: the wildcard algorithm that backtracks only to the last `*`,
/// so the cost is at most patterns times words, never exponential.
pub(crate) fn match_words(pats: &[WordPat], words: &[String]) -> bool {
    let (mut p, mut w) = (0, 0);
    // The last `*` seen, and the word it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while w < words.len() {
        match pats.get(p) {
            Some(WordPat::Any) => {
                star = Some((p, w));
                p += 1;
            }
            Some(pat) if pat.matches(&words[w]) => {
                p += 1;
                w += 1;
            }
            _ => match star {
                // Let the last `*` take one more word.
                Some((sp, sw)) => {
                    p = sp + 1;
                    w = sw + 1;
                    star = Some((sp, sw + 1));
                }
                None => return false,
            },
        }
    }
    pats[p..].iter().all(|x| matches!(x, WordPat::Any))
}
