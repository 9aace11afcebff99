//! Whether a vendor's words say the request did not fit the model's
//! context window (OpenAI, Anthropic, Gemini, and the servers that copy
//! them): the error class `context_overflow`, which compacts and retries.

/// `lowercase`: the error's text, lowercased.
pub fn says_context_overflow(lowercase: &str) -> bool {
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceeds the maximum number of tokens",
        "context window",
    ]
    .iter()
    .any(|s| lowercase.contains(s))
}
