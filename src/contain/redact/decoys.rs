//! The decoys (canaries) of the run's tasks: a token shape that is one is
//! left as it is, for a decoy the model reads must read as a real
//! credential (see `crate::canary`).
//!
//! A run keeps every task's decoys until its reports are written (they
//! render every task's text at the end, redacted then), so the list grows
//! with the tasks run: eight a task. A match is looked up by its windows
//! of each length a decoy has (a handful), not against every decoy.

use std::collections::{BTreeMap, HashSet};

/// Every decoy value of the run, by length in bytes.
static DECOYS: std::sync::RwLock<BTreeMap<usize, HashSet<Vec<u8>>>> =
    std::sync::RwLock::new(BTreeMap::new());

/// Leaves `value` out of redaction by shape from now on.
pub fn add_decoy(value: &str) {
    if value.is_empty() {
        return;
    }
    DECOYS
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .entry(value.len())
        .or_default()
        .insert(value.as_bytes().to_vec());
}

/// Whether a shape's match `text` is (or holds) a decoy.
pub(super) fn is_decoy(text: &str) -> bool {
    let decoys = DECOYS.read().unwrap_or_else(|e| e.into_inner());
    let bytes = text.as_bytes();
    decoys
        .range(..=bytes.len())
        .any(|(len, set)| bytes.windows(*len).any(|w| set.contains(w)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A match that is a decoy, or holds one, whatever else the run
    /// planted; a match that only holds part of one is none.
    #[test]
    fn a_decoy_is_found_whole_or_inside_a_match_among_many() {
        for i in 0..2_000 {
            add_decoy(&format!("ghp_decoyvalue{i:06}xxxxxxxxxxxxxxxxxx"));
        }
        add_decoy("AKIADECOYDECOY123456");
        assert!(is_decoy("AKIADECOYDECOY123456"));
        assert!(is_decoy("ghp_decoyvalue001234xxxxxxxxxxxxxxxxxx"));
        assert!(is_decoy("Bearer ghp_decoyvalue001999xxxxxxxxxxxxxxxxxx;"));
        assert!(!is_decoy("ghp_decoyvalue00123"));
        assert!(!is_decoy("AKIAREALREAL12345678"));
        assert!(!is_decoy(""));
    }
}
