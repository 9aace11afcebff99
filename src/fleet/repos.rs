//! `--repos FILE`: one repository a line, a git URL (`https://`, `ssh://`,
//! `git@host:path`, `file://`) or a local path, with an optional `@REF`
//! (a branch, tag or commit). `#` starts a comment; blank lines are
//! skipped. Every mistake is reported with its `file:line`, and the same
//! repository listed twice names both lines.

use std::path::{Path, PathBuf};

use runner_policy::ConfigError;

/// One repository of the fleet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// As written (without its `@REF`).
    pub url: String,
    /// The branch, tag or commit; none: the remote's default branch.
    pub git_ref: Option<String>,
    /// Its line in the list.
    pub line: u64,
    /// Its folder under the output folder and the cache: readable, unique
    /// and stable (the URL's last two parts and a hash of the whole).
    pub folder: String,
}

impl Repo {
    /// `URL` or `URL@REF`, as listed.
    pub fn spec(&self) -> String {
        match &self.git_ref {
            Some(r) => format!("{}@{r}", self.url),
            None => self.url.clone(),
        }
    }
}

/// Reads the list at `path`; every error of the file at once.
pub fn load(path: &Path) -> Result<Vec<Repo>, Vec<ConfigError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::new(
            path,
            0,
            0,
            format!("--repos: cannot read it: {e}"),
        )]
    })?;
    parse(path, &text)
}

/// The list in `text` (read from `path`, for errors).
pub fn parse(path: &Path, text: &str) -> Result<Vec<Repo>, Vec<ConfigError>> {
    let mut repos: Vec<Repo> = Vec::new();
    let mut errors = Vec::new();
    let mut seen: std::collections::HashMap<String, u64> = Default::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let entry = raw.split('#').next().unwrap_or_default().trim();
        if entry.is_empty() {
            continue;
        }
        let err = |m: String| ConfigError::new(path, line, 1, m);
        if entry.split_whitespace().count() > 1 {
            errors.push(err(format!(
                "`{entry}`: one repository a line (a URL or a path, and an optional @REF)"
            )));
            continue;
        }
        let (url, git_ref) = split_ref(entry);
        if url.is_empty() || git_ref.is_some_and(|r| r.is_empty() || r.starts_with('-')) {
            errors.push(err(format!(
                "`{entry}`: expected URL or URL@REF (a branch, tag or commit)"
            )));
            continue;
        }
        if url.starts_with('-') {
            errors.push(err(format!(
                "`{entry}`: a repository cannot start with `-`"
            )));
            continue;
        }
        // One lookup a line: a list of thousands stays linear.
        if let Some(first) = seen.get(&normal(url)) {
            errors.push(err(format!(
                "`{url}` is listed twice: lines {first} and {line}"
            )));
            continue;
        }
        seen.insert(normal(url), line);
        repos.push(Repo {
            url: url.to_string(),
            git_ref: git_ref.map(str::to_string),
            line,
            folder: folder_of(url),
        });
    }
    if errors.is_empty() && repos.is_empty() {
        errors.push(ConfigError::new(
            path,
            0,
            0,
            "--repos: no repository listed",
        ));
    }
    if errors.is_empty() {
        Ok(repos)
    } else {
        Err(errors)
    }
}

/// `URL@REF` split at the `@` that starts the ref: not an ssh user's
/// (`git@host:org/repo`), which comes before the host.
fn split_ref(entry: &str) -> (&str, Option<&str>) {
    // The part after the scheme or the ssh user's host.
    let tail_from = entry
        .find("://")
        .map(|i| i + 3)
        .or_else(|| {
            let colon = entry.find(':')?;
            entry[..colon].contains('@').then_some(colon)
        })
        .unwrap_or(0);
    match entry[tail_from..].rfind('@') {
        Some(i) => {
            let at = tail_from + i;
            // `https://user@host/...`: an `@` before the first `/` after
            // the scheme is the user's.
            let first_slash = entry[tail_from..].find('/').map(|j| tail_from + j);
            if first_slash.is_some_and(|s| at < s) {
                (entry, None)
            } else {
                (&entry[..at], Some(&entry[at + 1..]))
            }
        }
        None => (entry, None),
    }
}

