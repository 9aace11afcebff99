//! Durations as people write them: `90s`, `10m`, `1h30m`, `500ms`, or a
//! bare number of seconds.

use std::time::Duration;

/// Parses a duration; the error says what is expected.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
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
            .map_err(|_| format!("invalid duration `{s}` (expected e.g. 30s, 10m, 1h)"))?;
        let secs = match unit.as_str() {
            "ms" => v / 1000.0,
            "s" | "sec" => v,
            "m" | "min" => v * 60.0,
            "h" => v * 3600.0,
            _ => {
                return Err(format!(
                    "invalid duration unit `{unit}` in `{s}` (use ms, s, m or h)"
                ));
            }
        };
        total += Duration::from_secs_f64(secs);
        num.clear();
        any = true;
    }
    if !num.is_empty() || !any {
        return Err(format!(
            "invalid duration `{s}` (expected e.g. 30s, 10m, 1h)"
        ));
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
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("").is_err());
    }
}
