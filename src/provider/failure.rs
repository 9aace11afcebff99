//! What a failed request to a model's server is: its class (rate limit,
//! overload, a spent quota, a refused key, a context overflow ...) from
//! the HTTP status and the vendor's words, and the vendor's message from
//! an error body. The class decides whether [`super::retry`] sends the
//! request again.

use std::time::Duration;

use runner_output::ErrorClass;
use serde_json::Value;

/// One failed attempt.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
    pub class: ErrorClass,
    /// Whether this attempt may be sent again: its class says so, unless a
    /// stream already handed out some of its calls.
    pub retryable: bool,
    /// What the server asked for (`Retry-After`, `retry-after-ms`).
    pub retry_after: Option<Duration>,
    /// What the refusal's headers say of the server's rate limits.
    pub limits: super::rate_headers::Limits,
    /// A rate-limit refusal whose server admitted other requests
    /// meanwhile: sent again without spending a retry.
    pub free_retry: bool,
    /// The context window a context-overflow refusal names.
    pub window: Option<u64>,
    /// A stream that failed after it handed out some of its calls: sent
    /// again (or to another model), it would ask for them twice.
    pub calls_started: bool,
}

impl Failure {
    pub fn of(class: ErrorClass, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            class,
            retryable: class.retryable(),
            retry_after: None,
            limits: Default::default(),
            free_retry: false,
            window: None,
            calls_started: false,
        }
    }
    /// An answer that cannot be read.
    pub fn fatal(message: impl Into<String>) -> Self {
        Self::of(ErrorClass::BadResponse, message)
    }
    /// A connection error, a timeout, a stream cut short.
    pub fn transient(message: impl Into<String>) -> Self {
        Self::of(ErrorClass::Unavailable, message)
    }
    /// An error the vendor sent in place of (or in the middle of) an
    /// answer (`error`: its JSON; `context`: "error in the answer" ...):
    /// its message, classed by its words and type.
    pub fn answered(context: &str, error: &Value) -> Self {
        let message = format!("{context}: {}", error_of(error));
        let class = classify(None, &format!("{message} {error}"));
        Self::of(class, message)
    }
}

/// Whether a vendor's words (lowercased) say the request did not fit the
/// model's context window (OpenAI, Anthropic, Gemini, and the servers that
/// copy them).
fn says_context_overflow(lowercase: &str) -> bool {
    [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceeds the maximum number of tokens",
        "context window",
        // llama.cpp's server.
        "exceed_context_size_error",
        "exceeds the available context size",
    ]
    .iter()
    .any(|s| lowercase.contains(s))
}

/// The context window a refusal of a too-long prompt names, as servers
/// word it: OpenAI's and vLLM's "maximum context length is N tokens",
/// llama.cpp's `"n_ctx": N`, Anthropic's "prompt is too long: M tokens > N
/// maximum".
pub fn stated_window(body: &str) -> Option<u64> {
    if let Some((n, _)) = number_after(body, "maximum context length is") {
        return Some(n);
    }
    if let Some((n, _)) = number_after(body, "\"n_ctx\":") {
        return Some(n);
    }
    // "prompt is too long: 250000 tokens > 200000 maximum"
    let (n, rest) = number_after(body, "tokens >")?;
    rest.trim_start().starts_with("maximum").then_some(n)
}

/// The number (above 0) after the first `marker` in `text`, and the text
/// after the number.
fn number_after<'t>(text: &'t str, marker: &str) -> Option<(u64, &'t str)> {
    let rest = text[text.find(marker)? + marker.len()..].trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n = rest[..digits].parse().ok().filter(|&n| n > 0)?;
    Some((n, &rest[digits..]))
}

