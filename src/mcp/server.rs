//! One MCP server over stdio: started in its own process group with a
//! minimal environment and its stderr in a log file, confined as commands
//! are (Landlock, seccomp: by default it writes only in the workspace copy,
//! a temp folder of its own and `/dev/null`; the network stays on unless
//! its `sandbox:` says `network: false`), spoken to with rmcp, stopped with
//! its whole group.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;

use super::McpServerSpec;
use super::error::McpStartError;
use crate::process::GroupGuard;

/// Variables a server gets from the runner's environment; the rest of its
/// environment is what the task gives it.
pub const SAFE_VARS: [&str; 6] = ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ"];

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A tool a server offers.
#[derive(Debug, Clone)]
pub struct ServerTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// A stdio server's process group, temp folder (`TMPDIR`) and process
/// bound, kept as long as it runs (what is left in the bound when the
/// server is dropped is killed: see `contain`'s Linux `pids`).
type StdioProcess = (
    Arc<GroupGuard>,
    tempfile::TempDir,
    crate::cleanup::Registered,
    Option<Arc<crate::contain::ProcessBound>>,
);

/// A running server.
pub struct McpServer {
    pub name: String,
    pub call_timeout: Duration,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
    peer: rmcp::Peer<RoleClient>,
    /// Set to the exit status when a stdio server's process ends (a remote
    /// server's sender is kept here and never sends).
    exited: tokio::sync::watch::Receiver<Option<String>>,
    _exit_tx: Option<tokio::sync::watch::Sender<Option<String>>>,
    /// A stdio server's process.
    process: Option<StdioProcess>,
    /// What its sandbox enforces, for the transcript (`remote` for a remote
    /// server, which runs elsewhere).
    pub sandbox: String,
}

impl McpServer {
    /// Starts (or, for `url:`, connects to) the server and lists its tools.
    pub async fn start(
        spec: &McpServerSpec,
        default_cwd: &std::path::Path,
        log: PathBuf,
        network: Option<&super::McpNetwork>,
    ) -> Result<(Arc<McpServer>, Vec<ServerTool>), McpStartError> {
        match &spec.url {
            Some(url) => {
                if let Some(n) = network {
                    decide_remote(url, n).await?;
                }
                Self::connect(spec, url).await
            }
            None => Self::spawn(spec, default_cwd, log, network.map(|n| n.proxy_port)).await,
        }
    }

    /// A remote server over streamable HTTP, with its headers (`${VAR}`
    /// read from the runner's environment now).
    async fn connect(
        spec: &McpServerSpec,
        url: &str,
    ) -> Result<(Arc<McpServer>, Vec<ServerTool>), McpStartError> {
        use rmcp::transport::StreamableHttpClientTransport;
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut headers = std::collections::HashMap::new();
        for (name, value) in &spec.headers {
            let bad = |why: String| McpStartError::BadHeader {
                header: name.clone(),
                why,
            };
            let value = crate::contain::vars::expand_env(value).map_err(|source| {
                McpStartError::Variable {
                    header: name.clone(),
                    source,
                }
            })?;
            let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| bad(e.to_string()))?;
            let mut value =
                reqwest::header::HeaderValue::from_str(&value).map_err(|e| bad(e.to_string()))?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        // The task's span, when the run is traced (W3C trace context
        // headers): the server's spans join the run's trace.
        for (name, value) in crate::telemetry::context::propagation_env() {
            if let Ok(v) = reqwest::header::HeaderValue::from_str(&value) {
                headers.insert(
                    reqwest::header::HeaderName::from_static(if name == "TRACEPARENT" {
                        "traceparent"
                    } else {
                        "tracestate"
                    }),
                    v,
                );
            }
        }
        let sent = sent_headers(spec);
        let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(headers);
        // rmcp builds its reqwest client itself.
        crate::net::tls::install();
        let transport = StreamableHttpClientTransport::from_config(config);
        let (service, tools) = handshake(
            ().serve(transport),
            |e| {
                let (url, detail) = (url.to_string(), e.to_string());
                if ["401", "403", "nauthorized", "orbidden"]
                    .iter()
                    .any(|s| detail.contains(s))
                {
                    McpStartError::Unauthorized {
                        url,
                        sent: sent.clone(),
                        detail,
                    }
                } else {
                    McpStartError::Unreachable { url, detail }
                }
            },
            url.to_string(),
        )
        .await?;
        let (exit_tx, exited) = tokio::sync::watch::channel(None);
        Ok(Self::running(
            spec,
            service,
            tools,
            exited,
            Some(exit_tx),
            None,
            "remote".into(),
        ))
    }

