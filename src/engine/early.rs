//! Streaming tool execution: while the model is still streaming
//! a turn, each tool call whose arguments are complete may start at once,
//! if it is concurrency-safe (read-only) and every call before it in the
//! turn started the same way. The first call that does not qualify (one
//! that writes, runs a command, is refused or would exceed the parallel
//! cap) closes early starts for the turn; it and the calls after it run in
//! the ordinary batches once the turn is complete. Results still go back to
//! the model in the order of its calls.

use std::future::Future;
use std::pin::Pin;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::sync::mpsc::UnboundedReceiver;

use super::calls::{ToolEnv, run_one};
use super::events::ToolCallRecord;
use super::pipeline::{Gate, gate};
use crate::provider::ToolCallRequest;

type Running<'a> = Pin<Box<dyn Future<Output = (usize, ToolCallRecord)> + Send + 'a>>;

/// The calls of one turn started before the turn ended.
pub struct EarlyStarts<'e, 'a> {
    env: &'e ToolEnv<'a>,
    turn: u32,
    max_parallel: usize,
    /// Index of the next call that may start early.
    next: usize,
    closed: bool,
    /// The ids of the calls started, by index.
    started: Vec<String>,
    running: FuturesUnordered<Running<'e>>,
    done: Vec<Option<ToolCallRecord>>,
}

impl<'e, 'a> EarlyStarts<'e, 'a> {
    pub fn new(env: &'e ToolEnv<'a>, turn: u32, max_parallel: usize) -> Self {
        Self {
            env,
            turn,
            max_parallel: max_parallel.max(1),
            next: 0,
            closed: false,
            started: Vec::new(),
            running: FuturesUnordered::new(),
            done: Vec::new(),
        }
    }

    /// A call the stream finished: starts it if it qualifies.
    fn offer(&mut self, index: usize, call: ToolCallRequest) {
        if self.closed || index != self.next || self.running.len() >= self.max_parallel {
            self.closed = true;
            return;
        }
        let env = self.env;
        let gated = gate(&call, env.registry, env.policy, &env.ctx);
        let safe = matches!(&gated, Gate::Run(a) if a.prepared.is_concurrency_safe());
        if !safe {
            self.closed = true;
            return;
        }
        self.next += 1;
        self.started.push(call.id.clone());
        let turn = self.turn;
        self.running.push(Box::pin(async move {
            (index, run_one(env, &call, gated, turn, 0).await)
        }));
    }

    /// Whether calls are still running.
    fn is_running(&self) -> bool {
        !self.running.is_empty()
    }

    /// Waits for one running call (pending forever when none runs, so it
    /// can sit in a `select!`).
    async fn next_done(&mut self) {
        match self.running.next().await {
            Some((i, rec)) => {
                if self.done.len() <= i {
                    self.done.resize(i + 1, None);
                }
                self.done[i] = Some(rec);
            }
            None => std::future::pending().await,
        }
    }

    /// Drives the model's answer while starting the calls it finishes and
    /// letting the started ones progress; returns the answer.
    pub async fn while_streaming<T>(
        &mut self,
        request: impl Future<Output = T>,
        mut calls: UnboundedReceiver<(usize, ToolCallRequest)>,
    ) -> T {
        enum Step<T> {
            Reply(T),
            Call(usize, ToolCallRequest),
            Progress,
        }
        tokio::pin!(request);
        let reply = loop {
            let step = tokio::select! {
                r = &mut request => Step::Reply(r),
                Some((i, c)) = calls.recv() => Step::Call(i, c),
                _ = self.next_done(), if self.is_running() => Step::Progress,
            };
            match step {
                Step::Reply(r) => break r,
                Step::Call(i, c) => self.offer(i, c),
                Step::Progress => {}
            }
        };
        // Calls completed by the answer's last chunk.
        while let Ok((i, c)) = calls.try_recv() {
            self.offer(i, c);
        }
        reply
    }

    async fn wait_all(&mut self) {
        while self.is_running() {
            self.next_done().await;
        }
    }

    /// Waits for every started call. Returns the records by index, for the
    /// calls that match the turn's final list (same position and id).
    pub async fn finish(mut self, calls: &[ToolCallRequest]) -> Vec<Option<ToolCallRecord>> {
        self.wait_all().await;
        let mut out: Vec<Option<ToolCallRecord>> = vec![None; calls.len()];
        for (i, rec) in self.done.into_iter().enumerate() {
            if let Some(rec) = rec
                && calls.get(i).is_some_and(|c| c.id == self.started[i])
            {
                out[i] = Some(rec);
            }
        }
        out
    }

    /// Waits for every started call and returns their records, for a turn
    /// that failed.
    pub async fn abandon(mut self) -> Vec<ToolCallRecord> {
        self.wait_all().await;
        self.done.into_iter().flatten().collect()
    }
}
