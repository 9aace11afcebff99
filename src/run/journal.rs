//! A task's journal (`OUT/<task>/journal.jsonl`): what the task has done,
//! appended at each turn's end, so that a run killed outright (SIGKILL: an
//! OOM kill, a preempted machine, a CI job past its grace period), which
//! writes nothing on its way out, can still be resumed from its last
//! durable turn with `--resume`.
//!
//! One JSON object a line:
//!
//! - `start`, first: the task as it began this run: a transcript of what
//!   earlier runs did (empty for a new task), the conversation as this run
//!   starts it, and the changes so far (an earlier run's diff).
//! - `turn`, at each turn's end (every call of the turn has its result;
//!   and after an answer that ends the work, before its checks): the
//!   messages, turn records and call records since the last line, the
//!   spending so far, and the task's whole diff when a call of the turn
//!   may have changed files (a tool that is not read-only).
//! - `checks`, when an attempt's checks failed and the next attempt
//!   starts: every check record so far.
//! - `batch`, when a request went in a vendor batch (`--batch`): the
//!   batch, so that `--resume` collects its answer instead of paying for
//!   it again.
//!
//! Each line is one `write` of the whole line, flushed to the disk right
//! after by a thread of the journal's own. A kill in the middle of one
//! leaves a line without its newline or its closing brace: the reader
//! stops at the first line that does not parse, so a torn record is
//! dropped, never misread. What happened after the last whole line (a turn
//! the model answered, calls that ran in part) is lost: the task goes on
//! from the end of the turn before, with the copy as it was then (the
//! recorded diff applied to a new copy), and the model is asked that turn
//! again.
//!
//! The journal is removed once the task's transcript is written; a
//! journal left beside a transcript written after it (a kill between the
//! two) is ignored.

use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::provider::{Message, Usage};
use crate::report::transcript::{Recent, Seen};
use crate::report::{CheckRecord, Transcript, TranscriptRecorder};
use crate::tools::{Registry, ToolKind};
use crate::workspace::{Differ, render_git_diff};

mod read;
pub use read::read;

/// The journal's file name in a task's output folder.
pub const JOURNAL: &str = "journal.jsonl";

/// The format's version (in `start`); a journal of another is not read.
const VERSION: u32 = 1;

/// One line.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Start(Box<Start>),
    Turn(Box<TurnLine>),
    Checks(Vec<CheckRecord>),
    /// A request went in a vendor batch (`--batch`): a resumed task
    /// collects its answer rather than asking again.
    Batch(runner_output::PendingBatch),
}

#[derive(Serialize, Deserialize)]
struct Start {
    version: u32,
    /// What earlier runs did, with the conversation as this run starts it.
    base: Transcript,
    /// The task's changes so far.
    diff: String,
}

#[derive(Serialize, Deserialize, Default)]
struct TurnLine {
    /// The turn that ended (counted across runs).
    turn: u32,
    /// Milliseconds this run had taken.
    elapsed_ms: u64,
    attempts: u32,
    usage: Usage,
    messages: Vec<Message>,
    #[serde(flatten)]
    recent: RecentRecords,
    /// The task's whole diff now; absent when no call of the turn could
    /// change a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    diff: Option<String>,
}

/// [`Recent`], as a line holds it.
#[derive(Serialize, Deserialize, Default)]
struct RecentRecords {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    turns: Vec<runner_output::TurnRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<runner_output::ToolCallRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    compactions: Vec<runner_output::Compaction>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    model_switches: Vec<runner_output::ModelSwitch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    connections: Vec<runner_output::Connection>,
}

impl From<Recent> for RecentRecords {
    fn from(r: Recent) -> Self {
        Self {
            turns: r.turns,
            tool_calls: r.tool_calls,
            compactions: r.compactions,
            model_switches: r.model_switches,
            connections: r.connections,
        }
    }
}

/// The file, appended to.
struct File {
    file: std::fs::File,
    path: PathBuf,
    /// Asks the syncing thread to flush the appends so far to the disk.
    sync: std::sync::mpsc::Sender<()>,
}

