//! Policy analysis, as policy engines do it (Cedar's validator, OPA's
//! checks): what a rule says against what signatures can ever be.
//!
//! - **Never matches** (an error: `runner validate` fails on it): a `Bash`
//!   rule over a compound command (`Bash(git status && ls)`; a rule
//!   matches one simple command), over a builtin that is part of the
//!   script (`Bash(cd:*)`: such a builtin has no signature), a path with
//!   `.` or `..` segments (signatures are normalised), `Mcp(...)` without
//!   `server/tool`, `Memory(...)` with a specifier.
//! - **Shadowed** (a warning): a rule that an earlier rule of the same kind
//!   already covers, so it decides nothing.
//! - **Overruled** (a warning): an allow rule a deny rule of the same
//!   policy covers entirely, so it never allows anything.
//! - **Unanchored** (a warning): a deny path without `/` (`Read(.env)`)
//!   matches that name in every folder, so every recursive read or write
//!   of the workspace is denied with it; `./.env` names the root one, and
//!   `**/.env` says every folder on purpose.
//! - **Any inline code** (a warning): an allow rule that ends in an
//!   interpreter's inline-code option (`Bash(python3 -c:*)`, `Bash(perl
//!   -e *)`) allows whatever code it is given, which the policy cannot see
//!   into (the interpreters and their options are the gate's own table,
//!   `programs::INTERPRETER_TABLE`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::model::PolicyFile;
use crate::shell::SCRIPT_STEPS;
use crate::words::split_words;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The rule can never match: a mistake.
    Error,
    /// The rule does less than it seems to.
    Warning,
}

/// One finding about one rule, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintFinding {
    /// The policy file.
    pub file: PathBuf,
    /// 1-based line and column of the rule.
    pub line: u64,
    /// 1-based column of the rule.
    pub column: u64,
    /// Error or warning.
    pub severity: Severity,
    /// The rule, as written (`deny Read(.env)`).
    pub rule: String,
    /// What is wrong, and what to write instead.
    pub message: String,
}

impl std::fmt::Display for LintFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}:{}:{}: {kind}: `{}`: {}",
            self.file.display(),
            self.line,
            self.column,
            self.rule,
            self.message
        )
    }
}

/// Words that join simple commands: a rule holding one names several.
const OPERATORS: &[&str] = &["&&", "||", ";", "|", "|&", "&", ";;"];

struct Written {
    allow: bool,
    /// Whether its entry gives a `reason:`.
    reasoned: bool,
    text: String,
    family: String,
    spec: Option<String>,
    line: u64,
    column: u64,
}

