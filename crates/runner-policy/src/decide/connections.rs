//! The network rules as a set of layers decides them: a connection to a
//! host and port (before resolution) and each address the host resolved
//! to. The rules themselves, and what one layer's `network:` says, are
//! [`crate::network`]'s.

use std::net::IpAddr;

use crate::PolicySet;
use crate::host::{is_private, normalize_host};
use crate::network::{AddressRefusal, ConnectionDecision, Network};

impl PolicySet {
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
