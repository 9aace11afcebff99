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
//! Values of variables whose names do not look secret count too when the
//! value does by its shape ([`values`]: a webhook URL, a URL's password, a
//! DSN's key, a token or a JWT, a long random string), and so do those of
//! the variables a task or policy lists under `redact:`.
//!
//! A value is also found in the forms it travels in ([`forms`]): base64 at
//! each of its three alignments, URL-encoded, hex in both cases, reversed,
//! and each as a JSON string holds it. All of a redactor's values and
//! their forms are one Aho-Corasick automaton: text is scanned once for
//! them, whatever their number.
//!
//! The process-wide redactor is built on first use ([`redact`]); tool
//! results are redacted before the model sees them or they are spilled, and
//! every output file is redacted again as it is written.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use regex::{Captures, Regex};

mod forms;
mod values;

#[cfg(test)]
use forms::base64;
use forms::forms;

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
    // A JWT: header and claims are base64url JSON objects.
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    // Webhooks whose URL is the credential.
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{16,}",
    r"discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_\-]{16,}",
    r"-----BEGIN[A-Z ]* PRIVATE KEY-----(?s:.)*?(-----END[A-Z ]* PRIVATE KEY-----|\z)",
    // base64 of "x-access-token:" and the token after it.
    r"eC1hY2Nlc3MtdG9rZW46[A-Za-z0-9+/=]*",
    r"(?i)(?P<keep1>authorization:[ \t\r\n]*(?:basic|bearer|token)[ \t\r\n]+)[A-Za-z0-9+/=._~\-]{8,}",
];

/// A password in a URL: a shape of its own, with no literal to look for
/// first, so it is only tried on text holding an `@`.
const URL_PASSWORD: &str =
    r"(?i)(?P<keep2>(?-u:\b)[a-z][a-z0-9+.\-]*://[^/[ \t\r\n]:@]*:)[^/[ \t\r\n]@]{4,}(?P<tail2>@)";

/// Replaces secrets in text.
#[derive(Debug)]
pub struct Redactor {
    /// The values and their encoded forms, leftmost-longest, so a value
    /// containing another is replaced whole; `None` without values.
    values: Option<AhoCorasick>,
    shapes: Shapes,
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

/// The token shapes: those that start with a literal as one regex (each
/// in a group of its own, so that one's flags stay its own), which the
/// regex engine looks for by their literals first; and the URL password.
#[derive(Debug, Clone)]
pub(crate) struct Shapes {
    literal: Regex,
    url: Regex,
}

impl Shapes {
    /// The shapes' matches in `text`, replaced by the mark.
    fn replace<'a>(&self, text: Cow<'a, str>) -> Cow<'a, str> {
        let mut out = text;
        if self.literal.is_match(&out) {
            out = Cow::Owned(self.literal.replace_all(&out, masked).into_owned());
        }
        if out.contains('@') && self.url.is_match(&out) {
            out = Cow::Owned(self.url.replace_all(&out, masked).into_owned());
        }
        out
    }

    /// Each match's captures, the literal shapes' first.
    pub(crate) fn captures<'t>(&self, text: &'t str) -> Vec<Captures<'t>> {
        (self.literal.captures_iter(text))
            .chain(self.url.captures_iter(text))
            .collect()
    }
}

fn shapes() -> &'static Shapes {
    static RE: OnceLock<Shapes> = OnceLock::new();
    RE.get_or_init(|| {
        let joined: Vec<String> = SHAPES.iter().map(|s| format!("(?:{s})")).collect();
        Shapes {
            literal: Regex::new(&joined.join("|")).expect("valid token shapes"),
            url: Regex::new(URL_PASSWORD).expect("a valid shape"),
        }
    })
}

/// What of variable `name`'s `value` is secret: the whole value of a
/// secret-looking name (and an OTLP headers variable's values one by one),
/// else the parts secret by their shape.
pub fn secrets_of(name: &str, value: &str) -> Vec<String> {
    if !super::is_secret_name(name) {
        return values::secret_parts(value, shapes());
    }
    let mut out = vec![value.to_string()];
    if super::env::is_otlp_headers(&name.to_ascii_uppercase()) {
        out.extend(
            value
                .split(',')
                .filter_map(|p| p.split_once('=').map(|(_, v)| v.to_string())),
        );
    }
    out
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
                .kind(Some(AhoCorasickKind::DFA))
                .build(&all)
                .expect("an automaton of literal values")
        });
        Self {
            values,
            shapes: shapes().clone(),
        }
    }

    /// From `vars`: the whole values of the secret-looking ones (an OTLP
    /// headers variable's values one by one too, `k=v,k2=v2`), and of the
    /// others what is secret by its shape ([`values`]).
    pub fn from_env(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::new(vars.into_iter().flat_map(|(k, v)| secrets_of(&k, &v)))
    }

    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        if let Some(values) = &self.values
            && values.is_match(text)
        {
            out = Cow::Owned(values.replace_all(text, &vec![MARK; values.patterns_len()]));
        }
        self.shapes.replace(out)
    }
}

static GLOBAL: OnceLock<Redactor> = OnceLock::new();

/// Secrets learnt after start-up (an MCP server's header values read from
/// `${VAR}`, the variables a task lists under `redact:`), in all their
/// forms, longest first.
static EXTRA: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds a secret to redact from now on (at least [`MIN_VALUE_LEN`] long).
pub fn add_secret(value: &str) {
    let v = value.trim();
    if v.len() < MIN_VALUE_LEN {
        return;
    }
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    for f in forms(v) {
        if !extra.contains(&f) {
            extra.push(f);
        }
    }
    extra.sort_by_key(|e| std::cmp::Reverse(e.len()));
}

/// Learns what a task makes secret beyond what the environment holds:
/// the values of the variables `redact` names (the task's and its policy
/// layers' `redact:`), in the runner's environment or set by the task for
/// its commands (`set`), and of the values it sets, what is secret by name
/// or shape. Called for every task before any runs.
pub fn learn_task_secrets(redact: &[String], set: &std::collections::BTreeMap<String, String>) {
    let named = |k: &str| redact.iter().any(|p| runner_policy::redact_matches(p, k));
    if !redact.is_empty() {
        for (k, v) in super::process_env() {
            if named(&k) {
                add_secret(&v);
            }
        }
    }
    for (k, v) in set {
        if named(k) {
            add_secret(v);
        }
        for part in secrets_of(k, v) {
            add_secret(&part);
        }
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
mod tests;
