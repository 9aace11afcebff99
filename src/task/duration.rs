//! A duration as a task file writes it (`crate::duration` reads and
//! shows it).

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};

/// A duration as written (`10m`, `90s`, or seconds as a number).
#[derive(Debug, Clone, JsonSchema)]
#[schemars(transparent)]
pub struct DurationText(pub String);

impl<'de> Deserialize<'de> for DurationText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = DurationText;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration such as 30s, 10m or 1h")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DurationText, E> {
                Ok(DurationText(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

pub use crate::duration::{DurationError, parse_duration, show_duration};
