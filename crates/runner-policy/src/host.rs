//! Hosts as rules name them: `docs.rs`, `*.github.com`, `127.0.0.1`,
//! `10.0.0.0/8`, `[::1]`, each with an optional `:port`.
//!
//! Shared by `Fetch(...)` rules and a policy's `network:` lists. Names are
//! compared in lower case without a trailing dot (`Docs.RS.` is `docs.rs`),
//! `*.example.com` matches names below `example.com` but not
//! `example.com` itself, and an address pattern matches the address only:
//! a name is never matched by the address it resolves to. Whether a
//! private address may be reached at all is a separate question
//! ([`is_private`], [`HostPattern::names_address`]).

use std::net::IpAddr;

/// What a host pattern matches.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hosts {
    /// `*`: every host.
    Any,
    /// `example.com`.
    Name(String),
    /// `*.example.com`, stored as `.example.com`.
    Below(String),
    /// `10.0.0.0/8`, or one address (`/32`, `/128`).
    Net { addr: IpAddr, prefix: u8 },
}

/// A compiled host pattern with its port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    hosts: Hosts,
    /// `None`: any port.
    pub port: Option<u16>,
}

/// Why a host pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a host pattern: {why}")]
pub struct HostError {
    text: String,
    why: &'static str,
}

/// A host in lower case without a trailing dot or IPv6 brackets.
pub fn normalize_host(host: &str) -> String {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    match h.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(inner) => inner.to_string(),
        None => h,
    }
}

/// Splits `host[:port]` (`[v6]:port` for IPv6). A bare IPv6 address has
/// no port.
pub fn split_host_port(text: &str) -> Result<(&str, Option<u16>), &'static str> {
    if let Some(rest) = text.strip_prefix('[') {
        let end = rest.find(']').ok_or("an unclosed `[`")?;
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(
                p.parse()
                    .map_err(|_| "the port is not a number up to 65535")?,
            ),
            None if after.is_empty() => None,
            None => return Err("text after `]`"),
        };
        return Ok((&text[..end + 2], port));
    }
    if text.matches(':').count() > 1 {
        // A bare IPv6 address (or network).
        return Ok((text, None));
    }
    match text.rsplit_once(':') {
        Some((h, p)) => Ok((
            h,
            Some(
                p.parse()
                    .map_err(|_| "the port is not a number up to 65535")?,
            ),
        )),
        None => Ok((text, None)),
    }
}

