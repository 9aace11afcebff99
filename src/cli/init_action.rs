//! Where the workflows `runner init` writes get the action from. The code
//! does not know the repository it was published from, so it never writes
//! one in: by default the action is vendored into the repository being
//! started (`.github/actions/runner/`, a path its owners control and
//! review), and installs runner from the home a release build was given
//! (`RUNNER_HOME_REPOSITORY` at build time: the release workflow sets it,
//! and `build.rs` takes a GitHub clone's `origin`), or from the GitHub
//! repository `cargo install --git` built it from; `--action-repo
//! OWNER/REPO@REF` names the action's repository instead.

use super::CliError;

/// How `runner init` writes the workflows' action.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ActionMode {
    /// Copy the action into `.github/actions/runner/` and use it from there.
    #[default]
    Vendored,
}

/// The action the workflows use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ActionSource {
    /// The vendored copy, installing runner from `home` (OWNER/REPO, when
    /// this build knows it) at `version`.
    Vendored {
        home: Option<String>,
        version: String,
    },
    /// `OWNER/REPO@REF`, as given.
    Repo { repo: String, reference: String },
}

/// Where this build comes from (OWNER/REPO on GitHub) and the version to
/// install: the home a release build was given, with this version's tag;
/// else the GitHub repository `cargo install --git` built it from, at the
/// tag or commit it built (cargo's record of installs beside the binary).
pub fn home() -> Option<(String, String)> {
    if let Some(h) = option_env!("RUNNER_HOME_REPOSITORY").filter(|h| !h.is_empty()) {
        return Some((h.to_string(), version()));
    }
    let exe = std::env::current_exe().ok()?;
    let bin = exe.parent()?;
    if bin.file_name()? != "bin" {
        return None;
    }
    let record = std::fs::read_to_string(bin.parent()?.join(".crates2.json")).ok()?;
    let exe_name = exe.file_name()?.to_str()?;
    installed_from(&record, exe_name)
}

/// The GitHub repository and tag (else commit) of the install in cargo's
/// `.crates2.json` record that put the program `exe_name` in place, when
/// it was built from a GitHub repository.
fn installed_from(record: &str, exe_name: &str) -> Option<(String, String)> {
    let record: serde_json::Value = serde_json::from_str(record).ok()?;
    let (package, _) = record["installs"].as_object()?.iter().find(|(_, v)| {
        v["bins"]
            .as_array()
            .is_some_and(|b| b.iter().any(|b| b == exe_name))
    })?;
    // `runner 0.1.0 (git+https://github.com/acme/runner?tag=v0.1.0#SHA)`
    let source = package.split_once(" (git+")?.1.strip_suffix(')')?;
    let (url, commit) = source.split_once('#')?;
    let (url, query) = url.split_once('?').unwrap_or((url, ""));
    let repo = url
        .strip_prefix("https://github.com/")?
        .trim_end_matches('/')
        .trim_end_matches(".git");
    if repo.split('/').count() != 2 {
        return None;
    }
    let tag = query.split('&').find_map(|q| q.strip_prefix("tag="));
    Some((repo.to_string(), tag.unwrap_or(commit).to_string()))
}

/// The release tag of this build.
pub fn version() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// The folder the vendored action lives in, from the repository's top.
pub const VENDORED_DIR: &str = ".github/actions/runner";

/// The vendored action's files, by path from the repository's top: the
/// action, and the install action and script it and the fleet use.
pub const VENDORED_FILES: &[(&str, &str)] = &[
    (
        ".github/actions/runner/action.yml",
        include_str!("../../action.yml"),
    ),
    (
        ".github/actions/runner/install/action.yml",
        include_str!("../../install/action.yml"),
    ),
    (
        ".github/actions/runner/install/install.sh",
        include_str!("../../install/install.sh"),
    ),
];

