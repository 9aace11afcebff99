//! The output formats of `runner`: what other programs read.
//!
//! A run leaves a `transcript.json` per task ([`Transcript`]) and, with
//! `runner run --format json`, a stream of JSON lines ([`EventLine`]).
//! `runner check` prints a [`Decision`]. These types are those formats:
//! their serde attributes are the contract, and `runner schema transcript`
//! and `runner schema events` are generated from them. Fields are only
//! ever added; a change that breaks a reader bumps [`TRANSCRIPT_VERSION`]
//! or [`EVENTS_VERSION`].
//!
//! The crate holds data and its JSON Schema, nothing else: no async
//! runtime, no HTTP, no command line, so a program that reads runner's
//! outputs can depend on it cheaply.

#![warn(missing_docs)]

mod agent;
mod call;
mod canary;
mod compare;
mod diff_cut;
mod doctor;
mod event;
mod matrix;
mod message;
mod network;
mod shadow;
mod transcript;
mod tripwire;
mod workspace_copy;

pub use agent::{AgentRun, Reserved};
pub use call::{
    CallStatus, HookEffect, HookKind, HookRun, StartedCall, ToolCallRecord, ToolErrorKind,
};
pub use canary::{CanaryRecord, CanarySighting, PlantedCanary};
pub use compare::{COMPARE_VERSION, Comparison, RunStats, TaskComparison};
pub use diff_cut::{DiffCut, LeftOut};
pub use doctor::{DoctorBackstop, DoctorReport};
pub use event::{AnyEvent, EVENTS_VERSION, Event, EventLine, RunEvent};
pub use matrix::MatrixCell;
pub use message::{ErrorClass, Message, RetryRecord, ToolCallRequest, Usage};
pub use network::{Connection, ConnectionVia};
pub use runner_policy::{Decision, Verdict};
pub use shadow::{ShadowChange, ShadowDecision, describe_decision};
pub use transcript::{
    ChangeKind, ChangedFile, CheckRecord, Compaction, CompactionMethod, CompactionTrigger, Counts,
    Mode, ModelSwitch, Outcome, OutcomeStatus, PendingBatch, PushedBranch, Repository,
    TRANSCRIPT_VERSION, TraceIds, Transcript, TurnRecord, Violation,
};
pub use tripwire::Tripwire;
pub use workspace_copy::{CopyMode, WorkspaceCopy};

/// For `skip_serializing_if`: a count left out of the JSON while zero.
fn is_zero(n: &u64) -> bool {
    *n == 0
}
