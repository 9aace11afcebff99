//! Where `runner init`'s workflows get the action (issue 74): a copy
//! vendored into the repository by default, or `--action-repo`; never a
//! placeholder. Each way passes actionlint; the vendored copy's own step
//! script runs every task a `**` glob names; its install script finds
//! runner on `PATH` or says what to set.

use std::path::Path;
use std::process::Command;

use crate::common::{runner, stderr, write};

fn workflows(d: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(d.join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

/// Every `uses:` of the workflows in `d`.
fn uses(d: &Path) -> Vec<String> {
    workflows(d)
        .iter()
        .flat_map(|w| {
            std::fs::read_to_string(w)
                .unwrap()
                .lines()
                .filter_map(|l| l.trim().strip_prefix("- uses: ").map(String::from))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn init_vendors_the_action_and_its_step_runs_every_task() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    crate::common::git(d, &["init", "-q"]);
    let o = runner().current_dir(d).arg("init").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // The copy is the action itself, with its install action and script.
    for (copy, original) in [
        ("action.yml", "action.yml"),
        ("install/action.yml", "install/action.yml"),
        ("install/install.sh", "install/install.sh"),
    ] {
        assert_eq!(
            std::fs::read(d.join(".github/actions/runner").join(copy)).unwrap(),
            std::fs::read(crate::common::repo().join(original)).unwrap(),
            "{copy}"
        );
    }
    let used = uses(d);
    assert!(
        used.iter()
            .filter(|u| !u.starts_with("actions/"))
            .all(|u| u == "./.github/actions/runner"),
        "{used:?}"
    );
    assert!(!used.iter().any(|u| u.contains("OWNER")), "{used:?}");
    // actionlint reads the local action's inputs, so a misspelled one
    // fails here.
    crate::common::actionlint(&workflows(d));
    // A build that knows where it is published (a release's, or one
    // from a GitHub clone) names it; one that does not says so and leaves
    // the line for the user.
    let workflow = std::fs::read_to_string(d.join(".github/workflows/runner.yml")).unwrap();
    if stderr(&o).contains("set runner-repository") {
        assert!(
            workflow.contains("          # runner-repository: OWNER/REPO\n"),
            "{workflow}"
        );
    } else {
        assert!(
            workflow.contains("\n          runner-repository: "),
            "{workflow}"
        );
    }

    // The vendored step script, as GitHub runs it, with the glob a user
    // writes: every task runs (bash alone would have skipped the top one).
    write(
        d,
        "tasks/deep/more.yaml",
        "name: more\nprompt: p\nworkspace: ../..\nscript:\n  - text: done\n",
    );
    let o = crate::action::run_step_of(
        &d.join(".github/actions/runner/action.yml"),
        "run",
        d,
        &[("INPUT_TASKS", "tasks/**/*.yaml")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(d.join("github-output")).unwrap();
    assert!(written.starts_with("exit-code=0\n"), "{written}");
    for t in ["example", "more", "staged-files"] {
        let tr = crate::common::read_json(d.join(format!("out/{t}/transcript.json")));
        assert!(tr["outcome"]["status"].is_string(), "{t}");
    }
    let tr = crate::common::read_json(d.join("out/more/transcript.json"));
    assert_eq!(tr["outcome"]["status"], "passed");
}

#[test]
fn init_uses_a_named_action_repository_in_every_workflow() {
    for fleet in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let o = runner()
            .args(["init", "--action-repo", "acme/runner@v0.2.0"])
            .args(fleet.then_some("--fleet"))
            .arg(d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(!d.join(".github/actions").exists());
        let want = if fleet {
            "acme/runner/install@v0.2.0"
        } else {
            "acme/runner@v0.2.0"
        };
        let used = uses(d);
        let ours: Vec<&String> = used.iter().filter(|u| !u.starts_with("actions/")).collect();
        assert!(
            !ours.is_empty() && ours.iter().all(|u| *u == want),
            "{used:?}"
        );
        crate::common::actionlint(&workflows(d));
    }
    // A reference that is not OWNER/REPO@REF is refused, and nothing is
    // written.
    let dir = tempfile::tempdir().unwrap();
    let o = runner()
        .args(["init", "--action-repo", "acme/runner"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("expected OWNER/REPO@REF"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A runner put in place by `cargo install --git` of a GitHub repository
/// knows its home from cargo's record: the vendored workflows install
/// that tag from there (its release binary, else a build).
#[test]
fn a_cargo_installed_runner_fills_in_where_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("cargo");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    let exe = root.join("bin/runner");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_runner"), &exe).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_runner"), &exe).unwrap();
    }
    let sha = "bf447aa98d44004f6f03db56b04ea693cc360c34";
    std::fs::write(
        root.join(".crates2.json"),
        serde_json::json!({"installs": {
            format!("runner 0.1.0 (git+https://github.com/acme/runner?tag=v0.2.0#{sha})"):
                {"bins": ["runner"]}}})
        .to_string(),
    )
    .unwrap();
    let d = dir.path().join("repo");
    std::fs::create_dir_all(&d).unwrap();
    let o = Command::new(&exe).arg("init").arg(&d).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("set runner-repository"),
        "{}",
        stderr(&o)
    );
    let workflow = std::fs::read_to_string(d.join(".github/workflows/runner.yml")).unwrap();
    assert!(
        workflow.contains(
            "      - uses: ./.github/actions/runner\n        with:\n          # Where runner is installed from (its release binary).\n          runner-repository: acme/runner\n          runner-version: v0.2.0\n"
        ),
        "{workflow}"
    );
    crate::common::actionlint(&workflows(&d));
}

/// The install script: a runner on `PATH` is kept; with none and nothing
/// to install from, it fails saying what to set.
#[test]
fn the_install_script_keeps_a_runner_on_path_or_says_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let script = crate::common::repo().join("install/install.sh");
    let bin = Path::new(env!("CARGO_BIN_EXE_runner")).parent().unwrap();
    let run = |path: String| {
        Command::new("bash")
            .arg(&script)
            .env_clear()
            .env("PATH", path)
            .env("RUNNER_TEMP", d)
            .env("GITHUB_PATH", d.join("github-path"))
            .env("RUNNER_SOURCE", d)
            .output()
            .unwrap()
    };
    let o = run(format!("{}:/usr/bin:/bin", bin.display()));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("runner on PATH"));
    let o = run("/usr/bin:/bin".into());
    assert_eq!(o.status.code(), Some(1));
    // (A GitHub annotation, which `stderr` would take for a Rust path.)
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("::error::runner is not on PATH") && said.contains("runner-repository"),
        "{said}"
    );
    assert!(!d.join("github-path").exists());
}
