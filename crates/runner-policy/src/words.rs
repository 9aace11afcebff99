//! Splitting and joining command words for `Bash(...)` signatures.
//!
//! A signature's specifier is the command's words joined with spaces, quoted
//! where a word holds spaces or quotes, so that splitting it again gives back
//! exactly the words the shell would pass. Rules are split the same way.

/// The base name of a program word: `/bin/rm` is `rm`. Deny rules compare
/// programs by it, so no spelling of a path slips past them.
pub fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Joins words, single-quoting those that need it.
pub fn join_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty() && !w.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a specifier into words: whitespace separates, single and double
/// quotes group, a backslash escapes. Unbalanced quotes end at the end.
pub fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    cur.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => {
                            if let Some(n) = chars.next() {
                                cur.push(n);
                            }
                        }
                        c => cur.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The Levenshtein distance of two short names (the near name a
/// misspelling meant: a config field, a capability).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let w: Vec<String> = ["sh", "-c", "rm 'a b'", "", "x\"y"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(split_words(&join_words(&w)), w);
    }
}
