//! Which environment values are secrets by their shape, whatever their
//! variable is called (issue 72): `SLACK_WEBHOOK_URL`, `SENTRY_DSN` and
//! `DATABASE_URL` do not look secret by name, but reach commands, and
//! their values must not reach an output.
//!
//! A value's secret parts are:
//! - what a token shape matches in it (`ghp_…`, `github_pat_…`, `gho_…`,
//!   `xox[abp]-…`, `sk-…`, `AKIA…`, a JWT, a PEM block, a Slack or Discord
//!   webhook URL: the shapes redacted in any text, see `shapes.rs`);
//! - the password in a URL's user information (`postgres://u:PASS@h`), and
//!   a user with no password that is long enough to be a key (a DSN's:
//!   `https://KEY@o1.ingest.sentry.io/1`);
//! - the whole value when it is long and random-looking: at least 20
//!   characters, no space or `/`, upper and lower case letters and digits,
//!   the class changing at a third of its characters or more (words run
//!   in one case), and 3.5 bits of entropy a character or more.
//!
//! Near misses stay: a commit SHA or any hex digest (one case), a UUID,
//! an integrity hash (`sha512-…`), paths and ordinary words. The corpus in
//! `tests/fixtures/redaction/values.yaml` holds both.

use std::sync::OnceLock;

use regex::Regex;

/// The user information of a URL: `scheme://USER[:PASSWORD]@`.
fn userinfo() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?i)(?-u:\b)[a-z][a-z0-9+.\-]*://([^/:@\s]+)(?::([^/@\s]*))?@")
            .expect("a valid pattern")
    })
}

/// Shannon entropy of `text`, in bits a character.
fn entropy(text: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in text.bytes() {
        counts[b as usize] += 1;
    }
    let n = text.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = *c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `value` looks like a random key: see the module's doc.
fn looks_random(value: &str) -> bool {
    if value.len() < 20
        || value.contains(|c: char| c.is_whitespace() || c == '/')
        || ["sha1-", "sha256-", "sha384-", "sha512-"]
            .iter()
            .any(|p| value.starts_with(p))
    {
        return false;
    }
    let has = |f: fn(&char) -> bool| value.chars().any(|c| f(&c));
    // Words run in one case (`ReleaseCandidate2026`); random text changes
    // class (upper, lower, digit, other) at about every other character.
    let class = |b: u8| match b {
        b'A'..=b'Z' => 0,
        b'a'..=b'z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    let bytes = value.as_bytes();
    let changes = bytes
        .windows(2)
        .filter(|w| class(w[0]) != class(w[1]))
        .count();
    has(char::is_ascii_uppercase)
        && has(char::is_ascii_lowercase)
        && has(char::is_ascii_digit)
        && changes * 100 >= (bytes.len() - 1) * 35
        && entropy(value) >= 3.5
}

/// The parts of `value` that are secrets by their shape; empty for most.
pub(crate) fn secret_parts(value: &str, shapes: &super::shapes::Shapes) -> Vec<String> {
    let value = value.trim();
    // A shape's match less what its `keep`/`tail` groups hold (a header's
    // name, a URL's user and `@`).
    let mut parts: Vec<String> = shapes
        .captures(value)
        .into_iter()
        .filter_map(|caps| {
            let all = caps.get(0)?;
            let group = |prefix: &str| (1..=2).find_map(|i| caps.name(&format!("{prefix}{i}")));
            let from = group("keep").map_or(all.start(), |k| k.end());
            let to = group("tail").map_or(all.end(), |t| t.start());
            Some(value[from..to].to_string())
        })
        .collect();
    // A URL's password is a shape (above); a user with none is a DSN's
    // key when it is long enough.
    for caps in userinfo().captures_iter(value) {
        let user = &caps[1];
        if caps.get(2).is_none_or(|p| p.is_empty())
            && user.len() >= 16
            && user.chars().all(|c| c.is_ascii_alphanumeric())
        {
            parts.push(user.to_string());
        }
    }
    if parts.is_empty() && looks_random(value) {
        parts.push(value.to_string());
    }
    parts.dedup();
    parts
}
