//! `[REDACTED]` for secrets in everything the runner writes or shows.
//!
//! Two sources: the values of the secret-looking variables present when the
//! run started (see [`super::env`]; values shorter than 8 characters are
//! not replaced as substrings: a dummy key such as `OPENAI_API_KEY=x`,
//! common with local servers, would mangle every word holding an `x`; such
//! variables are still scrubbed from commands' environment), and token
//! shapes that are
//! secrets wherever they come from: GitHub tokens (`ghp_`, `gho_`, `ghs_`,
//! `ghu_`, `ghr_`, `github_pat_`), `sk-...` API keys, AWS access key ids
//! (`AKIA...`), Google API keys (`AIza...`), Slack tokens (`xox?-`) and
//! PEM private key blocks.
//!
//! The process-wide redactor is built on first use ([`redact`]); tool
//! results are redacted before the model sees them or they are spilled, and
//! every output file is redacted again as it is written.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::Regex;

pub const MARK: &str = "[REDACTED]";
/// Secret values shorter than this are not replaced as substrings.
pub const MIN_VALUE_LEN: usize = 8;

const SHAPES: &[&str] = &[
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{35}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"-----BEGIN[A-Z ]* PRIVATE KEY-----[\s\S]*?(-----END[A-Z ]* PRIVATE KEY-----|\z)",
];

/// Replaces secrets in text.
#[derive(Debug)]
pub struct Redactor {
    /// Longest first, so a value containing another is replaced whole.
    values: Vec<String>,
    shapes: Regex,
}

impl Redactor {
    /// A redactor for these secret values and the built-in shapes.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut values: Vec<String> = values
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| v.len() >= MIN_VALUE_LEN)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        values.dedup();
        let shapes = Regex::new(&SHAPES.join("|")).expect("valid token shapes");
        Self { values, shapes }
    }

    /// From the values of the secret-looking variables in `vars`; an
    /// OTLP headers variable's values one by one too (`k=v,k2=v2`).
    pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::new(
            vars.into_iter()
                .filter(|(k, _)| super::is_secret_name(k))
                .flat_map(|(k, v)| {
                    let parts: Vec<String> = if super::env::is_otlp_headers(&k.to_ascii_uppercase())
                    {
                        v.split(',')
                            .filter_map(|p| p.split_once('=').map(|(_, v)| v.to_string()))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    std::iter::once(v).chain(parts)
                }),
        )
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for v in &self.values {
            if out.contains(v.as_str()) {
                out = Cow::Owned(out.replace(v.as_str(), MARK));
            }
        }
        if self.shapes.is_match(&out) {
            out = Cow::Owned(self.shapes.replace_all(&out, MARK).into_owned());
        }
        out
    }
}

static GLOBAL: OnceLock<Redactor> = OnceLock::new();

/// Secrets learnt after start-up (an MCP server's header values read from
/// `${VAR}`), longest first.
static EXTRA: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds a secret to redact from now on (at least [`MIN_VALUE_LEN`] long).
pub fn add_secret(value: &str) {
    let v = value.trim();
    if v.len() < MIN_VALUE_LEN {
        return;
    }
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    if !extra.iter().any(|e| e == v) {
        extra.push(v.to_string());
        extra.sort_by_key(|e| std::cmp::Reverse(e.len()));
    }
}

/// Redacts with the process-wide redactor, built on first use from the
/// environment (which the runner never changes, so that is the environment
/// it started with).
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = GLOBAL
        .get_or_init(|| Redactor::from_env(super::process_env()))
        .redact(text);
    let extra = EXTRA.read().unwrap_or_else(|e| e.into_inner());
    for v in extra.iter() {
        if out.contains(v.as_str()) {
            out = Cow::Owned(out.replace(v.as_str(), MARK));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_shapes_are_replaced() {
        let r = Redactor::from_env([
            ("MY_TOKEN".to_string(), "hunter2-very-secret".to_string()),
            ("SHORT_KEY".to_string(), "abc".to_string()),
            ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ]);
        let text = "token=hunter2-very-secret path=/usr/bin:/bin abc \
                    ghp_0123456789abcdefghijABCDEFGHIJ012345 AKIAIOSFODNN7EXAMPLE \
                    sk-proj-abcdefghijklmnopqrstuvwx";
        let out = r.redact(text);
        assert_eq!(
            out,
            "token=[REDACTED] path=/usr/bin:/bin abc [REDACTED] [REDACTED] [REDACTED]"
        );
    }

    #[test]
    fn an_otlp_headers_variable_is_masked_value_by_value() {
        let r = Redactor::from_env([(
            "OTEL_EXPORTER_OTLP_HEADERS".to_string(),
            "authorization=Bearer otlp-token-123456,x-team=core".to_string(),
        )]);
        let out = r.redact("sent Bearer otlp-token-123456 to the collector");
        assert_eq!(out, format!("sent {MARK} to the collector"));
        // A short value is left alone, as any other.
        assert_eq!(r.redact("team core"), "team core");
    }

    #[test]
    fn private_key_blocks_go_whole() {
        let r = Redactor::new([]);
        let text = "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAA\n-----END OPENSSH PRIVATE KEY-----\nz";
        assert_eq!(r.redact(text), "a\n[REDACTED]\nz");
        // Cut short (a capped output): everything after the header goes.
        assert_eq!(
            r.redact("-----BEGIN RSA PRIVATE KEY-----\nMIIE"),
            "[REDACTED]"
        );
    }

    #[test]
    fn clean_text_is_not_copied() {
        let r = Redactor::new(["secret-value".to_string()]);
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }
}
