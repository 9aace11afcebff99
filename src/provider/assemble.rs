//! Putting streamed tool calls back together.
//!
//! Vendors stream a call's arguments in pieces keyed by an index (OpenAI's
//! `tool_calls[].index`, Anthropic's content block index). A call is
//! complete when the stream moves on to a later call or ends; each complete
//! call is handed to the engine at once through [`EarlyCalls`], so a
//! read-only call can start while the model is still streaming the rest
//! Arguments that are not valid JSON are kept as text: the
//! engine answers the model with an error naming the call.

use serde_json::{Value, json};

use super::failure::Failure;
use super::{EarlyCalls, ToolCallRequest};

#[derive(Debug, Default)]
struct Slot {
    key: u64,
    id: String,
    name: String,
    args: String,
    done: bool,
}

/// Collects a turn's calls in the order they appear.
#[derive(Debug, Default)]
pub struct CallAssembler {
    slots: Vec<Slot>,
    /// Prefix for ids the vendor did not send (Gemini before v1beta ids).
    pub id_prefix: String,
}

impl CallAssembler {
    pub fn new(id_prefix: impl Into<String>) -> Self {
        Self {
            slots: Vec::new(),
            id_prefix: id_prefix.into(),
        }
    }

    fn slot(&mut self, key: u64) -> &mut Slot {
        if let Some(i) = self.slots.iter().position(|s| s.key == key) {
            return &mut self.slots[i];
        }
        let n = self.slots.len();
        self.slots.push(Slot {
            key,
            id: format!("{}{}", self.id_prefix, n + 1),
            ..Slot::default()
        });
        &mut self.slots[n]
    }

    /// Adds what a delta says of call `key`. A non-empty id or name replaces
    /// the one known; argument text is appended.
    pub fn push(&mut self, key: u64, id: Option<&str>, name: Option<&str>, args: &str) {
        let s = self.slot(key);
        if let Some(id) = id.filter(|i| !i.is_empty()) {
            s.id = id.to_string();
        }
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            // Some servers repeat the name in every delta; others split it.
            if s.name.is_empty() || s.name == n {
                s.name = n.to_string();
            } else {
                s.name.push_str(n);
            }
        }
        s.args.push_str(args);
    }

    /// Adds a call that arrived whole (arguments already parsed).
    pub fn push_whole(&mut self, key: u64, id: Option<&str>, name: &str, args: &Value) {
        let text = args.to_string();
        self.push(key, id, Some(name), &text);
    }

    /// Marks every call before `key` (in order of appearance) complete and
    /// hands it to `early`.
    pub fn complete_before(&mut self, key: u64, early: Option<&EarlyCalls>) {
        let Some(pos) = self.slots.iter().position(|s| s.key == key) else {
            return;
        };
        self.complete_range(0..pos, early);
    }

    /// Marks call `key` complete.
    pub fn complete(&mut self, key: u64, early: Option<&EarlyCalls>) {
        if let Some(pos) = self.slots.iter().position(|s| s.key == key) {
            self.complete_range(0..pos + 1, early);
        }
    }

    /// Marks every call complete.
    pub fn complete_all(&mut self, early: Option<&EarlyCalls>) {
        let n = self.slots.len();
        self.complete_range(0..n, early);
    }

    fn complete_range(&mut self, range: std::ops::Range<usize>, early: Option<&EarlyCalls>) {
        for i in range {
            if !self.slots[i].done {
                self.slots[i].done = true;
                if let Some(tx) = early {
                    let _ = tx.send((i, request(&self.slots[i])));
                }
            }
        }
    }

    /// A stream that broke off: retried as a whole only while none of its
    /// calls was handed out (a retry would ask again for calls already
    /// started).
    pub fn cut(&self, why: impl Into<String>) -> Failure {
        self.unless_handed_out(Failure::transient(why))
    }

    /// `f`, not to be retried once some of the stream's calls were handed
    /// out (a retry would ask again for calls already started).
    pub fn unless_handed_out(&self, mut f: Failure) -> Failure {
        if self.slots.iter().any(|s| s.done) {
            f.retryable = false;
            f.calls_started = true;
        }
        f
    }

    /// The calls, in order.
    pub fn finish(self) -> Vec<ToolCallRequest> {
        self.slots.iter().map(request).collect()
    }
}

fn request(s: &Slot) -> ToolCallRequest {
    let text = s.args.trim();
    let (arguments, invalid) = if text.is_empty() {
        (Some(json!({})), None)
    } else {
        // Arguments are an object; anything else is sent back as an error.
        match serde_json::from_str::<Value>(text) {
            Ok(v) if v.is_object() => (Some(v), None),
            _ => (None, Some(s.args.clone())),
        }
    };
    ToolCallRequest {
        id: s.id.clone(),
        name: s.name.clone(),
        arguments,
        invalid_arguments: invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_and_calls_complete_in_order() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = CallAssembler::new("call_");
        a.push(0, Some("c1"), Some("read_file"), "{\"file_");
        a.push(0, None, None, "path\": \"a\"}");
        assert!(rx.try_recv().is_err());
        a.push(1, Some("c2"), Some("ls"), "");
        a.complete_before(1, Some(&tx));
        let (i, first) = rx.try_recv().unwrap();
        assert_eq!((i, first.id.as_str()), (0, "c1"));
        assert_eq!(first.arguments, Some(json!({"file_path": "a"})));
        a.push(1, None, None, "{bad");
        a.complete_all(Some(&tx));
        let (_, second) = rx.try_recv().unwrap();
        assert_eq!(second.invalid_arguments.as_deref(), Some("{bad"));
        let all = a.finish();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].name, "ls");
    }

    #[test]
    fn empty_arguments_are_an_empty_object_and_ids_are_made_up() {
        let mut a = CallAssembler::new("gemini_");
        a.push(7, None, Some("ls"), "");
        let calls = a.finish();
        assert_eq!(calls[0].id, "gemini_1");
        assert_eq!(calls[0].arguments, Some(json!({})));
    }
}
