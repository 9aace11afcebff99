//! The macOS Seatbelt profiles, pinned as golden files
//! (`tests/fixtures/seatbelt/*.sb`; `RUNNER_GOLDEN_UPDATE=1` rewrites them
//! after a change you meant): policies with read, edit, network and
//! program denies, and paths that need escaping. The profile is text made
//! on every platform; the macOS CI job also runs commands under it.

use std::path::{Path, PathBuf};

use runner::testkit::HiddenTree;
use runner::testkit::seatbelt::{DeniedProgram, Network, Spec, quote, render};
use runner_policy::{PolicySet, parse_policy_yaml};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seatbelt")
}

/// Compares `text` with the golden file `name`, or rewrites it.
fn golden(name: &str, text: &str) {
    let file = fixtures().join(format!("{name}.sb"));
    if std::env::var_os("RUNNER_GOLDEN_UPDATE").is_some() {
        std::fs::write(&file, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e} (RUNNER_GOLDEN_UPDATE=1 writes it)", file.display()));
    assert_eq!(
        text,
        want,
        "{name}: the profile differs from {}",
        file.display()
    );
}

fn policy(yaml: &str) -> PolicySet {
    PolicySet::new(vec![parse_policy_yaml(yaml, Path::new("p.yaml")).unwrap()])
}

const COPY: &str = "/private/var/folders/x/T/runner-ws-abc";
const TMP: &str = "/private/var/folders/x/T/runner-tmp-def";

fn frame(network: Network) -> Spec {
    Spec {
        writable: vec![PathBuf::from(COPY), PathBuf::from(TMP)],
        network: Some(network),
        ..Spec::default()
    }
}

#[test]
fn read_denies_hide_the_original_and_forbid_writes_in_the_copy() {
    let mut spec = frame(Network::On);
    spec.hidden = Some(HiddenTree {
        root: "/Users/ci/work/shop".into(),
        except: vec!["/Users/ci/work/shop/.git/objects".into()],
    });
    spec.add_policy(
        &policy("default: allow\nrules:\n  - deny: [\"Read(./.env)\", \"Read(secrets/**)\", \"Read(**/*.key)\"]\n"),
        Some("/nonexistent"),
    );
    let profile = render(&spec).unwrap();
    assert!(profile.contains(&format!("(deny file-write* (subpath \"{COPY}/secrets\"))")));
    assert!(profile.contains(&format!("(deny file-write* (literal \"{COPY}/.env\"))")));
    assert!(profile.contains(";   deny Read(**/*.key)"), "{profile}");
    golden("read-denies", &profile);
}

#[test]
fn edit_denies_of_one_path_are_walls_and_the_others_are_reverted() {
    let mut spec = frame(Network::On);
    spec.add_policy(
        &policy(
            "default: allow\nrules:\n  - deny: [\"Edit(.github/**)\", \"Edit(./Cargo.lock)\", \"Edit(Cargo.toml)\", \"Edit(**/*.pem)\", \"Edit(src/*.rs)\", \"Edit(/etc/**)\"]\n",
        ),
        Some("/nonexistent"),
    );
    let profile = render(&spec).unwrap();
    assert!(profile.contains(&format!("(deny file-write* (subpath \"{COPY}/.github\"))")));
    // The file itself, not a folder of that name's contents.
    assert!(profile.contains(&format!(
        "(deny file-write* (literal \"{COPY}/Cargo.lock\"))"
    )));
    // `Cargo.toml` is any Cargo.toml, at any depth: no one path.
    for reverted in ["Cargo.toml", "**/*.pem", "src/*.rs", "/etc/**"] {
        assert!(
            profile.contains(&format!(";   deny Edit({reverted})")),
            "{reverted}: {profile}"
        );
    }
    golden("edit-denies", &profile);
}

/// With no copy to name paths in (no writable folder yet), a deny of one
/// path cannot be a wall: a relative path in a profile would be no path
/// at all. It is reverted on the result and listed, as the others are.
#[test]
fn without_a_copy_path_denies_are_reverted_only() {
    let mut spec = Spec::default();
    spec.add_policy(
        &policy("default: allow\nrules:\n  - deny: [\"Edit(./Cargo.lock)\", \"Read(.env)\"]\n"),
        Some("/nonexistent"),
    );
    assert!(spec.unwritable.is_empty(), "{:?}", spec.unwritable);
    assert_eq!(
        spec.reverted_only,
        ["deny Edit(./Cargo.lock)", "deny Read(.env)"]
    );
}

#[test]
fn network_rules_reach_only_the_proxy_by_address_and_port() {
    let profile = render(&frame(Network::Proxy(Some(41234)))).unwrap();
    assert!(profile.contains(
        "(deny network-outbound)\n(allow network-outbound (remote ip \"localhost:41234\"))"
    ));
    golden("network-proxy", &profile);
    // `runner sandbox` prints a profile before a run has chosen a port.
    let unknown = render(&frame(Network::Proxy(None))).unwrap();
    assert!(
        unknown.contains("; PORT: the task's proxy")
            && unknown.contains("(allow network-outbound (remote ip \"localhost:PORT\"))"),
        "{unknown}"
    );
    let off = render(&frame(Network::Off)).unwrap();
    assert!(
        off.contains("(deny network-outbound)") && !off.contains("remote ip"),
        "{off}"
    );
    golden("network-off", &off);
    let on = render(&frame(Network::On)).unwrap();
    assert!(!on.contains("network-outbound"), "{on}");
}

#[test]
fn program_denies_of_any_arguments_are_refused_by_path_and_the_rest_stay_with_the_analysis() {
    let bin = fixtures().join("bin");
    let mut spec = frame(Network::On);
    spec.add_policy(
        &policy(
            "default: allow\nrules:\n  - deny: [\"Bash(curl:*)\", \"Bash(/usr/bin/rsync *)\", \"Bash(rsync)\", \"Bash(git push:*)\", \"Bash(wget:*)\", \"Bash(py*:*)\"]\n",
        ),
        Some(bin.to_str().unwrap()),
    );
    let real = std::fs::canonicalize(&bin).unwrap();
    assert_eq!(
        spec.denied_programs,
        vec![
            DeniedProgram {
                path: real.join("curl"),
                rule: "deny Bash(curl:*)".into()
            },
            DeniedProgram {
                path: real.join("rsync"),
                rule: "deny Bash(/usr/bin/rsync *)".into()
            },
        ]
    );
    let profile = render(&spec).unwrap();
    // The checkout's own folder, as a name that is the same everywhere.
    let root = std::fs::canonicalize(env!("CARGO_MANIFEST_DIR")).unwrap();
    let profile = profile.replace(root.to_str().unwrap(), "$REPO");
    assert!(
        profile
            .contains("(deny process-exec (literal \"$REPO/tests/fixtures/seatbelt/bin/curl\"))"),
        "{profile}"
    );
    for rule in [
        "Bash(rsync)",
        "Bash(git push:*)",
        "Bash(wget:*) (not found on PATH)",
        "Bash(py*:*)",
    ] {
        assert!(
            profile.contains(&format!(";   deny {rule}")),
            "{rule}: {profile}"
        );
    }
    golden("program-denies", &profile);
}

#[test]
fn paths_with_quotes_parentheses_and_non_ascii_are_escaped() {
    assert_eq!(quote(Path::new("/a/b")).unwrap(), "\"/a/b\"");
    assert_eq!(
        quote(Path::new("/Users/zoë/my \"shop\" (copy)\\x")).unwrap(),
        "\"/Users/zoë/my \\\"shop\\\" (copy)\\\\x\""
    );
    let spec = Spec {
        writable: vec![
            PathBuf::from("/Users/zoë/my \"shop\" (copy)"),
            PathBuf::from("/tmp/日本"),
        ],
        hidden: Some(HiddenTree {
            root: "/Users/zoë/orig) (allow default".into(),
            except: Vec::new(),
        }),
        network: Some(Network::Off),
        ..Spec::default()
    };
    let profile = render(&spec).unwrap();
    // A parenthesis inside a string cannot close the rule.
    assert!(
        profile.contains(
            "(deny file-read* file-write* (subpath \"/Users/zoë/orig) (allow default\"))"
        )
    );
    golden("escaping", &profile);
    // What cannot be written safely is refused, not mangled.
    for bad in ["/a\nb", "/a\u{7}b"] {
        let spec = Spec {
            writable: vec![PathBuf::from(bad)],
            ..Spec::default()
        };
        assert!(render(&spec).is_err(), "{bad:?}");
    }
    use std::os::unix::ffi::OsStrExt;
    let not_utf8 = Path::new(std::ffi::OsStr::from_bytes(b"/a/\xff"));
    assert!(quote(not_utf8).is_err());
}

/// On a Mac (the CI's macOS job): a command under a task's profile writes
/// in the copy, and not outside it.
#[cfg(target_os = "macos")]
#[test]
fn on_macos_a_write_outside_the_copy_fails_and_one_inside_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("ws")).unwrap();
    std::fs::write(d.join("ws/a.txt"), "a\n").unwrap();
    std::fs::write(
        d.join("t.yaml"),
        "prompt: p\nworkspace: ws\nscript: []\npolicy: {default: allow}\n",
    )
    .unwrap();
    let outside = d.join("outside.txt");
    let run = |script: &str| {
        crate::common::runner()
            .current_dir(d)
            .args(["sandbox", "t.yaml", "--", "sh", "-c", script])
            .output()
            .unwrap()
    };
    let out = run(&format!("echo x > '{}'", outside.display()));
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!outside.exists());
    let out = run("echo x > inside.txt && cat inside.txt");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "x\n");
}
