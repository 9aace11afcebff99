//! A tunnel the proxy reads (see [`crate::net::inspect`]): TLS ended here
//! with the task CA's certificate for the tunnel's host, and opened again
//! to the host. What the command sends is scanned for the task's canaries
//! before any of it goes on: the bytes that hold one never leave, and the
//! tunnel is closed. A command whose TLS names another host than its
//! tunnel (`CONNECT a` then SNI `b`) is refused: the proxy decided on `a`.

use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::canary::Canaries;
use crate::net::inspect::Inspector;

/// Why an inspected tunnel was closed, in words for its record.
#[derive(Debug, thiserror::Error)]
pub(super) enum Closed {
    #[error("the request carries a decoy credential (a canary), read inside its TLS")]
    Canary,
    #[error("the command's TLS names {sni}, not the tunnel's {host}")]
    OtherHost { sni: String, host: String },
    #[error("TLS with the command: {0}")]
    Command(std::io::Error),
    #[error("TLS with {host}: {err}")]
    Upstream { host: String, err: std::io::Error },
    #[error(transparent)]
    Setup(#[from] crate::net::inspect::InspectError),
}

/// Relays the tunnel to `host` (as the rules read it; `to` is it with its
/// port, for the record), reading what goes up; the bytes sent and
/// received, or why it was closed (`sent`, `received` then hold what
/// passed before).
pub(super) async fn relay(
    mut client: TcpStream,
    upstream: TcpStream,
    (host, to): (&str, &str),
    inspector: &Inspector,
    canaries: &Canaries,
    counts: (&AtomicU64, &AtomicU64),
) -> Result<(), Closed> {
    let (sent, received) = counts;
    client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .map_err(Closed::Command)?;
    let acceptor = tokio_rustls::TlsAcceptor::from(inspector.server_for(host)?);
    let client = acceptor.accept(client).await.map_err(Closed::Command)?;
    if let Some(sni) = client.get_ref().1.server_name()
        && !sni.eq_ignore_ascii_case(host)
    {
        return Err(Closed::OtherHost {
            sni: sni.to_string(),
            host: host.to_string(),
        });
    }
    let upstream_err = |err| Closed::Upstream {
        host: host.to_string(),
        err,
    };
    let name = rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| {
        upstream_err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.to_string(),
        ))
    })?;
    let upstream = tokio_rustls::TlsConnector::from(inspector.upstream())
        .connect(name, upstream)
        .await
        .map_err(upstream_err)?;
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut upstream_read, mut upstream_write) = tokio::io::split(upstream);
    // A canary split across two reads is still seen: each scan covers
    // the end of the last read too.
    let overlap = canaries.longest_form().max(1);
    let up = async {
        let mut buf = vec![0u8; 16 * 1024];
        let mut window: Vec<u8> = Vec::new();
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            window.extend_from_slice(&buf[..n]);
            if canaries.moving(&window, || {
                format!("a proxied request to {to} (read inside its TLS)")
            }) {
                return Err(Closed::Canary);
            }
            if upstream_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
            sent.fetch_add(n as u64, Ordering::Relaxed);
            let keep = window.len().saturating_sub(overlap);
            window.drain(..keep);
        }
        let _ = upstream_write.shutdown().await;
        Ok(())
    };
    let down = async {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match upstream_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if client_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
            received.fetch_add(n as u64, Ordering::Relaxed);
        }
        let _ = client_write.shutdown().await;
    };
    tokio::pin!(up, down);
    tokio::select! {
        r = &mut up => {
            r?;
            down.await;
        }
        () = &mut down => {}
    }
    Ok(())
}