    fn running(
        spec: &McpServerSpec,
        service: RunningService<RoleClient, ()>,
        tools: Vec<rmcp::model::Tool>,
        exited: tokio::sync::watch::Receiver<Option<String>>,
        exit_tx: Option<tokio::sync::watch::Sender<Option<String>>>,
        process: Option<StdioProcess>,
        sandbox: String,
    ) -> (Arc<McpServer>, Vec<ServerTool>) {
        let tools = tools
            .into_iter()
            .map(|t| ServerTool {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect();
        let peer = service.peer().clone();
        (
            Arc::new(McpServer {
                name: spec.name.clone(),
                call_timeout: spec.timeout,
                service: tokio::sync::Mutex::new(Some(service)),
                peer,
                exited,
                _exit_tx: exit_tx,
                process,
                sandbox,
            }),
            tools,
        )
    }

    /// A stdio server: its own process group, confined.
    async fn spawn(
        spec: &McpServerSpec,
        default_cwd: &std::path::Path,
        log: PathBuf,
        proxy_port: Option<u16>,
    ) -> Result<(Arc<McpServer>, Vec<ServerTool>), McpStartError> {
        let io = |what: String| move |source| McpStartError::Io { what, source };
        let tmp = tempfile::Builder::new()
            .prefix("runner-tmp-mcp-")
            .tempdir()
            .map_err(io("temp folder".into()))?;
        let registered = crate::cleanup::register(tmp.path());
        let mut writable = vec![default_cwd.to_path_buf(), tmp.path().to_path_buf()];
        writable.extend(spec.sandbox.write.iter().cloned());
        let settings = crate::contain::SandboxSettings {
            proxy_port,
            ..spec.sandbox.clone()
        };
        let (confine, sandbox) = crate::contain::Confinement::new(&settings, &writable)
            .map_err(McpStartError::Sandbox)?;
        let pids = confine.as_ref().and_then(|c| c.pids());
        let confine = confine.map(Arc::new);
        let mut confined = crate::contain::ConfinedCommand::new(confine.as_ref(), &spec.command)
            .map_err(io(format!("supervising {}", spec.command)))?;
        let cmd = &mut confined.cmd;
        cmd.args(&spec.args)
            .current_dir(spec.cwd.as_deref().unwrap_or(default_cwd))
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        crate::sys::own_group(cmd);
        for var in SAFE_VARS {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        for var in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(var, tmp.path());
        }
        cmd.envs(&spec.env);
        // The task's proxy, whatever the server's env: says.
        if let Some(port) = proxy_port {
            for (k, _) in spec.env.iter().filter(|(k, _)| crate::net::is_proxy_var(k)) {
                cmd.env_remove(k);
            }
            cmd.envs(crate::net::proxy_env(port));
        }
        // The task's span, when the run is traced: the server's own spans
        // join the run's trace.
        cmd.envs(crate::telemetry::context::propagation_env());
        if let Some(dir) = log.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let log_file = std::fs::File::create(&log).map_err(io(format!("log {}", log.display())))?;
        cmd.stderr(log_file);
        let spawned = confined.spawn();
        let mut child = spawned.map_err(|source| McpStartError::Spawn {
            command: spec.command.clone(),
            source,
        })?;
        let group = Arc::new(GroupGuard::new(child.id().map_or(0, |p| p as i32)));
        let pidfd = child.id().and_then(crate::pidfd::pidfd_open);
        let stdout = child.stdout.take().expect("piped");
        let stdin = child.stdin.take().expect("piped");
        // The child is owned by its group guard from here on; reap it when
        // it exits, and tell pending calls, which would otherwise wait for
        // their timeout.
        let (exit_tx, exited) = tokio::sync::watch::channel(None);
        let monitor = group.clone();
        tokio::spawn(async move {
            // Its group goes with it, killed before the server is reaped
            // (see GroupGuard).
            if let Some(fd) = pidfd {
                crate::pidfd::wait_exit(fd).await;
                monitor.kill();
            }
            // What left its group goes too (and, without a pidfd, once
            // it is reaped: `confined` is dropped below).
            confined.end_escapes();
            let status = match child.wait().await {
                Ok(s) => s.to_string(),
                Err(e) => e.to_string(),
            };
            monitor.kill();
            monitor.retire();
            let _ = exit_tx.send(Some(status));
        });
        let (service, tools) = handshake(
            ().serve((stdout, stdin)),
            |e| McpStartError::Handshake {
                detail: e.to_string(),
                log: log.clone(),
            },
            format!("it (see {})", log.display()),
        )
        .await?;
        Ok(Self::running(
            spec,
            service,
            tools,
            exited,
            None,
            Some((group, tmp, registered, pids)),
            sandbox,
        ))
    }

    /// Calls a tool; the result is the `CallToolResult` as JSON.
    pub async fn call(
        &self,
        tool: &str,
        args: serde_json::Map<String, Value>,
    ) -> Result<Value, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let mut exited = self.exited.clone();
        let gone = async move {
            match exited.wait_for(Option::is_some).await {
                Ok(status) => format!("it exited: {}", status.clone().unwrap_or_default()),
                Err(_) => "it exited".to_string(),
            }
        };
        let call = tokio::time::timeout(self.call_timeout, self.peer.call_tool(params));
        let answer = tokio::select! {
            a = call => a,
            why = gone => return Err(CallError::Gone(why)),
        };
        match answer {
            Err(_) => Err(CallError::Timeout(self.call_timeout)),
            Ok(Err(e)) => Err(if self.peer.is_transport_closed() {
                CallError::Gone(e.to_string())
            } else {
                CallError::Failed(e.to_string())
            }),
            Ok(Ok(r)) => Ok(serde_json::to_value(r).unwrap_or(Value::Null)),
        }
    }

    /// Closes the session and kills the server's process group.
    pub async fn shutdown(&self) {
        if let Some(s) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_secs(2), s.cancel()).await;
        }
        if let Some((group, ..)) = &self.process {
            group.kill();
        }
    }
}

