//! Fake batch APIs on 127.0.0.1, one vendor at a time, as the vendors
//! document them: Anthropic's Message Batches, OpenAI's files and
//! `/v1/batches`, Gemini's `batchGenerateContent`. Each batch stays
//! running for a number of polls, then ends with an outcome per request
//! that the test decides from the request's body. A request to the
//! interactive endpoint is answered as a streamed turn and counted.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::fake_llm::{FakeServer, Recorded, Reply};
use super::wire::{self, Turn, Vendor};

/// What a batched request comes to.
#[derive(Debug, Clone)]
pub enum Outcome {
    Answer(Turn),
    /// The vendor never ran it.
    Expired,
    /// The vendor answered it with an error.
    Errored(String),
}

type Decide = dyn Fn(&Value) -> Outcome + Send + Sync;

/// A submitted batch.
#[derive(Debug, Clone)]
pub struct Batch {
    pub id: String,
    /// (custom id, request body).
    pub items: Vec<(String, Value)>,
    pub polls: usize,
    /// The requests' endpoint (OpenAI's batches name one).
    pub endpoint: String,
}

struct State {
    batches: Vec<Batch>,
    /// Uploaded files (OpenAI), by id.
    files: Vec<(String, String)>,
    /// Polls a batch answers "running" to before it ends; `usize::MAX`:
    /// never ends (until [`FakeBatches::end_all`]).
    polls_before_end: usize,
}

/// The server and what it was sent.
pub struct FakeBatches {
    pub server: FakeServer,
    vendor: Vendor,
    state: Arc<Mutex<State>>,
}

impl FakeBatches {
    /// A fake of `vendor`'s batch API whose batches end after
    /// `polls_before_end` polls; `decide` answers each request.
    pub fn start(
        vendor: Vendor,
        polls_before_end: usize,
        decide: impl Fn(&Value) -> Outcome + Send + Sync + 'static,
    ) -> Self {
        let state = Arc::new(Mutex::new(State {
            batches: Vec::new(),
            files: Vec::new(),
            polls_before_end,
        }));
        let decide: Arc<Decide> = Arc::new(decide);
        let st = state.clone();
        let port = Arc::new(Mutex::new(0u16));
        let port_in = port.clone();
        let server = FakeServer::start(move |r, _| {
            let base = format!("http://127.0.0.1:{}", *port_in.lock().unwrap());
            handle(vendor, &st, decide.as_ref(), r, &base)
        });
        *port.lock().unwrap() = server.port;
        Self {
            server,
            vendor,
            state,
        }
    }

    pub fn batches(&self) -> Vec<Batch> {
        self.state.lock().unwrap().batches.clone()
    }

    /// Requests to the interactive endpoint (answered at once).
    pub fn direct(&self) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.method == "POST" && is_interactive(self.vendor, &r.path))
            .count()
    }

    /// Every batch ends at its next poll.
    pub fn end_all(&self) {
        self.state.lock().unwrap().polls_before_end = 0;
    }

    /// How many polls the batches had in all.
    pub fn polls(&self) -> usize {
        self.batches().iter().map(|b| b.polls).sum()
    }
}

fn is_interactive(v: Vendor, path: &str) -> bool {
    match v {
        Vendor::OpenAi => path.ends_with("/chat/completions") || path.ends_with("/responses"),
        Vendor::Anthropic => path == "/v1/messages",
        Vendor::Gemini => {
            path.contains(":generateContent") || path.contains(":streamGenerateContent")
        }
    }
}

fn ok(v: Value) -> Reply {
    Reply::json(200, &v)
}

fn not_found(what: &str) -> Reply {
    Reply::json(
        404,
        &json!({"error": {"message": format!("fake: no {what}")}}),
    )
}

fn text(body: String) -> Reply {
    Reply {
        headers: vec![("content-type".into(), "application/x-ndjson".into())],
        body: vec![super::fake_llm::Piece::Bytes(body.into_bytes())],
        ..Reply::json(200, &Value::Null)
    }
}