impl File {
    /// Starts `dir`'s journal with `start` (written whole, then renamed
    /// into place: a journal always begins with a whole `start`), flushed
    /// to the disk with its folder's entry by the syncing thread.
    fn create(dir: &Path, start: &Line) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(JOURNAL);
        crate::workspace::atomic_write(&path, encode(start)?.as_bytes())?;
        let file = std::fs::OpenOptions::new().append(true).open(&path)?;
        let sync = syncing(file.try_clone()?, dir.to_path_buf(), path.clone())?;
        Ok(Self { file, path, sync })
    }

    /// Appends `line` (one `write`), then has it flushed to the disk off
    /// the agent's path.
    fn append(&mut self, line: &Line) -> std::io::Result<()> {
        self.file.write_all(encode(line)?.as_bytes())?;
        let _ = self.sync.send(());
        Ok(())
    }
}

/// A thread that flushes `file`'s appends to the disk (`fdatasync`) each
/// time it is asked, several asks at once in one flush, and first the
/// journal's start with its entry in `dir`; it ends with the journal. A
/// kill of the process loses nothing written; a crash of the machine loses
/// at most the appends of the flush under way. A flush took 0.3-0.5 ms on
/// this machine's disk: the thread keeps it off the agent's path (and off
/// the async runtime's threads) on slower ones.
fn syncing(
    file: std::fs::File,
    dir: PathBuf,
    path: PathBuf,
) -> std::io::Result<std::sync::mpsc::Sender<()>> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("runner-journal-sync".into())
        .spawn(move || {
            let start = file
                .sync_data()
                .and_then(|()| std::fs::File::open(&dir)?.sync_all());
            let mut flushed = start;
            loop {
                if let Err(e) = flushed {
                    tracing::warn!("journal {}: flushing to disk: {e}", path.display());
                    return;
                }
                if rx.recv().is_err() {
                    return;
                }
                while rx.try_recv().is_ok() {}
                flushed = file.sync_data();
            }
        })?;
    Ok(tx)
}

/// A line as written: JSON, secrets masked (as in the transcript), and
/// its newline.
fn encode(line: &Line) -> std::io::Result<String> {
    let json = serde_json::to_string(line).map_err(std::io::Error::other)?;
    let mut text = crate::contain::redact(&json).into_owned();
    text.push('\n');
    Ok(text)
}

/// Removes `dir`'s journal (the task's transcript is written).
pub fn remove(dir: &Path) {
    match std::fs::remove_file(dir.join(JOURNAL)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            tracing::warn!("removing {}: {e}", dir.join(JOURNAL).display());
        }
        _ => {}
    }
}

/// A running task's journal: told each turn's end by the agent loop
/// ([`crate::engine::TurnLog`]), it appends what the recorder and the
/// conversation gained since, and the copy's diff when it may have
/// changed. A journal that fails to write says so once and stops: the
/// task goes on.
pub struct TaskJournal<'a> {
    file: Arc<Mutex<Option<File>>>,
    recorder: &'a TranscriptRecorder,
    differ: Arc<Differ>,
    registry: &'a Registry,
    diff_prefix: Arc<str>,
    epoch: Instant,
    seen: Mutex<(usize, Seen)>,
    attempts: AtomicU32,
    /// Ends when the line whose diff is being read (on a thread of its
    /// own) is written.
    pending: Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
}

/// What a task's journal starts from.
pub struct Begin<'a> {
    pub dir: PathBuf,
    /// What earlier runs did (a resumed task's), or an empty transcript.
    pub base: Transcript,
    pub diff: &'a str,
    pub recorder: &'a TranscriptRecorder,
    pub differ: Arc<Differ>,
    pub registry: &'a Registry,
    pub diff_prefix: String,
    pub epoch: Instant,
}

