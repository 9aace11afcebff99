//! OpenAI's Batch API: the requests as a JSON-lines file
//! (`{custom_id, method, url, body}`) uploaded to `/files`, a batch of it
//! at `/batches` for the requests' endpoint; its `status` until it is
//! `completed`, `expired` or `cancelled`; then its output file (the
//! answers) and error file (the requests that failed), a JSON line each.

use serde_json::{Value, json};

use super::poll::{errored, get_json, get_text, json_lines, missing, post_bytes, post_json};
use super::types::{Endpoint, Outcomes, Polled};
use crate::provider::failure::Failure;

pub(super) async fn submit(ep: &Endpoint, items: &[(String, Value)]) -> Result<String, Failure> {
    let mut lines = String::new();
    for (id, body) in items {
        let line = json!({"custom_id": id, "method": "POST", "url": ep.path, "body": body});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let (content_type, form) = multipart(&lines);
    let file = post_bytes(ep, &format!("{}/files", ep.base_url), &content_type, form).await?;
    let file_id = file["id"]
        .as_str()
        .ok_or_else(|| missing(ep, "file id", &file))?;
    let batch = json!({
        "input_file_id": file_id,
        "endpoint": ep.path,
        "completion_window": "24h",
    });
    let v = post_json(ep, &format!("{}/batches", ep.base_url), &batch).await?;
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| missing(ep, "batch id", &v))
}

/// The upload's form: `purpose=batch` and the file; its content type.
/// (Written here: one form of two fields does not need reqwest's
/// multipart feature.) A JSON line holds no bare line break, so the
/// boundary never occurs in it.
fn multipart(lines: &str) -> (String, Vec<u8>) {
    let boundary = format!(
        "runner-batch-{:x}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"batch.jsonl\"\r\n\
         Content-Type: application/jsonl\r\n\r\n{lines}\r\n--{boundary}--\r\n"
    );
    (
        format!("multipart/form-data; boundary={boundary}"),
        body.into_bytes(),
    )
}

pub(super) async fn poll(ep: &Endpoint, id: &str) -> Result<Polled, Failure> {
    let v = get_json(ep, &format!("{}/batches/{id}", ep.base_url)).await?;
    let rest = match v["status"].as_str() {
        Some("completed") => None,
        Some("expired") => Some("expired"),
        Some("cancelled") => Some("canceled"),
        Some("failed") => {
            let why = v.pointer("/errors/data/0/message").unwrap_or(&v["errors"]);
            return Err(Failure::fatal(format!(
                "openai batch {id} failed: {}",
                why.as_str().map_or_else(|| why.to_string(), str::to_string)
            )));
        }
        Some(_) => return Ok(Polled::Running),
        None => return Err(missing(ep, "status", &v)),
    };
    let mut out = Outcomes::new();
    for field in ["output_file_id", "error_file_id"] {
        let Some(file) = v[field].as_str() else {
            continue;
        };
        let text = get_text(ep, &format!("{}/files/{file}/content", ep.base_url)).await?;
        for item in json_lines(&text)? {
            let Some(cid) = item["custom_id"].as_str() else {
                continue;
            };
            out.insert(cid.to_string(), outcome(ep, id, cid, &item));
        }
    }
    Ok(Polled::Ended(out, rest))
}

/// One line of an output or error file.
fn outcome(ep: &Endpoint, id: &str, cid: &str, item: &Value) -> super::types::Answer {
    let status = item
        .pointer("/response/status_code")
        .and_then(Value::as_u64)
        .map(|s| s as u16);
    match (status, &item["error"]) {
        (Some(200), Value::Null) => Ok(item["response"]["body"].clone()),
        (_, Value::Null) => Err(errored(ep, id, cid, status, &item["response"]["body"])),
        (_, e) if e["code"].as_str() == Some("batch_expired") => {
            Err(super::poll::not_run(ep, id, cid, "expired"))
        }
        (_, e) if e["code"].as_str() == Some("batch_cancelled") => {
            Err(super::poll::not_run(ep, id, cid, "canceled"))
        }
        (_, e) => Err(errored(ep, id, cid, status, e)),
    }
}
