//! A task's canaries at its proxy: a request that carries a decoy
//! credential (in its line, its headers or its body) is refused before
//! any of it leaves, and once one has, nothing more leaves.
//!
//! A plain request's body is read whole here first (at most
//! [`MOST_CHECKED`]), then passed on as read. Inside a `CONNECT` tunnel
//! (HTTPS) the proxy reads nothing: only its target is checked.

use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use super::body::{Body, send_body};
use crate::canary::Canaries;

/// The largest plain request body checked; a larger one is refused while
/// the task has canaries.
const MOST_CHECKED: u64 = 16 * 1024 * 1024;
/// How long a client has to send the body.
const BODY_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a request is refused, in words for its 403 and its record.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct Refused(pub String);

/// Checks a request to `to` for `canaries`: its raw head `head`, and for
/// a plain request (`body`: how its body is framed; none for a tunnel)
/// its body, read from `rest` and `client`. The body as read (to
/// send on in place of `rest`), or why the request is refused.
pub(super) async fn inspect(
    canaries: &Canaries,
    head: &[u8],
    (to, body): (&str, Option<Body>),
    client: &mut TcpStream,
    rest: Vec<u8>,
) -> Result<Vec<u8>, Refused> {
    if canaries.has_moved() {
        return Err(Refused(
            "a decoy credential (canary) was on its way out earlier in this task: nothing more leaves"
                .into(),
        ));
    }
    let carries = "the request carries a decoy credential (a canary)";
    if canaries.moving(head, || {
        format!("a proxied request to {to} (its request line or headers)")
    }) {
        return Err(Refused(carries.into()));
    }
    let body = match body {
        Some(b) if b != Body::None => b,
        _ => return Ok(rest),
    };
    let mut read = Vec::new();
    let mut from = tokio::io::BufReader::new(
        AsyncReadExt::chain(std::io::Cursor::new(rest), client).take(MOST_CHECKED + 1),
    );
    tokio::time::timeout(BODY_TIMEOUT, send_body(&mut from, &mut read, body))
        .await
        .map_err(|_| Refused("the request's body did not arrive in time".into()))?;
    if read.len() as u64 > MOST_CHECKED {
        return Err(Refused(format!(
            "a request body over {} MiB cannot be checked for decoy credentials (canaries: false turns them off)",
            MOST_CHECKED >> 20
        )));
    }
    let plain = match body {
        Body::Chunked => unchunk(&read),
        _ => read.clone(),
    };
    if canaries.moving(&plain, || format!("a proxied request to {to} (its body)")) {
        return Err(Refused(carries.into()));
    }
    Ok(read)
}

/// The data of a chunked body (its framing left out), as far as it is
/// well formed.
fn unchunk(mut framed: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(framed.len());
    loop {
        let Some(eol) = framed.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let line = String::from_utf8_lossy(&framed[..eol]);
        let size = line.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            return out;
        };
        framed = &framed[eol + 2..];
        if size == 0 || framed.len() < size {
            out.extend_from_slice(&framed[..size.min(framed.len())]);
            return out;
        }
        out.extend_from_slice(&framed[..size]);
        framed = framed.get(size + 2..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_chunked_body_is_read_without_its_framing() {
        let framed = b"4\r\nWiki\r\n6;x=y\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\n\r\n";
        assert_eq!(super::unchunk(framed), b"Wikipedia in \r\n\r\nchunks.");
        assert_eq!(super::unchunk(b"zz\r\n"), b"");
    }
}
