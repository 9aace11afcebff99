//! Why an MCP server could not start: each case says what to check.

use std::path::PathBuf;
use std::time::Duration;

/// Why `${VAR}` in a header could not be filled in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("the variable {0} is not set")]
    Missing(String),
    #[error("`${{` without its `}}` in `{0}`")]
    Unclosed(String),
}

/// A server that could not start (or be reached).
#[derive(Debug, thiserror::Error)]
pub enum McpStartError {
    #[error("headers.{header}: {source}")]
    Variable { header: String, source: ExpandError },
    #[error("headers.{header}: {why}")]
    BadHeader { header: String, why: String },
    #[error("{url} refused the credentials (HTTP 401/403): check its headers ({detail})")]
    Unauthorized { url: String, detail: String },
    #[error("{url} could not be reached or did not speak MCP: {detail}")]
    Unreachable { url: String, detail: String },
    #[error("{what} did not answer within {} s", .limit.as_secs())]
    Timeout { what: String, limit: Duration },
    #[error("cannot create its {what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("cannot start `{command}`: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("its {0}")]
    Sandbox(#[from] crate::contain::SandboxError),
    #[error("the MCP handshake failed: {detail} (see {})", .log.display())]
    Handshake { detail: String, log: PathBuf },
    #[error("listing its tools failed: {detail}")]
    ListTools { detail: String },
}
