//! `Fetch(host[:port][/path])` rules: a host pattern ([`crate::host`]) and
//! an optional path, matched against `Fetch` signatures
//! ([`crate::Signature::fetch`]).

use globset::GlobMatcher;

use crate::host::{HostPattern, normalize_host, split_host_port};
use crate::path_pattern::CHILD;

/// The path part of a `Fetch` rule: a literal path matches itself and
/// everything beneath it, a glob what it matches (`tokio/**`).
#[derive(Debug, Clone)]
pub(crate) enum UrlPath {
    Literal(String),
    /// A glob, and whether it ends in `/**` (then the folder itself matches).
    Glob(GlobMatcher, bool),
}

/// Splits a `Fetch` specifier (rule or signature) at its first `/`.
pub(crate) fn split_url(spec: &str) -> (&str, &str) {
    match spec.find('/') {
        Some(i) => (&spec[..i], &spec[i + 1..]),
        None => (spec, ""),
    }
}

/// Splits a `Fetch` rule's specifier into its host and path. An address
/// followed by a prefix length is a network, not a path:
/// `10.0.0.0/8`, `10.0.0.0/8:8080/api`.
pub(crate) fn split_rule(spec: &str) -> (&str, &str) {
    let (host, rest) = split_url(spec);
    if host.parse::<std::net::IpAddr>().is_ok() {
        let (seg, path) = split_url(rest);
        let bits = seg.split(':').next().unwrap_or("");
        if (1..=3).contains(&bits.len()) && bits.bytes().all(|b| b.is_ascii_digit()) {
            return (&spec[..host.len() + 1 + seg.len()], path);
        }
    }
    (host, rest)
}

/// Whether a `Fetch` signature's specifier matches.
pub(crate) fn matches(host: &HostPattern, path: Option<&UrlPath>, spec: &str) -> bool {
    let (authority, sig_path) = split_url(spec);
    let Ok((h, port)) = split_host_port(authority) else {
        return false;
    };
    let h = normalize_host(h);
    // No port in a signature is the scheme's own.
    let host_ok = match port {
        Some(p) => host.matches(&h, p),
        None => host.matches(&h, 443) || host.matches(&h, 80),
    };
    host_ok
        && match path {
            None => true,
            Some(UrlPath::Literal(p)) => {
                let sp = sig_path.trim_end_matches('/');
                sp == p
                    || sp
                        .strip_prefix(p.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            }
            Some(UrlPath::Glob(g, folder)) => {
                let sp = sig_path.trim_end_matches('/');
                g.is_match(sig_path)
                    || g.is_match(sp)
                    || (*folder && g.is_match(format!("{sp}/{CHILD}")))
            }
        }
}

#[cfg(test)]
mod tests {
    use crate::{Pattern, PatternError, Signature};

    fn m(p: &str, s: &str) -> bool {
        let pat = Pattern::parse(p).unwrap();
        pat.matches(&Signature::new(pat.family, s), false)
    }

    #[test]
    fn fetch_rules_match_host_port_and_path() {
        assert!(m("Fetch(docs.rs)", "docs.rs/tokio/latest/"));
        assert!(m("Fetch(docs.rs)", "docs.rs:8443/x"));
        assert!(!m("Fetch(docs.rs)", "evil.rs/docs.rs"));
        assert!(m("Fetch(*.github.com)", "api.github.com/repos"));
        assert!(!m("Fetch(*.github.com)", "github.com/"));
        assert!(m("Fetch(docs.rs/tokio/**)", "docs.rs/tokio/latest/tokio/"));
        assert!(m("Fetch(docs.rs/tokio/**)", "docs.rs/tokio"));
        assert!(!m("Fetch(docs.rs/tokio/**)", "docs.rs/serde/"));
        assert!(!m("Fetch(docs.rs/tokio/**)", "docs.rs/tokio-util/"));
        assert!(m("Fetch(docs.rs/tokio)", "docs.rs/tokio/sync/"));
        assert!(!m("Fetch(docs.rs/tokio)", "docs.rs/tokio-util/"));
        assert!(m("Fetch(docs.rs:443)", "docs.rs/"));
        assert!(!m("Fetch(docs.rs:8443)", "docs.rs/"));
        assert!(m("Fetch(127.0.0.1)", "127.0.0.1:9000/x"));
        // An address with a prefix length is a network, not a path.
        assert!(m("Fetch(10.0.0.0/8)", "10.1.2.3/x"));
        assert!(m("Fetch(10.0.0.0/8:8080/api)", "10.1.2.3:8080/api/v1"));
        assert!(!m("Fetch(10.0.0.0/8:8080/api)", "10.1.2.3:8080/other"));
        assert!(m("Fetch(docs.rs/8)", "docs.rs/8"));
        assert!(m("Fetch", "anything/"));
        assert!(matches!(
            Pattern::parse("Fetch(a*b.com)"),
            Err(PatternError::Glob { .. })
        ));
        let sig = Signature::fetch("Docs.RS", Some(8443), "/tokio/");
        assert_eq!(sig.to_string(), "Fetch(docs.rs:8443/tokio/)");
        assert_eq!(
            Signature::fetch("::1", None, "/").to_string(),
            "Fetch([::1]/)"
        );
    }
}
