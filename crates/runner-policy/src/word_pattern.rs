//! One word of a `Bash(...)` rule, and the match of a rule's words against
//! a command's: `*` alone is any run of words, a glob matches inside one
//! word, anything else is literal.

use globset::GlobMatcher;

use crate::words::{base_name, split_words};

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

/// Whether a command (a signature's specifier) matches a rule's words;
/// for a deny rule (`for_deny`) a program is named by its base name
/// (`/bin/rm` is `rm`), and `pats` are the rule's words so written.
pub(crate) fn match_command(pats: &[WordPat], spec: &str, for_deny: bool) -> bool {
    // Most pairs of a rule and a command differ in the first word: compare
    // it before the whole specifier is split (which allocates a word at a
    // time), when it is plain (no quote or backslash: then it is the first
    // word as split).
    if let Some(WordPat::Literal(literal)) = pats.first()
        && let Some(first) = spec.split_whitespace().next()
        && !first.contains(['\'', '"', '\\'])
        && (if for_deny { base_name(first) } else { first }) != literal
    {
        return false;
    }
    let mut words = split_words(spec);
    if for_deny && let Some(first) = words.first_mut() {
        *first = base_name(first).to_string();
    }
    match_words(pats, &words)
}

/// Matches words against patterns where [`WordPat::Any`] is any run of
/// words: the wildcard algorithm that backtracks only to the last `*`,
/// so the cost is at most patterns times words, never exponential.
fn match_words(pats: &[WordPat], words: &[String]) -> bool {
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

#[cfg(test)]
mod tests {
    use crate::pattern::Pattern;
    use crate::signature::Signature;

    /// The first word is compared before splitting only when it is plain:
    /// quoted or escaped, it is the word bash sees (`'rm'`, `r\m`), and a
    /// program path's base name is what a deny rule names.
    #[test]
    fn the_first_word_as_bash_reads_it() {
        let m = |p: &str, s: &str, for_deny| {
            let pat = Pattern::parse(p).unwrap();
            pat.matches(&Signature::new(pat.family, s), for_deny)
        };
        let deny = |p: &str, s: &str| m(p, s, true);
        for s in [
            "rm -rf /",
            "'rm' -rf /",
            "r\\m -rf /",
            "\"r\"m -rf /",
            "/bin/rm -rf /",
        ] {
            assert!(deny("Bash(rm:*)", s), "{s}");
        }
        for s in ["rmdir x", "'rmx' -rf /", "", "  "] {
            assert!(!deny("Bash(rm:*)", s), "{s:?}");
        }
        assert!(m("Bash(git status)", "'git' status", false));
        assert!(!m("Bash(git status)", "/usr/bin/git status", false));
        assert!(!m("Bash(git status)", "gitk status", false));
    }
}
