//! `redact:` in a policy (and a task): variables whose values are redacted
//! from every output, whatever their names (issue 72). An entry is a name
//! (`INTERNAL_API`) or a glob over names with `*` and `?` (`MYCO_*`); one
//! that would match every variable (`*`, `?*`, `**`) is refused: it would
//! turn every path, user and word an environment holds into `[REDACTED]`.

use serde_saphyr::Spanned;

use crate::config_error::ConfigError;

/// Whether `pattern` (`*` any run of characters, `?` one) matches `name`.
pub fn redact_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((b'*', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some((b'?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((c, rest)) => {
                n.first().is_some_and(|x| x.eq_ignore_ascii_case(c)) && go(rest, &n[1..])
            }
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// Why `entry` is not a `redact:` entry, if it is not.
pub fn redact_entry_error(entry: &str) -> Option<String> {
    if entry.is_empty() {
        return Some("an empty name".into());
    }
    if let Some(c) = entry
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '?')))
    {
        return Some(format!(
            "`{entry}`: `{c}` is not part of a variable's name (letters, digits, `_`, and `*`/`?` to match several)"
        ));
    }
    if entry.chars().all(|c| matches!(c, '*' | '?')) {
        return Some(format!(
            "`{entry}` would redact the value of every variable (every path, user and word the environment holds): name the variables"
        ));
    }
    None
}

/// The `redact:` entries, or located errors.
pub(crate) fn compile_redact(
    list: &[Spanned<String>],
    file: &std::path::Path,
) -> Result<Vec<String>, Vec<ConfigError>> {
    let errors: Vec<ConfigError> = list
        .iter()
        .filter_map(|e| {
            redact_entry_error(&e.value)
                .map(|why| ConfigError::at(file, &e.referenced, format!("redact: {why}")))
        })
        .collect();
    if errors.is_empty() {
        Ok(list.iter().map(|e| e.value.clone()).collect())
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_globs_match_and_a_catch_all_is_refused() {
        assert!(redact_matches("INTERNAL_API", "INTERNAL_API"));
        assert!(redact_matches("MYCO_*", "MYCO_DB"));
        assert!(redact_matches("*_URL", "DATABASE_URL"));
        assert!(redact_matches("A?C", "ABC"));
        assert!(!redact_matches("MYCO_*", "PATH"));
        assert!(!redact_matches("A?C", "AC"));
        for bad in ["*", "**", "?*", "*?*", ""] {
            assert!(redact_entry_error(bad).is_some(), "{bad}");
        }
        assert!(redact_entry_error("A-B").unwrap().contains("`-`"));
        assert!(redact_entry_error("MYCO_*").is_none());
    }
}
