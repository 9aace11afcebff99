//! The benches' fake model servers, one request per connection: reading a
//! request and writing a JSON answer.

use std::io::{BufRead, Write};
use std::time::Instant;

/// Reads one request (its head, then its body by `content-length`);
/// returns the instant its first line was read, and whether it is the
/// runner asking a local server for its context window (llama.cpp's
/// `/props`, vLLM's `/v1/models`, Ollama's `/api/show`), not for an
/// answer: see [`answer_probe`].
pub fn read_request(reader: &mut impl BufRead) -> (Instant, bool) {
    let mut first = None;
    let mut probe = false;
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if first.is_none() {
            let path = line.split_whitespace().nth(1).unwrap_or_default();
            probe = ["/props", "/models", "/api/show"]
                .iter()
                .any(|p| path.ends_with(p));
        }
        first.get_or_insert_with(Instant::now);
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; len];
    let _ = reader.read_exact(&mut body);
    (first.unwrap_or_else(Instant::now), probe)
}

/// Answers a probe: these fakes tell no window.
pub fn answer_probe(conn: &mut impl Write) {
    let _ = write!(
        conn,
        "HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
    );
}

/// Answers `body` as JSON and closes the connection.
pub fn answer_json(conn: &mut impl Write, body: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
}
