//! The run's rate governor: one pace per server and key, shared by every
//! task and subagent of the run.
//!
//! Without it each request retries a 429 on its own. Eight tasks against a
//! server that admits one request in 0.4 s then send five refused requests
//! for each admitted one, all retrying after the same `retry-after`, and
//! most tasks run out of retries. With it:
//! - a 429's `retry-after` pauses every request to that server and key,
//!   not only the refused one;
//! - refusals teach a spacing between the starts of two requests (doubled
//!   by a refusal of a request sent at the current spacing, eased by each
//!   admitted one), so the requests held by a pause go one by one after
//!   it instead of in a burst;
//! - the vendors' rate-limit headers (OpenAI's `x-ratelimit-*`,
//!   Anthropic's `anthropic-ratelimit-*`) hold requests while the window's
//!   requests or tokens are spent, until its reset, before any refusal;
//! - a refused request whose server admitted another request meanwhile is
//!   retried without spending one of its task's retries: the server makes
//!   progress, and only the task's time bounds the wait.
//!
//! Far from any limit a request costs one uncontended lock and a few
//! header lookups.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use tokio::time::Instant;

pub use super::rate_headers::Limits;

/// The least spacing a refusal sets.
const MIN_SPACING: Duration = Duration::from_millis(100);
/// The most.
const MAX_SPACING: Duration = Duration::from_secs(30);
/// A 429 without `retry-after` pauses the server this long (or the
/// spacing, if longer).
const DEFAULT_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause a server may impose through its headers.
const MAX_PAUSE: Duration = Duration::from_secs(300);
/// A pause this long or longer is said on stderr.
const ANNOUNCE: Duration = Duration::from_millis(500);

/// A count the server gave, spent locally by each request admitted
/// since, until its reset.
#[derive(Debug, Clone, Copy)]
struct Budget {
    left: u64,
    reset: Instant,
}

impl Budget {
    fn new((left, reset): (u64, Duration), now: Instant) -> Self {
        Self {
            left,
            reset: now + reset.min(MAX_PAUSE),
        }
    }
    /// When a request needing `n` may go: None when now (or when the
    /// count has started again).
    fn holds(&self, n: u64, now: Instant) -> Option<Instant> {
        (self.reset > now && self.left < n).then_some(self.reset)
    }
}

#[derive(Debug, Default)]
struct State {
    /// No request starts before this (a 429's `retry-after`).
    paused_until: Option<Instant>,
    /// The least time between two requests' starts; zero until a refusal.
    spacing: Duration,
    /// The first start no waiter has claimed.
    next_start: Option<Instant>,
    /// Requests sent so far.
    sent: u64,
    /// `sent` when the spacing last widened: a refusal of an earlier
    /// request does not widen it again.
    widened_at: u64,
    /// Requests the server answered without a refusal.
    admitted: u64,
    requests: Option<Budget>,
    tokens: Option<Budget>,
    /// The end of the last pause said on stderr.
    announced: Option<Instant>,
}

impl State {
    /// Until when a request of `tokens` is held by a pause or a spent
    /// count.
    fn held(&self, now: Instant, tokens: u64) -> Option<Instant> {
        let pause = self.paused_until.filter(|&t| t > now);
        let requests = self.requests.and_then(|b| b.holds(1, now));
        let tokens = self.tokens.and_then(|b| b.holds(tokens, now));
        [pause, requests, tokens].into_iter().flatten().max()
    }

    fn admit(&mut self, now: Instant, tokens: u64) -> Ticket {
        self.sent += 1;
        if let Some(b) = &mut self.requests {
            b.left = b.left.saturating_sub(1);
        }
        if let Some(b) = &mut self.tokens
            && b.reset > now
        {
            b.left = b.left.saturating_sub(tokens);
        }
        Ticket {
            seq: self.sent,
            admitted: self.admitted,
            waited: Duration::ZERO,
        }
    }

