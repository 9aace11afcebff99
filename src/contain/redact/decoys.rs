//! The decoys (canaries) of the run's tasks: a token shape that is one is
//! left as it is, for a decoy the model reads must read as a real
//! credential (see `crate::canary`).

/// Every decoy value of the run.
static DECOYS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Leaves `value` out of redaction by shape from now on.
pub fn add_decoy(value: &str) {
    DECOYS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .push(value.to_string());
}

/// Whether a shape's match `text` is (or holds) a decoy.
pub(super) fn is_decoy(text: &str) -> bool {
    let decoys = DECOYS.read().unwrap_or_else(|e| e.into_inner());
    !decoys.is_empty() && decoys.iter().any(|d| text.contains(d.as_str()))
}