impl<'a> TaskJournal<'a> {
    /// Starts the journal; `None` (with a warning) when it cannot be
    /// written.
    pub fn start(begin: Begin<'a>) -> Option<Self> {
        let messages = begin.base.messages.len();
        let attempts = begin.base.counts.attempts;
        let start = Line::Start(Box::new(Start {
            version: VERSION,
            base: begin.base,
            diff: begin.diff.to_string(),
        }));
        let file = match File::create(&begin.dir, &start) {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(
                    "no journal in {} (a killed run cannot be resumed): {e}",
                    begin.dir.display()
                );
                return None;
            }
        };
        Some(Self {
            file: Arc::new(Mutex::new(Some(file))),
            recorder: begin.recorder,
            differ: begin.differ,
            registry: begin.registry,
            diff_prefix: begin.diff_prefix.into(),
            epoch: begin.epoch,
            seen: Mutex::new((messages, Seen::default())),
            attempts: AtomicU32::new(attempts),
            pending: Mutex::new(None),
        })
    }

    /// The attempt now running.
    pub fn attempt(&self, attempt: u32) {
        self.attempts.store(attempt, Ordering::Relaxed);
    }

    /// Every check record so far (an attempt's checks failed).
    pub fn checks(&self, checks: &[CheckRecord]) {
        self.append(&Line::Checks(checks.to_vec()));
    }

    fn append(&self, line: &Line) {
        append(&self.file, line);
    }

    /// Where the task's model tells each batch its requests go in.
    pub fn batch_sink(&self) -> crate::provider::batch::BatchSink {
        let file = Arc::clone(&self.file);
        Box::new(move |r| append(&file, &Line::Batch(r.clone())))
    }

    /// Whether a call among `recent`'s may have changed a file.
    fn may_have_written(&self, recent: &Recent) -> bool {
        recent.tool_calls.iter().any(|c| {
            self.registry
                .get(&c.tool)
                .map_or(true, |t| t.kind() != ToolKind::ReadOnly)
        })
    }
}

/// Appends `line`; a journal that fails to write says so once and stops.
fn append(file: &Mutex<Option<File>>, line: &Line) {
    let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
    let Some(f) = file.as_mut() else {
        return;
    };
    if let Err(e) = f.append(line) {
        tracing::warn!(
            "journal {}: {e}; no more of this task is journaled",
            f.path.display()
        );
        *file = None;
    }
}

impl crate::engine::TurnLog for TaskJournal<'_> {
    fn turn_ended(&self, turn: u32, log: &[Message], usage: &Usage) {
        let (messages, recent) = {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            let messages = log.get(seen.0..).unwrap_or_default().to_vec();
            seen.0 = log.len();
            (messages, self.recorder.since(&mut seen.1))
        };
        if messages.is_empty() && recent.is_empty() {
            return;
        }
        let wrote = self.may_have_written(&recent);
        let mut line = TurnLine {
            turn,
            elapsed_ms: self.epoch.elapsed().as_millis() as u64,
            attempts: self.attempts.load(Ordering::Relaxed),
            usage: *usage,
            messages,
            recent: recent.into(),
            diff: None,
        };
        if !wrote {
            self.append(&Line::Turn(Box::new(line)));
            return;
        }
        // The copy's diff is read while the model is asked the next turn,
        // on one thread at a low priority; the line is written once it is
        // (see `settled`).
        let (differ, file, prefix) = (
            Arc::clone(&self.differ),
            Arc::clone(&self.file),
            Arc::clone(&self.diff_prefix),
        );
        let read = move || match differ.changes_aside() {
            Ok(changes) => {
                line.diff = Some(render_git_diff(&changes, &prefix));
                append(&file, &Line::Turn(Box::new(line)));
            }
            Err(e) => {
                // Without the changes, no later line would be true.
                tracing::warn!(
                    "journal: reading the copy's changes: {e}; no more of this task is journaled"
                );
                *file.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        };
        let (done, finished) = tokio::sync::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("runner-journal".into())
            .spawn(move || {
                // SAFETY: plain system calls about this thread (a thread's
                // own priority is Linux's; elsewhere it keeps the runner's).
                #[cfg(target_os = "linux")]
                unsafe {
                    libc::setpriority(libc::PRIO_PROCESS as _, libc::gettid() as _, 10);
                }
                read();
                let _ = done.send(());
            });
        if let Err(e) = spawned {
            tracing::warn!(
                "journal: no thread to read the copy's changes on: {e}; no more of this task is journaled"
            );
            *self.file.lock().unwrap_or_else(|e| e.into_inner()) = None;
            return;
        }
        *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(finished);
    }

    fn settled(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        Box::pin(async move {
            if let Some(reading) = pending {
                let _ = reading.await;
            }
        })
    }
}
