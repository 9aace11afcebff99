//! The conversation of a task: every message as it happened (the
//! transcript's), and the messages a request carries, which differ once
//! the conversation has been compacted to fit the model's context window.
//!
//! Until the first compaction a request carries the log itself, with no
//! copy. New messages are appended to both, never re-rendered: a request
//! extends the previous one byte for byte, which is what vendors' prompt
//! caches match on.
//!
//! The size of a request is estimated from characters: tokens = chars ×
//! ratio, where the ratio starts at 1/4 and is recalibrated on every
//! answer from the `input_tokens` the vendor reports for the request it
//! got.

use runner_output::{Message, ToolCallRequest};

use crate::provider::ToolSpec;

/// Tokens per character before the vendor has reported any.
const DEFAULT_RATIO: f64 = 0.25;

/// Characters a message costs beyond its text (role, ids, JSON).
const MESSAGE_OVERHEAD: usize = 16;

/// A task's messages, whole and as sent.
pub struct Conversation {
    log: Vec<Message>,
    /// The messages sent when they are not the log (after a compaction).
    view: Option<Vec<Message>>,
    /// Characters of the messages sent, counted up to `counted`.
    chars: usize,
    counted: usize,
    /// Characters of what every request carries besides the messages
    /// (system prompt, tool declarations).
    pub(crate) fixed_chars: usize,
    ratio: f64,
    /// The characters of the last request, to calibrate on its answer.
    last_request_chars: usize,
}

impl Conversation {
    /// A conversation that starts with the task's prompt.
    pub fn new(prompt: String) -> Self {
        Self {
            log: vec![Message::User { content: prompt }],
            view: None,
            chars: 0,
            counted: 0,
            fixed_chars: 0,
            ratio: DEFAULT_RATIO,
            last_request_chars: 0,
        }
    }

    /// A conversation that goes on from `messages` (a resumed task's).
    pub fn resumed(messages: Vec<Message>) -> Self {
        Self {
            log: messages,
            ..Self::new(String::new())
        }
    }

    /// Takes the size of what every request carries besides the messages:
    /// the system prompt and the tool declarations.
    pub fn fix_prefix(&mut self, system: &str, tools: &[ToolSpec]) {
        self.fixed_chars = system.len()
            + tools
                .iter()
                .map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len())
                .sum::<usize>();
    }

    /// Appends a message to the log and to what is sent.
    pub fn push(&mut self, m: Message) {
        if let Some(v) = &mut self.view {
            v.push(m.clone());
        }
        self.log.push(m);
    }

    /// Every message, compacted or not.
    pub fn log(&self) -> &[Message] {
        &self.log
    }

    /// The whole log, for the transcript.
    pub fn into_log(self) -> Vec<Message> {
        self.log
    }

    /// The messages the next request carries.
    pub fn sent(&self) -> &[Message] {
        self.view.as_deref().unwrap_or(&self.log)
    }

    /// Replaces what is sent (a compaction); the log keeps everything.
    pub(crate) fn replace_sent(&mut self, messages: Vec<Message>) {
        self.view = Some(messages);
        self.chars = 0;
        self.counted = 0;
    }

    /// The estimated size of the next request, in tokens.
    pub fn estimate(&mut self) -> u64 {
        let sent = self.view.as_deref().unwrap_or(&self.log);
        self.chars += sent[self.counted..]
            .iter()
            .map(message_chars)
            .sum::<usize>();
        self.counted = sent.len();
        self.tokens(self.fixed_chars + self.chars)
    }

    /// Tokens per character, as calibrated.
    pub(crate) fn ratio(&self) -> f64 {
        self.ratio
    }

    /// Tokens for a number of characters, at the calibrated ratio.
    pub(crate) fn tokens(&self, chars: usize) -> u64 {
        (chars as f64 * self.ratio).ceil() as u64
    }

    /// Notes the size of the request about to be sent.
    pub fn sending(&mut self) {
        self.estimate();
        self.last_request_chars = self.fixed_chars + self.chars;
    }

    /// Calibrates the estimate on the input tokens the vendor reported for
    /// the last request.
    pub fn calibrate(&mut self, input_tokens: u64) {
        if input_tokens > 0 && self.last_request_chars > 0 {
            self.ratio = input_tokens as f64 / self.last_request_chars as f64;
        }
    }
}

/// The characters a message adds to a request.
pub(crate) fn message_chars(m: &Message) -> usize {
    MESSAGE_OVERHEAD
        + match m {
            Message::User { content } => content.len(),
            Message::Assistant {
                text, tool_calls, ..
            } => text.len() + tool_calls.iter().map(call_chars).sum::<usize>(),
            Message::Tool {
                call_id,
                name,
                content,
                ..
            } => call_id.len() + name.len() + content.len(),
        }
}

fn call_chars(c: &ToolCallRequest) -> usize {
    let args = match (&c.arguments, &c.invalid_arguments) {
        (Some(a), _) => serde_json::to_string(a).map_or(0, |s| s.len()),
        (None, Some(raw)) => raw.len(),
        (None, None) => 0,
    };
    MESSAGE_OVERHEAD + c.id.len() + c.name.len() + args
}