/// The findings about a parsed policy file's rules, in file order.
pub fn lint_policy(pf: &PolicyFile, file: &Path) -> Vec<LintFinding> {
    let mut rules: Vec<Written> = Vec::new();
    for entry in &pf.rules {
        for (allow, list) in [(true, &entry.value.allow), (false, &entry.value.deny)] {
            for p in list.iter().flatten() {
                let text = p.value.trim().to_string();
                let (family, spec) = match text.find('(') {
                    Some(i) if text.ends_with(')') => (
                        text[..i].trim().to_string(),
                        Some(text[i + 1..text.len() - 1].trim().to_string()),
                    ),
                    _ => (text.clone(), None),
                };
                let spec = spec.filter(|s| !s.is_empty() && s != "*");
                rules.push(Written {
                    allow,
                    reasoned: entry.value.reason.is_some(),
                    text,
                    family,
                    spec,
                    line: p.referenced.line(),
                    column: p.referenced.column(),
                });
            }
        }
    }
    // Which rules may cover which: each rule is filed under the one key
    // that says what it covers, and each rule looks up only the keys that
    // could cover it, so a policy of 20,000 rules is linted in one pass
    // instead of comparing every pair.
    let mut by_key: HashMap<(bool, String), Vec<usize>> = HashMap::new();
    for (i, r) in rules.iter().enumerate() {
        if let Some(k) = cover_key(r) {
            by_key.entry((r.allow, k)).or_default().push(i);
        }
    }
    let covering = |r: &Written, allow: bool| -> Vec<usize> {
        let mut found: Vec<usize> = candidate_keys(r)
            .into_iter()
            .filter_map(|k| by_key.get(&(allow, k)))
            .flatten()
            .copied()
            .filter(|&j| covers(&rules[j], r))
            .collect();
        found.sort_unstable();
        found
    };
    let mut out = Vec::new();
    for (i, r) in rules.iter().enumerate() {
        let verb = if r.allow { "allow" } else { "deny" };
        let mut find = |severity, message: String| {
            out.push(LintFinding {
                file: file.to_path_buf(),
                line: r.line,
                column: r.column,
                severity,
                rule: format!("{verb} {}", r.text),
                message,
            })
        };
        if let Some((why, whole_script)) = never_matches(r) {
            // An allow rule naming a whole script by its exact text is how
            // a script the analysis cannot see into is allowed (it is one
            // signature, its text): no finding. An allow rule for a builtin
            // that is now part of the script, or for a compound prefix, is
            // only needless; a deny rule that never matches is a hole.
            let exact = !r.spec.as_deref().unwrap_or("").ends_with(":*");
            if r.allow && whole_script && exact {
                continue;
            }
            let severity = if r.allow {
                Severity::Warning
            } else {
                Severity::Error
            };
            find(severity, why);
            continue;
        }
        let earlier = covering(r, r.allow).into_iter().find(|&j| j < i);
        if let Some(earlier) = earlier.map(|j| &rules[j]) {
            find(
                Severity::Warning,
                format!(
                    "shadowed by `{verb} {}` (line {}), which already covers every call it matches",
                    earlier.text, earlier.line
                ),
            );
        } else if r.allow
            && let Some(deny) = covering(r, false).first().map(|&j| &rules[j])
        {
            find(
                Severity::Warning,
                format!(
                    "never allows anything: `deny {}` (line {}) covers every call it matches, and a deny wins",
                    deny.text, deny.line
                ),
            );
        }
        if let Some(code) = inline_code_allowed(r) {
            find(
                Severity::Warning,
                format!(
                    "allows any code given to `{code}`: inline code runs what the policy cannot see, so this allows whatever it reads, writes or starts wherever a deny rule has no backstop (the exec wall decides what it starts where it holds)"
                ),
            );
        }
        if let Some(file) = credential_named(r) {
            find(
                Severity::Warning,
                format!(
                    "names `{file}`, which the built-in credentials layer (`{}`) keeps from the agent; an allow gives such a file back only with a `reason:` in its entry",
                    crate::CREDENTIALS_LAYER
                ),
            );
        }
        if !r.allow
            && matches!(r.family.as_str(), "Read" | "Edit")
            && let Some(spec) = &r.spec
            && !spec.contains('/')
            && !spec.contains(['*', '?', '['])
        {
            find(
                Severity::Warning,
                format!(
                    "`{spec}` matches in every folder (`a/b/{spec}` too), so every recursive read or write of the workspace is denied with it; write `./{spec}` for the one at the root, or `**/{spec}` to mean every folder"
                ),
            );
        }
    }
    out
}

/// The interpreter and its inline-code option an allow rule names with
/// any code after it (`Bash(python3 -c:*)`, `Bash(perl -e *)`), from the
/// one table the gate reads too (`programs::INTERPRETER_TABLE`).
fn inline_code_allowed(r: &Written) -> Option<String> {
    if !r.allow || r.family != "Bash" {
        return None;
    }
    let spec = r.spec.as_deref()?;
    let open = spec
        .strip_suffix(":*")
        .or_else(|| spec.strip_suffix(" *"))?;
    let words = split_words(open);
    let (program, args) = words.split_first()?;
    let program = crate::words::base_name(program);
    let word = crate::programs::inline_code_word(program, args)?;
    (args.last().map(String::as_str) == Some(word)).then(|| format!("{program} {word}"))
}

/// The credential file (as the built-in layer names it) that an allow
/// rule without a reason names explicitly: it does not give it back.
fn credential_named(r: &Written) -> Option<&'static str> {
    if !r.allow || r.reasoned || r.family != "Read" {
        return None;
    }
    let pattern = crate::pattern::Pattern::parse(&r.text).ok()?;
    crate::credential_file_named(&pattern)
}

