//! Connections the runner decided: a command's, hook's or MCP server's
//! through the runner's proxy, and each hop of a `web_fetch` call.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Who asked for a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionVia {
    /// A command, hook, check or MCP stdio server, through the proxy
    /// (`network:` rules).
    Proxy,
    /// The `web_fetch` tool (`Fetch(...)` rules), one record per hop.
    WebFetch,
    /// A remote MCP server the runner connects to (`network:` rules).
    Mcp,
    /// A connection of a confined command that the sandbox's supervisor
    /// refused (an address other than the proxy's, a Unix socket outside
    /// the task's folders, an abstract one).
    Sandbox,
}

impl ConnectionVia {
    /// As the JSON spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnectionVia::Proxy => "proxy",
            ConnectionVia::WebFetch => "web_fetch",
            ConnectionVia::Mcp => "mcp",
            ConnectionVia::Sandbox => "sandbox",
        }
    }
}

/// One connection decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Connection {
    /// Milliseconds since the task started.
    pub time_ms: u64,
    /// Who asked.
    pub via: ConnectionVia,
    /// The host asked for, as decided (lower case).
    pub host: String,
    /// The port.
    pub port: u16,
    /// The address connected to, once resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Whether it was allowed.
    pub allowed: bool,
    /// `allow crates.io`, `deny Fetch(evil.test)`, `default deny`; null
    /// when no rule decided.
    pub rule: Option<String>,
    /// The policy layer that decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The rule's line in that layer's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Why, in words.
    pub reason: String,
    /// Bytes sent to the host.
    pub bytes_sent: u64,
    /// Bytes received from it.
    pub bytes_received: u64,
    /// How long the connection lasted (0 for a refusal).
    pub duration_ms: u64,
}
