//! What a policy set says about paths and signatures apart from a call's
//! decision: which paths it denies reading or editing (what the workspace
//! copy leaves out, what the backstops revert) and a signature's refusal by
//! a deny rule alone.

use super::{Decision, PolicySet, Verdict, denied_by};
use crate::credentials::CREDENTIALS_LAYER;
use crate::signature::{Family, Signature};

impl PolicySet {
    /// True when some layer has a `Read` or `Edit` deny rule (what
    /// [`PolicySet::edit_denied`] can find); the built-in credentials
    /// layer always has.
    pub fn denies_paths(&self) -> bool {
        true
    }

    /// True when some layer of the policy (not the built-in credentials
    /// layer) has a `Read` or `Edit` deny rule.
    pub fn rules_deny_paths(&self) -> bool {
        self.layers.iter().any(|l| {
            l.rules
                .iter()
                .any(|r| !r.allow && matches!(r.pattern.family, Family::Read | Family::Edit))
        })
    }

    /// True when the files some rule denies reading are left out of the
    /// agent's copy: always, for the built-in credentials layer.
    pub fn denies_reads(&self) -> bool {
        true
    }

    /// The deny rule (as `deny PATTERN`) and its layer that forbid editing
    /// `rel` (a workspace-relative path): an `Edit` deny, or a `Read` deny
    /// (a path denied to reading is denied to editing too).
    pub fn edit_denied(&self, rel: &str) -> Option<(String, String)> {
        let edit = Signature::new(Family::Edit, rel);
        let read = Signature::new(Family::Read, rel);
        let by_rules = self.layers.iter().find_map(|l| {
            l.rules
                .iter()
                .find(|r| {
                    !r.allow && (r.pattern.matches(&edit, true) || r.pattern.matches(&read, true))
                })
                .map(|r| (format!("deny {}", r.pattern.text), l.source.clone()))
        });
        by_rules.or_else(|| {
            self.credential_rule(rel)
                .map(|r| (format!("deny {}", r.pattern.text), CREDENTIALS_LAYER.into()))
        })
    }

    /// [`PolicySet::edit_denied`] of `rel` as a path that may hold others
    /// (issue 72): a deny of `X/**` covers `X` itself, made, replaced or
    /// removed as a file, a folder or a symlink. With `link_to` (`rel` is
    /// a symlink to that workspace path), so does an `Edit` deny that could
    /// match a path beneath `rel` but none beneath the target: the link
    /// makes such paths reachable by a name the rule denies (`.github ->
    /// src/gh` edits `.github/**`), where a rule that matches beneath both
    /// (`**/*.lock`) holds at the target's own paths anyway.
    pub fn edit_denied_at(&self, rel: &str, link_to: Option<&str>) -> Option<(String, String)> {
        if let Some(d) = self.edit_denied(rel) {
            return Some(d);
        }
        let rel = rel.trim_end_matches('/');
        let child = format!("{rel}/{}", crate::path_pattern::CHILD);
        let itself = [
            Signature::new(Family::Edit, child.clone()),
            Signature::new(Family::Read, child),
        ];
        let beneath = Signature::tree(Family::Edit, rel);
        let target = link_to.map(|t| Signature::tree(Family::Edit, t));
        let denies = |r: &crate::policy::Rule| {
            itself.iter().any(|s| r.pattern.matches(s, true))
                || target.as_ref().is_some_and(|t| {
                    r.pattern.family == Family::Edit
                        && r.pattern.matches(&beneath, true)
                        && !r.pattern.matches(t, true)
                })
        };
        let by_rules = self.layers.iter().find_map(|l| {
            l.rules
                .iter()
                .find(|r| !r.allow && denies(r))
                .map(|r| (format!("deny {}", r.pattern.text), l.source.clone()))
        });
        by_rules.or_else(|| {
            (crate::credentials::credentials_layer().rules.iter())
                .find(|r| itself.iter().any(|s| r.pattern.matches(s, true)))
                .map(|r| (format!("deny {}", r.pattern.text), CREDENTIALS_LAYER.into()))
        })
    }

    /// The refusal of `sig` by the first deny rule of any layer, whatever
    /// allows it: what a tool asks of a signature it does not need allowed
    /// on its own (the address a `Fetch` name resolved to).
    pub fn denied(&self, sig: &Signature) -> Option<Decision> {
        if let Some(r) = self.credential_refusal(std::slice::from_ref(sig)) {
            return Some(Decision {
                verdict: Verdict::Deny,
                signatures: vec![sig.clone()],
                rule: r.rule,
                reason: r.reason,
                policy: Some(CREDENTIALS_LAYER.into()),
                line: None,
            });
        }
        self.layers.iter().find_map(|l| {
            denied_by(l, sig, sig).map(|r| Decision {
                verdict: Verdict::Deny,
                signatures: vec![sig.clone()],
                rule: r.rule,
                reason: r.reason,
                policy: Some(l.source.clone()),
                line: r.line,
            })
        })
    }

    /// True when some layer's deny rule matches `Read(rel)`: such a path is
    /// also denied to `Edit` and left out of what listing and search tools
    /// return.
    pub fn read_denied(&self, rel: &str) -> bool {
        self.rules_deny_reading(rel) || self.credential_rule(rel).is_some()
    }