/// The MCP handshake and the tool list, within [`START_TIMEOUT`]: `serve`
/// is the handshake on a transport, `failed` says why it failed, `what`
/// names the server in a timeout.
async fn handshake<E: std::fmt::Display>(
    serve: impl std::future::Future<Output = Result<RunningService<RoleClient, ()>, E>>,
    failed: impl FnOnce(E) -> McpStartError,
    what: String,
) -> Result<(RunningService<RoleClient, ()>, Vec<rmcp::model::Tool>), McpStartError> {
    tokio::time::timeout(START_TIMEOUT, async {
        let service = serve.await.map_err(failed)?;
        let tools = service
            .list_all_tools()
            .await
            .map_err(|e| McpStartError::ListTools {
                detail: e.to_string(),
            })?;
        Ok((service, tools))
    })
    .await
    .map_err(|_| McpStartError::Timeout {
        what,
        limit: START_TIMEOUT,
    })?
}

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    Timeout(Duration),
    /// The server is gone (it exited or closed its pipes).
    Gone(String),
    Failed(String),
}

/// What a task sends a remote server, for an error that says what to
/// check: its header names and the variables they are read from (never a
/// value).
fn sent_headers(spec: &McpServerSpec) -> String {
    if spec.headers.is_empty() {
        return "the task sends it no headers (a server that wants a token takes one under `headers:`, such as `Authorization: \"Bearer ${TOKEN}\"`)".into();
    }
    let each: Vec<String> = spec
        .headers
        .iter()
        .map(|(name, value)| {
            let vars = crate::contain::vars::variables_in(value);
            if vars.is_empty() {
                format!("`{name}` (written in the task)")
            } else {
                format!("`{name}` from ${}", vars.join(", $"))
            }
        })
        .collect();
    format!("the task sends it headers: {}", each.join("; "))
}

/// Decides a remote server's connection by the task's `network:` rules
/// (its host, then the addresses it resolves to), and logs it.
async fn decide_remote(url: &str, n: &super::McpNetwork) -> Result<(), McpStartError> {
    use crate::net::resolve::{Host, Resolver};
    let denied = |reason: String| McpStartError::NetworkDenied {
        url: url.to_string(),
        reason,
    };
    let parsed = url::Url::parse(url).map_err(|e| denied(e.to_string()))?;
    let host =
        Host::parse(parsed.host_str().unwrap_or_default()).map_err(|e| denied(e.to_string()))?;
    let port = parsed.port_or_known_default().unwrap_or(443);
    let via = runner_output::ConnectionVia::Mcp;
    let mut record = crate::net::admit::record(via, &host, port, n.log.now_ms());
    let admitted =
        crate::net::admit::admit(&n.policy, &Resolver::from_env(), &host, port, &mut record).await;
    let reason = record.reason.clone();
    n.log.push(record);
    admitted.map(|_| ()).map_err(|_| denied(reason))
}
