//! Trace and span ids: the W3C `traceparent` read from the CI and passed
//! to commands, and span ids derived from their parent and a key.
//!
//! A task's turns, calls and checks get their span ids by derivation, not
//! at random: a command started by a call learns its `execute_tool` span
//! (`TRACEPARENT`) before that span is exported, and `runner export`
//! rebuilds the same spans from a transcript, which keeps only the task's
//! ids ([`runner_output::TraceIds`]).

use opentelemetry::trace::{SpanId, TraceId};

/// A parsed `traceparent` (version 00): the span a run continues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: TraceId,
    pub span_id: SpanId,
    pub sampled: bool,
}

impl TraceParent {
    /// `00-<32 hex>-<16 hex>-<2 hex>`; `None` for anything else, all-zero
    /// ids included (the W3C rule: such a header is ignored).
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts = s.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |t: &str, n: usize| t.len() == n && t.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex(version, 2)
            || version == "ff"
            || !hex(trace, 32)
            || !hex(span, 16)
            || !hex(flags, 2)
        {
            return None;
        }
        // Version 00 has exactly four fields; later versions may add some.
        if version == "00" && parts.next().is_some() {
            return None;
        }
        let trace_id = TraceId::from_hex(trace).ok()?;
        let span_id = SpanId::from_hex(span).ok()?;
        if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
            return None;
        }
        let flags = u8::from_str_radix(flags, 16).ok()?;
        Some(Self {
            trace_id,
            span_id,
            sampled: flags & 1 == 1,
        })
    }

    /// The header's text (version 00).
    pub fn format(trace_id: TraceId, span_id: SpanId, sampled: bool) -> String {
        format!("00-{trace_id}-{span_id}-{:02x}", u8::from(sampled))
    }
}

/// A span id derived from `parent` and `key`: the same inputs give the
/// same id, and different keys under one parent differ (FNV-1a over the
/// parts, each with its length, then a 64-bit finaliser). Never zero.
pub fn derive(parent: SpanId, key: &[&[u8]]) -> SpanId {
    let mut h = crate::hash::Fnv1a::default();
    h.write(&parent.to_bytes());
    for part in key {
        h.write(&(part.len() as u64).to_le_bytes());
        h.write(part);
    }
    // splitmix64's finaliser spreads the low bits FNV leaves weak.
    let mut z = h.finish();
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    SpanId::from_bytes(z.max(1).to_be_bytes())
}

/// The `invoke_agent` span of task `name` in a run.
pub fn task_span(run_span: SpanId, name: &str) -> SpanId {
    derive(run_span, &[b"invoke_agent", name.as_bytes()])
}

/// The `invoke_agent` span of child agent `id` (issue 32), beneath the
/// `execute_tool` span of the `task` call that started it. Its own spans
/// derive from it as a task's do from the task's.
pub fn agent_span(call_span: SpanId, id: &str) -> SpanId {
    derive(call_span, &[b"invoke_agent", id.as_bytes()])
}

/// The `chat` span of a task's turn.
pub fn chat_span(task_span: SpanId, turn: u32) -> SpanId {
    derive(task_span, &[b"chat", &turn.to_le_bytes()])
}

/// The `execute_tool` span of call `id` of a turn (ids are unique within
/// a turn; providers number them per turn).
pub fn tool_span(task_span: SpanId, turn: u32, id: &str) -> SpanId {
    derive(
        task_span,
        &[b"execute_tool", &turn.to_le_bytes(), id.as_bytes()],
    )
}

/// The span of check `name` after an attempt.
pub fn check_span(task_span: SpanId, attempt: u32, name: &str) -> SpanId {
    derive(
        task_span,
        &[b"check", &attempt.to_le_bytes(), name.as_bytes()],
    )
}

/// Random ids, for a run that continues no trace or for its root span.
pub fn random_trace_id() -> TraceId {
    use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
    RandomIdGenerator::default().new_trace_id()
}

/// A random span id.
pub fn random_span_id() -> SpanId {
    use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
    RandomIdGenerator::default().new_span_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_is_read_as_the_w3c_spec_says() {
        let tp =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").unwrap();
        assert_eq!(tp.trace_id.to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(tp.span_id.to_string(), "00f067aa0ba902b7");
        assert!(tp.sampled);
        assert_eq!(
            TraceParent::format(tp.trace_id, tp.span_id, tp.sampled),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        for bad in [
            "",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        // A later version may carry more fields.
        assert!(
            TraceParent::parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
                .is_some_and(|t| !t.sampled)
        );
    }

    #[test]
    fn derived_ids_are_stable_and_distinct() {
        let parent = SpanId::from_hex("00f067aa0ba902b7").unwrap();
        let a = tool_span(parent, 1, "call_1");
        assert_eq!(a, tool_span(parent, 1, "call_1"));
        assert_ne!(a, tool_span(parent, 2, "call_1"));
        assert_ne!(a, tool_span(parent, 1, "call_2"));
        assert_ne!(chat_span(parent, 1), chat_span(parent, 2));
        // The parts' lengths keep `ab`+`c` apart from `a`+`bc`.
        assert_ne!(
            derive(parent, &[b"ab", b"c"]),
            derive(parent, &[b"a", b"bc"])
        );
        // Pinned: a transcript written by one build is exported by
        // another, whose derivation must give the same ids.
        assert_eq!(task_span(parent, "t").to_string(), "93159bb58e0a406a");
    }
}
