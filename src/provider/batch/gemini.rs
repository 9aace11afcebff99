//! Gemini's batch mode: the requests inline in one
//! `models/{model}:batchGenerateContent` (each with its id as metadata
//! `key`); the batch (`batches/…`) until it is done; then its inlined
//! responses, each an answer or an error.

use serde_json::{Value, json};

use super::poll::{errored, get_json, missing, post_json};
use super::types::{Endpoint, Outcomes, Polled};
use crate::provider::failure::Failure;

pub(super) async fn submit(ep: &Endpoint, items: &[(String, Value)]) -> Result<String, Failure> {
    let requests: Vec<Value> = items
        .iter()
        .map(|(id, body)| json!({"request": body, "metadata": {"key": id}}))
        .collect();
    let batch = json!({"batch": {
        "display_name": "runner",
        "input_config": {"requests": {"requests": requests}},
    }});
    let url = format!("{}/models/{}:batchGenerateContent", ep.base_url, ep.model);
    let v = post_json(ep, &url, &batch).await?;
    v["name"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| missing(ep, "batch name", &v))
}

pub(super) async fn poll(ep: &Endpoint, id: &str) -> Result<Polled, Failure> {
    let v = get_json(ep, &format!("{}/{id}", ep.base_url)).await?;
    let state = v
        .pointer("/metadata/state")
        .or_else(|| v.get("state"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let rest = match state {
        "BATCH_STATE_SUCCEEDED" => None,
        "BATCH_STATE_EXPIRED" => Some("expired"),
        "BATCH_STATE_CANCELLED" => Some("canceled"),
        "BATCH_STATE_FAILED" => {
            return Err(Failure::fatal(format!(
                "gemini batch {id} failed: {}",
                v.get("error").unwrap_or(&v)
            )));
        }
        _ if v["done"] == true => None,
        _ => return Ok(Polled::Running),
    };
    let responses = [
        "/response/inlinedResponses/inlinedResponses",
        "/metadata/output/inlinedResponses/inlinedResponses",
    ]
    .iter()
    .find_map(|p| v.pointer(p).and_then(Value::as_array));
    let mut out = Outcomes::new();
    for item in responses.into_iter().flatten() {
        let Some(cid) = item.pointer("/metadata/key").and_then(Value::as_str) else {
            continue;
        };
        let answer = match item.get("error") {
            Some(e) => {
                let status = e["code"].as_u64().map(|c| c as u16);
                Err(errored(ep, id, cid, status, e))
            }
            None => Ok(item["response"].clone()),
        };
        out.insert(cid.to_string(), answer);
    }
    Ok(Polled::Ended(out, rest))
}
