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
use crate::host::{HostPattern, normalize_host};

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
    pub ports: Option<Vec<u16>>,
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
    let allow = compile(&nf.allow, "allow");
    let deny = compile(&nf.deny, "deny");
    if let Some(ports) = &nf.ports
        && ports.contains(&0)
    {
        errors.push(ConfigError::new(file, 0, 0, "network.ports: port 0"));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Network {
        allow,
        deny,
        ports: nf.ports.clone().unwrap_or_else(|| DEFAULT_PORTS.to_vec()),
        reason: nf.reason.clone(),
    })
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

    /// Whether every layer with `network:` names the private address `ip`
    /// by address in an `allow` entry.
    pub fn network_names_address(&self, ip: IpAddr, port: u16) -> bool {
        self.layers()
            .iter()
            .filter_map(|l| l.network.as_ref())
            .all(|n| n.allow.iter().any(|r| r.pattern.names_address(ip, port)))
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
    fn private_addresses_need_an_entry_naming_them() {
        let s = set(&[
            "network:\n  allow: ['*', '127.0.0.1']\n",
            "network:\n  allow: ['*']\n",
        ]);
        assert!(!s.network_names_address("127.0.0.1".parse().unwrap(), 80));
        let s = set(&["network:\n  allow: ['*', '127.0.0.0/8']\n"]);
        assert!(s.network_names_address("127.0.0.1".parse().unwrap(), 80));
        assert!(!s.network_names_address("169.254.169.254".parse().unwrap(), 80));
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