impl HostPattern {
    /// Compiles `host`, `*.domain`, `*`, an address or a network, each
    /// with an optional `:port`.
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let err = |why| HostError {
            text: text.to_string(),
            why,
        };
        let t = text.trim();
        if t.is_empty() {
            return Err(err("empty"));
        }
        let (host, port) = split_host_port(t).map_err(err)?;
        if port == Some(0) {
            return Err(err("port 0"));
        }
        let host = normalize_host(host);
        let hosts = if host == "*" {
            Hosts::Any
        } else if let Some((addr, bits)) = host.split_once('/') {
            let addr: IpAddr = addr
                .parse()
                .map_err(|_| err("a network needs an address"))?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let prefix: u8 = bits
                .parse()
                .ok()
                .filter(|b| *b <= max)
                .ok_or_else(|| err("the prefix length is out of range"))?;
            Hosts::Net { addr, prefix }
        } else if let Ok(addr) = host.parse::<IpAddr>() {
            Hosts::Net {
                addr,
                prefix: if addr.is_ipv4() { 32 } else { 128 },
            }
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_name(domain).map_err(err)?;
            Hosts::Below(format!(".{domain}"))
        } else {
            check_name(&host).map_err(err)?;
            Hosts::Name(host)
        };
        Ok(Self { hosts, port })
    }

    /// Whether `host` (as [`normalize_host`] gives it) on `port` matches.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match &self.hosts {
            Hosts::Any => true,
            Hosts::Name(n) => n == host,
            Hosts::Below(suffix) => host.len() > suffix.len() && host.ends_with(suffix.as_str()),
            Hosts::Net { addr, prefix } => host
                .parse::<IpAddr>()
                .is_ok_and(|ip| in_network(ip, *addr, *prefix)),
        }
    }

    /// Whether this pattern names `ip` by address or network (`*` does
    /// not): what lets a private address be reached.
    pub fn names_address(&self, ip: IpAddr, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        matches!(self.hosts, Hosts::Net { addr, prefix } if in_network(ip, addr, prefix))
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > 253 {
        return Err("a name of 1 to 253 characters");
    }
    if name.contains('*') {
        return Err("`*` only as `*` or at the start, as `*.example.com`");
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    if !name.chars().all(ok) || name.split('.').any(str::is_empty) {
        return Err("letters, digits, `-`, `_` and dots between labels (IDN names as xn--)");
    }
    Ok(())
}

fn in_network(ip: IpAddr, net: IpAddr, prefix: u8) -> bool {
    let ip = canonical(ip);
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) => {
            let mask = u32::MAX.checked_shl(32 - prefix as u32).unwrap_or(0);
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) => {
            let mask = u128::MAX.checked_shl(128 - prefix as u32).unwrap_or(0);
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

/// An IPv4 address written as IPv6 (`::ffff:127.0.0.1`) as IPv4.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// Addresses a connection may not reach unless a rule names them:
/// loopback, private networks, link-local (cloud metadata services at
/// 169.254.169.254), carrier-grade NAT, unspecified, multicast and the
/// IPv6 equivalents (unique local, link-local, IPv4-mapped ones).
pub fn is_private(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(a) => {
            let o = a.octets();
            a.is_loopback()
                || a.is_private()
                || a.is_link_local()
                || a.is_unspecified()
                || a.is_multicast()
                || a.is_broadcast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64)
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || o[0] >= 240
        }
        IpAddr::V6(a) => {
            let s = a.segments();
            a.is_loopback()
                || a.is_unspecified()
                || a.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                // NAT64 and 6to4 embed IPv4 addresses the check above
                // would not see.
                || (s[0] == 0x64 && s[1] == 0xff9b)
                || s[0] == 0x2002
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, host: &str, port: u16) -> bool {
        HostPattern::parse(p)
            .unwrap()
            .matches(&normalize_host(host), port)
    }

    #[test]
    fn names_wildcards_and_ports() {
        assert!(m("docs.rs", "DOCS.rs.", 443));
        assert!(!m("docs.rs", "sub.docs.rs", 443));
        assert!(m("*.github.com", "api.github.com", 443));
        assert!(m("*.github.com", "a.b.github.com", 443));
        assert!(!m("*.github.com", "github.com", 443));
        assert!(!m("*.github.com", "evilgithub.com", 443));
        assert!(m("docs.rs:8443", "docs.rs", 8443));
        assert!(!m("docs.rs:8443", "docs.rs", 443));
        assert!(m("*", "anything.example", 1));
        assert!(m("[::1]:80", "[::1]", 80));
        assert!(m("10.0.0.0/8", "10.1.2.3", 80));
        assert!(!m("10.0.0.0/8", "11.1.2.3", 80));
        // A name is not matched by an address rule, nor the reverse.
        assert!(!m("127.0.0.1", "localhost", 80));
        assert!(!m("localhost", "127.0.0.1", 80));
    }

    #[test]
    fn bad_patterns_say_why() {
        for bad in [
            "",
            "a*b.com",
            "docs.rs:http",
            "10.0.0.0/33",
            "a..b",
            "x:0",
            "ex ample",
        ] {
            assert!(HostPattern::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn private_addresses() {
        for p in [
            "127.0.0.1",
            "10.2.3.4",
            "192.168.1.1",
            "172.16.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "::ffff:127.0.0.1",
            "fd00::1",
            "fe80::1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(is_private(p.parse().unwrap()), "{p}");
        }
        for p in ["93.184.216.34", "2606:4700::1111", "8.8.8.8"] {
            assert!(!is_private(p.parse().unwrap()), "{p}");
        }
        let named = HostPattern::parse("127.0.0.1").unwrap();
        assert!(named.names_address("::ffff:127.0.0.1".parse().unwrap(), 9));
        assert!(
            !HostPattern::parse("*")
                .unwrap()
                .names_address("127.0.0.1".parse().unwrap(), 9)
        );
    }
}