    /// [`PolicySet::read_denied`] by the policy's own rules, without the
    /// built-in credentials layer (which no backstop needs to hold).
    pub fn rules_deny_reading(&self, rel: &str) -> bool {
        let sig = Signature::new(Family::Read, rel);
        self.layers.iter().any(|l| {
            l.rules
                .iter()
                .any(|r| !r.allow && r.pattern.matches(&sig, true))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backstops;
    use crate::load::parse_policy_yaml;

    fn set(rules: &str) -> PolicySet {
        let yaml = format!("default: allow\nrules:\n{rules}");
        PolicySet::new(vec![
            parse_policy_yaml(&yaml, std::path::Path::new("p.yaml")).unwrap(),
        ])
    }

    #[test]
    fn what_a_set_denies_of_paths_and_by_which_rule() {
        let programs =
            set("  - deny: [\"Bash(curl:*)\"]\n  - allow: [\"Edit(src/**)\", \"Read(docs/**)\"]\n");
        let reads = set("  - deny: [\"Read(secrets/**)\"]\n");
        let edits = set("  - deny: [\"Edit(.github/**)\"]\n");
        // The built-in credentials layer always denies paths.
        assert!(programs.denies_paths() && programs.denies_reads());
        // Only a deny rule on a path counts: not a program's, not an allow.
        assert!(!programs.rules_deny_paths());
        assert!(reads.rules_deny_paths() && edits.rules_deny_paths());
        let source = |s: &PolicySet| s.layers()[0].source.clone();
        assert_eq!(
            edits.edit_denied(".github/ci.yml"),
            Some(("deny Edit(.github/**)".into(), source(&edits)))
        );
        // A path denied to reading is denied to editing.
        assert_eq!(
            reads.edit_denied("secrets/key"),
            Some(("deny Read(secrets/**)".into(), source(&reads)))
        );
        assert_eq!(edits.edit_denied("src/a.rs"), None);
        assert_eq!(programs.edit_denied("src/a.rs"), None);
        assert_eq!(programs.edit_denied("docs/a.md"), None);
        assert!(reads.rules_deny_reading("secrets/key"));
        assert!(!reads.rules_deny_reading("src/a.rs"));
        assert!(!edits.rules_deny_reading(".github/ci.yml"));
        // The set keeps the backstops it was given.
        let held = Backstops {
            reads: true,
            confined: true,
            ..Backstops::default()
        };
        assert_eq!(reads.clone().with_backstops(held).backstops(), held);
    }

    /// `Edit(X/**)` covers `X` itself, and a link is decided where it
    /// leads (issue 72).
    #[test]
    fn a_folder_rule_covers_the_folder_and_links_into_it() {
        let s =
            set("  - deny: [\"Edit(.github/**)\", \"Edit(**/*.lock)\", \"Read(secrets/**)\"]\n");
        let rule = |r: &str| Some((format!("deny {r}"), s.layers()[0].source.clone()));
        // The folder itself, as a file, a folder or a symlink.
        assert_eq!(s.edit_denied(".github"), None);
        assert_eq!(s.edit_denied_at(".github", None), rule("Edit(.github/**)"));
        assert_eq!(s.edit_denied_at("secrets", None), rule("Read(secrets/**)"));
        assert_eq!(s.edit_denied_at("src", None), None);
        assert_eq!(s.edit_denied_at("src/a.rs", None), None);
        // A link that leads a denied name elsewhere.
        assert_eq!(
            s.edit_denied_at(".github", Some("src/gh")),
            rule("Edit(.github/**)")
        );
        // One above the denied folder reaches it too.
        assert_eq!(s.edit_denied_at("x", Some("y")), None);
        // A rule that holds at the target's own paths is not escaped.
        assert_eq!(s.edit_denied_at("vendor/lib", Some("src/lib")), None);
        // A link to the denied folder by another name is the target's
        // rule's business: its files keep their own paths.
        assert_eq!(s.edit_denied_at("gh", Some(".github")), None);
    }

    fn layer(yaml: &str, file: &str) -> crate::Policy {
        parse_policy_yaml(yaml, std::path::Path::new(file)).unwrap()
    }

    #[test]
    fn of_two_layers_allowing_alike_the_first_is_named() {
        let allow = "default: deny\nrules:\n  - allow: [\"Bash(ls:*)\"]\n";
        let set = PolicySet::new(vec![layer(allow, "team.yaml"), layer(allow, "task.yaml")]);
        let d = set.decide(
            "bash",
            crate::Risk::Low,
            vec![Signature::new(Family::Bash, "ls -l")],
        );
        assert_eq!(d.verdict, Verdict::Allow);
        assert_eq!(d.policy.as_deref(), Some(set.layers()[0].source.as_str()));
    }

    #[test]
    fn a_rule_that_can_never_match_fails_the_load() {
        let never = "default: allow\nrules:\n  - deny: [\"Edit(../outside)\"]\n";
        assert!(parse_policy_yaml(never, std::path::Path::new("p.yaml")).is_err());
    }
}
