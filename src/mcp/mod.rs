//! MCP servers as tool sources (seed 001's deferred chapter).
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

mod render;
mod server;
mod tool;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use server::{McpServer, SAFE_VARS, ServerTool};
pub use tool::McpTool;

use crate::tools::DynTool;

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
}

pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The servers of one task, running.
#[derive(Default)]
pub struct McpServers {
    servers: Vec<Arc<McpServer>>,
}

/// What starting a task's servers gave.
pub struct Started {
    pub servers: McpServers,
    pub tools: Vec<Arc<dyn DynTool>>,
    /// Servers skipped (not required) and tools left out, for the transcript.
    pub warnings: Vec<String>,
}

impl McpServers {
    /// Starts every server. The error is the first required server that
    /// could not start.
    pub async fn start(
        specs: &[McpServerSpec],
        default_cwd: &Path,
        log_dir: &Path,
    ) -> Result<Started, String> {
        let mut started = Started {
            servers: McpServers::default(),
            tools: Vec::new(),
            warnings: Vec::new(),
        };
        for spec in specs {
            let log = log_dir.join(format!("mcp-{}.log", spec.name));
            match McpServer::start(spec, default_cwd, log).await {
                Err(e) if spec.required => {
                    started.servers.shutdown().await;
                    return Err(format!(
                        "the MCP server `{}` could not start: {e}",
                        spec.name
                    ));
                }
                Err(e) => started.warnings.push(format!(
                    "the MCP server `{}` could not start and was skipped (required: false): {e}",
                    spec.name
                )),
                Ok((server, tools)) => {
                    if let Some(allow) = &spec.tools {
                        for missing in allow
                            .iter()
                            .filter(|a| !tools.iter().any(|t| &&t.name == a))
                        {
                            started.warnings.push(format!(
                                "the MCP server `{}` has no tool `{missing}` (listed in its tools:)",
                                spec.name
                            ));
                        }
                    }
                    for t in tools {
                        if spec.tools.as_ref().is_none_or(|a| a.contains(&t.name)) {
                            started
                                .tools
                                .push(Arc::new(McpTool::new(server.clone(), t)));
                        }
                    }
                    started.servers.servers.push(server);
                }
            }
        }
        Ok(started)
    }

    /// Closes every session and kills the servers' process groups.
    pub async fn shutdown(&mut self) {
        for s in self.servers.drain(..) {
            s.shutdown().await;
            // Dropping the last handle kills the group.
        }
    }
}
