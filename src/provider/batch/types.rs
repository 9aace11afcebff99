//! What the batcher and the vendors' files share: where a batch API is,
//! and what a batch's requests came to.

use std::collections::HashMap;

use serde_json::Value;

use crate::provider::config::Vendor;
use crate::provider::failure::Failure;

/// Where a vendor's batch API is, and how to ask it.
#[derive(Clone)]
pub struct Endpoint {
    pub client: reqwest::Client,
    pub vendor: Vendor,
    /// The provider's base URL (no trailing slash).
    pub base_url: String,
    pub model: String,
    pub headers: Vec<(&'static str, String)>,
    /// The path of the requests' own endpoint (`/v1/chat/completions`).
    pub path: String,
}

/// A request's answer from a batch: the vendor's answer body, as the
/// interactive endpoint would have sent it.
pub type Answer = Result<Value, Failure>;

/// A vendor's per-request outcome, by custom id.
pub type Outcomes = HashMap<String, Answer>;

/// What a poll of a batch found.
pub enum Polled {
    Running,
    /// Ended: each request's outcome, and what became of those it does
    /// not name (`expired`, `canceled`; none: not answered).
    Ended(Outcomes, Option<&'static str>),
}
