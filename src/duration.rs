//! Durations as people write them and read them: `90s`, `10m`, `1h30m`,
//! `500ms`, or a bare number of seconds. Below both the task files that
//! read them and the providers and reports that show them.

use std::time::Duration;

/// Why a duration could not be read; the message says what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    #[error("invalid duration `{0}` (expected e.g. 30s, 10m, 1h)")]
    Invalid(String),
    #[error("invalid duration unit `{unit}` in `{input}` (use ms, s, m or h)")]
    Unit { unit: String, input: String },
}

/// A duration as people write it, and as [`parse_duration`] reads it
/// back: `10m`, `1h30m`, `24h`, `90s` shown as `1m30s`, `500ms` under a
/// second.
pub fn show_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s == 0 {
        return format!("{}ms", d.as_millis());
    }
    let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (sec, "s")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    out
}

/// Parses a duration.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let t = s.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(Duration::from_secs(n));
    }
    let mut total = Duration::ZERO;
    let mut num = String::new();
    let mut chars = t.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        while let Some(&n) = chars.peek() {
            if n.is_ascii_alphabetic() {
                unit.push(n);
                chars.next();
            } else {
                break;
            }
        }
        let v: f64 = num
            .parse()
            .map_err(|_| DurationError::Invalid(s.to_string()))?;
        let secs = match unit.as_str() {
            "ms" => v / 1000.0,
            "s" | "sec" => v,
            "m" | "min" => v * 60.0,
            "h" => v * 3600.0,
            _ => {
                return Err(DurationError::Unit {
                    unit,
                    input: s.to_string(),
                });
            }
        };
        total += Duration::from_secs_f64(secs);
        num.clear();
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(DurationError::Invalid(s.to_string()));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert_eq!(
            parse_duration("10x").unwrap_err().to_string(),
            "invalid duration unit `x` in `10x` (use ms, s, m or h)"
        );
        assert!(parse_duration("").is_err());
    }

    /// Shown as written, and read back the same.
    #[test]
    fn shows_what_it_reads() {
        for (secs, text) in [
            (600, "10m"),
            (5400, "1h30m"),
            (86_400, "24h"),
            (90, "1m30s"),
            (87_000, "24h10m"),
        ] {
            let d = Duration::from_secs(secs);
            assert_eq!(show_duration(d), text);
            assert_eq!(parse_duration(text).unwrap(), d);
        }
        assert_eq!(show_duration(Duration::from_millis(500)), "500ms");
    }
}
