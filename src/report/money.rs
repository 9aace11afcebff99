//! Dollar amounts as the reports write them.

/// An amount in USD: `$0.0123`.
pub fn usd(c: f64) -> String {
    format!("${c:.4}")
}

/// A cost in USD, or `unknown` (never 0 for a price nobody knows).
pub fn cost(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".into(), usd)
}
