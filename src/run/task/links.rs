//! Symlinks in a task's changes, decided where they lead (issue 72).
//!
//! A link is an edit of its own path, and of every path it makes
//! reachable: `.github -> src/gh` puts a workflow under `.github/` without
//! one write there. So a link the changes make is checked, after the
//! agent stops and again before `--apply` or `--push` writes it:
//!
//! - where it leads, resolved by its words (never followed on disk but
//!   through the copy's own links, at most 40 of them): out of the
//!   workspace (an absolute target, `..` past the top), into `.git`, or in
//!   a loop, it is refused by the built-in rule [`LINK_RULE`];
//! - else by the policy ([`PolicySet::edit_denied_at`]): an `Edit` deny
//!   that could match beneath the link's path but not beneath its target.

use std::path::{Component, Path};

use runner_policy::PolicySet;

/// The built-in rule a link out of the workspace or into `.git` breaks.
pub(crate) const LINK_RULE: &str =
    "built-in: a symlink in the changes leads inside the workspace, outside .git";
/// The layer named with [`LINK_RULE`].
pub(crate) const LINK_LAYER: &str = "built-in";

/// Why a link leads nowhere a run may make a link to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LinkError {
    #[error("it leads to {}, outside the workspace", .0.display())]
    Outside(std::path::PathBuf),
    #[error("it leads into .git ({})", .0.display())]
    IntoGit(std::path::PathBuf),
    #[error("it is a loop of symlinks")]
    Loop,
}

/// Where the link at `rel` (workspace-relative) to `target` leads in the
/// workspace at `root`, or why it leads nowhere a run may make a link to.
pub(crate) fn link_target(root: &Path, rel: &str, target: &Path) -> Result<String, LinkError> {
    let outside = |t: &Path| LinkError::Outside(t.to_path_buf());
    // Where resolution stands (folders from the top), and what is left of
    // the words to resolve, first word last.
    let mut parts: Vec<String> = Path::new(rel)
        .parent()
        .map(|p| {
            (p.components())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let words = |t: &Path| -> Vec<String> {
        let mut w: Vec<String> = (t.components())
            .filter_map(|c| match c {
                Component::ParentDir => Some("..".to_string()),
                Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        w.reverse();
        w
    };
    if target.is_absolute() {
        return Err(outside(target));
    }
    let mut left = words(target);
    let mut hops = 0;
    while let Some(w) = left.pop() {
        if w == ".." {
            if parts.pop().is_none() {
                return Err(outside(target));
            }
            continue;
        }
        parts.push(w);
        if parts.iter().any(|p| p == ".git") {
            return Err(LinkError::IntoGit(target.to_path_buf()));
        }
        // A link of the copy on the way is followed by its words.
        if let Ok(next) = std::fs::read_link(root.join(parts.join("/"))) {
            hops += 1;
            if hops > 40 {
                return Err(LinkError::Loop);
            }
            if next.is_absolute() {
                return Err(outside(&next));
            }
            parts.pop();
            left.extend(words(&next));
        }
    }
    Ok(if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    })
}

/// The rule (and its layer) that the change at `rel`, a symlink to
/// `target` when `link` is set, breaks; `None` when it breaks none.
pub(crate) fn edit_refusal(
    policy: &PolicySet,
    root: &Path,
    rel: &str,
    link: Option<&Path>,
) -> Option<(String, String)> {
    let Some(target) = link else {
        return policy.edit_denied_at(rel, None);
    };
    match link_target(root, rel, target) {
        Ok(to) => policy.edit_denied_at(rel, Some(&to)),
        Err(why) => Some((format!("{LINK_RULE} ({why})"), LINK_LAYER.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_resolve_by_their_words_and_through_the_copys_links() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        std::fs::create_dir_all(root.join("src/gh")).unwrap();
        let t = |rel: &str, target: &str| {
            link_target(root, rel, Path::new(target)).map_err(|e| e.to_string())
        };
        assert_eq!(t(".github", "src/gh"), Ok("src/gh".into()));
        assert_eq!(t("a/b", "../src/gh"), Ok("src/gh".into()));
        assert_eq!(t("a", "."), Ok(".".into()));
        assert!(t("a", "/").unwrap_err().contains("outside the workspace"));
        assert!(
            t("a", "../..")
                .unwrap_err()
                .contains("outside the workspace")
        );
        assert!(t("a", ".git/hooks").unwrap_err().contains(".git"));
        assert!(t("a/b", "../.git").unwrap_err().contains(".git"));
        // Through a link of the copy: a chain, and a loop.
        crate::sys::symlink(Path::new("src"), &root.join("s")).unwrap();
        assert_eq!(t("x", "s/gh"), Ok("src/gh".into()));
        crate::sys::symlink(Path::new("l2"), &root.join("l1")).unwrap();
        crate::sys::symlink(Path::new("l1"), &root.join("l2")).unwrap();
        assert!(t("x", "l1").unwrap_err().contains("loop"));
        crate::sys::symlink(Path::new("../.."), &root.join("up")).unwrap();
        assert!(t("x", "up").unwrap_err().contains("outside"));
    }
}
