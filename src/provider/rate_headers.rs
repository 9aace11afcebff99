//! What a server's rate-limit headers say: the requests and tokens left
//! in its window and when each count starts again (OpenAI's
//! `x-ratelimit-*`, Anthropic's `anthropic-ratelimit-*`), read for the
//! run's rate governor ([`super::governor`]).

use std::time::Duration;

use reqwest::header::HeaderMap;

/// What a server's headers say of its window: the requests and tokens
/// left in it, and when each count starts again.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub requests: Option<(u64, Duration)>,
    pub tokens: Option<(u64, Duration)>,
}

impl Limits {
    /// Reads OpenAI's and Anthropic's rate-limit headers. Anthropic counts
    /// input and output tokens apart as well: the smallest count is kept.
    pub fn of(headers: &HeaderMap) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let count = |name: &str| text(name).and_then(|v| v.trim().parse::<u64>().ok());
        let pair = |remaining: &str, reset: &str| Some((count(remaining)?, until(text(reset)?)?));
        let tokens = [
            pair("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
            pair(
                "anthropic-ratelimit-tokens-remaining",
                "anthropic-ratelimit-tokens-reset",
            ),
            pair(
                "anthropic-ratelimit-input-tokens-remaining",
                "anthropic-ratelimit-input-tokens-reset",
            ),
            pair(
                "anthropic-ratelimit-output-tokens-remaining",
                "anthropic-ratelimit-output-tokens-reset",
            ),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|(n, _)| *n);
        let requests = pair(
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        )
        .or_else(|| {
            pair(
                "anthropic-ratelimit-requests-remaining",
                "anthropic-ratelimit-requests-reset",
            )
        });
        Self { requests, tokens }
    }
}

/// A reset as the vendors write it: OpenAI's duration (`1s`, `6m0s`,
/// `20ms`, `1h2m3.5s`; Gemini writes its `retryDelay` so too), Anthropic's
/// RFC 3339 time, or plain seconds.
pub(super) fn until(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    if let Ok(when) = time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc3339)
    {
        let wait = when - time::OffsetDateTime::now_utc();
        return Some(Duration::try_from(wait).unwrap_or(Duration::ZERO));
    }
    let mut total = 0.0;
    let mut rest = v;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let n: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        total += n * match &rest[..unit] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        rest = &rest[unit..];
    }
    Some(Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    #[test]
    fn resets_as_the_vendors_write_them() {
        let s = Duration::from_secs_f64;
        assert_eq!(until("1s"), Some(s(1.0)));
        assert_eq!(until("6m0s"), Some(s(360.0)));
        assert_eq!(until("20ms"), Some(s(0.02)));
        assert_eq!(until("1h2m3.5s"), Some(s(3723.5)));
        assert_eq!(until("2"), Some(s(2.0)));
        assert_eq!(until("soon"), None);
        assert_eq!(until("5x"), None);
        assert_eq!(until("2020-01-01T00:00:00Z"), Some(Duration::ZERO));
        let later = time::OffsetDateTime::now_utc() + time::Duration::seconds(30);
        let text = later
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let d = until(&text).unwrap();
        assert!(d > s(28.0) && d <= s(30.0), "{d:?}");
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| (HeaderName::from_static(k), HeaderValue::from_static(v)))
            .collect()
    }

    #[test]
    fn limits_from_openai_and_anthropic_headers() {
        assert_eq!(Limits::of(&HeaderMap::new()), Limits::default());
        let l = Limits::of(&headers(&[
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-tokens", "1000"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]));
        assert_eq!(l.requests, Some((59, Duration::from_secs(1))));
        assert_eq!(l.tokens, Some((1000, Duration::from_secs(360))));

        let past = "2020-01-01T00:00:00Z";
        let l = Limits::of(&headers(&[
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", past),
            ("anthropic-ratelimit-tokens-remaining", "9000"),
            ("anthropic-ratelimit-tokens-reset", past),
            ("anthropic-ratelimit-output-tokens-remaining", "400"),
            ("anthropic-ratelimit-output-tokens-reset", past),
        ]));
        assert_eq!(l.requests, Some((0, Duration::ZERO)));
        // The smallest of Anthropic's token counts.
        assert_eq!(l.tokens, Some((400, Duration::ZERO)));
    }
}
