//! The runner's HTTP proxy on 127.0.0.1: the only way out for a task's
//! commands, hooks and MCP stdio servers once a policy has `network:`.
//!
//! It takes `CONNECT host:port` (HTTPS and anything tunnelled) and plain
//! HTTP requests in absolute form (`GET http://host/path`, whose `Host`
//! header must name the same host). Each connection is decided on the host
//! as a URL parser reads it ([`Host::parse`]), resolved here, refused if it
//! resolves to a private address no entry names, and logged with its bytes.
//! The proxy reads inside a tunnel only where the task asks it to look for
//! its canaries in HTTPS (see `inspected` and [`super::inspect`]). A plain request is sent on with
//! `Connection: close`, its body framed as its head says (a length, or
//! chunks), and nothing more of the client's: after the response the
//! connection is closed. A second request pipelined behind the first
//! (another `Host`, for a server behind a shared address) is never sent
//! anywhere without a decision of its own; the client opens a connection
//! for it, which is decided as the first was. One connection a request
//! costs a local connect (well under a millisecond); reading the next
//! request's head here and deciding it again would cost a parser of
//! responses as well, to know where each one ends.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::admit::{Refusal, admit, record};
use super::log::NetLog;
use super::resolve::{Host, Resolver};
use body::{Body, send_body};
use runner_output::{Connection, ConnectionVia};
use runner_policy::PolicySet;

/// Longest request head read.
const MAX_HEAD: usize = 32 * 1024;
/// How long a client has to send its request head, and a host to accept.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// A running proxy; stopped (with its connections) on drop.
pub struct Proxy {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct Shared {
    policy: Arc<PolicySet>,
    resolver: Resolver,
    log: Arc<NetLog>,
    /// The task's decoy credentials: a request carrying one is refused.
    canaries: Option<Arc<crate::canary::Canaries>>,
    /// Tunnels are read for them too (`canaries: {inspect_https: true}`).
    inspector: Option<Arc<super::inspect::Inspector>>,
}

impl Proxy {
    /// Listens on a free port of 127.0.0.1.
    pub async fn start(
        policy: Arc<PolicySet>,
        resolver: Resolver,
        log: Arc<NetLog>,
        (canaries, inspector): (
            Option<Arc<crate::canary::Canaries>>,
            Option<Arc<super::inspect::Inspector>>,
        ),
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            policy,
            resolver,
            log,
            canaries,
            inspector,
        });
        let task = tokio::spawn(async move {
            // Dropped with the accept loop: aborting it ends every
            // connection.
            let mut conns = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let shared = shared.clone();
                        conns.spawn(async move { serve(stream, &shared).await });
                    }
                    Some(_) = conns.join_next(), if !conns.is_empty() => {}
                }
            }
        });
        Ok(Self { port, task })
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

/// A request head: its first line's parts and its header lines.
struct Head {
    method: String,
    target: String,
    version: String,
    headers: Vec<(String, String)>,
}

fn parse_head(bytes: &[u8]) -> Option<Head> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target, version) = (first.next()?, first.next()?, first.next()?);
    if first.next().is_some() || !version.starts_with("HTTP/1.") {
        return None;
    }
    let mut headers = Vec::new();
    for l in lines.filter(|l| !l.is_empty()) {
        let (k, v) = l.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Some(Head {
        method: method.to_string(),
        target: target.to_string(),
        version: version.to_string(),
        headers,
    })
}

/// Reads up to the end of the head; returns the head and what followed it.
async fn read_head(stream: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(i + 4);
            return Some((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
    }
}

async fn respond(stream: &mut TcpStream, status: &str, body: &str) {
    let msg = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len() + 1
    );
    let _ = stream.write_all(msg.as_bytes()).await;
    let _ = stream.write_all(b"\n").await;
    let _ = stream.shutdown().await;
}

