//! Batch mode (`runner run --batch`): model requests go through the
//! vendors' batch APIs, which cost half and answer within a day instead of
//! at once. Nightly jobs of one-turn tasks (triage, labels, a review
//! comment) are where that pays.
//!
//! ```text
//!  task A ─ Seat::ask ─┐                      ┌─ submit (one batch) ─ poll ─ results ─┐
//!  task B ─ Seat::ask ─┼─► Batcher (vendor,  ─┤                                       │
//!  task C ─ Seat::ask ─┘   server, model, key)└───────────── each task's answer ◄─────┘
//! ```
//!
//! - `batcher::Batcher`: one per vendor, server, model and key, shared by the
//!   run's tasks. It holds the requests asked and sends them as one batch
//!   once every task seated at it is waiting on it (the others would add
//!   nothing soon), or once the first of them has waited `batcher::LINGER` (5 s): a
//!   task running a long command, or waiting on a subagent, does not hold
//!   the others back longer than that. Turn k of tasks that run alike goes
//!   in one batch; a multi-turn task sends one batch per turn.
//! - [`Seat`] (`seat`): a task's place at a batcher, made when its provider is
//!   (a task with `batch: false`, a subagent and a fallback model have
//!   none and ask at once). It records the batch its request went in
//!   ([`BatchRef`]): the journal is told (a run killed outright), and the
//!   transcript keeps it when the task ends waiting (cancelled, out of
//!   time). `--resume` hands it back: the request built from the same
//!   conversation is collected from that batch instead of sent again, so
//!   nothing is billed twice.
//! - Each vendor's API is a file: `anthropic` (Message Batches),
//!   `openai` (a JSONL file and `/v1/batches`), `gemini`
//!   (`batchGenerateContent` with the requests inline), behind `vendor`
//!   (submit, and wait for the end); `poll` holds what they share, and
//!   `types` what they hand back.
//!
//! Invariants: a request is in at most one batch; once submitted, a
//! failure to learn its result is never retried by sending it again (the
//! batch id is kept instead); a vendor's per-request error (expired,
//! errored, canceled) fails that task only.

mod anthropic;
mod batcher;
mod gemini;
mod openai;
mod poll;
mod seat;
mod types;
mod vendor;

pub use runner_output::PendingBatch as BatchRef;
pub use seat::{BatchJoin, BatchSink, Seat};