/// The repository a URL names, for finding the same one twice: no
/// trailing `/` or `.git`, lowercase host-independent of the scheme.
fn normal(url: &str) -> String {
    // A local path: `a`, `./a` and `b/../a` are one.
    let scp_like = url.find(':').is_some_and(|c| !url[..c].contains('/'));
    if !url.contains("://") && !scp_like {
        let p = runner_policy::normalize_lexically(std::path::Path::new(url));
        let u = p.to_string_lossy();
        let u = u.trim_end_matches('/');
        return u.strip_suffix(".git").unwrap_or(u).to_lowercase();
    }
    let u = url.trim_end_matches('/');
    let u = u.strip_suffix(".git").unwrap_or(u);
    let u = u.split_once("://").map_or(u, |(_, rest)| rest);
    // `git@host:org/repo` and `ssh://git@host/org/repo` are one.
    let u = u
        .split_once('@')
        .map_or(u, |(user, rest)| if user.contains('/') { u } else { rest });
    u.replacen(':', "/", 1).to_lowercase()
}

/// A folder name for `url`: its last two path parts (letters, digits,
/// `-`, `_`, `.`) and eight hex digits of its hash.
fn folder_of(url: &str) -> String {
    let n = normal(url);
    let parts: Vec<String> = n
        .split('/')
        .filter(|p| !p.is_empty())
        .rev()
        .take(2)
        .map(|p| {
            p.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                        c
                    } else {
                        '-'
                    }
                })
                .collect()
        })
        .collect();
    let mut name: Vec<String> = parts.into_iter().rev().collect();
    name.push(format!("{:08x}", crate::hash::fnv1a(n.as_bytes()) as u32));
    name.join("-").trim_start_matches('.').to_string()
}

/// The cache folder: `--repos-cache`, else the user's cache folder.
pub fn default_cache() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("runner").join("repos")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_refs_and_comments() {
        let list = "# the fleet\nhttps://github.com/org/svc.git@v1.2\n\ngit@github.com:org/other.git  # ssh\nfile:///srv/git/lib@main\n/home/me/repo\nhttps://tok@host.example/a/b\n";
        let r = parse(Path::new("r.txt"), list).unwrap();
        let specs: Vec<(&str, Option<&str>, u64)> = r
            .iter()
            .map(|x| (x.url.as_str(), x.git_ref.as_deref(), x.line))
            .collect();
        assert_eq!(
            specs,
            [
                ("https://github.com/org/svc.git", Some("v1.2"), 2),
                ("git@github.com:org/other.git", None, 4),
                ("file:///srv/git/lib", Some("main"), 5),
                ("/home/me/repo", None, 6),
                ("https://tok@host.example/a/b", None, 7),
            ]
        );
        assert!(r[0].folder.starts_with("org-svc-"), "{}", r[0].folder);
        assert_ne!(r[0].folder, r[1].folder);
        assert_eq!(folder_of("https://github.com/org/svc"), r[0].folder);
    }

    #[test]
    fn mistakes_name_their_lines() {
        let list = "https://h/o/a\nnot two words\nhttps://H/o/a.git@dev\nx@\n";
        let errs = parse(Path::new("r.txt"), list).unwrap_err();
        let text: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
        assert_eq!(errs.len(), 3, "{text:?}");
        assert!(text[0].contains("r.txt:2:1") && text[0].contains("one repository a line"));
        assert!(text[1].contains("r.txt:3:1") && text[1].contains("lines 1 and 3"));
        assert!(text[2].contains("r.txt:4:1"), "{}", text[2]);
        assert!(parse(Path::new("r.txt"), "# nothing\n").is_err());
        // A third listing names the first line too.
        let errs = parse(Path::new("r.txt"), "h/a\nh/a\nh/a\n").unwrap_err();
        assert!(errs[1].to_string().contains("lines 1 and 3"), "{}", errs[1]);
        // A local path spelled another way is the same one (issue 74).
        for (a, b) in [("a", "./a"), ("repos/a", "repos/x/../a/"), ("./a.git", "a")] {
            let errs = parse(Path::new("r.txt"), &format!("{a}\n{b}\n")).unwrap_err();
            assert!(
                errs[0].to_string().contains("lines 1 and 2"),
                "{a} {b}: {}",
                errs[0]
            );
        }
        assert!(parse(Path::new("r.txt"), "a\nb\n").is_ok());
    }
}
