//! web_fetch: one web page as readable text (issue 34).
//!
//! Decided by `Fetch(host[:port]/path)` rules: the call's URL by the gate
//! like any call, and each redirect again here, on the host a URL parser
//! reads (user information is refused, encodings undone). Names are
//! resolved here and an address in a private network, loopback or a cloud
//! metadata service needs a rule naming it by address (`Fetch(127.0.0.1)`).
//! The request goes straight out, never through the commands' proxy:
//! `network:` rules are for commands, `Fetch` rules for this tool.
//!
//! Not in a task's tools unless its `tools:` names it: a tool that reaches
//! the internet is asked for, not handed out.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::net::resolve::{Host, Resolver, reachable};
use crate::provider::http::source_chain;
use crate::tools::{Description, Risk, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use runner_output::{Connection, ConnectionVia};
use runner_policy::{Signature, Verdict};

/// Most bytes of a body read; the rest is cut, with a note.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;
/// Most redirects followed.
const MAX_REDIRECTS: usize = 10;
/// A whole call's time, redirects included.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

pub struct WebFetch;

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// The page (default).
    #[default]
    Get,
    /// Only the status and headers.
    Head,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The page's URL (http:// or https://).
    pub url: String,
    /// `GET` (default) or `HEAD`.
    #[serde(default)]
    pub method: Method,
}

/// The parts of a URL a decision is made on.
struct Parts {
    host: Host,
    port: u16,
    /// The port when it is not the scheme's own.
    shown_port: Option<u16>,
    path: String,
}

fn parts(url: &url::Url) -> Result<Parts, ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::validation(format!(
            "only http:// and https:// URLs can be fetched, not {}:",
            url.scheme()
        )));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ToolError::validation(
            "URLs with user information (user@host) are refused",
        ));
    }
    let host = Host::parse(url.host_str().unwrap_or_default())
        .map_err(|e| ToolError::validation(e.to_string()))?;
    let port = url.port_or_known_default().unwrap_or(443);
    Ok(Parts {
        host,
        port,
        shown_port: url.port(),
        path: percent_decode(url.path()),
    })
}

/// `%xx` decoded (what most servers do before routing), lossily.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(v) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn signature(p: &Parts) -> Signature {
    Signature::fetch(&p.host.as_rule_text(), p.shown_port, &p.path)
}

/// Addresses checked for each host, which the client connects to: the
/// ones decided on, never a second lookup's.
#[derive(Default)]
struct Pinned(Mutex<HashMap<String, Vec<SocketAddr>>>);

impl reqwest::dns::Resolve for Pinned {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let found = self.0.lock().unwrap().get(name.as_str()).cloned();
        Box::pin(async move {
            let addrs = found.ok_or_else(|| -> Box<dyn std::error::Error + Send + Sync> {
                "the host was not decided".into()
            })?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// One client a process, with the pinned resolver.
fn client() -> &'static (reqwest::Client, Arc<Pinned>) {
    static CLIENT: OnceLock<(reqwest::Client, Arc<Pinned>)> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let pinned = Arc::new(Pinned::default());
        let c = crate::net::tls::client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(pinned.clone())
            .connect_timeout(Duration::from_secs(15))
            .user_agent(concat!(
                "runner/",
                env!("CARGO_PKG_VERSION"),
                " (web_fetch)"
            ))
            .build()
            .expect("the HTTP client builds");
        (c, pinned)
    })
}

impl Tool for WebFetch {
    type Args = Args;

    fn name(&self) -> &str {
        "web_fetch"
    }