/// Why a rule can never match, when it cannot.
/// Why a rule never matches a signature the analysis makes, and whether it
/// could still match a script the analysis cannot see into by its exact
/// text (an opaque script is one signature, its whole text).
fn never_matches(r: &Written) -> Option<(String, bool)> {
    let spec = r.spec.as_deref()?;
    let plain = |why: String| Some((why, false));
    match r.family.as_str() {
        "Bash" => {
            let words = split_words(spec.strip_suffix(":*").unwrap_or(spec));
            if let Some(op) = words.iter().find(|w| OPERATORS.contains(&w.as_str())) {
                return Some((
                    format!(
                        "a rule matches one simple command, and `{op}` joins several: write one rule per command"
                    ),
                    true,
                ));
            }
            if words
                .iter()
                .any(|w| w.starts_with('>') || w.starts_with('<') || w.contains("$("))
            {
                return Some((
                    "a rule matches a command's words; redirections and substitutions are checked apart (`Edit(FILE)`, their own commands)".into(),
                    true,
                ));
            }
            let first = words.first().map(String::as_str).unwrap_or("");
            if SCRIPT_STEPS.contains(&first) {
                return plain(format!(
                    "`{first}` is part of the script, not a program: no call has this signature"
                ));
            }
            None
        }
        "Read" | "Edit" => {
            let body = spec.strip_prefix("./").unwrap_or(spec);
            if body
                .split('/')
                .any(|s| s == ".." || (s == "." && body != "."))
            {
                return plain(
                    "signatures name paths with `.` and `..` resolved: this one never appears"
                        .into(),
                );
            }
            None
        }
        "Mcp" if !spec.contains(['/', '*', '?', '[']) => plain(format!(
            "MCP signatures are `server/tool`: write `Mcp({spec}/*)` for every tool of `{spec}`"
        )),
        "Memory" => plain("`Memory` takes no specifier: write `Memory`".into()),
        _ => None,
    }
}

/// Most words of a `Bash` rule whose prefixes are looked up as covering
/// rules (a longer prefix rule is not reported as shadowing).
const MAX_PREFIX_WORDS: usize = 32;

/// The key under which a rule is found by the rules it may cover.
fn cover_key(a: &Written) -> Option<String> {
    let Some(sa) = &a.spec else {
        return Some(format!("{}()", a.family));
    };
    let key = match a.family.as_str() {
        "Bash" => match sa.strip_suffix(":*").or_else(|| sa.strip_suffix(" *")) {
            Some(prefix) => format!("prefix {}", split_words(prefix).join(" ")),
            None => format!("= {sa}"),
        },
        "Read" | "Edit" => format!(
            "path {}",
            sa.strip_suffix("/**")
                .unwrap_or(sa)
                .trim_start_matches("./")
        ),
        _ => format!("= {sa}"),
    };
    Some(format!("{}({key})", a.family))
}

/// The keys of the rules that may cover `b`: the family-wide one, the same
/// text, each prefix of its words (`Bash`), each folder above it (paths).
fn candidate_keys(b: &Written) -> Vec<String> {
    let f = &b.family;
    let mut keys = vec![format!("{f}()")];
    let Some(sb) = &b.spec else {
        return keys;
    };
    keys.push(format!("{f}(= {sb})"));
    match f.as_str() {
        "Bash" => {
            let words = split_words(sb.strip_suffix(":*").unwrap_or(sb));
            for n in 1..=words.len().min(MAX_PREFIX_WORDS) {
                keys.push(format!("{f}(prefix {})", words[..n].join(" ")));
            }
        }
        "Read" | "Edit" => {
            let path = sb.trim_start_matches("./");
            let parts: Vec<&str> = path.split('/').collect();
            for n in 1..=parts.len() {
                keys.push(format!("{f}(path {})", parts[..n].join("/")));
            }
        }
        _ => {}
    }
    keys
}

