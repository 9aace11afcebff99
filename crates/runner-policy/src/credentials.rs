//! The built-in credentials layer: files that tools leave in a checkout
//! and that hold a secret (git's credential store, a registry's auth
//! lines, private keys) are denied to reading in every task, whatever
//! the policy says.
//!
//! Why a layer of its own and not a default policy: a team's policy is
//! written for its repository, and the files here are left by tools (an
//! `npm login`, a CI step that writes `~/.netrc` into the work tree, a
//! test fixture's key) more often than by the team. A deny rule in the
//! team's policy could not be loosened by another layer, so this one is
//! special in one way only: an **explicit** allow rule with a `reason:`
//! in some layer overrides it for the paths that rule names. "Explicit"
//! means a rule that names files, not `Read`, `Read(*)` or `Read(**)`.
//!
//! What the runner does with the layer is what it does with any read
//! deny: the files are absent from the agent's copy (and given back to
//! the checks, which are the team's own commands), left out of what
//! listing and search tools return, and denied to the analysis. Mixed
//! files such as `.npmrc`, which hold a registry's address beside its
//! token, are absent too rather than stripped: a stripped copy would
//! differ from the original, and every task would then show it as a
//! change to revert. An agent that needs one gets it back through an
//! explicit allow.
//!
//! The layer does not count as a deny rule of the policy for the
//! backstops (see [`crate::Backstops`]): it protects untracked files,
//! which the copy leaves out; a tracked one is in git's object store and
//! already in the hands of whoever can read the repository.

use std::sync::LazyLock;

use crate::model::DefaultDecision;
use crate::pattern::Pattern;
use crate::policy::{Policy, Rule};
use crate::signature::Signature;

/// How the layer is named in decisions, the transcript and lint.
pub const CREDENTIALS_LAYER: &str = "built-in: credentials";

/// The files, as `Read` patterns, with what each is.
pub const CREDENTIAL_FILES: &[(&str, &str)] = &[
    (".git-credentials", "git's credential store"),
    (".netrc", "logins for HTTP and FTP hosts"),
    (".npmrc", "npm's configuration, with its registry tokens"),
    (
        ".yarnrc.yml",
        "Yarn's configuration, with its registry tokens",
    ),
    (".pypirc", "PyPI upload credentials"),
    ("**/.docker/config.json", "Docker registry logins"),
    ("*.pem", "a private key or certificate"),
    ("*.key", "a private key"),
    ("id_rsa", "an SSH private key"),
    ("id_ecdsa", "an SSH private key"),
    ("id_ed25519", "an SSH private key"),
    ("id_dsa", "an SSH private key"),
];

static LAYER: LazyLock<Policy> = LazyLock::new(|| {
    let mut layer = Policy::allowing_nothing(CREDENTIALS_LAYER, DefaultDecision::Allow);
    layer.rules = CREDENTIAL_FILES
        .iter()
        .map(|(path, what)| Rule {
            allow: false,
            pattern: Pattern::parse(&format!("Read({path})")).expect("a valid built-in pattern"),
            reason: Some(format!(
                "{what}: credentials, which the built-in credentials layer keeps from the agent (an allow rule naming the file, with a `reason:`, gives it back)"
            )),
            line: 0,
        })
        .collect();
    layer
});

/// The layer, compiled once.
pub fn credentials_layer() -> &'static Policy {
    &LAYER
}

/// Whether `rule` overrides the credentials layer for the signatures it
/// matches: an allow rule with a reason that names files, not every file.
pub fn overrides_credentials(rule: &Rule) -> bool {
    rule.allow && rule.reason.is_some() && !rule.pattern.is_catch_all()
}

/// The credential file (as [`CREDENTIAL_FILES`] names it) that `pattern`
/// names at the workspace's root: `Read(.npmrc)` names `.npmrc`,
/// `Read(certs/*)` none (no credential file is at the root there),
/// `Read(*.pem)` names `*.pem` (its sample `key.pem`). Catch-all patterns
/// name none.
pub fn credential_file_named(pattern: &Pattern) -> Option<&'static str> {
    if pattern.is_catch_all() {
        return None;
    }
    CREDENTIAL_FILES.iter().map(|(f, _)| *f).find(|file| {
        let sample = file.trim_start_matches("**/").replace('*', "key");
        pattern.matches(&Signature::new(crate::Family::Read, sample), false)
    })
}

/// The path segments a credential file's path holds one of: whatever a
/// rule of the layer matches has a segment here, or one ending in `.pem`
/// or `.key`. Most paths have none, and cost no glob.
const SEGMENTS: &[&str] = &[
    ".git-credentials",
    ".netrc",
    ".npmrc",
    ".yarnrc.yml",
    ".pypirc",
    ".docker",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    "id_dsa",
];

/// Whether a rule of the layer could match the workspace path `spec`
/// (a quick test on its segments; the rules decide).
pub(crate) fn may_match(spec: &str) -> bool {
    !spec.starts_with('/')
        && spec
            .split('/')
            .any(|s| SEGMENTS.contains(&s) || s.ends_with(".pem") || s.ends_with(".key"))
}