/// The class of a failure from its HTTP status (none for an error inside
/// an answer or a stream) and the vendor's words.
pub fn classify(status: Option<u16>, text: &str) -> ErrorClass {
    let t = text.to_ascii_lowercase();
    let says = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if says_context_overflow(&t) {
        return ErrorClass::ContextOverflow;
    }
    if status == Some(402)
        || says(&[
            "insufficient_quota",
            "exceeded your current quota",
            "quota exceeded",
            "credit balance",
            "billing",
        ])
    {
        return ErrorClass::Quota;
    }
    if matches!(status, Some(401 | 403))
        || says(&[
            "invalid_api_key",
            "invalid api key",
            "authentication_error",
            "permission_error",
            "unauthenticated",
            "permission_denied",
        ])
    {
        return ErrorClass::Auth;
    }
    if status == Some(429) || says(&["rate_limit", "rate limit", "resource_exhausted"]) {
        return ErrorClass::RateLimited;
    }
    if status == Some(529) || says(&["overloaded"]) {
        return ErrorClass::Overloaded;
    }
    match status {
        Some(408 | 409) | Some(500..=599) => ErrorClass::Unavailable,
        Some(_) => ErrorClass::RefusedRequest,
        // An error inside an answer: a server's trouble unless its words
        // say the request was at fault.
        None if says(&[
            "invalid_request",
            "invalid_argument",
            "bad request",
            "not_found",
        ]) =>
        {
            ErrorClass::RefusedRequest
        }
        None => ErrorClass::Unavailable,
    }
}

/// The vendor's error text from an error body (`{"error": {"message": ...}}`
/// for all three), else the start of the body.
pub fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| error_message(&v))
        .unwrap_or_else(|| body.chars().take(500).collect())
}

/// The message of an error object, or of a body holding one under
/// `error` (the same shape for all three vendors); else its JSON.
pub fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error").unwrap_or(v);
    e.get("message")
        .and_then(Value::as_str)
        .or_else(|| e.as_str())
        .map(str::to_string)
}

/// [`error_message`], falling back to the JSON text.
pub fn error_of(v: &Value) -> String {
    error_message(v).unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_a_refusal_names() {
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).","type":"BadRequestError","code":400}"#;
        assert_eq!(stated_window(vllm), Some(4096));
        let llama = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5012,"n_ctx": 4096}}"#;
        assert_eq!(stated_window(llama), Some(4096));
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250301 tokens > 200000 maximum"}}"#;
        assert_eq!(stated_window(anthropic), Some(200000));
        assert_eq!(stated_window("context length exceeded"), None);
        assert_eq!(stated_window("maximum context length is unknown"), None);
        assert_eq!(stated_window("5 tokens > 3 allowed"), None);
        assert_eq!(stated_window("maximum context length is 0 tokens"), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        for s in [408, 409, 429, 500, 502, 503, 529] {
            assert!(classify(Some(s), "").retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!classify(Some(s), "").retryable(), "{s}");
        }
    }

    #[test]
    fn failures_are_classed_by_status_and_words() {
        use ErrorClass::*;
        let cases: &[(Option<u16>, &str, ErrorClass)] = &[
            (
                Some(429),
                r#"{"error":{"type":"rate_limit_error"}}"#,
                RateLimited,
            ),
            (
                Some(429),
                r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#,
                Quota,
            ),
            (
                Some(429),
                r#"{"error":{"status":"RESOURCE_EXHAUSTED"}}"#,
                RateLimited,
            ),
            (Some(402), "", Quota),
            (
                Some(400),
                r#"{"error":{"message":"Your credit balance is too low"}}"#,
                Quota,
            ),
            (Some(401), "", Auth),
            (Some(403), r#"{"error":{"type":"permission_error"}}"#, Auth),
            (Some(400), r#"{"error":{"status":"UNAUTHENTICATED"}}"#, Auth),
            (
                Some(529),
                r#"{"error":{"type":"overloaded_error"}}"#,
                Overloaded,
            ),
            (Some(503), "The model is overloaded", Overloaded),
            (Some(503), "", Unavailable),
            (Some(500), "", Unavailable),
            (Some(504), "", Unavailable),
            (
                Some(400),
                "This model's maximum context length is 8192 tokens",
                ContextOverflow,
            ),
            (
                Some(400),
                "prompt is too long: 250000 tokens > 200000 maximum",
                ContextOverflow,
            ),
            (
                Some(400),
                "'content' is required when tool_calls is empty",
                RefusedRequest,
            ),
            (Some(422), "", RefusedRequest),
            (None, "overloaded_error: Overloaded", Overloaded),
            (None, "server_error: boom", Unavailable),
            (None, "invalid_request_error: bad", RefusedRequest),
        ];
        for (status, text, class) in cases {
            assert_eq!(classify(*status, text), *class, "{status:?} {text}");
        }
    }

    #[test]
    fn error_text_finds_the_vendor_message() {
        assert_eq!(
            error_text(r#"{"error":{"message":"Rate limit","type":"x"}}"#),
            "Rate limit"
        );
        assert_eq!(
            error_text(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_text("<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
    }
}
