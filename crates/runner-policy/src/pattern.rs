//! Rule patterns: `Family` or `Family(specifier)`, compiled for matching.
//!
//! Paths follow gitignore rules anchored at the workspace root: a pattern
//! with an inner `/` or a leading `./` is anchored, one without matches at any depth, `*` stays
//! inside a segment and `**` crosses segments (globset with
//! `literal_separator(true)`), and a pattern matching a folder matches
//! everything inside it. Absolute patterns name absolute paths only.
//! Bash patterns match word by word: `*` alone is any run of words, globs in
//! a word match inside that word, `prefix:*` is `prefix *`.

use globset::{GlobBuilder, GlobMatcher};

use crate::host::HostPattern;
use crate::path_pattern::{CHILD, PathMatcher, Segment, may_match_beneath};
use crate::signature::{Family, Signature};
use crate::url_pattern::{UrlPath, split_rule};
use crate::word_pattern::{SplitWords, WordPat, is_bracket_class, match_command};
use crate::words::{base_name, split_words};

/// Why a rule pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Nothing was written.
    #[error("empty rule")]
    Empty,
    /// The name before `(` is not a family.
    #[error(
        "unknown family `{0}` (expected one of Read, Edit, Bash, Memory, Mcp, Tool, Fetch, Agent)"
    )]
    UnknownFamily(String),
    /// Parentheses do not pair up.
    #[error("unbalanced parentheses in `{0}`")]
    Unbalanced(String),
    /// A glob in the specifier is invalid.
    #[error("invalid glob in `{rule}`: {message}")]
    Glob {
        /// The rule as written.
        rule: String,
        /// What is wrong with its glob.
        message: String,
    },
    /// The rule is past a size limit (length, path segments, `*` words).
    #[error("rule too large: {0}")]
    TooLarge(String),
}

/// Longest rule text: an exact rule may name a whole script
/// ([`crate::shell::MAX_SCRIPT_CHARS`]).
pub const MAX_RULE_CHARS: usize = 12_000;
/// Most segments of a path rule, and most characters of one.
pub const MAX_PATH_SEGMENTS: usize = 64;
/// Longest path rule.
pub const MAX_PATH_RULE_CHARS: usize = 4_096;

#[derive(Debug, Clone)]
enum Spec {
    /// `Family` or `Family(*)`.
    All,
    Path {
        matcher: PathMatcher,
        /// The glob one segment at a time, to tell whether any path beneath
        /// a folder could match.
        segments: Vec<Segment>,
        absolute: bool,
        names_git: bool,
    },
    /// The words as written (for allow rules) and with the program by its
    /// base name (for deny rules: `/bin/rm` is `rm`).
    Words {
        as_written: Vec<WordPat>,
        by_base_name: Vec<WordPat>,
    },
    Name(GlobMatcher),
    /// `Fetch(host[:port][/path])`.
    Url {
        host: HostPattern,
        path: Option<UrlPath>,
    },
}

/// A compiled rule pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as written, trimmed.
    pub text: String,
    /// The family it matches.
    pub family: Family,
    /// The specifier as written, for exact matches of opaque signatures.
    raw_spec: Option<String>,
    spec: Spec,
}

fn glob(rule: &str, pattern: &str, literal_separator: bool) -> Result<GlobMatcher, PatternError> {
    // globset has panicked on pathological patterns: a panic is a load
    // error, never an abort.
    let built = std::panic::catch_unwind(|| {
        GlobBuilder::new(pattern)
            .literal_separator(literal_separator)
            .backslash_escape(true)
            .build()
            .map(|g| g.compile_matcher())
    });
    match built {
        Ok(Ok(m)) => Ok(m),
        Ok(Err(e)) => Err(PatternError::Glob {
            rule: rule.to_string(),
            message: e.kind().to_string(),
        }),
        Err(_) => Err(PatternError::Glob {
            rule: rule.to_string(),
            message: "the glob could not be compiled".into(),
        }),
    }
}

