//! `${NAME}` in a task's or policy's settings (an MCP server's or a
//! collector's headers), filled in from the runner's environment when the
//! run starts. Every value read is a secret from then on: redacted in every
//! output, whatever the variable is called.

/// Why `${VAR}` in a header could not be filled in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("the variable {0} is not set")]
    Missing(String),
    #[error("`${{` without its `}}` in `{0}`")]
    Unclosed(String),
}

/// Replaces each `${NAME}` with the variable's value. Each value read is a
/// secret from then on: redacted in every output, whatever the variable is
/// called.
pub fn expand_env(text: &str) -> Result<String, ExpandError> {
    substitute(text, |name| {
        let value = std::env::var(name).map_err(|_| ExpandError::Missing(name.to_string()))?;
        crate::contain::add_secret(&value);
        Ok(value)
    })
}

/// The names of the variables `${NAME}` in `text`, in order (up to a `${`
/// left open), for messages that say where a value came from.
pub fn variables_in(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let _ = substitute(text, |name| {
        names.push(name.to_string());
        Ok(String::new())
    });
    names
}

/// `text` with each `${NAME}` replaced by `value(NAME)`.
fn substitute(
    text: &str,
    mut value: impl FnMut(&str) -> Result<String, ExpandError>,
) -> Result<String, ExpandError> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(ExpandError::Unclosed(text.to_string()));
        };
        out.push_str(&value(&after[..end])?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_read_variables_and_become_secrets() {
        // cargo gives tests their package's variables; this value appears
        // in no other test's output, so redacting it from now on is safe.
        let name = "CARGO_PKG_DESCRIPTION";
        let value = std::env::var(name).expect("cargo sets it for tests");
        let got = expand_env(&format!("Bearer ${{{name}}}!")).unwrap();
        assert_eq!(got, format!("Bearer {value}!"));
        assert!(!crate::contain::redact(&format!("x {value} y")).contains(&value));
        assert_eq!(
            expand_env("${RUNNER_TEST_SURELY_UNSET_VAR}"),
            Err(ExpandError::Missing("RUNNER_TEST_SURELY_UNSET_VAR".into()))
        );
        assert!(matches!(
            expand_env("a ${OPEN"),
            Err(ExpandError::Unclosed(_))
        ));
        assert_eq!(expand_env("no variables").unwrap(), "no variables");
    }

    #[test]
    fn the_variables_a_value_is_read_from_are_named_in_order() {
        assert_eq!(variables_in("Bearer ${A} ${B_C}"), ["A", "B_C"]);
        assert_eq!(variables_in("${A} and ${OPEN"), ["A"]);
        assert!(variables_in("plain").is_empty());
    }
}
