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

mod decoys;
pub(crate) mod forms;
mod shapes;
mod values;

pub use decoys::add_decoy;
pub use forms::MIN_VALUE_LEN;
#[cfg(test)]
use forms::base64;
use forms::forms;
pub use shapes::MARK;
use shapes::{Shapes, shapes};

/// Replaces secrets in text.
#[derive(Debug)]
pub struct Redactor {
    /// The values and their encoded forms, leftmost-longest, so a value
    /// containing another is replaced whole; `None` without values.
    values: Option<AhoCorasick>,
    shapes: Shapes,
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
        Self {
            values: automaton(&all),
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
        if let Some(values) = &self.values {
            out = replace_values(values, out);
        }
        self.shapes.replace(out)
    }
}

static GLOBAL: OnceLock<Redactor> = OnceLock::new();

/// Secrets learnt after start-up (an MCP server's header values read from
/// `${VAR}`, the variables a task lists under `redact:`), in all their
/// forms.
static EXTRA: std::sync::RwLock<Extra> = std::sync::RwLock::new(Extra {
    forms: Vec::new(),
    automaton: None,
});

/// The secrets learnt after start-up: their forms, and one automaton of
/// them all (rebuilt when one is added, which is rare; a pass over every
/// result for each form would cost a dozen scans a secret).
struct Extra {
    forms: Vec<String>,
    automaton: Option<AhoCorasick>,
}

/// One leftmost-longest automaton of `forms` (so a value containing
/// another is replaced whole); `None` without any.
fn automaton(forms: &[String]) -> Option<AhoCorasick> {
    (!forms.is_empty()).then(|| {
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::DFA))
            .build(forms)
            .expect("an automaton of literal values")
    })
}

/// `text` with every match of `values` replaced by the mark.
fn replace_values<'a>(values: &AhoCorasick, text: Cow<'a, str>) -> Cow<'a, str> {
    if !values.is_match(text.as_ref()) {
        return text;
    }
    Cow::Owned(values.replace_all(&text, &vec![MARK; values.patterns_len()]))
}

/// Adds a secret to redact from now on (at least [`MIN_VALUE_LEN`] long).
pub fn add_secret(value: &str) {
    let v = value.trim();
    if v.len() < MIN_VALUE_LEN {
        return;
    }
    let mut extra = EXTRA.write().unwrap_or_else(|e| e.into_inner());
    let before = extra.forms.len();
    for f in forms(v) {
        if !extra.forms.contains(&f) {
            extra.forms.push(f);
        }
    }
    if extra.forms.len() > before {
        extra.automaton = automaton(&extra.forms);
    }
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
    if let Some(values) = &extra.automaton {
        out = replace_values(values, out);
    }
    out
}

#[cfg(test)]
mod tests;