fn handle(v: Vendor, st: &Mutex<State>, decide: &Decide, r: &Recorded, base: &str) -> Reply {
    if r.method == "POST" && is_interactive(v, &r.path) {
        return wire::reply(v, &wire::turn("answered at once", vec![]));
    }
    let mut s = st.lock().unwrap();
    match v {
        Vendor::Anthropic => anthropic(&mut s, decide, r, base),
        Vendor::OpenAi => openai(&mut s, decide, r),
        Vendor::Gemini => gemini(&mut s, decide, r),
    }
}

/// Counts a poll of batch `id`; whether it has ended.
fn polled(s: &mut State, id: &str) -> Option<(bool, Batch)> {
    let limit = s.polls_before_end;
    let b = s.batches.iter_mut().find(|b| b.id == id)?;
    b.polls += 1;
    Some((limit != usize::MAX && b.polls > limit, b.clone()))
}

fn anthropic(s: &mut State, decide: &Decide, r: &Recorded, base: &str) -> Reply {
    const BATCHES: &str = "/v1/messages/batches";
    if r.method == "POST" && r.path == BATCHES {
        let id = format!("msgbatch_{}", s.batches.len() + 1);
        let items = r.body["requests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                (
                    q["custom_id"].as_str().unwrap().to_string(),
                    q["params"].clone(),
                )
            })
            .collect();
        s.batches.push(Batch {
            id: id.clone(),
            items,
            polls: 0,
            endpoint: BATCHES.into(),
        });
        return ok(json!({"id": id, "type": "message_batch", "processing_status": "in_progress"}));
    }
    let Some(rest) = r.path.strip_prefix(&format!("{BATCHES}/")) else {
        return not_found("such path");
    };
    if let Some(id) = rest.strip_suffix("/results") {
        let Some(b) = s.batches.iter().find(|b| b.id == id) else {
            return not_found("batch");
        };
        let lines: Vec<String> = b
            .items
            .iter()
            .map(|(cid, body)| {
                let result = match decide(body) {
                    Outcome::Answer(t) => {
                        json!({"type": "succeeded", "message": wire::whole(Vendor::Anthropic, &t)})
                    }
                    Outcome::Expired => json!({"type": "expired"}),
                    Outcome::Errored(m) => json!({"type": "errored", "error": {"type": "error",
                        "error": {"type": "invalid_request_error", "message": m}}}),
                };
                json!({"custom_id": cid, "result": result}).to_string()
            })
            .collect();
        return text(lines.join("\n") + "\n");
    }
    match polled(s, rest) {
        None => not_found("batch"),
        Some((false, b)) => ok(json!({"id": b.id, "processing_status": "in_progress"})),
        Some((true, b)) => ok(json!({"id": b.id, "processing_status": "ended",
            "results_url": format!("{base}{BATCHES}/{}/results", b.id)})),
    }
}

/// The JSON lines of a form upload's `file` part.
fn uploaded(raw: &str) -> String {
    let start = raw.find("filename=").unwrap();
    let body = &raw[start..];
    let from = body.find("\r\n\r\n").unwrap() + 4;
    let to = body[from..].find("\r\n--").unwrap();
    body[from..from + to].to_string()
}

