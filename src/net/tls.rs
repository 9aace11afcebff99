//! The TLS of the runner's own HTTPS clients: model providers, `web_fetch`,
//! remote MCP servers and the OTLP exporter.
//!
//! rustls with *ring* as its cryptography, the one tonic (OTLP over gRPC)
//! already uses. reqwest's default provider would be aws-lc-rs, whose C
//! library takes a minute of a two-core machine to build on every fresh
//! clone, for nothing ring does not do here. reqwest is built without a
//! provider (`rustls-no-provider`) and panics on a client built before one
//! is installed: every client is built from [`client_builder`], and code
//! that lets a library build one (rmcp's streamable HTTP transport) calls
//! [`install`] first.

use std::sync::Once;

/// Makes ring the process's rustls provider (once; cheap after).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err: a provider is installed already (by an embedding program).
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder, with the provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    install();
    reqwest::Client::builder()
}

#[cfg(test)]
mod tests {
    /// Without the provider, reqwest panics on the first client (and rmcp
    /// builds its own with `Client::default()`).
    #[test]
    fn clients_build_with_the_provider_installed() {
        assert!(super::client_builder().build().is_ok());
        super::install();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        let _ = reqwest::Client::default();
        assert!(crate::provider::http::client("https://api.example.com").is_ok());
    }
}
