//! The path side of a rule (`Read(...)`, `Edit(...)`): matching a path, a
//! folder above it, or anything beneath a folder.
//!
//! Most path rules are plain names (`.env`, `secrets/**`, `.github`), and a
//! compiled glob costs tens of kilobytes: a policy of 10,000 rules would
//! hold hundreds of megabytes of regexes. So a pattern whose segments are
//! all literal (with `**` only first or last) is matched by comparing
//! segments; every other pattern is a glob. Both are linear in the path's
//! length, and both give the same answers (tested against each other).

use globset::GlobMatcher;

/// One segment of a path pattern.
#[derive(Debug, Clone)]
pub(crate) enum Segment {
    /// `**`: any number of segments.
    AnyDepth,
    Literal(String),
    Glob(GlobMatcher),
}

impl Segment {
    fn is_match(&self, part: &str) -> bool {
        match self {
            Segment::AnyDepth => true,
            Segment::Literal(l) => l == part,
            Segment::Glob(g) => g.is_match(part),
        }
    }
}

/// Could a path beneath the folder `parts` match `segs`? (The folder itself
/// and its ancestors are matched by the whole pattern.)
pub(crate) fn may_match_beneath(segs: &[Segment], parts: &[&str]) -> bool {
    let mut segs = segs;
    let mut parts = parts;
    loop {
        match (segs.split_first(), parts.split_first()) {
            (None, _) => return false,
            (Some((Segment::AnyDepth, _)), _) => return true,
            (Some(_), None) => return true,
            (Some((s, srest)), Some((p, prest))) => {
                if !s.is_match(p) {
                    return false;
                }
                segs = srest;
                parts = prest;
            }
        }
    }
}

/// A whole path pattern, compiled.
#[derive(Debug, Clone)]
pub(crate) enum PathMatcher {
    Glob {
        glob: GlobMatcher,
        /// The glob followed by `/**`: a path any of whose folders the glob
        /// matches, in one pass.
        beneath: GlobMatcher,
    },
    /// Literal segments, maybe after `**/` (at any depth) and before
    /// `/**` (everything inside, not the folder itself).
    Literal(LiteralPath),
}

/// A path pattern of literal segments: matching is a few string
/// comparisons, linear in the path.
#[derive(Debug, Clone)]
pub(crate) struct LiteralPath {
    /// The segments joined (`/` first when absolute), and that with a `/`
    /// after, before, and on both sides.
    joined: String,
    then_slash: String,
    slash_then: String,
    slashed: String,
    /// `**/` first: at any depth.
    leading_any: bool,
    /// `/**` last: everything inside, not the folder itself.
    trailing_any: bool,
}

impl LiteralPath {
    fn is_match(&self, path: &str) -> bool {
        match (self.leading_any, self.trailing_any) {
            (false, false) => path == self.joined,
            (false, true) => path.starts_with(self.then_slash.as_str()),
            (true, false) => path == self.joined || path.ends_with(self.slash_then.as_str()),
            (true, true) => {
                path.starts_with(self.then_slash.as_str()) || path.contains(self.slashed.as_str())
            }
        }
    }

    fn is_match_or_beneath(&self, path: &str) -> bool {
        let here = path.starts_with(self.then_slash.as_str());
        let deeper = self.leading_any && path.contains(self.slashed.as_str());
        let whole = !self.trailing_any
            && (path == self.joined
                || (self.leading_any && path.ends_with(self.slash_then.as_str())));
        here || deeper || whole
    }
}

/// True for a segment with no glob syntax.
fn is_literal(seg: &str) -> bool {
    !seg.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

impl PathMatcher {
    /// The literal form of `segments` (of an absolute pattern when
    /// `absolute`) when there is one.
    pub(crate) fn literal(segments: &[&str], absolute: bool) -> Option<Self> {
        let leading_any = segments.first() == Some(&"**");
        let trailing_any = segments.len() > 1 && segments.last() == Some(&"**");
        let start = usize::from(leading_any);
        let end = segments.len() - usize::from(trailing_any);
        let lits = segments.get(start..end)?;
        if lits.is_empty() || !lits.iter().all(|s| is_literal(s)) {
            return None;
        }
        let joined = format!("{}{}", if absolute { "/" } else { "" }, lits.join("/"));
        Some(PathMatcher::Literal(LiteralPath {
            then_slash: format!("{joined}/"),
            slash_then: format!("/{joined}"),
            slashed: format!("/{joined}/"),
            joined,
            leading_any,
            trailing_any,
        }))
    }

    /// The one path a literal matcher names from the root (not at any
    /// depth), and whether it names what is beneath that path (`/**`)
    /// rather than the path itself.
    pub(crate) fn anchored(&self) -> Option<(&str, bool)> {
        match self {
            PathMatcher::Literal(l) if !l.leading_any => Some((&l.joined, l.trailing_any)),
            _ => None,
        }
    }

    /// The path itself matches (glob semantics).
    pub(crate) fn is_match(&self, path: &str) -> bool {
        match self {
            PathMatcher::Glob { glob, .. } => glob.is_match(path),
            PathMatcher::Literal(l) => l.is_match(path),
        }
    }

    /// The path or a folder above it matches.
    pub(crate) fn is_match_or_beneath(&self, path: &str) -> bool {
        match self {
            PathMatcher::Glob { glob, beneath } => glob.is_match(path) || beneath.is_match(path),
            PathMatcher::Literal(l) => l.is_match_or_beneath(path),
        }
    }
}

/// A file name no glob meant for real files matches by accident: an allow
/// rule whose glob matches `FOLDER/CHILD` matches every name in the folder.
pub(crate) const CHILD: &str = "\u{1}";

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(p: &str) -> PathMatcher {
        let g = |p: &str| {
            globset::GlobBuilder::new(p)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .unwrap()
                .compile_matcher()
        };
        PathMatcher::Glob {
            glob: g(p),
            beneath: g(&format!("{p}/**")),
        }
    }

    /// The literal matcher answers as the glob does, on every pair.
    #[test]
    fn literal_segments_match_as_globs_do() {
        let patterns = [
            "**/.env",
            "secrets/**",
            ".github",
            "a/b",
            "**/a/b",
            "**/node_modules/**",
            "/tmp/**",
            "/etc/passwd",
        ];
        let paths = [
            ".env",
            "config/.env",
            ".env/x",
            "secrets",
            "secrets/k",
            "secrets/a/b",
            "xsecrets/k",
            ".github",
            ".github/workflows/ci.yml",
            "a/b",
            "a/b/c",
            "x/a/b",
            "x/a/b/c",
            "xa/b",
            "a",
            "node_modules",
            "x/node_modules",
            "x/node_modules/y",
            "/tmp",
            "/tmp/x",
            "/tmp/x/y",
            "/tmpx/y",
            "/etc/passwd",
            "/etc/passwd/x",
            "/etc",
        ];
        for p in patterns {
            let segs: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
            let lit = PathMatcher::literal(&segs, p.starts_with('/')).unwrap();
            let g = glob(p);
            for path in paths {
                if path.starts_with('/') != p.starts_with('/') {
                    continue;
                }
                assert_eq!(lit.is_match(path), g.is_match(path), "{p} {path}");
                assert_eq!(
                    lit.is_match_or_beneath(path),
                    g.is_match_or_beneath(path),
                    "{p} {path} (beneath)"
                );
            }
        }
        assert!(PathMatcher::literal(&["src", "*.rs"], false).is_none());
        assert!(PathMatcher::literal(&["a", "**", "b"], false).is_none());
    }
}
