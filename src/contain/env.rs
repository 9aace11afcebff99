//! The environment commands get: the runner's, less what looks like a
//! secret, plus what the task sets.
//!
//! A name is secret-looking when it ends in `_KEY`, `_KEY_ID`, `_TOKEN`,
//! `_SECRET`, `_SECRETS`, `_PASSWORD`, `_CREDENTIALS` or `_PAT`, or contains
//! `PASSWORD`, `PASSWD` or `SECRET` (any case). That covers `GITHUB_TOKEN`,
//! `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`,
//! `AWS_SECRET_ACCESS_KEY`, `NPM_TOKEN` and the like, and OpenTelemetry's
//! `OTEL_EXPORTER_OTLP_HEADERS` (and its per-signal forms), which carry a
//! collector's credentials. A task that needs one lists it under `env.pass`.

use std::collections::BTreeMap;

/// A task's `env:`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EnvSettings {
    /// Secret-looking variables passed on anyway.
    pub pass: Vec<String>,
    /// Variables set (or replaced) for commands.
    pub set: BTreeMap<String, String>,
    /// `redact:`: variables whose values every output redacts (names or
    /// globs; see `runner_policy::redact_matches`).
    pub redact: Vec<String>,
    /// The task's decoy credentials (`canaries:`): their variables, where
    /// neither `set` nor `pass` gives one, and a home of the task's own
    /// holding their files.
    pub decoys: Option<std::sync::Arc<crate::canary::Canaries>>,
}

/// Whether a variable name looks like it holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SUFFIXES: [&str; 8] = [
        "_KEY",
        "_KEY_ID",
        "_TOKEN",
        "_SECRET",
        "_SECRETS",
        "_PASSWORD",
        "_CREDENTIALS",
        "_PAT",
    ];
    SUFFIXES.iter().any(|s| n.ends_with(s))
        || ["PASSWORD", "PASSWD", "SECRET"]
            .iter()
            .any(|w| n.contains(w))
        || matches!(n.as_str(), "TOKEN" | "API_KEY" | "APIKEY")
        || is_otlp_headers(&n)
}

/// Hides the values of the runner's own variables that look like secrets
/// ([`is_secret_name`]) from other processes: they stay in its
/// environment, but no longer in the block the kernel shows in
/// `/proc/PID/environ`, which a command may read even inside Landlock.
/// The number hidden.
///
/// # Safety
/// No other thread may run, and nothing may hold a pointer into the
/// environment: call it first thing in `main`.
pub unsafe fn hide_own_secrets() -> usize {
    // SAFETY: the caller's promise.
    unsafe { crate::sys::hide_secret_values(is_secret_name) }
}

/// The runner's variables that look like secrets whose values the
/// process that started it still holds in its own environment block,
/// where a command can read them (Linux: `/proc/PPID/environ`; Landlock
/// does not refuse it): a shell that got them from its own parent, as a
/// CI step's shell does. Started with `exec`, there is no such process.
/// Empty elsewhere, and where the parent's block cannot be read.
pub fn secrets_held_by_parent() -> Vec<String> {
    #[cfg(target_os = "linux")]
    {
        let ppid = std::os::unix::process::parent_id();
        let Ok(block) = std::fs::read(format!("/proc/{ppid}/environ")) else {
            return Vec::new();
        };
        let mut held: Vec<String> = block
            .split(|&b| b == 0)
            .filter_map(|entry| {
                let entry = std::str::from_utf8(entry).ok()?;
                let (name, value) = entry.split_once('=')?;
                let ours = std::env::var(name).ok()?;
                (is_secret_name(name) && !value.is_empty() && ours == value)
                    .then(|| name.to_string())
            })
            .collect();
        held.sort();
        held.dedup();
        held
    }
    #[cfg(not(target_os = "linux"))]
    Vec::new()
}

/// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS` ...:
/// `key=value` pairs, a collector's token among them.
pub fn is_otlp_headers(upper_name: &str) -> bool {
    upper_name.starts_with("OTEL_EXPORTER_OTLP_") && upper_name.ends_with("_HEADERS")
}

/// git's variables that point it at a repository, an index or objects:
/// set when the runner itself runs inside a git hook (pre-commit sets
/// `GIT_INDEX_FILE`). Kept, they would make a command's `git add` write the
/// user's real index instead of the copy's.
fn is_git_location(name: &str) -> bool {
    matches!(
        name,
        "GIT_DIR"
            | "GIT_WORK_TREE"
            | "GIT_INDEX_FILE"
            | "GIT_OBJECT_DIRECTORY"
            | "GIT_ALTERNATE_OBJECT_DIRECTORIES"
            | "GIT_COMMON_DIR"
            | "GIT_NAMESPACE"
            | "GIT_PREFIX"
            | "GIT_CONFIG"
            | "GIT_CONFIG_PARAMETERS"
            | "GIT_CONFIG_COUNT"
    ) || name.starts_with("GIT_CONFIG_KEY_")
        || name.starts_with("GIT_CONFIG_VALUE_")
}

