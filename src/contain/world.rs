//! The readable world as the wall holds it (issue 73, item 5): the trees
//! a task's commands may not read outside their own folders, whoever
//! reads (inline code too). The gate's side is `runner_policy::world`.
//!
//! - **The home folder**, but for the toolchains and caches that live in
//!   it ([`HOME_TOOLCHAINS`], and the folders of the commands' `PATH`):
//!   `~/.ssh`, `~/.aws`, `~/.config/gh`, `~/.netrc`, `~/.docker` ... are
//!   unreadable.
//! - **Other users' homes** (`/home`, `/root`), but for the runner's own
//!   home's toolchains.
//! - **The machine's secrets** in `/etc` (`runner_policy::world::SECRETS`)
//!   and a CI runner's own folders (its credentials, the files through
//!   which a step's outputs and environment reach later steps).
//!
//! A task widens it with `sandbox: {readable: [...]}` and narrows it with
//! `sandbox: {unreadable: [...]}`. What a task writes is always readable.

use std::path::{Path, PathBuf};

use super::HiddenTree;

/// Folders of the home folder that hold toolchains, packages and caches
/// commands need (and no credentials of their own).
pub const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/env",
    ".rustup",
    ".pyenv",
    ".nvm",
    ".local/bin",
    ".local/lib",
    ".local/pipx",
    ".local/share/pnpm",
    ".npm/_cacache",
    ".bun/bin",
    ".deno/bin",
    ".volta",
    ".rbenv",
    ".gem",
    ".sdkman/candidates",
    "go/bin",
    "go/pkg",
    ".gradle/caches",
    ".gradle/wrapper",
    ".m2/repository",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    ".cache/pre-commit",
    ".cache/ms-playwright",
    ".cache/yarn",
    ".elan",
    ".ghcup",
    ".opam",
    ".dotnet",
    ".nuget/packages",
    ".pub-cache",
    ".nix-profile",
    ".gitconfig",
    ".config/git",
    ".bashrc",
    ".profile",
    ".bash_profile",
    ".zshrc",
    ".zshenv",
];

/// A CI runner's own folders: the GitHub runner's install folder and the
/// files through which a step's outputs and environment reach later ones.
const CI_FOLDERS: &[&str] = &["/opt/actions-runner", "/actions-runner"];

/// The trees commands may not read: `home` (the runner's `HOME`) but its
/// toolchains (and those of a home a `PATH` folder lies in), `path_dirs`
/// (the commands' `PATH`) and `readable`; other
/// homes; the machine's secrets; a CI runner's folders; and `unreadable`.
/// Only trees that exist, canonical.
pub fn unreadable_trees(
    home: Option<&Path>,
    path_dirs: &[PathBuf],
    readable: &[PathBuf],
    unreadable: &[PathBuf],
) -> Vec<HiddenTree> {
    let canon = |p: &Path| p.canonicalize().ok();
    let home = home.and_then(canon).filter(|h| h.parent().is_some());
    // The homes whose toolchains stay readable: the runner's, and any a
    // folder of the commands' `PATH` lies in (a test's `HOME` elsewhere,
    // `/root/.pyenv/shims` on the `PATH`).
    let mut homes: Vec<PathBuf> = home.iter().cloned().collect();
    for p in path_dirs.iter().filter_map(|p| canon(p)) {
        let mut parts = p.components().skip(1);
        let owner = match (parts.next(), parts.next()) {
            (Some(a), _) if a.as_os_str() == "root" => Some(PathBuf::from("/root")),
            (Some(a), Some(u)) if a.as_os_str() == "home" => Some(Path::new("/home").join(u)),
            _ => None,
        };
        homes.extend(owner.filter(|h| !homes.contains(h)));
    }
    let mut except: Vec<PathBuf> = Vec::new();
    for h in &homes {
        except.extend(HOME_TOOLCHAINS.iter().filter_map(|t| canon(&h.join(t))));
    }
    except.extend(path_dirs.iter().filter_map(|p| canon(p)));
    except.extend(readable.iter().filter_map(|p| canon(p)));
    let mut roots: Vec<PathBuf> = Vec::new();
    for other in ["/home", "/root"] {
        roots.extend(canon(Path::new(other)));
    }
    roots.extend(home.clone());
    roots.extend(
        runner_policy::world::SECRETS
            .iter()
            .chain(CI_FOLDERS)
            .filter_map(|s| canon(Path::new(s))),
    );
    if let Some(t) = std::env::var_os("RUNNER_TEMP") {
        roots.extend(canon(&Path::new(&t).join("_runner_file_commands")));
    }
    roots.extend(unreadable.iter().filter_map(|p| canon(p)));
    // One tree where one holds another (`/home` and the home in it).
    roots.sort();
    roots.dedup();
    let outer: Vec<PathBuf> = roots
        .iter()
        .filter(|r| !roots.iter().any(|o| o != *r && r.starts_with(o)))
        .cloned()
        .collect();
    outer
        .into_iter()
        .map(|root| HiddenTree {
            except: except
                .iter()
                .filter(|e| e.starts_with(&root) && **e != root)
                .cloned()
                .collect(),
            root,
        })
        .collect()
}
