//! `network:`: which hosts commands, hooks and MCP servers may connect to.
//!
//! Separate from `Fetch(...)` rules on purpose: granting the `web_fetch`
//! tool a domain must not open it to every command. A policy without
//! `network:` says nothing of the network (commands have it or not by their
//! `sandbox:`); once any layer has one, every connection goes through the
//! runner's proxy and is decided here: any layer's `deny` entry refuses,
//! and every layer with a `network:` must allow (by an entry, on one of its
//! `ports`). An address that resolves to a private network, loopback or a
//! cloud metadata service is refused unless every such layer names it by
//! address (`127.0.0.1`, `10.0.0.0/8`).

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::config_error::ConfigError;
use crate::host::HostPattern;
use crate::model::{MAX_RULES, NetworkFile};

/// Ports an entry without `:port` allows.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// One entry of a compiled `network:`.
#[derive(Debug, Clone)]
pub struct HostRule {
    /// As written.
    pub text: String,
    /// Compiled.
    pub pattern: HostPattern,
    /// Its line in the policy file.
    pub line: u64,
}

/// A compiled `network:`.
#[derive(Debug, Clone)]
pub struct Network {
    /// `allow:` entries.
    pub allow: Vec<HostRule>,
    /// `deny:` entries.
    pub deny: Vec<HostRule>,
    /// `ports:`, or [`DEFAULT_PORTS`].
    pub ports: Vec<u16>,
    /// `reason:`.
    pub reason: Option<String>,
}

/// Compiles `network:`; `file` is for error locations.
pub fn compile_network(nf: &NetworkFile, file: &Path) -> Result<Network, Vec<ConfigError>> {
    let mut errors = Vec::new();
    let mut compile = |list: &[Spanned<String>], key: &str| {
        let mut out = Vec::new();
        for e in list {
            match HostPattern::parse(&e.value) {
                Ok(pattern) => out.push(HostRule {
                    text: e.value.trim().to_string(),
                    pattern,
                    line: e.referenced.line(),
                }),
                Err(err) => errors.push(ConfigError::at(
                    file,
                    &e.referenced,
                    format!("network.{key}: {err}"),
                )),
            }
        }
        out
    };
    // Entries count against the policy's bound on rules: every
    // connection is decided against each of them.
    if let Some(e) = nf.allow.iter().chain(&nf.deny).nth(MAX_RULES) {
        return Err(vec![ConfigError::at(
            file,
            &e.referenced,
            format!(
                "network: more than {MAX_RULES} entries; a policy may hold at most {MAX_RULES}"
            ),
        )]);
    }
    let allow = compile(&nf.allow, "allow");
    let deny = compile(&nf.deny, "deny");
    if let Some(ports) = &nf.ports
        && ports.value.contains(&0)
    {
        errors.push(ConfigError::at(
            file,
            &ports.referenced,
            "network.ports: port 0",
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Network {
        allow,
        deny,
        ports: nf
            .ports
            .as_ref()
            .map_or_else(|| DEFAULT_PORTS.to_vec(), |p| p.value.clone()),
        reason: nf.reason.clone(),
    })
}

/// Why a connection may not reach an address its host resolved to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressRefusal {
    /// A `deny` entry names the address.
    #[error("{addr} is denied by `{entry}` ({policy})")]
    Denied {
        /// The address.
        addr: String,
        /// The entry, as written.
        entry: String,
        /// Its layer.
        policy: String,
    },
    /// Private, and not every layer names it.
    #[error("{addr} is a private address, which no rule names by address")]
    Private {
        /// The address.
        addr: String,
    },
}

/// The decision on one connection, as the transcript records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConnectionDecision {
    /// Allowed or not.
    pub allow: bool,
    /// `allow crates.io`, `deny *.evil.test`, or null when nothing allowed.
    pub rule: Option<String>,
    /// The layer that decided.
    pub policy: Option<String>,
    /// The entry's line in that layer's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Why, in words.
    pub reason: String,
}

impl Network {
    /// `Ok(entry)` when an entry allows `host:port`, `Err(entry)` when one
    /// denies it, `Err(None)` when none allows it.
    pub(crate) fn decide(&self, host: &str, port: u16) -> Result<&HostRule, Option<&HostRule>> {
        if let Some(d) = self.deny.iter().find(|r| r.pattern.matches(host, port)) {
            return Err(Some(d));
        }
        self.allow
            .iter()
            .find(|r| {
                r.pattern.matches(host, port)
                    && (r.pattern.port.is_some() || self.ports.contains(&port))
            })
            .ok_or(None)
    }
}

