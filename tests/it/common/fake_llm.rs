//! A fake model server on 127.0.0.1 for the provider tests: plain HTTP/1.1
//! written by hand, so a test controls every byte, the SSE framing, pauses
//! between chunks and a connection cut in the middle of a chunked body.
//! Each request is recorded (method, path, headers, JSON body).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

/// One part of a response body.
#[derive(Debug, Clone)]
pub enum Piece {
    Bytes(Vec<u8>),
    Pause(Duration),
}

/// A canned response.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<Piece>,
    /// Chunked transfer encoding (streams); otherwise Content-Length.
    pub chunked: bool,
    /// Close the connection before the end of the chunked body.
    pub cut: bool,
}

impl Reply {
    pub fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: vec![Piece::Bytes(body.to_string().into_bytes())],
            chunked: false,
            cut: false,
        }
    }

    /// A server-sent-events stream; each item is one framed event
    /// (`data: ...\n\n`), sent as its own chunk.
    pub fn sse(events: &[String]) -> Self {
        Self {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: events
                .iter()
                .map(|e| Piece::Bytes(e.clone().into_bytes()))
                .collect(),
            chunked: true,
            cut: false,
        }
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }

    /// Keeps the first `n` events, then closes the connection mid-body.
    pub fn cut_after(mut self, n: usize) -> Self {
        self.body.truncate(n);
        self.cut = true;
        self
    }

    /// Pauses before event `n`.
    pub fn pause_before(mut self, n: usize, d: Duration) -> Self {
        let mut seen = 0;
        let mut at = self.body.len();
        for (i, p) in self.body.iter().enumerate() {
            if let Piece::Bytes(_) = p {
                if seen == n {
                    at = i;
                    break;
                }
                seen += 1;
            }
        }
        self.body.insert(at, Piece::Pause(d));
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The body as sent (a form upload is not JSON).
    pub raw: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

type Handler = dyn Fn(&Recorded, usize) -> Reply + Send + Sync;
type ProbeHandler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// Whether a request asks what a local server holds rather than for an
/// answer: llama.cpp's `/props`, vLLM's `/v1/models`, Ollama's
/// `/api/show` (the runner asks them for the model's context window).
pub fn is_probe(path: &str) -> bool {
    ["/props", "/models", "/api/show"]
        .iter()
        .any(|p| path.ends_with(p))
}

/// Probes and their answers: 404 unless a test gives a handler.
#[derive(Default)]
struct Probes {
    handler: Option<Box<ProbeHandler>>,
    seen: Vec<Recorded>,
}

/// The server; it stops with the test process. Probes ([`is_probe`]) are
/// kept apart: `requests` and the handler see only requests for answers.
pub struct FakeServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    probes: Arc<Mutex<Probes>>,
}

impl FakeServer {
    /// Answers request `n` (from 0) with `handler(request, n)`.
    pub fn start(handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let probes = Arc::new(Mutex::new(Probes::default()));
        let handler: Arc<Handler> = Arc::new(handler);
        let (recs, probed) = (requests.clone(), probes.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (recs, handler, probed) = (recs.clone(), handler.clone(), probed.clone());
                std::thread::spawn(move || serve(conn, &recs, handler.as_ref(), &probed));
            }
        });
        Self {
            port,
            requests,
            probes,
        }
    }

    /// Answers probes with `handler` (instead of 404).
    pub fn answer_probes(
        self,
        handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) -> Self {
        self.probes.lock().unwrap().handler = Some(Box::new(handler));
        self
    }

    /// The probes received.
    pub fn probes(&self) -> Vec<Recorded> {
        self.probes.lock().unwrap().seen.clone()
    }

    /// Answers with `replies` in order; past the end, a 400 saying so.
    pub fn queue(replies: Vec<Reply>) -> Self {
        Self::start(move |_, n| {
            replies.get(n).cloned().unwrap_or_else(|| {
                Reply::json(
                    400,
                    &serde_json::json!({"error": {"message": "fake server: no reply left"}}),
                )
            })
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(conn: TcpStream, recs: &Mutex<Vec<Recorded>>, handler: &Handler, probes: &Mutex<Probes>) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let rec = Recorded {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: String::from_utf8_lossy(&body).into_owned(),
    };
    if is_probe(&rec.path) {
        let reply = {
            let mut p = probes.lock().unwrap();
            p.seen.push(rec.clone());
            match &p.handler {
                Some(h) => h(&rec),
                None => Reply::json(404, &serde_json::json!({"error": "not found"})),
            }
        };
        let _ = write_reply(conn, &reply);
        return;
    }
    let n = {
        let mut r = recs.lock().unwrap();
        r.push(rec.clone());
        r.len() - 1
    };
    let reply = handler(&rec, n);
    let _ = write_reply(conn, &reply);
}

fn write_reply(mut conn: TcpStream, reply: &Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} Fake\r\nconnection: close\r\n", reply.status);
    for (k, v) in &reply.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if reply.chunked {
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        conn.write_all(head.as_bytes())?;
        conn.flush()?;
        for p in &reply.body {
            match p {
                Piece::Pause(d) => std::thread::sleep(*d),
                Piece::Bytes(b) => {
                    conn.write_all(format!("{:x}\r\n", b.len()).as_bytes())?;
                    conn.write_all(b)?;
                    conn.write_all(b"\r\n")?;
                    conn.flush()?;
                }
            }
        }
        if reply.cut {
            // Give the client the bytes sent so far, then drop the
            // connection with the body unfinished.
            std::thread::sleep(Duration::from_millis(50));
            return conn.shutdown(std::net::Shutdown::Both);
        }
        conn.write_all(b"0\r\n\r\n")?;
    } else {
        let mut bytes = Vec::new();
        for p in &reply.body {
            match p {
                Piece::Pause(d) => std::thread::sleep(*d),
                Piece::Bytes(b) => bytes.extend_from_slice(b),
            }
        }
        head.push_str(&format!("content-length: {}\r\n\r\n", bytes.len()));
        conn.write_all(head.as_bytes())?;
        conn.write_all(&bytes)?;
    }
    conn.flush()
}
