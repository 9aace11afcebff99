//! Errors in files a user wrote (policies here, task files in the runner),
//! located as `file:line:column`.

use std::fmt;
use std::path::{Path, PathBuf};

/// A mistake in a file the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file, as given.
    pub file: PathBuf,
    /// 1-based; 0 when unknown.
    pub line: u64,
    /// 1-based; 0 when unknown.
    pub column: u64,
    /// What is wrong, naming the field.
    pub message: String,
}

impl ConfigError {
    /// An error at `line:column` of `file`.
    pub fn new(file: &Path, line: u64, column: u64, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line,
            column,
            message: message.into(),
        }
    }

    /// An error at a YAML location.
    pub fn at(file: &Path, loc: &serde_saphyr::Location, message: impl Into<String>) -> Self {
        Self::new(file, loc.line(), loc.column(), message)
    }

    /// Converts a serde-saphyr error, keeping its location. The message is
    /// the plain first line, without the snippet rendering, and names the
    /// field found at that line of `source` when the error does not.
    pub fn from_yaml_in(file: &Path, source: &str, e: &serde_saphyr::Error) -> Self {
        let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
        let text = e.to_string();
        let message = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("invalid YAML")
            .to_string();
        let mut message = strip_location_prefix(&strip_location_suffix(&message));
        let names_a_field = message.contains("missing field") || message.contains("unknown field");
        let key = key_at_line(source, line);
        // The key's own value (not one inside a `{...}` on its line).
        let flow = source
            .lines()
            .nth((line as usize).saturating_sub(1))
            .is_some_and(|l| l.contains(['{', '[']));
        if !flow && let Some(plain) = key.as_deref().and_then(|k| plain_type_error(k, &message)) {
            return Self::new(file, line, column, plain);
        }
        if !names_a_field
            && let Some(key) = key
            && !message.contains(&key)
        {
            message = format!("{key}: {message}");
        }
        Self::new(file, line, column, did_you_mean(&message))
    }
}

/// A type error said in plain words, naming the field: `max_turns:
/// three` is "max_turns must be a whole number", not "invalid u32".
fn plain_type_error(key: &str, message: &str) -> Option<String> {
    let what = message.strip_prefix("invalid ")?;
    let kind = what.split([' ', ':', ',']).next().unwrap_or("");
    let wanted = match kind {
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" => "a whole number",
        "f32" | "f64" => "a number",
        "boolean" | "bool" => "true or false",
        _ => return None,
    };
    Some(format!("{key} must be {wanted}"))
}

/// An unknown field or variant, with the nearest known one suggested
/// (`unknown field \`max_turn\`, did you mean \`max_turns\`?`).
fn did_you_mean(message: &str) -> String {
    let Some(rest) = message
        .strip_prefix("unknown field `")
        .or_else(|| message.split_once("unknown variant `").map(|(_, r)| r))
    else {
        return message.to_string();
    };
    let Some((given, known)) = rest.split_once("`, expected one of ") else {
        return message.to_string();
    };
    let near = known
        .split(", ")
        .map(|k| k.trim_matches('`'))
        .map(|k| (crate::words::edit_distance(given, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d);
    match near {
        Some((_, k)) => message.replacen(
            &format!("`{given}`,"),
            &format!("`{given}` (did you mean `{k}`?),"),
            1,
        ),
        None => message.to_string(),
    }
}

/// serde-saphyr may start with "error: line X column Y: ".
fn strip_location_prefix(m: &str) -> String {
    let m = m.strip_prefix("error: ").unwrap_or(m);
    if let Some(rest) = m.strip_prefix("line ")
        && let Some(i) = rest.find(": ")
        && rest[..i].contains("column")
    {
        return rest[i + 2..].to_string();
    }
    m.to_string()
}

/// The mapping key written on a line (`  max_turns: many` gives `max_turns`).
fn key_at_line(source: &str, line: u64) -> Option<String> {
    let l = source.lines().nth((line as usize).checked_sub(1)?)?;
    let t = l.trim_start().trim_start_matches("- ").trim_start();
    let (key, _) = t.split_once(':')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then(|| key.to_string())
}

/// serde-saphyr appends " at line X column Y"; we print the location first.
fn strip_location_suffix(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file.display(),
                self.line,
                self.column,
                self.message
            )
        } else {
            write!(f, "{}: {}", self.file.display(), self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> String {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct T {
            max_turns: Option<u32>,
            network: Option<bool>,
            mode: Option<Mode>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[serde(rename_all = "kebab-case")]
        enum Mode {
            BestEffort,
            Required,
        }
        let e = serde_saphyr::from_str::<T>(yaml).unwrap_err();
        ConfigError::from_yaml_in(Path::new("t.yaml"), yaml, &e).to_string()
    }

    #[test]
    fn mistakes_are_said_in_plain_words_with_the_near_name() {
        assert_eq!(
            read("max_turns: three\n"),
            "t.yaml:1:12: max_turns must be a whole number"
        );
        assert_eq!(
            read("network: maybe\n"),
            "t.yaml:1:10: network must be true or false"
        );
        // Inside a `{...}` the line's key is not the field: as it was.
        assert!(!read("{network: maybe}\n").contains("must be"));
        let e = read("max_turn: 3\n");
        assert!(
            e.contains("unknown field `max_turn` (did you mean `max_turns`?)"),
            "{e}"
        );
        let e = read("mode: requird\n");
        assert!(e.contains("(did you mean `required`?)"), "{e}");
        // Nothing near: no suggestion.
        let e = read("colour: 3\n");
        assert!(
            e.contains("unknown field `colour`") && !e.contains("did you mean"),
            "{e}"
        );
    }
}
