//! MCP servers as tool sources.
//!
//! A task's `mcp_servers:` are started when the task starts (after its
//! workspace copy, which is their default working folder), their tools are
//! listed and registered as `SERVER__TOOL` with the signature
//! `Mcp(SERVER/TOOL)`, and the servers are stopped, with their whole process
//! group, when the task ends. A server that fails to start fails the task
//! when it is `required` (the default) and is skipped with a warning
//! otherwise; one that dies mid-run turns its calls into tool errors.
//! Servers get a minimal environment ([`server::SAFE_VARS`]) plus their
//! `env:`, never the runner's keys; their stderr goes to
//! `OUT/<task>/mcp-<server>.log`.

mod error;
mod render;
mod server;
mod tool;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use error::McpStartError;
pub use server::McpServer;
pub use tool::McpTool;

use crate::tools::Registry;

/// One entry of `mcp_servers:`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerSpec {
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Default: the task's workspace copy.
    pub cwd: Option<PathBuf>,
    pub required: bool,
    /// Only these tools are registered (all when `None`).
    pub tools: Option<Vec<String>>,
    /// Limit of one call.
    pub timeout: Duration,
    /// Where it may write and whether it may use the network (the same
    /// forms as a task's `sandbox:`; the network is on by default).
    pub sandbox: crate::contain::SandboxSettings,
    /// A remote server (streamable HTTP) instead of a command.
    pub url: Option<String>,
    /// Headers sent to a remote server; `${VAR}` names a variable of the
    /// runner's environment, read when the server starts.
    pub headers: BTreeMap<String, String>,
}

/// A required server that could not start: the task cannot run.
#[derive(Debug, thiserror::Error)]
#[error("the MCP server `{name}` could not start: {source}")]
pub struct RequiredServerFailed {
    pub name: String,
    pub source: McpStartError,
}

/// A task's `network:` rules, for its MCP servers: a stdio server gets
/// the task's proxy (and the sandbox that makes it the only way out), a
/// remote one is decided before it is connected to.
#[derive(Clone)]
pub struct McpNetwork {
    pub policy: Arc<runner_policy::PolicySet>,
    pub log: Arc<crate::net::NetLog>,
    pub proxy_port: u16,
}

pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The servers of one task, running.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
}

impl McpServers {
    /// Starts a task's servers and registers their tools in `registry`,
    /// returning the running servers and the warnings for the transcript
    /// (servers skipped, tools missing or left out). In plan mode no server
    /// is started: its tools may write. The error is the first required
    /// server that could not start.
    pub async fn start_into(
        specs: &[McpServerSpec],
        plan_mode: bool,
        default_cwd: &Path,
        log_dir: &Path,
        registry: &mut Registry,
        network: Option<&McpNetwork>,
    ) -> Result<(McpServers, Vec<String>), RequiredServerFailed> {
        let mut servers = McpServers::default();
        let mut warnings = Vec::new();
        if plan_mode {
            if !specs.is_empty() {
                warnings.push(
                    "plan mode: the MCP servers were not started (their tools may write)".into(),
                );
            }
            return Ok((servers, warnings));
        }
        for spec in specs {
            let log = log_dir.join(format!("mcp-{}.log", spec.name));
            let (server, tools) = match McpServer::start(spec, default_cwd, log, network).await {
                Ok(started) => started,
                Err(e) if spec.required => {
                    servers.shutdown().await;
                    return Err(RequiredServerFailed {
                        name: spec.name.clone(),
                        source: e,
                    });
                }
                Err(e) => {
                    warnings.push(format!(
                        "the MCP server `{}` could not start and was skipped (required: false): {e}",
                        spec.name
                    ));
                    continue;
                }
            };
            if let Some(allow) = &spec.tools {
                for missing in allow
                    .iter()
                    .filter(|a| !tools.iter().any(|t| &&t.name == a))
                {
                    warnings.push(format!(
                        "the MCP server `{}` has no tool `{missing}` (listed in its tools:)",
                        spec.name
                    ));
                }
            }
            for t in tools {
                if spec.tools.as_ref().is_none_or(|a| a.contains(&t.name))
                    && let Err(e) = registry.register(Arc::new(McpTool::new(server.clone(), t)))
                {
                    warnings.push(format!("MCP tool left out: {e}"));
                }
            }
            servers.servers.push(server);
        }
        Ok((servers, warnings))
    }

    /// What each server's sandbox enforces, by server name.
    pub fn sandbox_notes(&self) -> std::collections::BTreeMap<String, String> {
        self.servers
            .iter()
            .map(|s| (s.name.clone(), s.sandbox.clone()))
            .collect()
    }

    /// Closes every session and kills the servers' process groups.
    pub async fn shutdown(&mut self) {
        for s in self.servers.drain(..) {
            s.shutdown().await;
            // Dropping the last handle kills the group.
        }
    }
}
