//! Text as the page shows it: escaped for HTML (secrets redacted first),
//! and a call named by its signatures.

use crate::contain::redact;
use crate::engine::ToolCallRecord;

/// HTML-escapes text for element content and quoted attributes, secrets
/// redacted first (escaping would hide them from a redaction afterwards).
pub fn esc(s: &str) -> String {
    let s = redact(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// A call's signatures as decided, or its tool's name when no policy was
/// asked.
pub(super) fn signatures(c: &ToolCallRecord) -> String {
    c.decision.as_deref().map_or_else(
        || c.tool.clone(),
        |d| {
            d.signatures
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        },
    )
}
