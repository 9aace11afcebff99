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
        if !names_a_field
            && let Some(key) = key_at_line(source, line)
            && !message.contains(&key)
        {
            message = format!("{key}: {message}");
        }
        Self::new(file, line, column, message)
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