    fn learn(&mut self, limits: Limits, now: Instant) {
        if let Some(r) = limits.requests {
            self.requests = Some(Budget::new(r, now));
        }
        if let Some(t) = limits.tokens {
            self.tokens = Some(Budget::new(t, now));
        }
    }
}

/// What the server admitted by a request's last refusal, across its
/// tries: a refusal is free when the server admitted another request
/// since the one before (or since the first try was sent).
#[derive(Debug)]
pub struct Progress(std::sync::atomic::AtomicU64);

impl Default for Progress {
    fn default() -> Self {
        Self(std::sync::atomic::AtomicU64::new(u64::MAX))
    }
}

/// One try's admission.
#[derive(Debug, Clone, Copy)]
pub struct Ticket {
    seq: u64,
    /// The server's admitted requests when this one was sent.
    admitted: u64,
    /// How long the request waited for the governor.
    pub waited: Duration,
}

/// The pace of one server and key.
#[derive(Debug)]
pub struct Governor {
    /// `openai:gpt-4o`, for what it says on stderr.
    name: String,
    state: Mutex<State>,
}

impl Governor {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            state: Mutex::default(),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a request of about `tokens` may start.
    pub async fn admit(&self, tokens: u64) -> Ticket {
        let began = Instant::now();
        // A start claimed behind the others held by the spacing.
        let mut slot: Option<Instant> = None;
        loop {
            let wake = {
                let mut st = self.state();
                let now = Instant::now();
                let wake = match (st.held(now, tokens), slot) {
                    (Some(until), _) => {
                        // Claimed again once the hold ends.
                        slot = None;
                        Some(until)
                    }
                    (None, Some(s)) => Some(s).filter(|&s| s > now),
                    (None, None) => {
                        let claimed = st.next_start.filter(|&n| n > now);
                        let first = claimed.unwrap_or(now);
                        if !st.spacing.is_zero() {
                            st.next_start = Some(first + st.spacing);
                        }
                        slot = claimed;
                        claimed
                    }
                };
                match wake {
                    Some(wake) => wake,
                    None => {
                        return Ticket {
                            waited: began.elapsed(),
                            ..st.admit(now, tokens)
                        };
                    }
                }
            };
            tokio::time::sleep_until(wake).await;
        }
    }

    /// The server answered a request (whatever the answer holds).
    pub fn answered(&self, limits: Limits) {
        let mut st = self.state();
        st.admitted += 1;
        let spacing = st.spacing - st.spacing / 8;
        st.spacing = if spacing < MIN_SPACING / 4 {
            Duration::ZERO
        } else {
            spacing
        };
        st.learn(limits, Instant::now());
    }

    /// The server refused the try for its rate: `why` in its words,
    /// `retry_after` what it asked for. Whether the retry is free: the
    /// server admitted another request since the request's last refusal
    /// (`progress`), or since its first try was sent.
    pub fn refused(
        &self,
        ticket: &Ticket,
        progress: &Progress,
        why: &str,
        retry_after: Option<Duration>,
        limits: Limits,
    ) -> bool {
        let mut st = self.state();
        let now = Instant::now();
        if ticket.seq > st.widened_at {
            st.spacing = (st.spacing * 2).clamp(MIN_SPACING, MAX_SPACING);
            st.widened_at = st.sent;
        }
        let pause = retry_after
            .unwrap_or(DEFAULT_PAUSE.max(st.spacing))
            .min(MAX_PAUSE);
        let until = now + pause;
        if st.paused_until.is_none_or(|p| p < until) {
            st.paused_until = Some(until);
        }
        st.learn(limits, now);
        if pause >= ANNOUNCE && st.announced.is_none_or(|a| a + ANNOUNCE < until) {
            st.announced = Some(until);
            tracing::warn!(
                "{}: {}; waiting for the rate limit: {:.1} s \
                 (the run's requests to this server share one pace)",
                self.name,
                super::retry::summary_line(why),
                pause.as_secs_f64()
            );
        }
        let since = match progress
            .0
            .swap(st.admitted, std::sync::atomic::Ordering::Relaxed)
        {
            u64::MAX => ticket.admitted,
            n => n,
        };
        st.admitted > since
    }
}

