//! `[REDACTED]` for secrets in everything the runner writes or shows.
//!
//! Two sources: the values of the secret-looking variables present when the
//! run started (see [`super::env`]; values shorter than 8 characters are
//! not replaced as substrings: a dummy key such as `OPENAI_API_KEY=x`,
//! common with local servers, would mangle every word holding an `x`; such
//! variables are still scrubbed from commands' environment), and token
//! shapes that are secrets wherever they come from: GitHub tokens (`ghp_`,
//! `gho_`, `ghs_`, `ghu_`, `ghr_`, `github_pat_`), `sk-...` API keys, npm
//! (`npm_`) and PyPI (`pypi-`) tokens, AWS access key ids (`AKIA...`),
//! Google API keys (`AIza...`), Slack tokens (`xox?-`), PEM private key
//! blocks, the value of an `Authorization:` header, a password in a URL
//! (`https://user:PASSWORD@host`), and the base64 of `x-access-token:`
//! with what follows it (how `actions/checkout` stores the job's token).
//!
//! A value is also found in the forms it travels in: base64 (at each of
//! the three alignments it can have inside a longer encoded text, so
//! `base64("x-access-token:" + VALUE)` is caught too) and URL-encoded.
//! All of a redactor's values and their forms are one Aho-Corasick
//! automaton: text is scanned once for them, whatever their number.
//!
//! The process-wide redactor is built on first use ([`redact`]); tool
//! results are redacted before the model sees them or they are spilled, and
//! every output file is redacted again as it is written.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use regex::{Captures, Regex};

pub const MARK: &str = "[REDACTED]";
/// Secret values shorter than this are not replaced as substrings.
pub const MIN_VALUE_LEN: usize = 8;

/// Token shapes. A group named `keepN` is kept in front of the mark (the
/// header's name, a URL's user), one named `tailN` after it. Word
/// boundaries are ASCII ones (`(?-u:\b)`): a Unicode boundary makes the
/// regex engine fall back to its slowest search on every text.
const SHAPES: &[&str] = &[
    r"gh[pousr]_[A-Za-z0-9]{30,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"sk-[A-Za-z0-9_\-]{20,}",
    r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
    r"(?-u:\b)pypi-[A-Za-z0-9_\-]{40,}",
    r"(?-u:\b)AKIA[0-9A-Z]{16}(?-u:\b)",
    r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"-----BEGIN[A-Z ]* PRIVATE KEY-----(?s:.)*?(-----END[A-Z ]* PRIVATE KEY-----|\z)",
    // base64 of "x-access-token:" and the token after it.
    r"eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]*",
    r"(?i)(?P<keep1>authorization:[ \t\r\n]*(?:basic|bearer|token)[ \t\r\n]+)[A-Za-z0-9+/=._~\-]{8,}",
    r"(?i)(?P<keep2>(?-u:\b)[a-z][a-z0-9+.\-]*://[^/[ \t\r\n]:@]*:)[^/[ \t\r\n]@]{4,}(?P<tail2>@)",
];

/// Replaces secrets in text.
#[derive(Debug)]
pub struct Redactor {
    /// The values and their encoded forms, leftmost-longest, so a value
    /// containing another is replaced whole; `None` without values.
    values: Option<AhoCorasick>,
    shapes: Regex,
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64, without padding.
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The forms a secret value travels in: itself, the part of its base64
/// that does not depend on its neighbours at each of the three alignments
/// it can have in a longer encoded text, and URL-encoded.
fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    for align in 0..3usize {
        let mut bytes = vec![0u8; align];
        bytes.extend_from_slice(value.as_bytes());
        let encoded = base64(&bytes);
        let from = (align * 8).div_ceil(6);
        let to = (bytes.len() * 8) / 6;
        if to > from && to - from >= MIN_VALUE_LEN {
            out.push(encoded[from..to].to_string());
        }
    }
    let mut url = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                url.push(b as char)
            }
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    if url != value {
        out.push(url);
    }
    out
}

/// The replacement of one shape's match: the mark between what its
/// `keep`/`tail` groups hold.
fn masked(caps: &Captures) -> String {
    let group = |prefix: &str| {
        (1..=2)
            .find_map(|i| caps.name(&format!("{prefix}{i}")))
            .map_or("", |m| m.as_str())
    };
    format!("{}{MARK}{}", group("keep"), group("tail"))
}

