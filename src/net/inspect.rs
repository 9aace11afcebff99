//! HTTPS the proxy can read (`canaries: {inspect_https: true}`): a CA of
//! the task's own, which its commands are told to trust, and for each
//! host a tunnel names, a certificate that CA signs.
//!
//! Without it a `CONNECT` tunnel is bytes the proxy relays unread, so a
//! decoy sent inside TLS leaves unseen (only the tunnel's host is
//! checked). With it the proxy ends the command's TLS itself, reads what
//! the command sends, and opens TLS of its own to the host, checking the
//! host's certificate against the machine's roots as the command would
//! have. The CA's key lives in the runner's memory only, and dies with
//! the task; its certificate is written to the task's temp folder, where
//! the variables commands read for their roots point (`SSL_CERT_FILE`,
//! `CURL_CA_BUNDLE`, `REQUESTS_CA_BUNDLE`, `GIT_SSL_CAINFO`, `PIP_CERT`
//! hold the machine's roots and it; `NODE_EXTRA_CA_CERTS` it alone).
//! A program that carries its own roots and ignores those variables
//! refuses the proxy's certificate: its request fails, nothing leaves.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// What could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    #[error("making the task's CA or a host's certificate: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("TLS settings: {0}")]
    Tls(#[from] rustls::Error),
    #[error("the machine's root certificates: none could be loaded ({0})")]
    Roots(String),
}

/// A task's CA, and the TLS settings of both sides of a tunnel.
pub struct Inspector {
    issuer: Issuer<'static, KeyPair>,
    ca_der: CertificateDer<'static>,
    ca_pem: String,
    /// Each host's server settings, made once.
    hosts: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
    upstream: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector").finish_non_exhaustive()
    }
}

/// Only HTTP/1.1 inside: what is read is framed as the proxy reads
/// plain requests.
const ALPN: &[u8] = b"http/1.1";

impl Inspector {
    /// A fresh CA, and the machine's roots for the hosts' side.
    pub fn new() -> Result<Self, InspectError> {
        super::tls::install();
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        params
            .distinguished_name
            .push(DnType::CommonName, "runner task proxy CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate()?;
        let cert = params.self_signed(&key)?;
        let ca_der = cert.der().clone();
        let ca_pem = cert.pem();
        let loaded = rustls_native_certs::load_native_certs();
        let mut roots = rustls::RootCertStore::empty();
        let (added, _) = roots.add_parsable_certificates(loaded.certs);
        if added == 0 {
            let why = loaded
                .errors
                .first()
                .map_or("no certificate found".to_string(), |e| e.to_string());
            return Err(InspectError::Roots(why));
        }
        let mut upstream = rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth();
        upstream.alpn_protocols = vec![ALPN.to_vec()];
        Ok(Self {
            issuer: Issuer::new(params, key),
            ca_der,
            ca_pem,
            hosts: Mutex::default(),
            upstream: Arc::new(upstream),
        })
    }

    /// The CA's certificate (PEM), for commands to trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The settings of the hosts' side.
    pub fn upstream(&self) -> Arc<rustls::ClientConfig> {
        self.upstream.clone()
    }

    /// The server settings the proxy shows a command for `host` (a name
    /// or an address): a certificate for it, signed by the task's CA.
    pub fn server_for(&self, host: &str) -> Result<Arc<rustls::ServerConfig>, InspectError> {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = hosts.get(host) {
            return Ok(c.clone());
        }
        let mut params = CertificateParams::new(vec![host.to_string()])?;
        params.distinguished_name.push(DnType::CommonName, host);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate()?;
        let leaf = params.signed_by(&key, &self.issuer)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone(), self.ca_der.clone()], key)?;
        config.alpn_protocols = vec![ALPN.to_vec()];
        let config = Arc::new(config);
        hosts.insert(host.to_string(), config.clone());
        Ok(config)
    }
}

/// The machine's root certificates as a PEM bundle, for commands: the
/// file `SSL_CERT_FILE` names, else the usual places of Linux and macOS;
/// empty when none is found.
pub fn machine_roots_pem() -> String {
    let named = std::env::var_os("SSL_CERT_FILE").map(std::path::PathBuf::from);
    let usual = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ];
    named
        .into_iter()
        .chain(usual.iter().map(std::path::PathBuf::from))
        .find_map(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's certificate chains to the task's CA, by name and by
    /// address, and is made once.
    #[test]
    fn hosts_get_certificates_the_ca_signs() {
        let i = Inspector::new().unwrap();
        assert!(i.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        let a = i.server_for("example.com").unwrap();
        let b = i.server_for("example.com").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert!(i.server_for("127.0.0.1").is_ok());
        assert_eq!(a.alpn_protocols, vec![b"http/1.1".to_vec()]);
    }
}
