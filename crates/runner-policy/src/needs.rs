//! Signatures that a matching allow rule alone does not allow: which kind
//! of rule they need, and what the model is told when none does.
//!
//! A command that cannot be analysed needs a rule naming its exact text; a
//! path outside the workspace an absolute rule; a write into `.git` a rule
//! naming `.git`; a `Fetch` of a private address (loopback, a private
//! network, a cloud metadata service) a rule naming the address, never
//! `Fetch(*)`, a name or the default.

use std::net::IpAddr;

use crate::policy::Rule;
use crate::signature::{Family, Signature};

/// The kind of allow rule a signature needs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Needs {
    /// Any rule that matches (an opaque signature matches only its exact
    /// text).
    Exact,
    Absolute,
    Git,
    Address(IpAddr, u16),
}

impl Needs {
    /// Whether `r` is of the kind.
    pub(crate) fn admits(self, r: &Rule) -> bool {
        match self {
            Needs::Exact => true,
            Needs::Absolute => r.pattern.is_absolute_path(),
            Needs::Git => r.pattern.names_git(),
            Needs::Address(ip, port) => r.pattern.names_address(ip, port),
        }
    }
}

/// What `sig` needs beyond a match, and the refusal when no rule has it;
/// `unbacked` says which deny rule has no backstop (for opaque commands).
pub(crate) fn needs(sig: &Signature, unbacked: Option<&str>) -> Option<(Needs, String)> {
    if let Some((ip, port)) = private_fetch_address(sig) {
        Some((
            Needs::Address(ip, port),
            format!(
                "{sig} is a private address ({ip}); only an allow rule naming it by address (Fetch({ip})) can permit it"
            ),
        ))
    } else if let Some(why) = &sig.opaque {
        Some((
            Needs::Exact,
            format!(
                "the command cannot be checked safely: {why}; only a rule naming the exact command text can allow it{}",
                unbacked.unwrap_or_default()
            ),
        ))
    } else if is_outside(sig) && !in_readable_world(sig) {
        Some((
            Needs::Absolute,
            format!("{sig} is outside the workspace; only an absolute allow rule can permit it"),
        ))
    } else if in_git_dir(sig) {
        Some((
            Needs::Git,
            format!("{sig} writes into .git; only a rule naming .git can allow it"),
        ))
    } else {
        None
    }
}

fn is_outside(sig: &Signature) -> bool {
    matches!(sig.family, Family::Read | Family::Edit)
        && sig
            .specifier
            .as_deref()
            .is_some_and(|s| s.starts_with('/') || crate::world::in_home(s))
}

/// A path in `/tmp` or `/var/tmp`: the task's own where commands have a
/// private one (see `Backstops::private_tmp`).
pub(crate) fn in_private_tmp(sig: &Signature) -> bool {
    matches!(sig.family, Family::Read | Family::Edit)
        && sig.specifier.as_deref().is_some_and(|s| {
            ["/tmp", "/var/tmp"].iter().any(|root| {
                s.strip_prefix(root)
                    .is_some_and(|r| r.is_empty() || r.starts_with('/'))
            })
        })
}

/// A read of the readable world ([`crate::world`]): system and toolchain
/// trees but their secrets, the files that describe the machine, the
/// devices that hold nothing. Reading them reveals nothing of the
/// workspace or anyone's secrets, so they need no absolute rule; a deny
/// rule still holds them.
fn in_readable_world(sig: &Signature) -> bool {
    sig.family == Family::Read
        && sig
            .specifier
            .as_deref()
            .is_some_and(|s| crate::world::readable(s, sig.tree))
}

/// Writes into `.git`, or everything beneath the workspace root (which
/// holds `.git`).
fn in_git_dir(sig: &Signature) -> bool {
    sig.family == Family::Edit
        && sig.specifier.as_deref().is_some_and(|s| {
            s.split('/').any(|seg| seg == ".git") || (sig.tree && matches!(s, "." | "./" | ""))
        })
}

/// The address and port of a `Fetch` signature whose host is a private
/// address ([`crate::host::is_private`]).
fn private_fetch_address(sig: &crate::Signature) -> Option<(std::net::IpAddr, u16)> {
    if sig.family != crate::Family::Fetch {
        return None;
    }
    let spec = sig.specifier.as_deref()?;
    let authority = spec.split('/').next()?;
    let (host, port) = crate::host::split_host_port(authority).ok()?;
    let ip: std::net::IpAddr = crate::host::normalize_host(host).parse().ok()?;
    crate::host::is_private(ip).then_some((ip, port.unwrap_or(443)))
}

#[cfg(test)]
mod tests {
    use crate::load::parse_policy_yaml;
    use crate::{PolicySet, Risk, Signature, Verdict};

    fn decide(yaml: &str, sig: Signature) -> crate::Decision {
        let p = parse_policy_yaml(yaml, std::path::Path::new("p.yaml")).unwrap();
        PolicySet::new(vec![p]).decide("web_fetch", Risk::Medium, vec![sig])
    }

    /// Reading a device that holds nothing needs no absolute rule; writing
    /// it, or reading another device or a file beside them, still does.
    #[test]
    fn harmless_devices_are_read_like_the_machines_description() {
        let allow = "default: allow\n";
        let read = |p: &str| {
            let set = PolicySet::new(vec![
                parse_policy_yaml(allow, std::path::Path::new("p.yaml")).unwrap(),
            ]);
            set.decide(
                "bash",
                Risk::Low,
                vec![Signature::new(crate::Family::Read, p)],
            )
            .verdict
        };
        for p in [
            "/dev/zero",
            "/dev/urandom",
            "/dev/random",
            "/etc/os-release",
        ] {
            assert_eq!(read(p), Verdict::Allow, "{p}");
        }
        for p in ["/dev/sda", "/dev/mem", "/proc/1/environ", "/etc/shadow"] {
            assert_eq!(read(p), Verdict::Deny, "{p}");
        }
        let set = PolicySet::new(vec![
            parse_policy_yaml(allow, std::path::Path::new("p.yaml")).unwrap(),
        ]);
        let write = set.decide(
            "bash",
            Risk::Low,
            vec![Signature::new(crate::Family::Edit, "/dev/zero")],
        );
        assert_eq!(write.verdict, Verdict::Deny);
    }

    #[test]
    fn a_private_address_is_allowed_by_the_rule_naming_it_and_no_other() {
        let local = || Signature::fetch("127.0.0.1", Some(8080), "/x");
        let d = decide(
            "default: allow\nrules:\n  - allow: [\"Fetch(*)\"]\n",
            local(),
        );
        assert_eq!(d.verdict, Verdict::Deny);
        assert!(d.reason.unwrap().contains("private address"));
        let d = decide(
            "rules:\n  - allow: [\"Fetch(*)\", \"Fetch(127.0.0.0/8)\"]\n",
            local(),
        );
        assert_eq!(d.verdict, Verdict::Allow);
        // The rule that decided is the one naming the address.
        assert_eq!(d.rule.as_deref(), Some("allow Fetch(127.0.0.0/8)"));
        // A deny rule naming an address holds for `denied` too.
        let p = parse_policy_yaml(
            "rules:\n  - deny: [\"Fetch(93.184.216.0/24)\"]\n",
            std::path::Path::new("p.yaml"),
        )
        .unwrap();
        let set = PolicySet::new(vec![p]);
        assert!(
            set.denied(&Signature::fetch("93.184.216.34", None, "/"))
                .is_some()
        );
        assert!(
            set.denied(&Signature::fetch("8.8.8.8", None, "/"))
                .is_none()
        );
    }
}