/// A server (its base URL) and a hash of the key it is asked with.
type ServerKey = (String, u64);

/// Every server's governor, for the run.
static SERVERS: LazyLock<Mutex<HashMap<ServerKey, Arc<Governor>>>> =
    LazyLock::new(Default::default);

/// The governor of `base_url` asked with a key (its
/// [`super::config::key_hash`]), shared by the run's tasks:
/// vendors count requests per key, whatever the model.
pub fn for_server(base_url: &str, key_hash: u64, name: &str) -> Arc<Governor> {
    let mut all = SERVERS.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(
        all.entry((base_url.to_string(), key_hash))
            .or_insert_with(|| Arc::new(Governor::new(name))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn far_from_a_limit_nothing_waits() {
        let g = Governor::new("t");
        for _ in 0..3 {
            let t = g.admit(0).await;
            assert_eq!(t.waited, Duration::ZERO);
            g.answered(Limits::default());
        }
    }

    fn refuse(g: &Governor, t: &Ticket, p: &Progress, after: Option<Duration>) -> bool {
        g.refused(t, p, "HTTP 429", after, Limits::default())
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_pauses_every_request_then_spaces_them() {
        let g = Arc::new(Governor::new("t"));
        let first = g.admit(0).await;
        let second = g.admit(0).await;
        let second_progress = Progress::default();
        let one_s = Some(Duration::from_secs(1));
        assert!(!refuse(&g, &first, &Progress::default(), one_s));
        // Sent before the spacing widened: it does not widen it again.
        assert!(!refuse(&g, &second, &second_progress, one_s));
        assert_eq!(g.state().spacing, MIN_SPACING);
        let start = Instant::now();
        let mut waiters = Vec::new();
        for _ in 0..3 {
            let g = g.clone();
            waiters.push(tokio::spawn(async move {
                let t = g.admit(0).await;
                (Instant::now() - start, t)
            }));
        }
        let mut starts = Vec::new();
        for w in waiters {
            starts.push(w.await.unwrap());
        }
        starts.sort_by_key(|(d, _)| *d);
        let at: Vec<u128> = starts.iter().map(|(d, _)| d.as_millis()).collect();
        assert_eq!(at, [1000, 1100, 1200]);
        assert_eq!(starts[0].1.waited, Duration::from_secs(1));
        // One admitted since the third was sent: its refusal's retry is free.
        let (_, third) = starts[2];
        g.answered(Limits::default());
        assert!(refuse(&g, &third, &Progress::default(), None));
        // Eased by the admitted one (100 → 87.5 ms), doubled by the refusal.
        assert_eq!(g.state().spacing, Duration::from_millis(175));
        // The second request's next try: one admitted since its refusal.
        assert!(refuse(&g, &starts[1].1, &second_progress, None));
        // And its third: none admitted since.
        assert!(!refuse(&g, &starts[1].1, &second_progress, None));
    }

    #[tokio::test(start_paused = true)]
    async fn a_spent_count_holds_requests_until_its_reset() {
        let g = Governor::new("t");
        g.admit(0).await;
        g.answered(Limits {
            requests: Some((1, Duration::from_secs(2))),
            tokens: None,
        });
        let start = Instant::now();
        assert_eq!(g.admit(0).await.waited, Duration::ZERO);
        // The count is spent locally: the next request waits for the reset.
        assert_eq!(g.admit(0).await.waited, Duration::from_secs(2));
        assert_eq!(Instant::now() - start, Duration::from_secs(2));

        // Tokens: a request larger than what is left waits, a small one goes.
        let g = Governor::new("t");
        g.admit(0).await;
        g.answered(Limits {
            requests: None,
            tokens: Some((500, Duration::from_secs(3))),
        });
        assert_eq!(g.admit(400).await.waited, Duration::ZERO);
        assert_eq!(g.admit(400).await.waited, Duration::from_secs(3));
    }
}
