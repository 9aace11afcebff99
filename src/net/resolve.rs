//! Names to addresses, for the proxy and `web_fetch`, and the check that
//! refuses private addresses no rule names.
//!
//! Hosts are parsed as URLs parse them (`url::Host`): percent-encoding and
//! IDNA are undone and numeric forms (`2130706433`, `0x7f.1`) become
//! addresses, so what is decided is what is connected to.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

/// Names the tests map to addresses, `name=ip,name=ip` (test builds only):
/// local servers under several names.
#[cfg(feature = "test-tools")]
pub const TEST_HOSTS: &str = "RUNNER_TEST_HOSTS";

/// A host no URL parser would take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a host: {why}")]
pub struct BadHost {
    pub text: String,
    pub why: String,
}

/// A host as a URL parser reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Addr(IpAddr),
}

impl Host {
    /// Parses a host (IPv6 in brackets or not).
    pub fn parse(text: &str) -> Result<Self, BadHost> {
        let t = text.trim();
        let bracketed = if t.contains(':') && !t.starts_with('[') {
            format!("[{t}]")
        } else {
            t.to_string()
        };
        match url::Host::parse(&bracketed) {
            Ok(url::Host::Domain(d)) => {
                Ok(Host::Name(d.trim_end_matches('.').to_ascii_lowercase()))
            }
            Ok(url::Host::Ipv4(a)) => Ok(Host::Addr(IpAddr::V4(a))),
            Ok(url::Host::Ipv6(a)) => Ok(Host::Addr(IpAddr::V6(a))),
            Err(e) => Err(BadHost {
                text: text.to_string(),
                why: e.to_string(),
            }),
        }
    }

    /// As rules match it: a name, an IPv4 address, or an IPv6 address
    /// without brackets.
    pub fn as_rule_text(&self) -> String {
        match self {
            Host::Name(n) => n.clone(),
            Host::Addr(a) => a.to_string(),
        }
    }
}

/// Resolves hosts.
#[derive(Debug, Default, Clone)]
pub struct Resolver {
    overrides: HashMap<String, Vec<IpAddr>>,
}

impl Resolver {
    /// The system's resolver (and, in test builds, [`TEST_HOSTS`]).
    pub fn from_env() -> Self {
        #[allow(unused_mut)]
        let mut r = Self::default();
        #[cfg(feature = "test-tools")]
        if let Ok(v) = std::env::var(TEST_HOSTS) {
            for pair in v.split(',') {
                if let Some((name, ip)) = pair.split_once('=')
                    && let Ok(ip) = ip.trim().parse()
                {
                    r.overrides
                        .entry(name.trim().to_ascii_lowercase())
                        .or_default()
                        .push(ip);
                }
            }
        }
        r
    }

    /// The addresses of `host` on `port`.
    pub async fn resolve(&self, host: &Host, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        match host {
            Host::Addr(a) => Ok(vec![SocketAddr::new(*a, port)]),
            Host::Name(n) => {
                if let Some(ips) = self.overrides.get(n) {
                    return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
                }
                let found: Vec<SocketAddr> =
                    tokio::net::lookup_host((n.as_str(), port)).await?.collect();
                if found.is_empty() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("{n} has no address"),
                    ));
                }
                Ok(found)
            }
        }
    }
}

/// No address a host resolved to may be reached: each, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("none of its addresses may be reached: {}", .0.join("; "))]
pub struct Unreachable(pub Vec<String>);

/// The addresses that may be connected to: those `admits` lets through
/// (it says why not of the others). The host's name was decided before;
/// its addresses are decided here, so no name leads around a rule on an
/// address (a private one in particular).
pub fn reachable<E: std::fmt::Display>(
    addrs: Vec<SocketAddr>,
    mut admits: impl FnMut(IpAddr, u16) -> Result<(), E>,
) -> Result<Vec<SocketAddr>, Unreachable> {
    let mut refused = Vec::new();
    let ok: Vec<SocketAddr> = addrs
        .into_iter()
        .filter(
            |a| match admits(runner_policy::host::canonical(a.ip()), a.port()) {
                Ok(()) => true,
                Err(why) => {
                    refused.push(why.to_string());
                    false
                }
            },
        )
        .collect();
    if ok.is_empty() {
        return Err(Unreachable(refused));
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_as_urls_do() {
        assert_eq!(
            Host::parse("Docs.RS.").unwrap(),
            Host::Name("docs.rs".into())
        );
        assert_eq!(
            Host::parse("%65vil.test").unwrap(),
            Host::Name("evil.test".into())
        );
        assert_eq!(
            Host::parse("2130706433").unwrap(),
            Host::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            Host::parse("0x7f.1").unwrap(),
            Host::Addr("127.0.0.1".parse().unwrap())
        );
        assert_eq!(
            Host::parse("[::1]").unwrap(),
            Host::Addr("::1".parse().unwrap())
        );
        assert_eq!(
            Host::parse("::1").unwrap(),
            Host::Addr("::1".parse().unwrap())
        );
        assert!(Host::parse("a b").is_err());
    }

    #[test]
    fn only_the_addresses_admitted_are_kept() {
        let a: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let b: SocketAddr = "93.184.216.34:80".parse().unwrap();
        // As a private address needs a name: a check like the policy's.
        let named = |yes: bool| {
            move |ip: IpAddr, _| {
                if yes || !runner_policy::host::is_private(ip) {
                    Ok(())
                } else {
                    Err(format!("{ip} is private"))
                }
            }
        };
        assert_eq!(reachable(vec![a, b], named(false)).unwrap(), vec![b]);
        assert!(
            reachable(vec![a], named(false))
                .unwrap_err()
                .to_string()
                .contains("127.0.0.1")
        );
        assert_eq!(reachable(vec![a], named(true)).unwrap(), vec![a]);
    }
}