/// Whether some rule of `layers` overrides the layer for `sig`.
pub(crate) fn waived(layers: &[Policy], sig: &Signature) -> bool {
    layers.iter().any(|l| {
        l.rules
            .iter()
            .any(|r| overrides_credentials(r) && r.pattern.matches(sig, false))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_policy_yaml;
    use crate::signature::Family;
    use crate::{PolicySet, Risk, Verdict};

    fn set(yaml: &str) -> PolicySet {
        PolicySet::new(vec![
            parse_policy_yaml(yaml, std::path::Path::new("p.yaml")).unwrap(),
        ])
    }

    fn read(path: &str) -> Vec<Signature> {
        vec![Signature::new(Family::Read, path)]
    }

    #[test]
    fn every_kind_is_denied_under_default_allow_and_named() {
        let s = set("default: allow");
        for path in [
            ".git-credentials",
            "sub/.netrc",
            ".npmrc",
            "web/.yarnrc.yml",
            ".pypirc",
            ".docker/config.json",
            "deep/down/.docker/config.json",
            "certs/server.pem",
            "tls.key",
            "home/.ssh/id_ed25519",
        ] {
            let d = s.decide("read_file", Risk::Low, read(path));
            assert_eq!(d.verdict, Verdict::Deny, "{path}");
            assert_eq!(d.policy.as_deref(), Some(CREDENTIALS_LAYER), "{path}");
            assert!(d.reason.unwrap().contains("credentials"), "{path}");
            assert!(s.read_denied(path), "{path}");
            assert!(s.edit_denied(path).is_some(), "{path}");
        }
        for path in [
            "src/key.rs",
            "docker/config.json",
            "id_rsa.pub",
            "README.md",
        ] {
            let d = s.decide("read_file", Risk::Low, read(path));
            assert_eq!(d.verdict, Verdict::Allow, "{path}");
            assert!(!s.read_denied(path), "{path}");
        }
    }

    #[test]
    fn only_an_explicit_allow_with_a_reason_gives_a_file_back() {
        // No reason: still denied.
        let s = set("default: allow\nrules:\n  - allow: [\"Read(.npmrc)\"]\n");
        assert!(s.read_denied(".npmrc"));
        // A catch-all with a reason: still denied.
        for all in ["Read", "Read(*)", "Read(**)"] {
            let s = set(&format!(
                "default: allow\nrules:\n  - allow: [\"{all}\"]\n    reason: everything\n"
            ));
            assert!(s.read_denied(".npmrc"), "{all}");
        }
        // Named, with a reason: given back, for that path only.
        let s = set(
            "default: deny\nrules:\n  - allow: [\"Read(./.npmrc)\"]\n    reason: the build needs the registry\n",
        );
        assert!(!s.read_denied(".npmrc"));
        assert_eq!(
            s.decide("read_file", Risk::Low, read(".npmrc")).verdict,
            Verdict::Allow
        );
        assert!(s.read_denied("web/.npmrc"));
        assert!(s.read_denied(".netrc"));
    }

    #[test]
    fn the_quick_test_never_misses_what_a_rule_matches() {
        let layer = credentials_layer();
        for path in [
            ".npmrc",
            "a/.npmrc",
            ".npmrc/inside",
            ".docker/config.json",
            "x/.docker/config.json",
            "k.pem",
            "deep/k.key",
            ".pem",
            "id_rsa",
            "a/id_ed25519/x",
            "src/main.rs",
            "docker/config.json",
            "id_rsa.pub",
            "README.md",
            "pem",
            "a.pem.bak",
            "keys/x",
        ] {
            let sig = Signature::new(Family::Read, path);
            let matched = layer.rules.iter().any(|r| r.pattern.matches(&sig, true));
            assert!(!matched || may_match(path), "{path}");
        }
        assert!(!may_match("src/main.rs"));
    }

    #[test]
    fn the_file_a_pattern_names_is_found_and_catch_alls_name_none() {
        let named = |p: &str| credential_file_named(&Pattern::parse(p).unwrap());
        assert_eq!(named("Read(./.npmrc)"), Some(".npmrc"));
        assert_eq!(named("Read(.netrc)"), Some(".netrc"));
        assert_eq!(named("Read(*.pem)"), Some("*.pem"));
        assert_eq!(named("Read(.docker/**)"), Some("**/.docker/config.json"));
        for none in [
            "Read(src/**)",
            "Read(**)",
            "Read(*)",
            "Read",
            "Read(README.md)",
        ] {
            assert_eq!(named(none), None, "{none}");
        }
    }

    #[test]
    fn a_recursive_read_is_decided_by_its_folder() {
        // The files are absent from every copy: `grep -r x .` reads none.
        let s = set("default: allow");
        let mut sig = Signature::new(Family::Read, ".");
        sig.tree = true;
        assert_eq!(
            s.decide("grep", Risk::Low, vec![sig]).verdict,
            Verdict::Allow
        );
    }

    #[test]
    fn the_layer_is_no_deny_rule_of_the_policy_for_the_backstops() {
        let s = set("default: allow");
        assert!(s.denies_reads());
        let b = crate::Backstops {
            reads: false,
            edits: true,
            confined: true,
            network_off: false,
            exec: false,
            history: false,
            private_tmp: false,
        };
        assert_eq!(b.unbacked_deny(s.layers()), None);
    }
}
