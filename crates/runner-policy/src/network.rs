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

use std::net::IpAddr;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use crate::config_error::ConfigError;
use crate::host::{HostPattern, is_private, normalize_host};
use crate::policy::MAX_RULES;

/// Ports an entry without `:port` allows.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// `network:` as written.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkFile {
    /// Hosts that may be reached: `crates.io`, `*.github.com`,
    /// `registry.npmjs.org:443`, `10.0.0.0/8`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub allow: Vec<Spanned<String>>,
    /// Hosts that may not, whatever allows them.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub deny: Vec<Spanned<String>>,
    /// The ports an `allow` entry without its own `:port` opens
    /// (default 80 and 443).
    #[serde(default)]
    #[schemars(with = "Option<Vec<u16>>")]
    pub ports: Option<Spanned<Vec<u16>>>,
    /// Told with every refusal of this layer.
    #[serde(default)]
    pub reason: Option<String>,
}

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
    fn decide(&self, host: &str, port: u16) -> Result<&HostRule, Option<&HostRule>> {
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

impl crate::PolicySet {
    /// Whether any layer has `network:`: connections then go through the
    /// runner's proxy.
    pub fn has_network_rules(&self) -> bool {
        self.layers().iter().any(|l| l.network.is_some())
    }

    /// Decides a connection to `host:port` (before resolution). With no
    /// `network:` in any layer, everything is allowed.
    pub fn decide_connection(&self, host: &str, port: u16) -> ConnectionDecision {
        let host = normalize_host(host);
        let mut allowed_by = None;
        for layer in self.layers() {
            let Some(net) = &layer.network else { continue };
            let refuse = |rule: Option<String>, line: Option<u64>, why: String| {
                let why = match &net.reason {
                    Some(r) => format!("{why}: {r}"),
                    None => why,
                };
                ConnectionDecision {
                    allow: false,
                    rule,
                    policy: Some(layer.source.clone()),
                    line,
                    reason: why,
                }
            };
            match net.decide(&host, port) {
                Ok(r) => {
                    allowed_by.get_or_insert((r, &layer.source));
                }
                Err(Some(d)) => {
                    return refuse(
                        Some(format!("deny {}", d.text)),
                        Some(d.line),
                        format!("{host}:{port} is denied by `{}`", d.text),
                    );
                }
                Err(None) => {
                    return refuse(
                        None,
                        None,
                        format!(
                            "no network entry of {} allows {host}:{port} (ports {})",
                            layer.source,
                            net.ports
                                .iter()
                                .map(u16::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                }
            }
        }
        match allowed_by {
            Some((r, source)) => ConnectionDecision {
                allow: true,
                rule: Some(format!("allow {}", r.text)),
                policy: Some(source.clone()),
                line: Some(r.line),
                reason: format!("{host}:{port} is allowed by `{}`", r.text),
            },
            None => ConnectionDecision {
                allow: true,
                rule: None,
                policy: None,
                line: None,
                reason: "no layer has network rules".into(),
            },
        }
    }

    /// Whether a connection may reach `ip:port`, an address its host
    /// resolved to: not when a layer's `deny` entry names the address (a
    /// name is no way around an address rule), nor, for a private address,
    /// unless every layer with `network:` names it in an `allow` entry.
    pub fn network_admits_address(&self, ip: IpAddr, port: u16) -> Result<(), AddressRefusal> {
        let nets = || {
            self.layers()
                .iter()
                .filter_map(|l| l.network.as_ref().map(|n| (n, &l.source)))
        };
        for (n, source) in nets() {
            if let Some(d) = n.deny.iter().find(|r| r.pattern.names_address(ip, port)) {
                return Err(AddressRefusal::Denied {
                    addr: ip.to_string(),
                    entry: d.text.clone(),
                    policy: source.clone(),
                });
            }
        }
        let named = |n: &Network| n.allow.iter().any(|r| r.pattern.names_address(ip, port));
        if is_private(ip) && !nets().all(|(n, _)| named(n)) {
            return Err(AddressRefusal::Private {
                addr: ip.to_string(),
            });
        }
        Ok(())
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
        let many: String = (0..=crate::policy::MAX_RULES)
            .map(|i| format!("    - h{i}.test\n"))
            .collect();
        let e = parse_policy_yaml(
            &format!("network:\n  allow:\n{many}"),
            std::path::Path::new("p.yaml"),
        )
        .unwrap_err();
        assert!(e[0].message.contains("at most"), "{}", e[0].message);
        assert_eq!(e[0].line, crate::policy::MAX_RULES as u64 + 3);
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