    fn description(&self) -> Description {
        Description::new("Fetches a web page and returns it as readable text.")
            .long("HTML is turned into plain text with its links; JSON and text come as they are. Redirects are followed, each one checked against the policy.")
            .note(format!("Bodies over {} MB are cut, with a note", MAX_BODY_BYTES / (1024 * 1024)))
            .note("Use HEAD to see only the status and headers")
            .example(
                "Read a crate's documentation",
                json!({"url": "https://docs.rs/tokio/latest/tokio/"}),
            )
            .important("Only hosts the policy allows (Fetch rules) can be fetched")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    fn risk(&self) -> Risk {
        Risk::Medium
    }

    fn validate(&self, args: &Args, _: &ToolContext) -> Result<(), ToolError> {
        let url = url::Url::parse(&args.url)
            .map_err(|e| ToolError::validation(format!("`{}` is not a URL: {e}", args.url)))?;
        parts(&url).map(|_| ())
    }

    fn is_concurrency_safe(&self, _: &Args) -> bool {
        true
    }

    fn signatures(&self, args: &Args, _: &ToolContext) -> Vec<Signature> {
        url::Url::parse(&args.url)
            .ok()
            .and_then(|u| parts(&u).ok())
            .map(|p| vec![signature(&p)])
            .unwrap_or_default()
    }

    async fn call(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::time::timeout(CALL_TIMEOUT, fetch(args, ctx))
            .await
            .unwrap_or_else(|_| {
                Err(ToolError::timeout(format!(
                    "the fetch took longer than {} s",
                    CALL_TIMEOUT.as_secs()
                )))
            })
    }
}

/// A hop's record, completed as the hop goes.
fn record(ctx: &ToolContext, p: &Parts, started: Instant) -> Connection {
    let time_ms = ctx.net_log.as_ref().map_or(0, |l| l.ms_at(started));
    crate::net::admit::record(ConnectionVia::WebFetch, &p.host, p.port, time_ms)
}

fn log(ctx: &ToolContext, mut c: Connection, started: Instant) {
    c.duration_ms = started.elapsed().as_millis() as u64;
    if let Some(l) = &ctx.net_log {
        l.push(c);
    }
}

/// A hop the policy refused, and why (the decision's reason).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

/// Decides `sig` by the task's policy (the gate decided the first hop's
/// name; redirects and addresses are decided here).
fn decide(ctx: &ToolContext, sig: Signature, c: &mut Connection) -> Result<(), Refused> {
    let Some(policy) = &ctx.policy else {
        return Ok(());
    };
    let d = policy.decide("web_fetch", Risk::Medium, vec![sig]);
    record_decision(c, d)
}

/// An address a name resolved to: a private one must be allowed by a rule
/// naming it, any other must not be denied by one (a name is no way
/// around a rule on an address).
fn admit_address(
    ctx: &ToolContext,
    ip: std::net::IpAddr,
    sig: Signature,
    c: &mut Connection,
) -> Result<(), Refused> {
    let Some(policy) = &ctx.policy else {
        return Ok(());
    };
    if runner_policy::host::is_private(ip) {
        return decide(ctx, sig, c);
    }
    match policy.denied(&sig) {
        Some(d) => record_decision(c, d),
        None => Ok(()),
    }
}

fn record_decision(c: &mut Connection, d: runner_policy::Decision) -> Result<(), Refused> {
    c.rule = d.rule;
    c.policy = d.policy;
    c.line = d.line;
    c.reason = d.reason.unwrap_or_default();
    if d.verdict == Verdict::Allow {
        Ok(())
    } else {
        c.allowed = false;
        Err(Refused(c.reason.clone()))
    }
}

async fn fetch(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let (client, pinned) = client();
    let resolver = Resolver::from_env();
    let mut url = url::Url::parse(&args.url).map_err(|e| ToolError::validation(e.to_string()))?;
    let mut hops: Vec<String> = Vec::new();
    for hop in 0..=MAX_REDIRECTS {
        let started = Instant::now();
        let p = parts(&url)?;
        let mut c = record(ctx, &p, started);
        let refuse = |c: Connection, why: String| {
            log(ctx, c, started);
            Err(ToolError::permission(format!(
                "fetching {url} was refused: {why}"
            )))
        };
        let to = || format!("web_fetch to {}", p.host.as_rule_text());
        if let Some(why) =
            (ctx.canaries.as_ref()).and_then(|k| k.refuse(url.as_str().as_bytes(), to))
        {
            (c.allowed, c.rule, c.reason) = (false, Some("canary".into()), why.clone());
            return refuse(c, why);
        }
        // The first hop's name was decided with the call.
        if hop > 0
            && let Err(why) = decide(ctx, signature(&p), &mut c)
        {
            return refuse(c, why.to_string());
        }
        let addrs = match resolver.resolve(&p.host, p.port).await {
            Ok(a) => a,
            Err(e) => {
                c.reason = format!("{} could not be resolved: {e}", p.host.as_rule_text());
                log(ctx, c, started);
                return Err(ToolError::execution(format!(
                    "fetching {url}: could not resolve {}: {e}",
                    p.host.as_rule_text()
                )));
            }
        };
        // Each address decided in turn; only those admitted are used.
        let mut last = c.clone();
        let admitted = reachable(addrs, |ip, _| {
            let sig = Signature::fetch(&ip.to_string(), p.shown_port, &p.path);
            let mut hop = c.clone();
            let r = admit_address(ctx, ip, sig, &mut hop);
            if r.is_err() {
                last = hop;
            }
            r
        });
        let addrs = match admitted {
            Ok(a) => a,
            Err(e) => {
                let why = format!("{} {e}", p.host.as_rule_text());
                last.allowed = false;
                last.reason = why.clone();
                return refuse(last, why);
            }
        };
        c.address = addrs.first().map(|a| a.ip().to_string());
        if let Some(name) = url.host_str() {
            pinned.0.lock().unwrap().insert(name.to_string(), addrs);
        }
        let method = match args.method {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
        };
        let resp = client
            .request(method, url.clone())
            .header(
                reqwest::header::ACCEPT,
                "text/html, text/plain, application/json, text/markdown, */*;q=0.5",
            )
            .send()
            .await;
        let mut resp = match resp {
            Ok(r) => r,
            Err(e) => {
                c.reason = format!("the request failed: {e}");
                log(ctx, c, started);
                return Err(ToolError::execution(format!(
                    "fetching {url}: {}",
                    source_chain(&e)
                )));
            }
        };
        if c.reason.is_empty() {
            c.reason = "allowed with the call".into();
        }
        let status = resp.status();
        if status.is_redirection()
            && let Some(loc) = resp.headers().get(reqwest::header::LOCATION)
        {
            let next = loc
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .ok_or_else(|| {
                    ToolError::execution(format!("{url} redirects to an invalid Location"))
                })?;
            log(ctx, c, started);
            hops.push(format!("{url} -> {status}"));
            url = next;
            continue;
        }
        let mut body = Vec::new();
        let mut cut = false;
        let mut total = 0usize;
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    total += chunk.len();
                    let room = MAX_BODY_BYTES.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() > room {
                        cut = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    c.bytes_received = total as u64;
                    log(ctx, c, started);
                    return Err(ToolError::execution(format!(
                        "reading {url}: {}",
                        source_chain(&e)
                    )));
                }
            }
        }
        c.bytes_received = total as u64;
        log(ctx, c, started);
        return Ok(render(&url, &resp, &args, &body, cut, &hops));
    }
    Err(ToolError::execution(format!(
        "more than {MAX_REDIRECTS} redirects from {}",
        args.url
    )))
}