/// Why a request is not one the proxy forwards (its 400 answer).
#[derive(Debug, thiserror::Error)]
enum BadRequest {
    #[error("bad CONNECT target `{0}`: {1}")]
    Target(String, &'static str),
    #[error("CONNECT `{0}` names no port")]
    NoPort(String),
    #[error("`{0}` is not a proxy request (absolute http:// URL or CONNECT)")]
    NotProxy(String),
    #[error("only http:// requests are forwarded as they are (use CONNECT for {0})")]
    Scheme(String),
    #[error("URLs with user information are refused")]
    UserInfo,
    #[error("the URL names no host")]
    NoHost,
    #[error(transparent)]
    Host(#[from] super::resolve::BadHost),
    #[error("the Host header `{0}` does not name the requested host")]
    HostHeader(String),
    #[error("the request's body is framed ambiguously (Content-Length and Transfer-Encoding)")]
    Framing,
}

/// What a request asks to reach.
struct Target {
    host: Host,
    port: u16,
    /// For a plain request: the head to send on, and how its body ends.
    forward: Option<(Vec<u8>, Body)>,
}

/// The body framing `head` declares; a head that declares it two ways
/// (a length and chunks, two lengths, a coding that is not chunked last)
/// is refused: a server could read it another way than the proxy does.
fn body_of(head: &Head) -> Result<Body, BadRequest> {
    let values = |name: &str| -> Vec<&str> {
        head.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .collect()
    };
    let lengths = values("content-length");
    let codings = values("transfer-encoding");
    if !codings.is_empty() {
        if !lengths.is_empty()
            || !codings
                .last()
                .is_some_and(|c| c.eq_ignore_ascii_case("chunked"))
        {
            return Err(BadRequest::Framing);
        }
        return Ok(Body::Chunked);
    }
    match lengths.as_slice() {
        [] => Ok(Body::None),
        [first, rest @ ..] if rest.iter().all(|l| l == first) => first
            .parse()
            .map(Body::Length)
            .map_err(|_| BadRequest::Framing),
        _ => Err(BadRequest::Framing),
    }
}

fn target_of(head: &Head) -> Result<Target, BadRequest> {
    if head.method.eq_ignore_ascii_case("CONNECT") {
        let (h, p) = runner_policy::host::split_host_port(&head.target)
            .map_err(|e| BadRequest::Target(head.target.clone(), e))?;
        let port = p.ok_or_else(|| BadRequest::NoPort(head.target.clone()))?;
        return Ok(Target {
            host: Host::parse(h)?,
            port,
            forward: None,
        });
    }
    let url =
        url::Url::parse(&head.target).map_err(|_| BadRequest::NotProxy(head.target.clone()))?;
    if url.scheme() != "http" {
        return Err(BadRequest::Scheme(url.scheme().to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(BadRequest::UserInfo);
    }
    let host = Host::parse(url.host_str().ok_or(BadRequest::NoHost)?)?;
    let port = url.port_or_known_default().unwrap_or(80);
    // The Host header must name the host decided on: a server behind a
    // shared address would otherwise serve the header's host.
    let named = head
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map(|(_, v)| v.as_str());
    let body = body_of(head)?;
    if head
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("host"))
        .count()
        > 1
    {
        return Err(BadRequest::HostHeader("(twice)".into()));
    }
    if let Some(h) = named {
        let bad = || BadRequest::HostHeader(h.to_string());
        let (hh, hp) = runner_policy::host::split_host_port(h).map_err(|_| bad())?;
        if Host::parse(hh).map_err(|_| bad())? != host || hp.unwrap_or(80) != port {
            return Err(bad());
        }
    }
    let mut path = url.path().to_string();
    if let Some(q) = url.query() {
        path.push('?');
        path.push_str(q);
    }
    let mut out = format!("{} {path} {}\r\n", head.method, head.version);
    let mut has_host = false;
    for (k, v) in &head.headers {
        let lk = k.to_ascii_lowercase();
        if lk.starts_with("proxy-") || lk == "connection" || lk == "keep-alive" {
            continue;
        }
        has_host |= lk == "host";
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if !has_host {
        out.push_str(&format!("Host: {}\r\n", url.authority()));
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(Target {
        host,
        port,
        forward: Some((out.into_bytes(), body)),
    })
}

async fn serve(mut client: TcpStream, shared: &Shared) {
    let start = Instant::now();
    let Ok(Some((head, rest))) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await
    else {
        return;
    };
    let raw = head;
    let Some(head) = parse_head(&raw) else {
        respond(&mut client, "400 Bad Request", "not an HTTP request").await;
        return;
    };
    let target = match target_of(&head) {
        Ok(t) => t,
        Err(why) => {
            respond(&mut client, "400 Bad Request", &why.to_string()).await;
            return;
        }
    };
    let mut record = record(
        ConnectionVia::Proxy,
        &target.host,
        target.port,
        shared.log.ms_at(start),
    );
    let mut rest = rest;
    let host = target.host.as_rule_text();
    let to = format!("{host}:{}", target.port);
    if let Some(c) = &shared.canaries {
        let body = target.forward.as_ref().map(|(_, b)| *b);
        match canary::inspect(c, &raw, (&to, body), &mut client, rest).await {
            Ok(body) => rest = body,
            Err(why) => {
                record.allowed = false;
                record.rule = Some("canary".into());
                record.reason = why.0;
                respond(
                    &mut client,
                    "403 Forbidden",
                    &format!("runner: {}", record.reason),
                )
                .await;
                record.duration_ms = start.elapsed().as_millis() as u64;
                shared.log.push(record);
                return;
            }
        }
    }
    let inspected = match (&shared.inspector, &shared.canaries, &target.forward) {
        (Some(i), Some(c), None) => Some((i, c)),
        _ => None,
    };
    match open(shared, &target, &mut record).await {
        Ok(upstream) if let Some((inspector, canaries)) = inspected => {
            let (sent, received) = (AtomicU64::new(0), AtomicU64::new(0));
            let counts = (&sent, &received);
            let names = (host.as_str(), to.as_str());
            let closed =
                inspected::relay(client, upstream, names, inspector, canaries, counts).await;
            record.bytes_sent = sent.load(Ordering::Relaxed);
            record.bytes_received = received.load(Ordering::Relaxed);
            if let Err(why) = closed {
                let refused_by = match why {
                    inspected::Closed::Canary => Some("canary"),
                    inspected::Closed::OtherHost { .. } => Some("tls host"),
                    _ => None,
                };
                if let Some(rule) = refused_by {
                    record.allowed = false;
                    record.rule = Some(rule.into());
                }
                record.reason = why.to_string();
            }
        }
        Ok(upstream) => {
            let (sent, received) = relay(client, upstream, target.forward, rest).await;
            record.bytes_sent = sent;
            record.bytes_received = received;
        }
        Err(Refusal::Denied) => {
            let body = format!("runner: connection refused: {}", record.reason);
            respond(&mut client, "403 Forbidden", &body).await;
        }
        Err(Refusal::Unresolved) => {
            respond(&mut client, "502 Bad Gateway", &record.reason).await;
        }
    }
    record.duration_ms = start.elapsed().as_millis() as u64;
    shared.log.push(record);
}

/// The upstream connection of an admitted request (see `admit`).
async fn open(
    shared: &Shared,
    target: &Target,
    record: &mut Connection,
) -> Result<TcpStream, Refusal> {
    let addrs = admit(
        &shared.policy,
        &shared.resolver,
        &target.host,
        target.port,
        record,
    )
    .await?;
    let upstream = connect_any(&addrs).await.map_err(|e| {
        record.reason = format!("{}:{}: {e}", record.host, target.port);
        Refusal::Unresolved
    })?;
    record.address = upstream.peer_addr().ok().map(|a| a.ip().to_string());
    Ok(upstream)
}

async fn connect_any(addrs: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::other("no address");
    for a in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(a)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = e,
            Err(_) => last = std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"),
        }
    }
    Err(last)
}

/// Relays a tunnel both ways, or one plain request up and its response
/// down; returns the bytes sent up and received.
async fn relay(
    mut client: TcpStream,
    mut upstream: TcpStream,
    forward: Option<(Vec<u8>, Body)>,
    rest: Vec<u8>,
) -> (u64, u64) {
    let Some((head, body)) = forward else {
        if client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await
            .is_err()
        {
            return (0, 0);
        }
        let mut sent = 0u64;
        if !rest.is_empty() {
            if upstream.write_all(&rest).await.is_err() {
                return (0, 0);
            }
            sent += rest.len() as u64;
        }
        return match tokio::io::copy_bidirectional(&mut client, &mut upstream).await {
            Ok((up, down)) => (sent + up, down),
            Err(_) => (sent, 0),
        };
    };
    if upstream.write_all(&head).await.is_err() {
        return (0, 0);
    }
    let (client_read, mut client_write) = client.into_split();
    let (upstream_read, mut upstream_write) = upstream.into_split();
    let mut from_client =
        tokio::io::BufReader::new(AsyncReadExt::chain(std::io::Cursor::new(rest), client_read));
    // The body goes up while the response comes down (a server may answer
    // before it has read all of it); nothing after the body goes up.
    let up = async {
        let n = send_body(&mut from_client, &mut upstream_write, body).await;
        let _ = upstream_write.shutdown().await;
        n
    };
    let down = async {
        let mut upstream_read = upstream_read;
        let n = tokio::io::copy(&mut upstream_read, &mut client_write)
            .await
            .unwrap_or(0);
        let _ = client_write.shutdown().await;
        n
    };
    let (up, down) = tokio::join!(up, down);
    (head.len() as u64 + up, down)
}

mod body;
mod canary;
mod inspected;

#[cfg(test)]
mod tests;