fn openai(s: &mut State, decide: &Decide, r: &Recorded) -> Reply {
    if r.method == "POST" && r.path == "/v1/files" {
        assert!(r.raw.contains("name=\"purpose\"\r\n\r\nbatch"), "{}", r.raw);
        let id = format!("file-in-{}", s.files.len() + 1);
        s.files.push((id.clone(), uploaded(&r.raw)));
        return ok(json!({"id": id, "object": "file", "purpose": "batch"}));
    }
    if r.method == "POST" && r.path == "/v1/batches" {
        let file = r.body["input_file_id"].as_str().unwrap();
        let Some((_, lines)) = s.files.iter().find(|(id, _)| id == file) else {
            return not_found("file");
        };
        let items = lines
            .lines()
            .map(|l| {
                let q: Value = serde_json::from_str(l).unwrap();
                assert_eq!(q["url"], r.body["endpoint"]);
                (
                    q["custom_id"].as_str().unwrap().to_string(),
                    q["body"].clone(),
                )
            })
            .collect();
        let id = format!("batch_{}", s.batches.len() + 1);
        s.batches.push(Batch {
            id: id.clone(),
            items,
            polls: 0,
            endpoint: r.body["endpoint"].as_str().unwrap().to_string(),
        });
        return ok(json!({"id": id, "object": "batch", "status": "validating"}));
    }
    if let Some(rest) = r.path.strip_prefix("/v1/files/") {
        let Some(file) = rest.strip_suffix("/content") else {
            return not_found("file");
        };
        let Some(id) = file
            .strip_prefix("out-")
            .or_else(|| file.strip_prefix("err-"))
        else {
            return not_found("file");
        };
        let Some(b) = s.batches.iter().find(|b| b.id == id) else {
            return not_found("batch");
        };
        let errors = file.starts_with("err-");
        let lines: Vec<String> = b
            .items
            .iter()
            .filter_map(|(cid, body)| match (decide(body), errors) {
                (Outcome::Answer(t), false) => Some(json!({"id": "r", "custom_id": cid,
                    "response": {"status_code": 200, "body": if b.endpoint == "/v1/responses" {
                        wire::responses_whole(&t)
                    } else {
                        wire::whole(Vendor::OpenAi, &t)
                    }},
                    "error": null})),
                (Outcome::Expired, true) => Some(json!({"id": "r", "custom_id": cid, "response": null,
                    "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})),
                (Outcome::Errored(m), true) => Some(json!({"id": "r", "custom_id": cid,
                    "response": {"status_code": 400, "body": {"error": {"message": m, "type": "invalid_request_error"}}},
                    "error": null})),
                _ => None,
            })
            .map(|v| v.to_string())
            .collect();
        return text(lines.join("\n") + "\n");
    }
    let Some(id) = r.path.strip_prefix("/v1/batches/") else {
        return not_found("such path");
    };
    match polled(s, id) {
        None => not_found("batch"),
        Some((false, b)) => ok(json!({"id": b.id, "status": "in_progress"})),
        Some((true, b)) => ok(json!({"id": b.id, "status": "completed",
            "output_file_id": format!("out-{}", b.id), "error_file_id": format!("err-{}", b.id)})),
    }
}

fn gemini(s: &mut State, decide: &Decide, r: &Recorded) -> Reply {
    if r.method == "POST" && r.path.ends_with(":batchGenerateContent") {
        let items = r
            .body
            .pointer("/batch/input_config/requests/requests")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|q| {
                (
                    q["metadata"]["key"].as_str().unwrap().to_string(),
                    q["request"].clone(),
                )
            })
            .collect();
        let id = format!("batches/{}", s.batches.len() + 1);
        s.batches.push(Batch {
            id: id.clone(),
            items,
            polls: 0,
            endpoint: r.path.clone(),
        });
        return ok(json!({"name": id, "metadata": {"state": "BATCH_STATE_PENDING"}}));
    }
    let Some(id) = r.path.strip_prefix("/v1beta/") else {
        return not_found("such path");
    };
    match polled(s, id) {
        None => not_found("batch"),
        Some((false, b)) => ok(json!({"name": b.id, "metadata": {"state": "BATCH_STATE_RUNNING"}})),
        Some((true, b)) => {
            let responses: Vec<Value> = b
                .items
                .iter()
                .map(|(cid, body)| match decide(body) {
                    Outcome::Answer(t) => json!({"response": wire::whole(Vendor::Gemini, &t),
                        "metadata": {"key": cid}}),
                    Outcome::Expired | Outcome::Errored(_) => json!({
                        "error": {"code": 400, "message": "request failed", "status": "INVALID_ARGUMENT"},
                        "metadata": {"key": cid}}),
                })
                .collect();
            ok(json!({"name": b.id, "done": true,
                "metadata": {"state": "BATCH_STATE_SUCCEEDED"},
                "response": {"inlinedResponses": {"inlinedResponses": responses}}}))
        }
    }
}
