//! A task's fallback chain (`model: [anthropic:..., openai:..., gemini:...]`):
//! one model answers at a time, the first to begin with. When its request
//! fails for good (after its own retries) the agent loop asks the chain to
//! [`fall_back`](Provider::fall_back), makes room for the next model's
//! window, and sends the turn again to it; the task stays on that model to
//! its end. The conversation needs no translation: it is kept in the
//! runner's own [`Message`](super::Message)s and each vendor renders it.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::models::Pricing;
use super::{ActiveModel, ModelRequest, Provider, TurnFuture};

/// One model of the chain.
pub struct Link {
    pub provider: Box<dyn Provider>,
    /// `PROVIDER:MODEL`.
    pub name: String,
    pub window: u64,
    pub pricing: Option<Pricing>,
}

impl Link {
    fn active(&self) -> ActiveModel {
        ActiveModel {
            name: self.name.clone(),
            window: self.window,
            pricing: self.pricing,
        }
    }
}

/// The models, and which one answers now.
pub struct Chain {
    links: Vec<Link>,
    current: AtomicUsize,
}

impl Chain {
    /// `links`: the task's model first, then its fallbacks in order.
    pub fn new(links: Vec<Link>) -> Self {
        assert!(!links.is_empty(), "a chain has a model");
        Self {
            links,
            current: AtomicUsize::new(0),
        }
    }

    fn link(&self) -> &Link {
        &self.links[self.current.load(Ordering::Acquire)]
    }
}

impl Provider for Chain {
    fn name(&self) -> String {
        self.link().name.clone()
    }

    fn complete<'a>(&'a self, request: ModelRequest<'a>) -> TurnFuture<'a> {
        self.link().provider.complete(request)
    }

    fn active(&self) -> Option<ActiveModel> {
        Some(self.link().active())
    }

    fn window(&self) -> Option<u64> {
        self.link().provider.window()
    }

    fn adaptations(&self) -> Vec<String> {
        self.links
            .iter()
            .flat_map(|l| l.provider.adaptations())
            .collect()
    }

    fn fall_back(&self) -> Option<ActiveModel> {
        let next = self.current.load(Ordering::Acquire) + 1;
        let link = self.links.get(next)?;
        self.current.store(next, Ordering::Release);
        Some(link.active())
    }
}