#[cfg(test)]
mod tests {
    use crate::PolicySet;
    use crate::load::parse_policy_yaml;

    fn set(yamls: &[&str]) -> PolicySet {
        PolicySet::new(
            yamls
                .iter()
                .enumerate()
                .map(|(i, y)| {
                    let file = format!("layer{i}");
                    parse_policy_yaml(y, std::path::Path::new(&file)).unwrap()
                })
                .collect(),
        )
    }

    #[test]
    fn every_layer_with_network_must_allow_and_any_deny_refuses() {
        let one = set(&[
            "network:\n  allow: [crates.io, '*.github.com', 'local.test:8080']\n  deny: [evil.github.com]\n",
        ]);
        assert!(one.has_network_rules());
        assert!(one.decide_connection("crates.io", 443).allow);
        assert!(one.decide_connection("CRATES.IO.", 80).allow);
        assert!(!one.decide_connection("crates.io", 22).allow);
        assert!(one.decide_connection("api.github.com", 443).allow);
        let d = one.decide_connection("evil.github.com", 443);
        assert!(!d.allow);
        assert_eq!(d.rule.as_deref(), Some("deny evil.github.com"));
        assert_eq!(d.line, Some(3));
        assert!(one.decide_connection("local.test", 8080).allow);
        assert!(!one.decide_connection("local.test", 443).allow);

        let two = set(&[
            "network:\n  allow: ['*']\n",
            "network:\n  allow: [crates.io]\n  reason: only the registry\n",
        ]);
        assert!(two.decide_connection("crates.io", 443).allow);
        let d = two.decide_connection("docs.rs", 443);
        assert!(!d.allow && d.reason.contains("only the registry"), "{d:?}");
        assert_eq!(d.policy.as_deref(), Some("layer1"));

        let none = set(&["default: allow\n"]);
        assert!(!none.has_network_rules());
        assert!(none.decide_connection("anything", 1).allow);
    }

    #[test]
    fn addresses_are_decided_after_resolution() {
        let ip = |s: &str| s.parse().unwrap();
        let s = set(&[
            "network:\n  allow: ['*', '127.0.0.1']\n",
            "network:\n  allow: ['*']\n",
        ]);
        assert!(s.network_admits_address(ip("127.0.0.1"), 80).is_err());
        let s = set(&[
            "network:\n  allow: ['*', '127.0.0.0/8']\n  deny: [127.0.0.2, 93.184.216.0/24]\n",
        ]);
        assert!(s.network_admits_address(ip("127.0.0.1"), 80).is_ok());
        assert!(s.network_admits_address(ip("169.254.169.254"), 80).is_err());
        // A deny entry naming an address holds whatever name led there,
        // public or private, and whatever allows it.
        let e = s.network_admits_address(ip("127.0.0.2"), 80).unwrap_err();
        assert!(e.to_string().contains("denied by `127.0.0.2`"), "{e}");
        assert!(s.network_admits_address(ip("93.184.216.34"), 443).is_err());
        assert!(s.network_admits_address(ip("8.8.8.8"), 443).is_ok());
    }

    #[test]
    fn a_network_list_is_bounded_like_rules() {
        let many: String = (0..=crate::model::MAX_RULES)
            .map(|i| format!("    - h{i}.test\n"))
            .collect();
        let e = parse_policy_yaml(
            &format!("network:\n  allow:\n{many}"),
            std::path::Path::new("p.yaml"),
        )
        .unwrap_err();
        assert!(e[0].message.contains("at most"), "{}", e[0].message);
        assert_eq!(e[0].line, crate::model::MAX_RULES as u64 + 3);
    }

    #[test]
    fn bad_entries_name_their_line() {
        let e = parse_policy_yaml(
            "network:\n  allow:\n    - 'a*b.com'\n",
            std::path::Path::new("p.yaml"),
        )
        .unwrap_err();
        assert_eq!(e[0].line, 3);
        assert!(
            e[0].message.starts_with("network.allow:"),
            "{}",
            e[0].message
        );
    }
}
