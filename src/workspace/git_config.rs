//! The git configuration of a task's copy: the original's, less what would
//! run a program of the original or move the work tree, and less every
//! credential a checkout leaves in it.
//!
//! `actions/checkout` keeps the job's token in `.git/config` unless told
//! not to (`http.https://github.com/.extraheader = AUTHORIZATION: basic
//! <base64 of x-access-token:TOKEN>`), other setups write it into a
//! remote's URL (`https://x-access-token:TOKEN@github.com/…`) or name a
//! credential helper. A copy that kept them would hand the token to the
//! model through `cat .git/config`, `git config --list` or `git remote
//! -v`, and to every output that records what the model saw.
//!
//! How: git itself reads the original file (`git config --list -z`, one
//! process, includes not followed), so the entries are exactly the ones git
//! sees however the file is spelled (continuation lines, quoting, a key on
//! its section's line). The copy's file is then written from the entries
//! kept, in their order. What was removed is returned by key, never by
//! value, for the transcript; a key that itself holds user information
//! (`url.https://user:token@host/.insteadof`) is named without it.

use std::path::Path;
use std::process::{Command, Stdio};

/// Keys that run a program of the original, or point git at another work
/// tree; removed silently (they are no credential).
const UNSAFE_KEYS: &[&str] = &[
    "core.hookspath",
    "core.fsmonitor",
    "core.worktree",
    "core.bare",
    "extensions.worktreeconfig",
];

/// One entry of a git configuration file, as `git config --list` gives it:
/// the key with its section and name in lower case.
struct Entry {
    section: String,
    subsection: Option<String>,
    name: String,
    value: Option<String>,
}

impl Entry {
    fn parse(raw: &str) -> Option<Self> {
        let (key, value) = match raw.split_once('\n') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (raw, None),
        };
        // Section and name hold no dot; the subsection may.
        let (section, rest) = key.split_once('.')?;
        let (subsection, name) = match rest.rsplit_once('.') {
            Some((sub, name)) => (Some(sub.to_string()), name),
            None => (None, rest),
        };
        Some(Self {
            section: section.to_ascii_lowercase(),
            subsection,
            name: name.to_ascii_lowercase(),
            value,
        })
    }

    fn key(&self) -> String {
        match &self.subsection {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.name),
            None => format!("{}.{}", self.section, self.name),
        }
    }

    /// The key as the transcript may show it: user information removed.
    fn shown_key(&self) -> String {
        match &self.subsection {
            Some(sub) => format!(
                "{}.{}.{}",
                self.section,
                strip_userinfo(sub).unwrap_or_else(|| sub.clone()),
                self.name
            ),
            None => self.key(),
        }
    }
}

