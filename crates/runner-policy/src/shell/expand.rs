//! Glob operands, expanded as bash would expand them.
//!
//! `cat .en?` reads `.env`: to hold a `Read(.env)` deny, the operand must be
//! expanded against the workspace before matching. Expansion follows bash
//! without `globstar` or `nullglob`: segment by segment, `*` and `?` do not
//! match a leading dot unless the segment starts with one, and a pattern
//! that matches nothing stays as written.

use std::path::{Path, PathBuf};

/// Most paths one operand may expand to before the call fails closed.
pub const MAX_EXPANSION: usize = 10_000;

/// True when an operand holds glob or brace characters.
pub fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// Expands `pattern` relative to `base` (or from `/` when absolute). The
/// results keep the pattern's form (relative or absolute), sorted. `None`
/// when it matches more than [`MAX_EXPANSION`] paths.
pub fn expand_glob(base: &Path, pattern: &str) -> Option<Vec<String>> {
    let absolute = pattern.starts_with('/');
    let root = if absolute {
        PathBuf::from("/")
    } else {
        base.to_path_buf()
    };
    let mut current: Vec<(PathBuf, String)> =
        vec![(root, if absolute { "/".into() } else { String::new() })];
    let join = |prefix: &str, name: &str| {
        if prefix.is_empty() || prefix.ends_with('/') {
            format!("{prefix}{name}")
        } else {
            format!("{prefix}/{name}")
        }
    };
    for seg in pattern.split('/').filter(|s| !s.is_empty()) {
        if !has_glob(seg) {
            current = current
                .into_iter()
                .map(|(p, s)| (p.join(seg), join(&s, seg)))
                .collect();
            continue;
        }
        let Ok(glob) = globset::GlobBuilder::new(seg)
            .literal_separator(true)
            .build()
        else {
            return Some(vec![pattern.to_string()]);
        };
        let matcher = glob.compile_matcher();
        let mut next = Vec::new();
        for (dir, shown) in &current {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !seg.starts_with('.') {
                    continue;
                }
                if matcher.is_match(&name) {
                    next.push((dir.join(&name), join(shown, &name)));
                    if next.len() > MAX_EXPANSION {
                        return None;
                    }
                }
            }
        }
        current = next;
    }
    let mut found: Vec<String> = current
        .into_iter()
        .filter(|(p, _)| p.symlink_metadata().is_ok())
        .map(|(_, s)| s)
        .collect();
    if found.is_empty() {
        return Some(vec![pattern.to_string()]);
    }
    found.sort();
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_like_bash() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("src")).unwrap();
        for f in [".env", "src/a.rs", "src/b.rs", "src/.hidden.rs"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let e = |p: &str| expand_glob(d.path(), p).unwrap();
        assert_eq!(e(".en?"), [".env"]);
        assert_eq!(e("src/*.rs"), ["src/a.rs", "src/b.rs"]);
        assert_eq!(e("*/.h*"), ["src/.hidden.rs"]);
        assert_eq!(e(".{env,nope}"), [".env"]);
        assert_eq!(e("*.none"), ["*.none"]);
    }
}
