//! transcript.json: its types are `runner-output`'s; the recorder that
//! builds a task's turns and calls from its events is here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::engine::{CallStatus, Event, EventSink, StartedCall, ToolCallRecord};

pub use runner_output::{
    ChangedFile, CheckRecord, Compaction, Counts, Outcome, OutcomeStatus, TRANSCRIPT_VERSION,
    Transcript, TurnRecord,
};

/// How much of the recorder's lists a reader has had
/// ([`TranscriptRecorder::since`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    turns: usize,
    tool_calls: usize,
    compactions: usize,
    switches: usize,
    connections: usize,
}

/// What was recorded since a reader last looked.
#[derive(Debug, Default)]
pub struct Recent {
    pub turns: Vec<TurnRecord>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub compactions: Vec<Compaction>,
    pub model_switches: Vec<runner_output::ModelSwitch>,
    pub connections: Vec<runner_output::Connection>,
}

impl Recent {
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
            && self.tool_calls.is_empty()
            && self.compactions.is_empty()
            && self.model_switches.is_empty()
            && self.connections.is_empty()
    }
}

#[derive(Default)]
struct Recorded {
    attempt: u32,
    switches: Vec<runner_output::ModelSwitch>,
    /// When the current turn's request was about to be sent.
    turn_started: Option<Instant>,
    compactions: Vec<Compaction>,
    connections: Vec<runner_output::Connection>,
    turns: Vec<TurnRecord>,
    /// Finished calls, shared with the event that announced them.
    tool_calls: Vec<Arc<ToolCallRecord>>,
    /// Calls started and not finished, by turn and id: a turn can hold
    /// thousands, so finishing one must not scan them all.
    running: HashMap<u32, HashMap<String, Arc<StartedCall>>>,
}

/// The record of a call the run was cancelled under.
fn cancelled(c: &StartedCall) -> ToolCallRecord {
    c.ended(
        CallStatus::Cancelled,
        None,
        "the run was cancelled before the call finished".into(),
        format!("cancelled: {}", c.tool),
        serde_json::Value::Null,
        0,
    )
}

/// Builds the transcript's turns and calls from events.
pub struct TranscriptRecorder {
    inner: Mutex<Recorded>,
    /// The task's start, for the turns' timestamps.
    epoch: Instant,
}

impl TranscriptRecorder {
    /// A recorder for a task that started at `epoch`.
    pub fn new(epoch: Instant) -> Self {
        Self {
            inner: Mutex::default(),
            epoch,
        }
    }

    /// The turns and calls so far; calls still running (the run was
    /// cancelled under them) are recorded as `cancelled`.
    /// The compactions so far.
    pub fn take_compactions(&self) -> Vec<Compaction> {
        std::mem::take(&mut self.inner.lock().unwrap().compactions)
    }

    /// The connections decided so far.
    pub fn take_connections(&self) -> Vec<runner_output::Connection> {
        std::mem::take(&mut self.inner.lock().unwrap().connections)
    }

    /// The switches to fallback models so far.
    pub fn take_switches(&self) -> Vec<runner_output::ModelSwitch> {
        std::mem::take(&mut self.inner.lock().unwrap().switches)
    }

    /// What was recorded since `seen` (finished turns and calls,
    /// compactions, switches, connections), copied; `seen` moves on.
    pub fn since(&self, seen: &mut Seen) -> Recent {
        let r = self.inner.lock().unwrap();
        fn from<T: Clone>(v: &[T], at: &mut usize) -> Vec<T> {
            let new = v.get(*at..).unwrap_or_default().to_vec();
            *at = v.len();
            new
        }
        let tool_calls = (r
            .tool_calls
            .get(seen.tool_calls..)
            .unwrap_or_default()
            .iter())
        .map(|c| ToolCallRecord::clone(c))
        .collect();
        seen.tool_calls = r.tool_calls.len();
        Recent {
            turns: from(&r.turns, &mut seen.turns),
            tool_calls,
            compactions: from(&r.compactions, &mut seen.compactions),
            model_switches: from(&r.switches, &mut seen.switches),
            connections: from(&r.connections, &mut seen.connections),
        }
    }

    pub fn take(&self) -> (Vec<TurnRecord>, Vec<ToolCallRecord>) {
        let mut r = self.inner.lock().unwrap();
        let mut running: Vec<ToolCallRecord> = std::mem::take(&mut r.running)
            .into_values()
            .flat_map(|calls| calls.into_values())
            .map(|c| cancelled(&c))
            .collect();
        running.sort_by_key(|c| c.started_ms);
        let mut calls: Vec<ToolCallRecord> = std::mem::take(&mut r.tool_calls)
            .into_iter()
            .map(|c| Arc::try_unwrap(c).unwrap_or_else(|c| (*c).clone()))
            .collect();
        calls.extend(running);
        (std::mem::take(&mut r.turns), calls)
    }
}

impl EventSink for TranscriptRecorder {
    fn emit(&self, event: &Event) {
        let mut r = self.inner.lock().unwrap();
        match event {
            Event::AttemptStarted { attempt } => r.attempt = *attempt,
            Event::ModelResponded {
                turn,
                text,
                tool_calls,
                usage,
                raw,
                retries,
                rate_limit_wait_ms,
                service_tier,
                model,
            } => {
                let attempt = r.attempt;
                let now = Instant::now();
                let started = r.turn_started.take().unwrap_or(now);
                r.turns.push(TurnRecord {
                    started_ms: started.saturating_duration_since(self.epoch).as_millis() as u64,
                    duration_ms: now.saturating_duration_since(started).as_millis() as u64,
                    attempt,
                    turn: *turn,
                    text: text.clone(),
                    tool_calls: *tool_calls,
                    usage: *usage,
                    raw: raw.clone(),
                    retries: retries.clone(),
                    rate_limit_wait_ms: *rate_limit_wait_ms,
                    service_tier: service_tier.clone(),
                    model: model.clone(),
                });
            }
            Event::ToolStarted { call } => {
                r.running
                    .entry(call.turn)
                    .or_default()
                    .insert(call.id.clone(), Arc::clone(call));
            }
            Event::ToolFinished { record } => {
                if let Some(turn) = r.running.get_mut(&record.turn) {
                    turn.remove(&record.id);
                }
                r.tool_calls.push(Arc::clone(record));
            }
            Event::ContextCompacted(c) => r.compactions.push(c.clone()),
            Event::ModelSwitched(s) => r.switches.push(s.clone()),
            Event::Connection(c) => r.connections.push(c.clone()),
            Event::TurnStarted { .. } => r.turn_started = Some(Instant::now()),
            // Checks are the progress's (`Progress::checks`), kept across resumes.
            // Canaries are the task's (`Canaries::record`), written at its end.
            Event::WorkspaceReady { .. } | Event::CheckFinished(_) | Event::Canary(_) => {}
        }
    }
}
