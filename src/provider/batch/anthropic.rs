//! Anthropic's Message Batches: the requests as `{custom_id, params}`
//! in one POST; the batch's `processing_status` until `ended`; then its
//! results, a JSON line per request (`succeeded` with the message,
//! `errored`, `canceled`, `expired`).

use serde_json::{Value, json};

use super::poll::{errored, get_json, get_text, json_lines, missing, not_run, post_json};
use super::types::{Endpoint, Outcomes, Polled};
use crate::provider::failure::Failure;

fn batches(ep: &Endpoint) -> String {
    format!("{}/v1/messages/batches", ep.base_url)
}

pub(super) async fn submit(ep: &Endpoint, items: &[(String, Value)]) -> Result<String, Failure> {
    let requests: Vec<Value> = items
        .iter()
        .map(|(id, body)| json!({"custom_id": id, "params": body}))
        .collect();
    let v = post_json(ep, &batches(ep), &json!({ "requests": requests })).await?;
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| missing(ep, "batch id", &v))
}

pub(super) async fn poll(ep: &Endpoint, id: &str) -> Result<Polled, Failure> {
    let v = get_json(ep, &format!("{}/{id}", batches(ep))).await?;
    if v["processing_status"].as_str() != Some("ended") {
        return Ok(Polled::Running);
    }
    // The results at the vendor's own address only: the key goes with
    // the request.
    let own = format!("{}/{id}/results", batches(ep));
    let url = match v["results_url"].as_str() {
        Some(u) if u.starts_with(&format!("{}/", ep.base_url)) => u.to_string(),
        _ => own,
    };
    let mut out = Outcomes::new();
    for item in json_lines(&get_text(ep, &url).await?)? {
        let Some(cid) = item["custom_id"].as_str() else {
            continue;
        };
        let result = &item["result"];
        let answer = match result["type"].as_str() {
            Some("succeeded") => Ok(result["message"].clone()),
            Some("errored") => Err(errored(ep, id, cid, None, &result["error"])),
            Some(kind) => Err(not_run(ep, id, cid, kind)),
            None => Err(missing(ep, "result type", &item)),
        };
        out.insert(cid.to_string(), answer);
    }
    Ok(Polled::Ended(out, None))
}
