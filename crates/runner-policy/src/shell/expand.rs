//! Glob operands, expanded as bash would expand them.
//!
//! `cat .en?` reads `.env`: to hold a `Read(.env)` deny, the operand must be
//! expanded against the workspace before matching. Expansion follows bash
//! without `globstar` or `nullglob`: segment by segment, `*` and `?` do not
//! match a leading dot unless the segment starts with one, and a pattern
//! that matches nothing stays as written.

use std::path::{Path, PathBuf};

/// Most paths the operands of one script may expand to before the call
/// fails closed.
pub const MAX_EXPANSION: usize = 10_000;

/// What expanding a script's glob operands may still cost: folder entries
/// listed and paths produced, over every operand of the script.
pub(super) struct ExpansionBudget {
    pub(super) entries: usize,
    pub(super) paths: usize,
}

impl Default for ExpansionBudget {
    fn default() -> Self {
        Self {
            entries: super::budget::MAX_DIR_ENTRIES,
            paths: MAX_EXPANSION,
        }
    }
}

/// True when an operand holds glob or brace characters.
pub fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

/// Expands `pattern` relative to `base` (or from `/` when absolute). The
/// results keep the pattern's form (relative or absolute), sorted. `None`
/// past the budget (entries listed or paths produced).
pub(super) fn expand_glob(
    base: &Path,
    pattern: &str,
    budget: &mut ExpansionBudget,
) -> Option<Vec<String>> {
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
                budget.entries = budget.entries.checked_sub(1)?;
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !seg.starts_with('.') {
                    continue;
                }
                if matcher.is_match(&name) {
                    budget.paths = budget.paths.checked_sub(1)?;
                    next.push((dir.join(&name), join(shown, &name)));
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
        let e = |p: &str| expand_glob(d.path(), p, &mut ExpansionBudget::default()).unwrap();
        assert_eq!(e(".en?"), [".env"]);
        assert_eq!(e("src/*.rs"), ["src/a.rs", "src/b.rs"]);
        assert_eq!(e("*/.h*"), ["src/.hidden.rs"]);
        assert_eq!(e(".{env,nope}"), [".env"]);
        assert_eq!(e("*.none"), ["*.none"]);
        // The budget holds over operands: `*/../*` lists a folder once per
        // entry.
        for i in 0..50 {
            std::fs::create_dir(d.path().join(format!("d{i}"))).unwrap();
        }
        let mut small = ExpansionBudget {
            entries: 1_000,
            paths: 1_000,
        };
        assert!(expand_glob(d.path(), "*/../*", &mut small).is_none());
    }
}