impl Redactor {
    /// A redactor for these secret values and the built-in shapes.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut all: Vec<String> = values
            .into_iter()
            .map(|v| v.trim().to_string())
            .filter(|v| v.len() >= MIN_VALUE_LEN)
            .flat_map(|v| forms(&v))
            .collect();
        all.sort();
        all.dedup();
        let values = (!all.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&all)
                .expect("an automaton of literal values")
        });
        // Each shape in a group of its own, so that one's flags stay its own.
        let joined: Vec<String> = SHAPES.iter().map(|s| format!("(?:{s})")).collect();
        let shapes = Regex::new(&joined.join("|")).expect("valid token shapes");
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
        if let Some(values) = &self.values
            && values.is_match(text)
        {
            out = Cow::Owned(values.replace_all(text, &vec![MARK; values.patterns_len()]));
        }
        if self.shapes.is_match(&out) {
            out = Cow::Owned(self.shapes.replace_all(&out, masked).into_owned());
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
    for v in extra.iter().flat_map(|v| forms(v)) {
        if out.contains(v.as_str()) {
            out = Cow::Owned(out.replace(v.as_str(), MARK));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A secret learnt after start-up is redacted from the shortest length
    /// told apart from text (`MIN_VALUE_LEN`, after trimming) up.
    #[test]
    fn a_secret_learnt_later_is_redacted_from_its_minimum_length() {
        add_secret("  Lq8Zr4Vw  ");
        add_secret("Pj5Ty3K");
        // A second secret, and the first again (kept once).
        add_secret("Hn2Wx7Cd-second");
        add_secret("Lq8Zr4Vw");
        let out = redact("a Lq8Zr4Vw b Pj5Ty3K c Hn2Wx7Cd-second d");
        assert_eq!(out, "a [REDACTED] b Pj5Ty3K c [REDACTED] d");
        let extra = EXTRA.read().unwrap_or_else(|e| e.into_inner());
        assert_eq!(extra.iter().filter(|e| *e == "Lq8Zr4Vw").count(), 1);
    }

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
    fn each_token_shape_is_replaced() {
        let r = Redactor::new([]);
        for token in [
            "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
            "gho_16C7e42F292c6912E7710c838347Ae178B4a",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "pypi-AgEIcHlwaS5vcmcCJGE0ZDY1ZjM0LTk0ZDEtNDc0Ny1iYmRjLWY4ZmQ0ZDRkMzM2NgAC",
            "AKIAIOSFODNN7EXAMPLE",
            "xoxb-123456789012-abcdefghijkl",
            "sk-proj-abcdefghijklmnopqrstuvwx",
        ] {
            let text = format!("before {token} after");
            assert_eq!(r.redact(&text), format!("before {MARK} after"), "{token}");
        }
    }

    #[test]
    fn a_checkout_header_and_a_url_password_keep_their_names() {
        let r = Redactor::new([]);
        let header = "http.https://github.com/.extraheader=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46dG9rLXNlY3JldC12YWx1ZQ==";
        assert_eq!(
            r.redact(header),
            format!("http.https://github.com/.extraheader=AUTHORIZATION: basic {MARK}")
        );
        // The encoded token alone, as `grep -r x-access-token` can't find it.
        assert_eq!(
            r.redact("value eC1hY2Nlc3MtdG9rZW46dG9rLXNlY3JldC12YWx1ZQ== end"),
            format!("value {MARK} end")
        );
        assert_eq!(
            r.redact("origin https://x-access-token:tok-secret-value@github.com/o/r (fetch)"),
            format!("origin https://x-access-token:{MARK}@github.com/o/r (fetch)")
        );
        // A user without a password, and ordinary URLs, stay.
        for plain in ["ssh://git@github.com/o/r", "https://github.com/o/r?a=b:c@d"] {
            assert_eq!(r.redact(plain), plain);
        }
    }

    #[test]
    fn a_value_is_found_base64_and_url_encoded() {
        let value = "tok-secret/value+9";
        let r = Redactor::new([value.to_string()]);
        let b64 = |s: &str| base64(s.as_bytes());
        // Alone, after `x-access-token:` (another alignment), and inside a
        // longer encoded text at each alignment.
        for text in [
            b64(value),
            b64(&format!("x-access-token:{value}")),
            b64(&format!("a{value}zz")),
            b64(&format!("ab{value}z")),
            "tok-secret%2Fvalue%2B9".to_string(),
        ] {
            let out = r.redact(&text);
            assert!(out.contains(MARK), "{text} -> {out}");
            assert!(
                !out.contains(&text[text.len() / 3..text.len() * 2 / 3]),
                "{text}"
            );
        }
        assert_eq!(base64(b"x-access-token:"), "eC1hY2Nlc3MtdG9rZW46");
        assert_eq!(base64(b"hello"), "aGVsbG8");
    }

    #[test]
    fn clean_text_is_not_copied() {
        let r = Redactor::new(["secret-value".to_string()]);
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }
}