impl ActionSource {
    /// Reads `--action-repo`: `OWNER/REPO@REF` (a path within the
    /// repository may follow `REPO`).
    pub fn repo(spec: &str) -> Result<Self, CliError> {
        let bad = || {
            CliError::Invalid(format!(
                "--action-repo {spec:?}: expected OWNER/REPO@REF, such as acme/runner@v0.2.0"
            ))
        };
        let (repo, reference) = spec.split_once('@').ok_or_else(bad)?;
        let mut parts = repo.split('/');
        let (owner, name) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let word = |w: &str| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        };
        if !word(owner) || !word(name) || !word(reference.replace('/', "-").as_str()) {
            return Err(bad());
        }
        Ok(Self::Repo {
            repo: repo.to_string(),
            reference: reference.to_string(),
        })
    }

    /// The vendored action of this build.
    pub fn vendored() -> Self {
        match home() {
            Some((home, version)) => Self::Vendored {
                home: Some(home),
                version,
            },
            None => Self::Vendored {
                home: None,
                version: version(),
            },
        }
    }

    /// A step using the action (`sub` is `""` for the action, `/install`
    /// for the install action), indented six spaces, with its `with:`
    /// header when `with_header` and the install lines under it.
    pub fn step(&self, sub: &str, with_header: bool) -> String {
        match self {
            Self::Repo { repo, reference } => {
                let mut s = format!("      - uses: {repo}{sub}@{reference}\n");
                if with_header {
                    s.push_str("        with:\n");
                }
                s
            }
            Self::Vendored { home, version } => {
                let mut s = format!("      - uses: ./{VENDORED_DIR}{sub}\n        with:\n");
                match home {
                    Some(h) => s.push_str(&format!(
                        "          # Where runner is installed from (its release binary).\n          runner-repository: {h}\n          runner-version: {version}\n"
                    )),
                    None => s.push_str(&format!(
                        "          # Where runner is installed from: this runner was not built by a\n          # release and could not tell. Name runner's repository (OWNER/REPO),\n          # or install runner in a step before this one.\n          # runner-repository: OWNER/REPO\n          runner-version: {version}\n"
                    )),
                }
                s
            }
        }
    }

    /// What init says about the source once the files are written.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::Vendored { home: None, .. } => Some(format!(
                "note: the workflows use the action copied into {VENDORED_DIR}/; this runner was not built by a release and does not know where it is published, so set runner-repository in them (or install runner in an earlier step), or run init again with --action-repo OWNER/REPO@REF"
            )),
            _ => None,
        }
    }
}

/// `text` with each `      - uses: RUNNER_ACTION` line (and the `with:`
/// line after it) and each `      - uses: RUNNER_INSTALL` line replaced by
/// `source`'s steps.
pub fn render(text: &str, source: &ActionSource) -> String {
    text.replace(
        "      - uses: RUNNER_ACTION\n        with:\n",
        &source.step("", true),
    )
    .replace(
        "      - uses: RUNNER_INSTALL\n",
        &source.step("/install", false),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_reference_is_checked() {
        assert_eq!(
            ActionSource::repo("acme/runner@v0.2.0").unwrap(),
            ActionSource::Repo {
                repo: "acme/runner".into(),
                reference: "v0.2.0".into()
            }
        );
        for bad in [
            "acme/runner",
            "runner@v1",
            "acme/@v1",
            "acme/runner@",
            "a b/c@v1",
        ] {
            assert!(ActionSource::repo(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_vendored_steps_install_from_the_home_when_known() {
        let known = ActionSource::Vendored {
            home: Some("acme/runner".into()),
            version: "v9.9.9".into(),
        };
        let step = known.step("", true);
        assert!(step.starts_with("      - uses: ./.github/actions/runner\n        with:\n"));
        assert!(step.contains("\n          runner-repository: acme/runner\n"));
        assert!(step.contains("\n          runner-version: v9.9.9\n"));
        assert!(known.note().is_none());
        let unknown = ActionSource::Vendored {
            home: None,
            version: "v9.9.9".into(),
        };
        assert!(
            unknown
                .step("/install", false)
                .contains("# runner-repository: OWNER/REPO")
        );
        assert!(unknown.note().unwrap().contains("--action-repo"));
        let repo = ActionSource::repo("acme/runner@v1").unwrap();
        assert!(repo.note().is_none());
        assert_eq!(
            render("      - uses: RUNNER_INSTALL\n", &repo),
            "      - uses: acme/runner/install@v1\n"
        );
    }

    /// cargo's record of `cargo install --git`: the tag when one was
    /// asked for, else the commit built; nothing for other sources.
    #[test]
    fn a_cargo_install_from_github_names_its_repository() {
        let sha = "bf447aa98d44004f6f03db56b04ea693cc360c34";
        let record = |source: &str| {
            serde_json::json!({"installs": {
                "other 1.0.0 (registry+https://github.com/rust-lang/crates.io-index)": {"bins": ["other"]},
                format!("runner 0.1.0 ({source})"): {"bins": ["runner"]},
            }})
            .to_string()
        };
        let got = |source: &str| installed_from(&record(source), "runner");
        assert_eq!(
            got(&format!(
                "git+https://github.com/acme/runner?tag=v0.2.0#{sha}"
            )),
            Some(("acme/runner".into(), "v0.2.0".into()))
        );
        assert_eq!(
            got(&format!("git+https://github.com/acme/runner.git#{sha}")),
            Some(("acme/runner".into(), sha.into()))
        );
        assert_eq!(
            got(&format!(
                "git+https://github.com/acme/runner?branch=main#{sha}"
            )),
            Some(("acme/runner".into(), sha.into()))
        );
        assert_eq!(
            got(&format!("git+https://gitlab.com/acme/runner#{sha}")),
            None
        );
        assert_eq!(got(&format!("git+file:///src/runner#{sha}")), None);
        assert_eq!(got("path+file:///src/runner"), None);
        assert_eq!(installed_from(&record("x"), "elsewise"), None);
        assert_eq!(installed_from("not json", "runner"), None);
    }
}
