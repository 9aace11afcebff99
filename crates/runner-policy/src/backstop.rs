//! Backstops: the walls behind deny rules that do not depend on the
//! analysis seeing what a command does.
//!
//! A run can hold three (see the runner's `workspace::isolate`,
//! `run::task::violations` and `contain::sandbox`):
//!
//! - **reads**: what the policy denies reading is not in the agent's copy,
//!   and the original workspace is unreadable to commands. It does not
//!   hold without Landlock, or where the copy's git view could not leave
//!   such a file's history out (see history below).
//! - **edits**: after the agent stops, a change to a path the policy
//!   denies editing is reverted and fails the task. Every run holds it.
//! - **confinement**: Landlock lets commands write only in the copy and
//!   their temp folder, and `no_new_privs` keeps `sudo` from gaining
//!   anything; with **network off**, no command reaches the network.
//! - **history**: the copy's git view holds nothing the policy denies
//!   reading: no reachable commit has such a path, or the view's history
//!   is one commit, HEAD's tree without them. Reads of history (`git log
//!   -p`, `git show REV`, `git archive REV`) are then decided by their
//!   folder alone; without it, strictly.
//! - **exec**: the runner's supervisor decides every exec of a command on
//!   its real argv against the `Bash` deny rules, so a program deny rule
//!   (`Bash(git push:*)`) holds whatever starts the program.
//! - **private /tmp**: commands see a `/tmp` and `/var/tmp` of their own,
//!   folders of the task removed with it, so a command's write there is no
//!   edit outside the workspace (`cat <<'PY' > /tmp/fix.py`): it needs no
//!   rule, and only a deny rule naming it refuses it.
//!
//! When every deny rule of every layer has its backstop, the analysis need
//! not refuse what it cannot see into (inline code, a script too complex to
//! check): whatever the code does, what the rules deny cannot happen or
//! cannot leave the copy. So an opaque command is then decided like any
//! other by the allow rules and the default, and a recursive read is
//! decided by its folder alone. Where some deny rule has no backstop, the
//! analysis stays the only wall and decides as before.

use crate::policy::Policy;
use crate::signature::Family;
use crate::words::split_words;

/// Which backstops hold in this run. The default (none) is what `runner
/// check` and a policy alone assume. In the transcript, so that `runner
/// replay` decides again as the run did.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(default)]
pub struct Backstops {
    /// Read-denied files are absent from the copy and unreadable in the
    /// original, and the copy's git view holds none of their content.
    pub reads: bool,
    /// Changes to edit-denied paths are reverted on the result.
    pub edits: bool,
    /// Commands write only in the copy and their temp folder, and cannot
    /// gain privileges.
    pub confined: bool,
    /// Commands have no network.
    pub network_off: bool,
    /// Every exec of a command is decided on its real argv against the
    /// `Bash` deny rules (the runner's supervisor): a program deny rule
    /// holds whatever code starts the program.
    pub exec: bool,
    /// The copy's git view holds no content the policy denies reading (no
    /// reachable commit has such a path, or its history is cut to one
    /// commit without them), and the original's object store is
    /// unreadable to commands: reads of history (`git log -p`, `git show
    /// REV`) are decided by their folder alone.
    pub history: bool,
    /// Commands have a `/tmp` and `/var/tmp` of their own (the task's,
    /// removed with it): their writes there are no edits outside the
    /// workspace.
    pub private_tmp: bool,
}

/// Programs (first words) that do nothing without the network.
const NETWORK_PROGRAMS: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet",
    "ftp", "http", "https", "xh", "aria2c",
];

/// Subcommands that do nothing without the network.
const NETWORK_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &["push", "fetch", "pull", "clone", "ls-remote", "send-email"],
    ),
    ("cargo", &["publish", "yank", "owner", "login"]),
    (
        "npm",
        &["publish", "unpublish", "login", "adduser", "deprecate"],
    ),
    ("docker", &["push", "pull", "login"]),
    ("gh", &[]),
    ("twine", &["upload"]),
];

/// Programs that only raise privileges, which `no_new_privs` refuses.
const PRIVILEGE_PROGRAMS: &[&str] = &["sudo", "su", "doas", "pkexec", "runuser"];

impl Backstops {
    /// Every backstop held (`runner check --backstops all`).
    pub fn all() -> Self {
        Self {
            reads: true,
            edits: true,
            confined: true,
            network_off: true,
            exec: true,
            history: true,
            private_tmp: true,
        }
    }

    /// The first deny rule (`deny PATTERN`, with its layer) that has no
    /// backstop here; `None` when every one has. Without confinement no
    /// backstop counts (an opaque command could write anywhere), which the
    /// caller must check as well: with no deny rule, this is `None`.
    pub fn unbacked_deny(&self, layers: &[Policy]) -> Option<(String, String)> {
        for layer in layers {
            for rule in layer.rules.iter().filter(|r| !r.allow) {
                if !self.confined || !self.backs(rule.pattern.family, &rule.pattern.text) {
                    return Some((format!("deny {}", rule.pattern.text), layer.source.clone()));
                }
            }
        }
        None
    }

