//! One word of a `Bash(...)` rule, and the match of a rule's words against
//! a command's: `*` alone is any run of words, a glob matches inside one
//! word, anything else is literal.

use std::cell::OnceCell;

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

/// A command's words, split once for all the rules a decision matches
/// against it: a policy may hold 20,000 rules on one program, and a
/// command 10,000 characters, so splitting it again for each rule was
/// seconds of work (`deny-10k-one-program` in the gate bench). Made
/// empty, filled on the first rule that needs the words, for one
/// specifier only.
#[derive(Default)]
pub(crate) struct SplitWords {
    as_written: OnceCell<Vec<String>>,
    /// The same words with the first one's base name (`/bin/rm` is `rm`).
    by_base_name: OnceCell<Vec<String>>,
}

impl SplitWords {
    fn of(&self, spec: &str, for_deny: bool) -> &[String] {
        if !for_deny {
            return self.as_written.get_or_init(|| split_words(spec));
        }
        self.by_base_name.get_or_init(|| {
            let mut words = self
                .as_written
                .get()
                .cloned()
                .unwrap_or_else(|| split_words(spec));
            if let Some(first) = words.first_mut() {
                *first = base_name(first).to_string();
            }
            words
        })
    }
}

/// Whether a command (a signature's specifier, split once in `split`)
/// matches a rule's words; for a deny rule (`for_deny`) a program is
/// named by its base name (`/bin/rm` is `rm`), and `pats` are the rule's
/// words so written.
pub(crate) fn match_command(
    pats: &[WordPat],
    spec: &str,
    for_deny: bool,
    split: &SplitWords,
) -> bool {
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
    let words = split.of(spec, for_deny);
    match_words(pats, words) || for_deny && match_after_options(pats, words)
}

/// Candidate places past which a deny rule is taken as matching: more
/// than this many ways to read a command's options is a command built to
/// be slow to decide, refused.
const MAX_READINGS: usize = 64;

/// A deny rule's subcommand words (`publish` of `cargo publish:*`, `pr
/// merge` of `gh pr merge:*`) also match after the program's own options:
/// `cargo -v publish`, `cargo +nightly publish`, `npm --loglevel silent
/// publish`, `kubectl -n prod delete`, `gh pr --repo o/r merge`. Which
/// options take a value is each program's to know, so a word after an
/// option (`-n prod`) may be its value and is passed over too; a word
/// that is neither (the real subcommand, `cargo test publish`) or `--`
/// ends the search. This reads more commands as matching than the program
/// would run them (`cargo -v test --features publish`): only deny rules
/// match this way.
fn match_after_options(pats: &[WordPat], words: &[String]) -> bool {
    let subs = pats
        .iter()
        .skip(1)
        .take_while(|p| matches!(p, WordPat::Literal(l) if !l.starts_with(['-', '+'])))
        .count();
    if subs == 0 || words.len() < 2 || !pats[0].matches(&words[0]) {
        return false;
    }
    // Where the next subcommand word may be looked for: a word's index,
    // and whether the word before it was an option that may take it as
    // its value.
    let mut starts: Vec<(usize, bool)> = vec![(1, false)];
    for p in &pats[1..=subs] {
        let mut seen = vec![[false; 2]; words.len()];
        let mut found = Vec::new();
        while let Some((w, after_option)) = starts.pop() {
            if w >= words.len() || std::mem::replace(&mut seen[w][usize::from(after_option)], true)
            {
                continue;
            }
            let word = &words[w];
            if p.matches(word) {
                found.push((w + 1, false));
            }
            if word == "--" {
                continue;
            }
            if word.starts_with('-') {
                starts.push((w + 1, !word.contains('=')));
            } else if word.starts_with('+') || after_option {
                starts.push((w + 1, false));
            }
        }
        found.sort_unstable();
        found.dedup();
        if found.len() > MAX_READINGS {
            return true;
        }
        starts = found;
    }
    let rest = &pats[1 + subs..];
    starts.iter().any(|&(w, _)| match_words(rest, &words[w..]))
}

