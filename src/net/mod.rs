//! The network by domain (issue 34): the runner's proxy for commands,
//! hooks and MCP servers (`network:` rules), the `web_fetch` tool's way out
//! (`Fetch(...)` rules), the resolver both use, and the log of every
//! connection decided.
//!
//! Both resolve names themselves and refuse private, loopback and
//! link-local addresses (cloud metadata services) after resolution unless
//! a rule names the address: a name that resolves to `127.0.0.1` is not
//! a way in. The sandbox makes the proxy the only way out for commands
//! (see `contain`'s Linux sandbox).

pub mod admit;
pub mod inspect;
pub mod log;
pub mod proxy;
pub mod resolve;
pub mod tls;

pub use log::NetLog;
pub use proxy::Proxy;
pub use resolve::Resolver;

/// The variables that point commands at the proxy (curl, git, pip, npm,
/// Python's urllib and most HTTP libraries read them; curl reads only the
/// lower-case `http_proxy`).
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut vars: Vec<(String, String)> = [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ]
    .iter()
    .map(|k| (k.to_string(), url.clone()))
    .collect();
    // Nothing bypasses it: a host in NO_PROXY would be connected to
    // directly, which the sandbox refuses anyway.
    vars.push(("no_proxy".into(), String::new()));
    vars.push(("NO_PROXY".into(), String::new()));
    vars
}

/// Whether `name` is one of the variables [`proxy_env`] sets.
pub fn is_proxy_var(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "http_proxy" | "https_proxy" | "all_proxy" | "no_proxy" | "ftp_proxy"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variable the proxy sets is one a command's own setting of is
    /// dropped for, in any case; so is `ftp_proxy`, which it does not set.
    #[test]
    fn the_proxy_variables_are_known_in_any_case_and_no_others() {
        for (k, _) in proxy_env(8080) {
            assert!(is_proxy_var(&k), "{k}");
        }
        for k in ["ftp_proxy", "FTP_PROXY", "Https_Proxy", "No_Proxy"] {
            assert!(is_proxy_var(k), "{k}");
        }
        for k in ["PATH", "HOME", "proxy", "http_proxy_user", "SOCKS_PROXY_X"] {
            assert!(!is_proxy_var(k), "{k}");
        }
    }
}