    /// Whether the deny rule `pattern` has a backstop here.
    pub fn backs_rule(&self, pattern: &crate::Pattern) -> bool {
        self.confined && self.backs(pattern.family, &pattern.text)
    }

    fn backs(&self, family: Family, text: &str) -> bool {
        match family {
            Family::Read => self.reads,
            Family::Edit => self.edits,
            Family::Bash if self.exec => true,
            Family::Bash => {
                let inner = text
                    .strip_prefix("Bash(")
                    .and_then(|t| t.strip_suffix(')'))
                    .unwrap_or("");
                let inner = inner.strip_suffix(":*").unwrap_or(inner);
                let words = split_words(inner);
                let first = words.first().map(|w| w.as_str()).unwrap_or("");
                if PRIVILEGE_PROGRAMS.contains(&first) {
                    return true;
                }
                self.network_off
                    && (NETWORK_PROGRAMS.contains(&first)
                        || NETWORK_SUBCOMMANDS.iter().any(|(p, subs)| {
                            *p == first
                                && (subs.is_empty()
                                    || words.get(1).is_some_and(|s| subs.contains(&s.as_str())))
                        }))
            }
            // Calls of other kinds are not made by commands: an opaque
            // command cannot call an MCP tool of the run or save a memory.
            Family::Memory | Family::Mcp | Family::Tool | Family::Fetch | Family::Agent => true,
        }
    }

    /// How the reason names the backstops that held.
    pub fn describe(&self) -> &'static str {
        "every deny rule has a backstop in this task (read-denied files are not in the copy, edit-denied changes are reverted on the result, commands write only in the copy and the network rules hold by the sandbox)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_policy_yaml;

    fn layer(yaml: &str) -> Policy {
        parse_policy_yaml(yaml, std::path::Path::new("p.yaml")).unwrap()
    }

    #[test]
    fn a_rule_is_backed_by_its_own_backstop_under_confinement_only() {
        let p = layer("default: allow\nrules:\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\"]\n");
        let read = &p.rules[0].pattern;
        let edit = &p.rules[1].pattern;
        let reads = Backstops {
            reads: true,
            confined: true,
            ..Backstops::default()
        };
        assert!(reads.backs_rule(read));
        assert!(!reads.backs_rule(edit));
        let unconfined = Backstops {
            confined: false,
            ..reads
        };
        assert!(!unconfined.backs_rule(read));
        assert!(!Backstops::default().backs_rule(read));
    }

    #[test]
    fn each_deny_needs_its_own_backstop() {
        let all = Backstops {
            reads: true,
            edits: true,
            confined: true,
            network_off: true,
            exec: false,
            history: true,
            private_tmp: false,
        };
        let p = layer(
            "default: allow\nrules:\n  - deny: [\"Read(.env)\", \"Edit(.github/**)\", \"Bash(git push:*)\", \"Bash(sudo:*)\", \"Bash(curl:*)\"]\n",
        );
        assert_eq!(all.unbacked_deny(std::slice::from_ref(&p)), None);
        let network_on = Backstops {
            network_off: false,
            ..all
        };
        assert_eq!(
            network_on
                .unbacked_deny(std::slice::from_ref(&p))
                .unwrap()
                .0,
            "deny Bash(git push:*)"
        );
        // The supervisor's exec wall backs every program deny rule, with
        // the network on too, and only under confinement.
        let supervised = Backstops {
            exec: true,
            ..network_on
        };
        assert_eq!(supervised.unbacked_deny(std::slice::from_ref(&p)), None);
        let rm = layer("default: allow\nrules:\n  - deny: [\"Bash(rm -rf /:*)\"]\n");
        assert_eq!(supervised.unbacked_deny(std::slice::from_ref(&rm)), None);
        assert!(
            Backstops {
                confined: false,
                ..supervised
            }
            .unbacked_deny(std::slice::from_ref(&rm))
            .is_some()
        );
        let tracked = Backstops {
            reads: false,
            ..all
        };
        assert_eq!(
            tracked.unbacked_deny(std::slice::from_ref(&p)).unwrap().0,
            "deny Read(.env)"
        );
        let unconfined = Backstops {
            confined: false,
            ..all
        };
        assert!(unconfined.unbacked_deny(std::slice::from_ref(&p)).is_some());
        let rm = layer("default: allow\nrules:\n  - deny: [\"Bash(rm:*)\"]\n");
        assert_eq!(all.unbacked_deny(&[rm]).unwrap().0, "deny Bash(rm:*)");
        let none = layer("default: allow\n");
        assert_eq!(
            Backstops {
                confined: true,
                ..Default::default()
            }
            .unbacked_deny(&[none]),
            None
        );
    }
}
