//! The steps every connection under `network:` rules goes through, the
//! proxy's and a remote MCP server's alike: the host decided by name,
//! resolved, and its addresses decided (a deny entry naming an address,
//! a private address no entry names), each step written into the
//! connection's record.

use std::net::SocketAddr;

use super::resolve::{Host, Resolver, reachable};
use runner_output::{Connection, ConnectionVia};
use runner_policy::PolicySet;

/// A connection's record before it is decided: allowed, nothing sent.
pub fn record(via: ConnectionVia, host: &Host, port: u16, time_ms: u64) -> Connection {
    Connection {
        time_ms,
        via,
        host: host.as_rule_text(),
        port,
        address: None,
        allowed: true,
        rule: None,
        policy: None,
        line: None,
        reason: String::new(),
        bytes_sent: 0,
        bytes_received: 0,
        duration_ms: 0,
    }
}

/// How a connection did not go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The rules refused it (the proxy's 403).
    Denied,
    /// The host could not be resolved (the proxy's 502).
    Unresolved,
}

/// Decides `host:port` by the `network:` rules and resolves it; returns
/// the addresses that may be connected to. `record` holds the decision.
pub async fn admit(
    policy: &PolicySet,
    resolver: &Resolver,
    host: &Host,
    port: u16,
    record: &mut Connection,
) -> Result<Vec<SocketAddr>, Refusal> {
    let d = policy.decide_connection(&record.host, port);
    record.allowed = d.allow;
    record.rule = d.rule;
    record.policy = d.policy;
    record.line = d.line;
    record.reason = d.reason;
    if !record.allowed {
        return Err(Refusal::Denied);
    }
    let addrs = resolver.resolve(host, port).await.map_err(|e| {
        record.reason = format!("{} could not be resolved: {e}", record.host);
        Refusal::Unresolved
    })?;
    let addrs = reachable(addrs, |ip, p| policy.network_admits_address(ip, p)).map_err(|e| {
        record.allowed = false;
        record.reason = format!("{}:{port}: {e}", record.host);
        Refusal::Denied
    })?;
    record.address = addrs.first().map(|a| a.ip().to_string());
    Ok(addrs)
}