/// What becomes of one entry.
enum Verdict {
    Keep,
    /// Left out; recorded with this note when it is a credential.
    Drop(Option<&'static str>),
    /// Kept with this value instead; recorded with this note.
    Rewrite(String, &'static str),
}

/// `url` without the user information a password or token lives in:
/// `https://user:token@host/x` and `https://token@host/x` become
/// `https://host/x`; an `ssh://git@host` user without a password stays
/// (it names the account, not a secret). `None` when nothing changes.
pub fn strip_userinfo(url: &str) -> Option<String> {
    let scheme_end = url.find("://")?;
    let scheme = &url[..scheme_end];
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    let userinfo = &rest[..at];
    let web = scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https");
    if !web && !userinfo.contains(':') {
        return None;
    }
    Some(format!("{}{}", &url[..scheme_end + 3], &rest[at + 1..]))
}

/// Whether an include's `path` (relative to the original's git folder
/// `git_dir`) names a file inside the repository's work tree `top` but
/// outside its `.git`: only such an include can be followed from the copy.
fn include_inside(path: &str, git_dir: &Path, top: &Path) -> bool {
    if path.starts_with('~') {
        return false;
    }
    let p = Path::new(path);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        git_dir.join(p)
    };
    let full = runner_policy::normalize_lexically(&full);
    full.starts_with(top) && !full.starts_with(top.join(".git"))
}

fn judge(e: &Entry, git_dir: &Path, top: &Path) -> Verdict {
    let key = e.key().to_ascii_lowercase();
    if UNSAFE_KEYS.contains(&key.as_str()) {
        return Verdict::Drop(None);
    }
    if e.section == "credential" {
        return Verdict::Drop(Some("a credential helper or its settings"));
    }
    if e.section == "http" && matches!(e.name.as_str(), "extraheader" | "cookiefile") {
        return Verdict::Drop(Some(
            "an HTTP header or cookie file sent with every request",
        ));
    }
    if (e.section == "include" || e.section == "includeif") && e.name == "path" {
        let inside = e
            .value
            .as_deref()
            .is_some_and(|v| include_inside(v, git_dir, top));
        if !inside {
            return Verdict::Drop(Some("an include of a file outside the workspace"));
        }
    }
    if e.subsection
        .as_deref()
        .is_some_and(|s| strip_userinfo(s).is_some())
    {
        return Verdict::Drop(Some("a URL with user information in its key"));
    }
    if let Some(v) = &e.value
        && let Some(clean) = strip_userinfo(v)
    {
        return Verdict::Rewrite(clean, "user information removed from its URL");
    }
    Verdict::Keep
}

/// A value as the configuration file spells it: quoted, with `\`, `"`,
/// newlines and tabs escaped.
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The file's text for these entries, in their order.
fn render(entries: &[(Entry, Option<String>)]) -> String {
    let mut out = String::new();
    let mut current: Option<(&str, Option<&str>)> = None;
    for (e, value) in entries {
        let here = (e.section.as_str(), e.subsection.as_deref());
        if current != Some(here) {
            match &e.subsection {
                Some(sub) => {
                    let sub = sub.replace('\\', "\\\\").replace('"', "\\\"");
                    out.push_str(&format!("[{} \"{sub}\"]\n", e.section));
                }
                None => out.push_str(&format!("[{}]\n", e.section)),
            }
            current = Some(here);
        }
        match value {
            Some(v) => out.push_str(&format!("\t{} = {}\n", e.name, quoted(v))),
            None => out.push_str(&format!("\t{}\n", e.name)),
        }
    }
    out
}

/// Writes `dest` (the copy's `.git/config`) from `original` (the
/// repository's config; nothing is written when it does not exist), whose
/// git folder is `git_dir` in the work tree `top`. Returns what was
/// removed or changed because it holds a credential, one line each, by key.
/// `scratch` is a folder where git finds no repository to start in.
pub fn write_clean_config(
    original: &Path,
    dest: &Path,
    git_dir: &Path,
    top: &Path,
    scratch: &Path,
) -> std::io::Result<Vec<String>> {
    if !original.is_file() {
        return Ok(Vec::new());
    }
    // Run where git finds no repository (the ceiling stops its search):
    // git reads a repository's core.worktree as it starts, and a copied
    // one may name a folder that is not there.
    let out = Command::new("git")
        .current_dir(scratch)
        .env("GIT_CEILING_DIRECTORIES", scratch)
        .env_remove("GIT_DIR")
        .env_remove("GIT_CONFIG")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .args(["config", "--no-includes", "--list", "-z", "--file"])
        .arg(original)
        .output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "git could not read {}: {}",
            original.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for raw in text.split('\0').filter(|r| !r.is_empty()) {
        let Some(e) = Entry::parse(raw) else { continue };
        match judge(&e, git_dir, top) {
            Verdict::Keep => {
                let v = e.value.clone();
                kept.push((e, v));
            }
            Verdict::Drop(None) => {}
            Verdict::Drop(Some(why)) => removed.push(format!("{}: {why}", e.shown_key())),
            Verdict::Rewrite(v, why) => {
                removed.push(format!("{}: {why}", e.shown_key()));
                kept.push((e, Some(v)));
            }
        }
    }
    removed.dedup();
    std::fs::write(dest, render(&kept))?;
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_is_stripped_from_web_urls_and_passwords() {
        for (url, want) in [
            (
                "https://x-access-token:ghs_abc@github.com/o/r.git",
                Some("https://github.com/o/r.git"),
            ),
            (
                "https://TOKEN@github.com/o/r",
                Some("https://github.com/o/r"),
            ),
            ("http://u:p@h:8080/x@y", Some("http://h:8080/x@y")),
            ("ssh://git:pw@host/r", Some("ssh://host/r")),
            ("ssh://git@host/r", None),
            ("git@github.com:o/r.git", None),
            ("https://github.com/o/r", None),
            ("/srv/repo.git", None),
        ] {
            assert_eq!(strip_userinfo(url).as_deref(), want, "{url}");
        }
    }

    #[test]
    fn values_are_quoted_so_git_reads_them_back() {
        assert_eq!(quoted("a \"b\" \\c\nd"), "\"a \\\"b\\\" \\\\c\\nd\"");
    }

    #[test]
    fn include_paths_inside_the_work_tree_only() {
        let top = Path::new("/w");
        let git = Path::new("/w/.git");
        assert!(include_inside("../team.gitconfig", git, top));
        assert!(!include_inside("extra", git, top));
        assert!(!include_inside("~/.gitconfig", git, top));
        assert!(!include_inside("/etc/secrets", git, top));
        assert!(!include_inside("../../etc/x", git, top));
    }
}