impl Pattern {
    /// Compiles a pattern such as `Bash(cargo test:*)` or `Edit(src/**)`.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(PatternError::Empty);
        }
        if t.len() > MAX_RULE_CHARS {
            return Err(PatternError::TooLarge(format!(
                "{} characters (at most {MAX_RULE_CHARS})",
                t.len()
            )));
        }
        let (fam, spec) = match t.find('(') {
            None => {
                if t.contains(')') {
                    return Err(PatternError::Unbalanced(t.into()));
                }
                (t, None)
            }
            Some(i) => {
                if !t.ends_with(')') {
                    return Err(PatternError::Unbalanced(t.into()));
                }
                (&t[..i], Some(&t[i + 1..t.len() - 1]))
            }
        };
        let family =
            Family::parse(fam.trim()).ok_or_else(|| PatternError::UnknownFamily(fam.into()))?;
        if let Some(s) = spec {
            let mut depth = 0i32;
            for c in s.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                if depth < 0 {
                    return Err(PatternError::Unbalanced(t.into()));
                }
            }
            if depth != 0 && family != Family::Bash {
                return Err(PatternError::Unbalanced(t.into()));
            }
        }
        let compiled = match spec.map(str::trim) {
            None | Some("*") | Some("") => Spec::All,
            Some(s) => match family {
                Family::Read | Family::Edit => {
                    if s.len() > MAX_PATH_RULE_CHARS {
                        return Err(PatternError::TooLarge(format!(
                            "a path of {} characters (at most {MAX_PATH_RULE_CHARS})",
                            s.len()
                        )));
                    }
                    if s.split('/').count() > MAX_PATH_SEGMENTS {
                        return Err(PatternError::TooLarge(format!(
                            "a path of more than {MAX_PATH_SEGMENTS} segments"
                        )));
                    }
                    let absolute = s.starts_with('/');
                    // `./name` anchors at the root, as `/name` does in gitignore.
                    let body = s.strip_prefix("./").unwrap_or(s);
                    let body = body.strip_suffix('/').unwrap_or(body);
                    let anchored = absolute || body.contains('/') || s.starts_with("./");
                    let full = if anchored {
                        body.to_string()
                    } else {
                        format!("**/{body}")
                    };
                    let parts: Vec<&str> = full.split('/').filter(|s| !s.is_empty()).collect();
                    let mut segments = Vec::new();
                    for seg in &parts {
                        segments.push(if *seg == "**" {
                            Segment::AnyDepth
                        } else if seg.contains(['*', '?', '[', ']', '{', '}', '\\']) {
                            Segment::Glob(glob(t, seg, true)?)
                        } else {
                            Segment::Literal(seg.to_string())
                        });
                    }
                    let matcher = match PathMatcher::literal(&parts, absolute) {
                        Some(m) => m,
                        None => PathMatcher::Glob {
                            glob: glob(t, &full, true)?,
                            beneath: glob(t, &format!("{full}/**"), true)?,
                        },
                    };
                    Spec::Path {
                        matcher,
                        segments,
                        absolute,
                        names_git: body.split('/').any(|seg| seg == ".git"),
                    }
                }
                Family::Bash => {
                    let s = match s.strip_suffix(":*") {
                        Some(prefix) => format!("{prefix} *"),
                        None => s.to_string(),
                    };
                    let mut words = Vec::new();
                    for w in split_words(&s) {
                        words.push(if w == "*" {
                            WordPat::Any
                        } else if w.contains(['*', '?']) || is_bracket_class(&w) {
                            WordPat::Glob(glob(t, &w, false)?)
                        } else {
                            // `[`, `[[`, `]`: the test builtin's words.
                            WordPat::Literal(w)
                        });
                    }
                    let by_base_name = words
                        .iter()
                        .enumerate()
                        .map(|(i, p)| match p {
                            WordPat::Literal(l) if i == 0 => {
                                WordPat::Literal(base_name(l).to_string())
                            }
                            other => other.clone(),
                        })
                        .collect();
                    Spec::Words {
                        as_written: words,
                        by_base_name,
                    }
                }
                Family::Mcp | Family::Tool | Family::Memory | Family::Agent => {
                    Spec::Name(glob(t, s, false)?)
                }
                Family::Fetch => {
                    let (host, path) = split_rule(s);
                    let host = HostPattern::parse(host).map_err(|e| PatternError::Glob {
                        rule: t.to_string(),
                        message: e.to_string(),
                    })?;
                    let path = match path.trim_end_matches('/') {
                        "" | "**" => None,
                        p if p.contains(['*', '?', '[', '{']) => {
                            Some(UrlPath::Glob(glob(t, p, true)?, p.ends_with("/**")))
                        }
                        p => Some(UrlPath::Literal(p.to_string())),
                    };
                    Spec::Url { host, path }
                }
            },
        };
        Ok(Self {
            text: t.to_string(),
            family,
            raw_spec: spec.map(|s| s.trim().to_string()),
            spec: compiled,
        })
    }

    /// True for a pattern that names no file or command in particular:
    /// `Family`, `Family(*)`, `Family(**)` (what the built-in credentials
    /// layer does not take as an explicit allow).
    pub fn is_catch_all(&self) -> bool {
        matches!(self.spec, Spec::All)
            || matches!(
                self.raw_spec.as_deref().map(str::trim),
                Some("**" | "./**" | "**/*" | "./**/*" | "/**")
            )
    }

    /// Does this pattern match the signature? `for_deny` compares programs
    /// by base name; an allow rule matches the program only as written.
    pub fn matches(&self, sig: &Signature, for_deny: bool) -> bool {
        self.matches_subject(&Subject::new(sig), for_deny)
    }

    /// [`Pattern::matches`] for a signature matched against many rules,
    /// whose command is split into words once for all of them.
    pub(crate) fn matches_subject(&self, subject: &Subject, for_deny: bool) -> bool {
        let sig = subject.sig;
        if sig.family != self.family {
            return false;
        }
        if sig.opaque.is_some() {
            // Only a rule naming the whole text allows an opaque signature;
            // a deny rule may still match it word by word (below).
            if !for_deny {
                return self.raw_spec.as_deref() == sig.specifier.as_deref();
            }
        }
        let spec = sig.specifier.as_deref().unwrap_or("");
        match &self.spec {
            Spec::All => true,
            Spec::Path {
                matcher,
                segments,
                absolute,
                ..
            } => {
                if spec.starts_with('/') != *absolute {
                    return false;
                }
                if sig.tree {
                    let inside = if spec == "." {
                        CHILD.to_string()
                    } else {
                        format!("{}/{CHILD}", spec.trim_end_matches('/'))
                    };
                    if for_deny {
                        // Denied when any path beneath could match.
                        let parts: Vec<&str> = spec
                            .split('/')
                            .filter(|p| !p.is_empty() && *p != ".")
                            .collect();
                        if may_match_beneath(segments, &parts) {
                            return true;
                        }
                    } else if !matcher.is_match(&inside) {
                        // Allowed only when everything beneath is: the
                        // folder itself, an ancestor, or any child of it.
                        return self.matches(&Signature::new(sig.family, spec), false);
                    } else {
                        return true;
                    }
                }
                // The path itself or any folder above it.
                matcher.is_match_or_beneath(spec)
            }
            Spec::Words {
                as_written,
                by_base_name,
            } => match_command(
                if for_deny { by_base_name } else { as_written },
                spec,
                for_deny,
                &subject.words,
            ),
            Spec::Name(g) => g.is_match(spec),
            Spec::Url { host, path } => crate::url_pattern::matches(host, path.as_ref(), spec),
        }
    }

    /// The one workspace-relative path a `Read`/`Edit` pattern names, and
    /// whether it names what is beneath it (`.github/**`) rather than the
    /// path itself (`./Cargo.lock`). None for a pattern that matches at any
    /// depth (`Cargo.lock`, `**/.env`), a glob (`src/*.rs`) or an absolute
    /// path: what a sandbox can wall off by a path prefix.
    pub fn fixed_path(&self) -> Option<(&str, bool)> {
        match &self.spec {
            Spec::Path {
                matcher,
                absolute: false,
                ..
            } => matcher.anchored(),
            _ => None,
        }
    }

    /// The program a `Bash` pattern names by its first word, by its base
    /// name: `git` for `Bash(git push:*)` and `Bash(/usr/bin/git:*)`. None
    /// when that word is a glob (`Bash(git*:*)`), for `Bash(*)`, and for
    /// other families.
    pub fn program(&self) -> Option<&str> {
        match &self.spec {
            Spec::Words { by_base_name, .. } => match by_base_name.first() {
                Some(WordPat::Literal(p)) if !p.is_empty() => Some(p),
                _ => None,
            },
            _ => None,
        }
    }

    /// True for a `Bash` pattern that denies its program whatever the
    /// arguments (`Bash(curl:*)`); `Bash(curl)` names `curl` alone, with
    /// no argument.
    pub fn names_program_whole(&self) -> bool {
        match &self.spec {
            Spec::Words { by_base_name, .. } => {
                self.program().is_some()
                    && by_base_name.len() > 1
                    && by_base_name[1..].iter().all(|w| matches!(w, WordPat::Any))
            }
            _ => false,
        }
    }

    /// True for path patterns that name `.git` (needed to write there).
    pub fn names_git(&self) -> bool {
        matches!(
            self.spec,
            Spec::Path {
                names_git: true,
                ..
            }
        )
    }

    /// True for `Fetch` patterns that name `ip` by address or network:
    /// what may reach a private address (see [`crate::host::is_private`]).
    pub fn names_address(&self, ip: std::net::IpAddr, port: u16) -> bool {
        matches!(&self.spec, Spec::Url { host, .. } if host.names_address(ip, port))
    }

    /// True for absolute path patterns (needed for paths outside).
    pub fn is_absolute_path(&self) -> bool {
        matches!(self.spec, Spec::Path { absolute: true, .. })
    }
}

/// A signature about to be matched against a layer's rules: its command
/// is split into words at most once however many rules there are.
pub(crate) struct Subject<'a> {
    pub(crate) sig: &'a Signature,
    words: SplitWords,
}

impl<'a> Subject<'a> {
    pub(crate) fn new(sig: &'a Signature) -> Self {
        Subject {
            sig,
            words: SplitWords::default(),
        }
    }
}

#[cfg(test)]
mod tests;