fn render(
    url: &url::Url,
    resp: &reqwest::Response,
    args: &Args,
    body: &[u8],
    cut: bool,
    hops: &[String],
) -> ToolOutput {
    let status = resp.status();
    let ctype = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut head = format!("URL: {url}\nStatus: {status}\n");
    if !ctype.is_empty() {
        head.push_str(&format!("Content-Type: {ctype}\n"));
    }
    for h in hops {
        head.push_str(&format!("Redirected: {h}\n"));
    }
    if args.method == Method::Head {
        for (k, v) in resp.headers() {
            head.push_str(&format!("{k}: {}\n", v.to_str().unwrap_or("(binary)")));
        }
        return ToolOutput::new(head, format!("HEAD {url}: {status}"));
    }
    let lower = ctype.to_ascii_lowercase();
    let is_html =
        lower.contains("html") || (lower.is_empty() && body.trim_ascii_start().starts_with(b"<"));
    let texty = lower.is_empty()
        || lower.starts_with("text/")
        || ["json", "xml", "javascript", "yaml", "toml", "markdown"]
            .iter()
            .any(|t| lower.contains(t));
    let text = if is_html {
        html2text::from_read(body, 100)
            .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned())
    } else if texty && !super::looks_binary(body) {
        String::from_utf8_lossy(body).into_owned()
    } else {
        format!("(binary content, {} bytes: not shown)", body.len())
    };
    let note = if cut {
        format!(
            "\n\n[the page was cut at {} MB; the rest was not read]",
            MAX_BODY_BYTES / (1024 * 1024)
        )
    } else {
        String::new()
    };
    let display = format!("GET {url}: {status}, {} bytes", body.len());
    ToolOutput::new(format!("{head}\n{text}{note}"), display)
        .with_metadata(json!({"status": status.as_u16(), "bytes": body.len(), "cut": cut}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(url: &str) -> Result<Parts, ToolError> {
        parts(&url::Url::parse(url).unwrap())
    }

    #[test]
    fn only_web_urls_without_user_information_are_fetched() {
        for bad in [
            "https://docs.rs@evil.test/",
            "https://user:pw@docs.rs/",
            "file:///etc/passwd",
            "ftp://docs.rs/x",
        ] {
            let e = parts_of(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"));
            assert_eq!(e.kind, crate::tools::ToolErrorKind::Validation, "{bad}");
        }
        // The signature is the host a URL parser reads, the path decoded.
        let p = parts_of("http://%65vil.TEST:8080/a%2Fb/../c?q=1").unwrap();
        assert_eq!(signature(&p).to_string(), "Fetch(evil.test:8080/c)");
        let p = parts_of("https://docs.rs/%61dmin").unwrap();
        assert_eq!(signature(&p).to_string(), "Fetch(docs.rs/admin)");
    }
}