/// Variables that change how bash reads a script, which the permission
/// engine reads as a clean bash would: startup files (`BASH_ENV`, `ENV`),
/// options (`SHELLOPTS`, `BASHOPTS`: `extglob`, `dotglob`), what globs and
/// `cd` see (`GLOBIGNORE`, `CDPATH`), word splitting (`IFS`), traces that
/// expand (`PS4`), and exported functions (`BASH_FUNC_name%%`), which
/// would stand in for programs.
fn changes_bash(name: &str) -> bool {
    matches!(
        name,
        "BASH_ENV"
            | "ENV"
            | "SHELLOPTS"
            | "BASHOPTS"
            | "GLOBIGNORE"
            | "CDPATH"
            | "IFS"
            | "PS4"
            | "PROMPT_COMMAND"
            | "BASH_XTRACEFD"
    ) || name.starts_with("BASH_FUNC_")
}

/// A value bash would run code from if a script evaluated it as
/// arithmetic or as a variable name: an array subscript holding a command
/// substitution (`a[$(cmd)]`). The analysis trusts variables the script
/// never assigns, so the environment must not hold such a value.
fn holds_subscript_code(value: &str) -> bool {
    value.contains('[') && (value.contains("$(") || value.contains('`'))
}

/// The environment for commands, from `vars` (the runner's), in name order.
/// Secrets are left out unless passed; git's location variables, variables
/// that change how bash reads a script and values that would run code in
/// an arithmetic context always are.
pub fn scrubbed_env(
    vars: impl IntoIterator<Item = (String, String)>,
    settings: &EnvSettings,
) -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = vars
        .into_iter()
        .filter(|(k, _)| !is_secret_name(k) || settings.pass.iter().any(|p| p == k))
        .filter(|(k, _)| !is_git_location(k))
        .filter(|(k, v)| !changes_bash(k) && !holds_subscript_code(v))
        .collect();
    for (k, v) in &settings.set {
        out.insert(k.clone(), v.clone());
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for n in [
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "anthropic_api_key",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "MYSQL_PWD_PASSWORD",
            "CLIENT_SECRET",
            "NPM_TOKEN",
            "GH_PAT",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            // Whole names, and a word inside a name.
            "TOKEN",
            "apikey",
            "MY_PASSWD_FILE",
        ] {
            assert!(is_secret_name(n), "{n}");
        }
        for n in [
            "PATH",
            "HOME",
            "LANG",
            "KEYBOARD",
            "CARGO_HOME",
            "TOKENIZERS_PARALLELISM",
            // OpenTelemetry's other settings carry no credential.
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_SERVICE_NAME_HEADERS",
        ] {
            assert!(!is_secret_name(n), "{n}");
        }
    }

    #[test]
    fn git_location_variables_are_dropped() {
        let vars = [
            ("GIT_INDEX_FILE", "/repo/.git/index"),
            ("GIT_DIR", "/repo/.git"),
            ("GIT_CONFIG_KEY_0", "core.hooksPath"),
            ("GIT_CONFIG_VALUE_0", "/repo/hooks"),
            ("GIT_AUTHOR_NAME", "a"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let out = scrubbed_env(vars, &EnvSettings::default());
        assert_eq!(out, [("GIT_AUTHOR_NAME".to_string(), "a".to_string())]);
    }

    #[test]
    fn what_changes_how_bash_reads_a_script_is_dropped() {
        let vars = [
            ("BASH_ENV", "/tmp/x"),
            ("BASHOPTS", "extglob:dotglob"),
            ("BASH_FUNC_git%%", "() { rm -rf /; }"),
            ("HEAD_REF", "a[$(touch p)]"),
            ("TITLE", "fix [docs] for $(x)"),
            ("NOTE", "see [docs]"),
            ("LANG", "C.UTF-8"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let env = scrubbed_env(vars, &EnvSettings::default());
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["LANG", "NOTE"]);
    }

    #[test]
    fn pass_keeps_and_set_adds() {
        let vars = [("PATH", "/bin"), ("NPM_TOKEN", "n"), ("GITHUB_TOKEN", "g")]
            .map(|(k, v)| (k.to_string(), v.to_string()));
        let s = EnvSettings {
            pass: vec!["NPM_TOKEN".into()],
            set: [("CI".to_string(), "true".to_string())].into(),
            redact: Vec::new(),
            decoys: None,
        };
        let env = scrubbed_env(vars, &s);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["CI", "NPM_TOKEN", "PATH"]);
    }
}
