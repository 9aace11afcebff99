//! The benches' fake model servers, one request per connection: reading a
//! request and writing a JSON answer.

use std::io::{BufRead, Write};
use std::time::Instant;

/// Reads one request (its head, then its body by `content-length`);
/// returns the instant its first line was read.
pub fn read_request(reader: &mut impl BufRead) -> Instant {
    let mut first = None;
    let mut len = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
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
    first.unwrap_or_else(Instant::now)
}

/// Answers `body` as JSON and closes the connection.
pub fn answer_json(conn: &mut impl Write, body: &str) {
    let _ = write!(
        conn,
        "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
}
