//! The `portable` feature builds the portable path of `src/contain/` (no
//! OS sandbox) on any platform, as `--cfg runner_portable` in RUSTFLAGS
//! does: the feature sets the cfg for this crate only, so the
//! dependencies built for the normal build are reused.
//!
//! Where runner is published (`RUNNER_HOME_REPOSITORY`, OWNER/REPO on
//! GitHub), for the workflows `runner init` writes: the release workflow
//! sets it; a build from a clone of a GitHub repository takes its
//! `origin` (`runner init`'s `init_action` module reads it).

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(runner_portable)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUNNER_HOME_REPOSITORY");
    if std::env::var_os("CARGO_FEATURE_PORTABLE").is_some() {
        println!("cargo::rustc-cfg=runner_portable");
    }
    if std::env::var_os("RUNNER_HOME_REPOSITORY").is_none()
        && let Some(home) = origin_on_github()
    {
        println!("cargo::rustc-env=RUNNER_HOME_REPOSITORY={home}");
    }
}

/// OWNER/REPO of the clone's `origin` remote, when it is on GitHub.
fn origin_on_github() -> Option<String> {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
    let config = Path::new(&dir).join(".git/config");
    if !config.is_file() {
        return None;
    }
    println!("cargo::rerun-if-changed={}", config.display());
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["config", "--get", "remote.origin.url"])
        .output()
        .ok()?;
    let url = String::from_utf8(out.stdout).ok()?;
    let url = url.trim();
    let path = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))?;
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    let mut parts = path.split('/');
    let (owner, name) = (parts.next()?, parts.next()?);
    let word = |w: &str| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    (parts.next().is_none() && word(owner) && word(name)).then(|| format!("{owner}/{name}"))
}
