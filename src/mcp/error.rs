//! Why an MCP server could not start: each case says what to check.

use std::path::PathBuf;
use std::time::Duration;

use crate::contain::vars::ExpandError;

/// A server that could not start (or be reached).
#[derive(Debug, thiserror::Error)]
pub enum McpStartError {
    #[error("headers.{header}: {source}")]
    Variable { header: String, source: ExpandError },
    #[error("headers.{header}: {why}")]
    BadHeader { header: String, why: String },
    #[error("{url} answered 401/403 (unauthorized): {sent}; check that it holds a token the server accepts ({})", plain(.detail))]
    Unauthorized {
        url: String,
        /// What the task sends it: its header names and the variables
        /// they are read from.
        sent: String,
        detail: String,
    },
    #[error("{url} could not be reached or did not speak MCP: {}", plain(.detail))]
    Unreachable { url: String, detail: String },
    #[error("the connection to {url} was refused: {reason}")]
    NetworkDenied { url: String, reason: String },
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
    #[error("the MCP handshake failed: {} (see {})", plain(.detail), .log.display())]
    Handshake { detail: String, log: PathBuf },
    #[error("listing its tools failed: {}", plain(.detail))]
    ListTools { detail: String },
}

/// An error of the MCP library in plain words: without the Rust type
/// paths it names its transports by (`Transport
/// [rmcp::transport::worker::WorkerTransport<...>] error: Auth required`
/// becomes `Transport error: Auth required`).
pub fn plain(detail: &str) -> String {
    let mut out = String::with_capacity(detail.len());
    let mut rest = detail;
    while let Some(open) = rest.find('[') {
        // The bracket's end, counting nested brackets.
        let mut depth = 0usize;
        let close = rest[open..].char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(open + i);
                    }
                }
                _ => {}
            }
            None
        });
        let Some(close) = close else { break };
        out.push_str(&rest[..open]);
        if !rest[open..close].contains("::") {
            out.push_str(&rest[open..=close]);
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    // Any path left (`a::b::C`) is said by its last part.
    let words: Vec<String> = out
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(|w| match w.rfind("::") {
            Some(i) => w[i + 2..].to_string(),
            None => w.to_string(),
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn type_paths_are_left_out() {
        assert_eq!(
            plain(
                "Transport [rmcp::transport::worker::WorkerTransport<rmcp::transport::streamable_http_client::StreamableHttpClientWorker<reqwest::Client>>] error: Auth required"
            ),
            "Transport error: Auth required"
        );
        assert_eq!(
            plain("connection refused [os error 111]"),
            "connection refused [os error 111]"
        );
        assert_eq!(
            plain("bad value in std::io::Error here"),
            "bad value in Error here"
        );
        assert_eq!(plain("unclosed [a::b"), "unclosed b");
    }
}