/// Whether every call `b` matches, `a` matches too (same family). Only
/// what can be told from the text: equal rules, a family-wide rule, a
/// `Bash` prefix rule over a longer one, a path folder over what is
/// beneath it.
fn covers(a: &Written, b: &Written) -> bool {
    if a.family != b.family {
        return false;
    }
    let (Some(sa), Some(sb)) = (&a.spec, &b.spec) else {
        // `Family` alone covers everything of the family.
        return a.spec.is_none();
    };
    if sa == sb {
        return true;
    }
    match a.family.as_str() {
        "Bash" => {
            let Some(prefix) = sa.strip_suffix(":*").or_else(|| sa.strip_suffix(" *")) else {
                return false;
            };
            let pw = split_words(prefix);
            let bw = split_words(sb.strip_suffix(":*").unwrap_or(sb));
            !pw.iter().any(|w| w.contains(['*', '?', '[']))
                && bw.len() >= pw.len()
                && bw[..pw.len()] == pw[..]
        }
        "Read" | "Edit" => {
            // gitignore's rule: a `/` before the end anchors at the root.
            let anchored = |s: &str| s.starts_with("./") || s.trim_end_matches('/').contains('/');
            if anchored(sa) && !anchored(sb) {
                return false;
            }
            let folder = sa.strip_suffix("/**").unwrap_or(sa);
            let plain = |s: &str| !s.contains(['*', '?', '[', '{']);
            let (folder, target) = (
                folder.strip_prefix("./").unwrap_or(folder),
                sb.strip_prefix("./").unwrap_or(sb),
            );
            plain(folder) && (target == folder || target.starts_with(&format!("{folder}/")))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lint(yaml: &str) -> Vec<String> {
        let pf: PolicyFile = serde_saphyr::from_str(yaml).unwrap();
        lint_policy(&pf, Path::new("p.yaml"))
            .iter()
            .map(|f| f.to_string())
            .collect()
    }

    #[test]
    fn findings() {
        let out = lint(
            "rules:\n  - allow: [\"Bash(git:*)\", \"Bash(git status)\", \"Bash(git push --force:*)\", \"Edit(src/**)\", \"Edit(src/a.rs)\"]\n  - deny: [\"Bash(git status && ls)\", \"Read(.env)\", \"Bash(cd:*)\", \"Read(src/../.env)\", \"Mcp(fs)\", \"Bash(git push:*)\", \"Read(./secrets)\"]\n",
        );
        let has = |s: &str| out.iter().any(|f| f.contains(s));
        assert!(has("p.yaml:2:"), "{out:#?}");
        assert!(
            has("`allow Bash(git status)`: shadowed by `allow Bash(git:*)`"),
            "{out:#?}"
        );
        assert!(
            has("`allow Edit(src/a.rs)`: shadowed by `allow Edit(src/**)`"),
            "{out:#?}"
        );
        assert!(
            has("`deny Bash(git status && ls)`: a rule matches one simple command"),
            "{out:#?}"
        );
        assert!(
            has("`deny Read(.env)`: `.env` matches in every folder"),
            "{out:#?}"
        );
        assert!(
            has("`deny Bash(cd:*)`: `cd` is part of the script"),
            "{out:#?}"
        );
        assert!(
            has("`deny Read(src/../.env)`: signatures name paths"),
            "{out:#?}"
        );
        assert!(has("`deny Mcp(fs)`: MCP signatures"), "{out:#?}");
        // `allow Bash(git push --force:*)` is shadowed by `Bash(git:*)` first.
        assert!(!has("`deny Read(./secrets)`"), "{out:#?}");
        let out = lint(
            "rules:\n  - allow: [\"Bash(git push --force:*)\"]\n  - deny: [\"Bash(git push:*)\"]\n",
        );
        assert!(
            out[0].contains("never allows anything: `deny Bash(git push:*)` (line 3)"),
            "{out:#?}"
        );
        assert!(lint("rules:\n  - allow: [\"Bash(cargo test:*)\"]\n  - deny: [\"Read(./.env)\", \"Edit(.github/**)\"]\n").is_empty());
    }

    /// An allow rule naming a whole script by its exact text is how an
    /// opaque script is allowed: no finding. With `:*`, or as a deny rule,
    /// it is what it seems not to be: a warning for the allow (it only
    /// allows less), an error for the deny (a hole).
    #[test]
    fn a_whole_script_by_its_text() {
        assert!(lint("rules:\n  - allow: [\"Bash(python3 -c 'x' && make)\"]\n").is_empty());
        // A prefix rule ending in an interpreter's inline-code option
        // allows any code; one naming the code exactly, or a script, does
        // not.
        for rule in [
            "Bash(python3 -c:*)",
            "Bash(perl -ne:*)",
            "Bash(node --eval *)",
            "Bash(deno eval:*)",
        ] {
            let found = lint(&format!("rules:\n  - allow: [\"{rule}\"]\n"));
            assert!(
                found.iter().any(|f| f.contains("allows any code")),
                "{rule}: {found:?}"
            );
        }
        for rule in [
            "Bash(python3 -c 'print(1)')",
            "Bash(python3 manage.py:*)",
            "Bash(perl:*)",
        ] {
            let found = lint(&format!("rules:\n  - allow: [\"{rule}\"]\n"));
            assert!(
                !found.iter().any(|f| f.contains("allows any code")),
                "{rule}: {found:?}"
            );
        }
        let out = lint("rules:\n  - allow: [\"Bash(a && b:*)\"]\n  - deny: [\"Bash(c > d)\"]\n");
        assert!(
            out[0].contains("warning: `allow Bash(a && b:*)`"),
            "{out:#?}"
        );
        assert!(out[1].contains("error: `deny Bash(c > d)`"), "{out:#?}");
    }
}
