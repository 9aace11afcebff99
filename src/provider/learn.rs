//! What an OpenAI-compatible server accepts, learned from its first
//! refusal and kept for the run, so a local server works with the model's
//! name alone.
//!
//! Servers that copy OpenAI's API differ in the details: llama-cpp-python's
//! refuses `"content": null` beside tool calls (OpenAI's documented form)
//! and closes a stream under `tool_choice: auto` without a word. When a
//! request is refused in a way that names its shape, and the task left
//! that part of the shape to the runner, the runner changes it for every
//! later request to that server and model (every task of the run), sends
//! the request again in the new shape at once, and never sends a refused
//! shape again. Each lesson is noted once: in the transcript of each task
//! that used that server (`server_adaptations`), and as a retry of the
//! turn that learned it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use super::config::{ProviderConfig, ToolCallContent};

/// A change of shape a refusal taught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lesson {
    /// Send `"content": ""` beside tool calls, not `null`.
    EmptyContent,
    /// Do not stream.
    NoStream,
}

impl Lesson {
    /// What the runner does from now on.
    pub fn what(self) -> &'static str {
        match self {
            Lesson::EmptyContent => "`\"content\": \"\"` beside tool calls (it refused null)",
            Lesson::NoStream => "answers not streamed (it closed a stream without a word)",
        }
    }
}

/// The lessons for one server and model.
#[derive(Debug, Default)]
pub struct Learned {
    empty_content: AtomicBool,
    no_stream: AtomicBool,
    /// Bumped by each new lesson: a request built before it is rebuilt.
    generation: AtomicU32,
    notes: Mutex<Vec<String>>,
    /// The context window the server told (0: none yet).
    window: AtomicU64,
    /// Whether the server was asked for its window (once a run).
    pub(super) probed: AtomicBool,
}

/// A server (its base URL) and a model on it.
type ServerModel = (String, String);

/// Every server's lessons, for the run.
static SERVERS: LazyLock<Mutex<HashMap<ServerModel, Arc<Learned>>>> =
    LazyLock::new(Default::default);

/// The lessons for `cfg`'s server and model, shared by the run's tasks.
pub fn for_server(cfg: &ProviderConfig) -> Arc<Learned> {
    let mut all = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        all.entry((cfg.base_url.clone(), cfg.model.clone()))
            .or_default(),
    )
}

impl Learned {
    /// `cfg` with what was learned so far, where the task left the
    /// choice to the runner (a task's own setting stands); `cfg` itself,
    /// not a copy, while nothing was (every request asks).
    pub fn apply<'c>(&self, cfg: &'c ProviderConfig) -> Cow<'c, ProviderConfig> {
        let empty = cfg.learnable.content && self.empty_content.load(Ordering::Acquire);
        let whole = cfg.learnable.stream && self.no_stream.load(Ordering::Acquire);
        if !empty && !whole {
            return Cow::Borrowed(cfg);
        }
        let mut c = cfg.clone();
        if empty {
            c.content_with_tool_calls = ToolCallContent::Empty;
        }
        if whole {
            c.stream = false;
        }
        Cow::Owned(c)
    }

    /// Learns `lesson` from the server's `refusal`; false when it was
    /// known already (by another task, say).
    pub fn learn(&self, lesson: Lesson, server: &str, refusal: &str) -> bool {
        let flag = match lesson {
            Lesson::EmptyContent => &self.empty_content,
            Lesson::NoStream => &self.no_stream,
        };
        if flag.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "{server}: sending {} from now on; it answered: {}",
                lesson.what(),
                super::retry::summary_line(refusal)
            ));
        self.generation.fetch_add(1, Ordering::AcqRel);
        true
    }

    /// Learns the model's context window, `n` tokens, from the server
    /// (`whence`: how it said so); false when it was known already.
    pub fn learn_window(&self, n: u64, server: &str, whence: &str) -> bool {
        if n == 0 || self.window.swap(n, Ordering::AcqRel) == n {
            return false;
        }
        self.notes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "{server}: a context window of {n} tokens from now on ({whence})"
            ));
        true
    }

    /// The context window the server told, if it did.
    pub fn window(&self) -> Option<u64> {
        Some(self.window.load(Ordering::Acquire)).filter(|&n| n > 0)
    }

    /// Changes with each new lesson.
    pub fn generation(&self) -> u32 {
        self.generation.load(Ordering::Acquire)
    }

    /// The lessons, one line each.
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
