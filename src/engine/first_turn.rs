//! The first request of a task, sent while its workspace is prepared.
//!
//! The first request carries the system prompt, the task's prompt and the
//! tool declarations: nothing of the workspace copy. So a task sends it
//! before the copy and its git view are made (which grows with the
//! repository: hundreds of milliseconds at 10,000 files), and the model's
//! latency covers the copy. No tool runs before the workspace is ready:
//! the calls the answer streams meanwhile wait in their channel, and
//! [`super::run_agent`] takes the request over where it is, starting
//! them as it would have (see [`super::early`]).
//!
//! The request is the one the agent loop would have sent for its first
//! turn, byte for byte: the same declarations, `tool_choice` and output
//! schema, and the conversation's estimate of its size is taken the same
//! way. A prompt the vendor finds too long comes back as the answer's
//! error, and the loop compacts and asks again as it would have.

use crate::provider::retry::{RetryLog, noting_retries};
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use tokio::sync::mpsc::UnboundedReceiver;

use super::conversation::Conversation;
use super::events::{Event, EventSink};
use super::limits::AgentLimits;
use crate::provider::{
    ModelRequest, ModelTurn, Provider, ProviderError, RequestPurpose, ToolCallRequest,
};
use crate::tools::Registry;

type Answer<'p> = Pin<Box<dyn Future<Output = Result<ModelTurn, ProviderError>> + Send + 'p>>;

/// A first request in flight, or its answer.
pub struct FirstTurn<'p> {
    answer: Answer<'p>,
    /// The request's retries.
    retries: RetryLog,
    /// The answer's calls, as the stream completes them.
    pub(super) calls: UnboundedReceiver<(usize, ToolCallRequest)>,
}

/// Sends the first turn's request (it goes out as the returned value is
/// polled, by [`FirstTurn::alongside`] or the agent loop). Emits the turn's
/// `turn_started`.
pub fn ask_first<'p>(
    provider: &'p dyn Provider,
    system: &str,
    registry: &Registry,
    conv: &mut Conversation,
    limits: &AgentLimits,
    sink: &dyn EventSink,
) -> FirstTurn<'p> {
    let tools = registry.specs();
    conv.fix_prefix(system, &tools);
    conv.sending();
    sink.emit(&Event::TurnStarted { turn: 1 });
    // The request owns what it sends: the conversation goes on being the
    // agent loop's.
    let system = system.to_string();
    let messages = conv.sent().to_vec();
    let tool_choice = limits.tool_choice.clone();
    let output = limits.output.clone();
    let (tx, calls) = tokio::sync::mpsc::unbounded_channel();
    let (answer, retries) = noting_retries(async move {
        provider
            .complete(ModelRequest {
                system: &system,
                messages: &messages,
                tools: &tools,
                early: Some(&tx),
                purpose: RequestPurpose::Turn,
                tool_choice: &tool_choice,
                output_schema: output.as_deref().map(|o| &o.schema),
            })
            .await
    });
    FirstTurn {
        answer: Box::pin(answer),
        retries,
        calls,
    }
}

impl<'p> FirstTurn<'p> {
    /// Waits for `other` (the workspace), moving the request on meanwhile.
    pub async fn alongside<T>(&mut self, other: impl Future<Output = T>) -> T {
        let mut other = std::pin::pin!(other);
        let mut answered: Option<Result<ModelTurn, ProviderError>> = None;
        let out = std::future::poll_fn(|cx| {
            if answered.is_none()
                && let Poll::Ready(a) = self.answer.as_mut().poll(cx)
            {
                answered = Some(a);
            }
            other.as_mut().poll(cx)
        })
        .await;
        if let Some(a) = answered {
            self.answer = Box::pin(std::future::ready(a));
        }
        out
    }

    /// The request, to be driven to its answer.
    pub(super) fn into_parts(
        self,
    ) -> (
        Answer<'p>,
        UnboundedReceiver<(usize, ToolCallRequest)>,
        RetryLog,
    ) {
        (self.answer, self.calls, self.retries)
    }
}
