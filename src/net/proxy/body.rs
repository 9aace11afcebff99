//! A plain request's body, passed on as its head frames it (a length, or
//! chunks), and nothing after it.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Passes one line (of a chunked body's framing) from `from` to `to`; the
/// line, or `None` at the end, past 4 KiB or on an error.
async fn pass_line<R, W>(from: &mut R, to: &mut W) -> Option<Vec<u8>>
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncBufReadExt;
    let mut line = Vec::new();
    let n = from.read_until(b'\n', &mut line).await.unwrap_or(0);
    if n == 0 || line.len() > 4096 || to.write_all(&line).await.is_err() {
        return None;
    }
    Some(line)
}

/// Sends one request body framed as `body` from `from` to `to`; the bytes
/// sent (a malformed chunk ends it there).
pub(super) async fn send_body<R, W>(from: &mut R, to: &mut W, body: Body) -> u64
where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    async fn copy_n<R, W>(from: &mut R, to: &mut W, n: u64) -> u64
    where
        R: tokio::io::AsyncBufRead + Unpin,
        W: tokio::io::AsyncWrite + Unpin,
    {
        let mut part = from.take(n);
        tokio::io::copy_buf(&mut part, to).await.unwrap_or(0)
    }
    match body {
        Body::None => 0,
        Body::Length(n) => copy_n(from, to, n).await,
        Body::Chunked => {
            let mut sent = 0u64;
            loop {
                let Some(line) = pass_line(from, to).await else {
                    return sent;
                };
                sent += line.len() as u64;
                let text = String::from_utf8_lossy(&line);
                let size = text.split(';').next().unwrap_or("").trim();
                let Ok(size) = u64::from_str_radix(size, 16) else {
                    return sent;
                };
                if size == 0 {
                    // Trailers, up to an empty line.
                    loop {
                        let Some(t) = pass_line(from, to).await else {
                            return sent;
                        };
                        sent += t.len() as u64;
                        if t == b"\r\n" || t == b"\n" {
                            return sent;
                        }
                    }
                }
                // The chunk and its CRLF.
                let got = copy_n(from, to, size + 2).await;
                sent += got;
                if got < size + 2 {
                    return sent;
                }
            }
        }
    }
}

/// How a plain request's body ends (RFC 9112, section 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Body {
    None,
    Length(u64),
    Chunked,
}