/// Matches words against patterns where [`WordPat::Any`] is any run of
/// words: the wildcard algorithm that backtracks only to the last `*`,
/// so the cost is at most patterns times words, never exponential. Once
/// only `*`s are left, the rest of the words match without being looked
/// at: a rule `git push:*` costs its two words, however long the command.
fn match_words(pats: &[WordPat], words: &[String]) -> bool {
    let only_stars_from = pats.len()
        - pats
            .iter()
            .rev()
            .take_while(|x| matches!(x, WordPat::Any))
            .count();
    let (mut p, mut w) = (0, 0);
    // The last `*` seen, and the word it was tried at.
    let mut star: Option<(usize, usize)> = None;
    while w < words.len() {
        match pats.get(p) {
            Some(WordPat::Any) if p >= only_stars_from => return true,
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

    /// One signature's words, split once, serve allow and deny rules in
    /// either order: an allow rule sees the program as written, a deny
    /// rule its base name (and its own program's).
    #[test]
    fn words_split_once_serve_allow_and_deny_rules_alike() {
        use crate::pattern::Subject;
        let by_name = Pattern::parse("Bash(git push:*)").unwrap();
        let by_path = Pattern::parse("Bash(/usr/bin/git push:*)").unwrap();
        let sig = Signature::new(by_name.family, "/usr/bin/git push origin");
        for allow_first in [true, false] {
            let subject = Subject::new(&sig);
            let mut seen = Vec::new();
            for for_deny in [!allow_first, allow_first] {
                seen.push((
                    for_deny,
                    by_name.matches_subject(&subject, for_deny),
                    by_path.matches_subject(&subject, for_deny),
                ));
            }
            seen.sort();
            assert_eq!(seen, [(false, false, true), (true, true, true)]);
        }
        // Trailing stars match whatever is left, or nothing; a star
        // between words still has to find the word after it.
        let m = |p: &str, s: &str| {
            let pat = Pattern::parse(p).unwrap();
            pat.matches(&Signature::new(pat.family, s), false)
        };
        assert!(m("Bash(git log *)", "git log a b c"));
        assert!(m("Bash(git log * *)", "git log"));
        assert!(m("Bash(git * main)", "git push origin main"));
        assert!(!m("Bash(git * main)", "git push origin main x"));
        assert!(!m("Bash(git log x *)", "git log y z"));
    }

    /// A deny rule's subcommand is met after the program's own options
    /// and what may be their values; an allow rule's is not.
    #[test]
    fn a_deny_rules_subcommand_after_the_programs_options() {
        let m = |p: &str, s: &str, for_deny| {
            let pat = Pattern::parse(p).unwrap();
            pat.matches(&Signature::new(pat.family, s), for_deny)
        };
        for (rule, s) in [
            ("Bash(cargo publish:*)", "cargo -v publish"),
            ("Bash(cargo publish:*)", "cargo +nightly publish --dry-run"),
            ("Bash(cargo publish:*)", "cargo --locked -Z x publish"),
            ("Bash(cargo publish:*)", "cargo --color=always publish"),
            ("Bash(npm publish:*)", "npm --loglevel silent publish"),
            ("Bash(kubectl delete:*)", "kubectl -n prod delete pod x"),
            ("Bash(gh pr merge:*)", "gh --repo o/r pr merge 1"),
            ("Bash(gh pr merge:*)", "gh pr --repo o/r merge 1"),
            // `pr` the value of `--repo`, then the subcommand.
            ("Bash(gh pr merge:*)", "gh --repo pr pr merge"),
            ("Bash(git push)", "git -v push"),
            ("Bash(git push origin *)", "git -q push origin main"),
        ] {
            assert!(m(rule, s, true), "{rule} {s}");
            assert!(!m(rule, s, false), "allow {rule} {s}");
        }
        for (rule, s) in [
            // The subcommand is another word.
            ("Bash(cargo publish:*)", "cargo test publish"),
            ("Bash(cargo publish:*)", "cargo +nightly test publish"),
            ("Bash(cargo publish:*)", "cargo -v test"),
            ("Bash(cargo publish:*)", "cargo -- publish"),
            ("Bash(npm publish:*)", "npm run publish-docs"),
            ("Bash(cargo publish:*)", "cargo -v"),
            ("Bash(gh pr merge:*)", "gh pr --repo o/r view merge"),
            // The rest of the rule still has to match.
            ("Bash(git push)", "git -v push x"),
            ("Bash(git push origin *)", "git -q push upstream main"),
            // Another program with the same subcommand (quoted: past the
            // first word's quick comparison).
            ("Bash(cargo publish:*)", "npm publish"),
            ("Bash(cargo publish:*)", "'npm' -v publish"),
            // Options in the rule are matched as written.
            ("Bash(rm -rf:*)", "rm -v -rf /"),
            ("Bash(curl:*)", "wget -O- curl"),
        ] {
            assert!(!m(rule, s, true), "{rule} {s}");
        }
        // Past MAX_READINGS places the subcommand may be, refused.
        let many = "-x push ".repeat(super::MAX_READINGS + 1);
        assert!(m(
            "Bash(git push origin main)",
            &format!("git {many}"),
            true
        ));
        for n in [super::MAX_READINGS / 2, super::MAX_READINGS] {
            let few = "-x push ".repeat(n);
            assert!(!m(
                "Bash(git push origin main)",
                &format!("git {few}"),
                true
            ));
        }
    }
}
