//! Retry budget and circuit breaker: what keeps a provider outage from
//! multiplying the load groundcite sends it.
//!
//! Every provider client (one [`ChatCompletions`](crate::ChatCompletions),
//! [`Anthropic`](crate::Anthropic) or `Bedrock` value, and its clones) has
//! one budget and one breaker, shared by all its requests; the shared retry
//! loop (`http::retrying`) consults both before every attempt. A process
//! that serves one provider (`groundcite serve`) therefore has one budget
//! and one breaker; tests and programs that build several clients get one
//! each, so one client's failures never fail another's requests.
//!
//! ## Retry budget ([`RetryBudget`])
//! A token bucket. It starts full ([`RetryBudget::max_tokens`], default
//! 10); every first attempt deposits [`RetryBudget::percent`] / 100 of a
//! token (default 10%); the bucket also refills by
//! [`RetryBudget::min_per_second`] tokens a second (default 1), the floor
//! that lets a quiet process retry; it never holds more than `max_tokens`.
//! Every retry withdraws one token; with less than one left, the request
//! fails at once with its last error (the retry policy's other limits,
//! `max_retries` and `Retry-After`, still apply). Under sustained failure
//! retries are thus at most 10% of requests plus one a second: an outage
//! adds about 10% to the load instead of multiplying it by the retry count.
//!
//! ## Circuit breaker ([`BreakerPolicy`], [`BreakerState`])
//! - **Closed** (normal): every attempt is sent. An attempt that fails in
//!   a way that means the provider is down (see below) adds one to a count
//!   of consecutive failures; any other outcome resets it. At
//!   [`BreakerPolicy::failure_threshold`] consecutive failures (default 5)
//!   the breaker opens.
//! - **Open**: nothing is sent; every request fails at once with
//!   [`ErrorKind::CircuitOpen`](crate::ErrorKind::CircuitOpen), its
//!   `retry_after` the time left until the next probe (the service answers
//!   503 `provider_unavailable` with `Retry-After`). After
//!   [`BreakerPolicy::cool_down`] (default 10 s) it turns half-open.
//! - **Half-open**: the first request is let through as a single probe
//!   (never retried); every other request fails at once as when open. The
//!   probe's success closes the breaker; its failure opens it for another
//!   cool-down. A probe that ends without an outcome (the caller went away)
//!   lets the next request probe.
//!
//! What counts as the provider being down: HTTP 5xx, timeouts and
//! connection failures. Everything else counts as the provider answering:
//! a success, a 4xx caused by the request (400, 401, 404, 413, …), a 429
//! (the caller's quota; its retries honour `Retry-After` and spend the
//! budget), and a refusal or invalid output (decided after a 2xx).
//!
//! ## Metrics
//! [`health`] returns, per provider label, the counts of retries, of
//! retries the budget refused, of requests the breaker failed fast, of
//! openings, and the worst breaker state of that provider's live clients;
//! `groundcite serve` exports them at scrape time (the providers crate
//! has no metrics dependency).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

/// How many retries a client may make, as a share of its recent requests.
/// See the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryBudget {
    /// Retries earned per 100 first attempts (10: every request deposits a
    /// tenth of a retry).
    pub percent: u32,
    /// Retries earned per second regardless of traffic (the floor that lets
    /// a quiet process retry).
    pub min_per_second: u32,
    /// Most retries saved up (the largest burst; the bucket starts full).
    pub max_tokens: u32,
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget {
            percent: 10,
            min_per_second: 1,
            max_tokens: 10,
        }
    }
}

/// When the circuit breaker opens and how long it stays open. See the
/// [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Consecutive failed attempts (5xx, timeout, connection failure) that
    /// open the breaker; 0 disables it.
    pub failure_threshold: u32,
    /// How long it stays open before letting one probe through.
    pub cool_down: Duration,
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        BreakerPolicy {
            failure_threshold: 5,
            cool_down: Duration::from_secs(10),
        }
    }
}

/// A circuit breaker's state (exported as a gauge: 0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BreakerState {
    /// Requests are sent (0).
    Closed,
    /// One probe may be sent (1).
    HalfOpen,
    /// Requests fail at once (2).
    Open,
}

impl BreakerState {
    /// The gauge value: 0 closed, 1 half-open, 2 open.
    pub fn gauge(self) -> i64 {
        match self {
            BreakerState::Closed => 0,
            BreakerState::HalfOpen => 1,
            BreakerState::Open => 2,
        }
    }

    /// `closed`, `half_open` or `open`.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerState::Closed => "closed",
            BreakerState::HalfOpen => "half_open",
            BreakerState::Open => "open",
        }
    }
}

/// The retry-budget and breaker figures of one provider label, summed over
/// every client of this process with that label (counters never decrease).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderHealth {
    /// The provider label (`openai`, `azure`, `anthropic`, `bedrock`, …).
    pub provider: &'static str,
    /// Retries sent (attempts after the first).
    pub retries: u64,
    /// Retries the budget refused (the request failed with its last error).
    pub budget_exhausted: u64,
    /// Requests (or retries) the breaker failed at once.
    pub breaker_rejections: u64,
    /// Times a breaker opened (from closed or half-open).
    pub breaker_openings: u64,
    /// The worst state among the live clients with this label.
    pub state: BreakerState,
}

/// The figures of every provider label a client was built for in this
/// process, in the order they were first seen.
pub fn health() -> Vec<ProviderHealth> {
    let registry = lock(&REGISTRY);
    registry
        .iter()
        .map(|entry| {
            let state = entry
                .clients
                .iter()
                .filter_map(Weak::upgrade)
                .map(|c| c.state())
                .max()
                .unwrap_or(BreakerState::Closed);
            ProviderHealth {
                provider: entry.provider,
                retries: entry.stats.retries.load(Ordering::Relaxed),
                budget_exhausted: entry.stats.budget_exhausted.load(Ordering::Relaxed),
                breaker_rejections: entry.stats.rejections.load(Ordering::Relaxed),
                breaker_openings: entry.stats.openings.load(Ordering::Relaxed),
                state,
            }
        })
        .collect()
}

/// Process-wide counters of one provider label.
#[derive(Debug, Default)]
struct Stats {
    retries: AtomicU64,
    budget_exhausted: AtomicU64,
    rejections: AtomicU64,
    openings: AtomicU64,
}

struct Registered {
    provider: &'static str,
    stats: Arc<Stats>,
    clients: Vec<Weak<Resilience>>,
}

static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// A poisoned lock still guards consistent data here (every update is a
/// few assignments that cannot panic halfway).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The token bucket of a [`RetryBudget`], driven by the caller's clock.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    policy: RetryBudget,
    tokens: f64,
    last: Instant,
}

impl Budget {
    pub(crate) fn new(policy: RetryBudget, now: Instant) -> Budget {
        Budget {
            policy,
            tokens: f64::from(policy.max_tokens),
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.add(elapsed * f64::from(self.policy.min_per_second));
    }

    fn add(&mut self, tokens: f64) {
        self.tokens = (self.tokens + tokens).min(f64::from(self.policy.max_tokens));
    }

    /// A first attempt: deposits `percent` / 100 of a token.
    pub(crate) fn deposit(&mut self, now: Instant) {
        self.refill(now);
        self.add(f64::from(self.policy.percent) / 100.0);
    }

    /// A retry: withdraws one token, or refuses when less than one is left.
    pub(crate) fn withdraw(&mut self, now: Instant) -> bool {
        self.refill(now);
        // Ten deposits of a tenth make a whole token despite rounding.
        if self.tokens >= 1.0 - 1e-9 {
            self.tokens = (self.tokens - 1.0).max(0.0);
            true
        } else {
            false
        }
    }

    #[cfg(test)]
    fn tokens(&self) -> f64 {
        self.tokens
    }
}

/// How an attempt ended, for the breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The provider answered (success, a 4xx of the request, a 429).
    Answered,
    /// The provider is down (5xx, timeout, connection failure).
    Down,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen { probing: bool },
}

/// What the breaker let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admitted {
    /// An attempt while closed.
    Normal,
    /// The half-open probe.
    Probe,
}

/// The circuit breaker's state machine, driven by the caller's clock.
#[derive(Debug, Clone)]
pub(crate) struct Breaker {
    policy: BreakerPolicy,
    phase: Phase,
}

impl Breaker {
    pub(crate) fn new(policy: BreakerPolicy) -> Breaker {
        Breaker {
            policy,
            phase: Phase::Closed { failures: 0 },
        }
    }

    pub(crate) fn state(&self, now: Instant) -> BreakerState {
        match self.phase {
            Phase::Closed { .. } => BreakerState::Closed,
            Phase::Open { until } if now >= until => BreakerState::HalfOpen,
            Phase::Open { .. } => BreakerState::Open,
            Phase::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// Whether an attempt may be sent now; if not, how long until the next
    /// probe may be (while a probe is out: one cool-down, the longest its
    /// failure would make it).
    pub(crate) fn admit(&mut self, now: Instant) -> Result<Admitted, Duration> {
        match self.phase {
            Phase::Closed { .. } => Ok(Admitted::Normal),
            Phase::Open { until } if now < until => Err(until - now),
            Phase::Open { .. } | Phase::HalfOpen { probing: false } => {
                self.phase = Phase::HalfOpen { probing: true };
                Ok(Admitted::Probe)
            }
            Phase::HalfOpen { probing: true } => Err(self.policy.cool_down),
        }
    }

    /// Records how an admitted attempt ended; true when this opened the
    /// breaker. While half-open only the probe's outcome counts, while open
    /// none does (attempts sent before it opened).
    pub(crate) fn record(&mut self, admitted: Admitted, outcome: Outcome, now: Instant) -> bool {
        let open = Phase::Open {
            until: now + self.policy.cool_down,
        };
        match (self.phase, admitted, outcome) {
            (Phase::Closed { .. }, _, Outcome::Answered) => {
                self.phase = Phase::Closed { failures: 0 };
                false
            }
            (Phase::Closed { failures }, _, Outcome::Down) => {
                let failures = failures.saturating_add(1);
                if self.policy.failure_threshold > 0 && failures >= self.policy.failure_threshold {
                    self.phase = open;
                    true
                } else {
                    self.phase = Phase::Closed { failures };
                    false
                }
            }
            (Phase::HalfOpen { .. }, Admitted::Probe, Outcome::Answered) => {
                self.phase = Phase::Closed { failures: 0 };
                false
            }
            (Phase::HalfOpen { .. }, Admitted::Probe, Outcome::Down) => {
                self.phase = open;
                true
            }
            _ => false,
        }
    }

    /// A probe that ended without an outcome: the next request may probe.
    pub(crate) fn abandon(&mut self, admitted: Admitted) {
        if admitted == Admitted::Probe && self.phase == (Phase::HalfOpen { probing: true }) {
            self.phase = Phase::HalfOpen { probing: false };
        }
    }
}

/// One client's budget and breaker, and its label's counters.
#[derive(Debug)]
pub(crate) struct Resilience {
    provider: &'static str,
    state: Mutex<(Budget, Breaker)>,
    stats: Arc<Stats>,
}

impl Resilience {
    /// A fresh budget and breaker for a client of `provider`, registered
    /// for [`health`].
    pub(crate) fn new(
        provider: &'static str,
        budget: RetryBudget,
        breaker: BreakerPolicy,
    ) -> Arc<Resilience> {
        let mut registry = lock(&REGISTRY);
        let index = match registry.iter().position(|e| e.provider == provider) {
            Some(i) => i,
            None => {
                registry.push(Registered {
                    provider,
                    stats: Arc::default(),
                    clients: Vec::new(),
                });
                registry.len() - 1
            }
        };
        let entry = &mut registry[index];
        let me = Arc::new(Resilience {
            provider,
            state: Mutex::new((Budget::new(budget, Instant::now()), Breaker::new(breaker))),
            stats: entry.stats.clone(),
        });
        entry.clients.retain(|w| w.strong_count() > 0);
        entry.clients.push(Arc::downgrade(&me));
        me
    }

    /// The provider label.
    pub(crate) fn provider(&self) -> &'static str {
        self.provider
    }

    fn state(&self) -> BreakerState {
        lock(&self.state).1.state(Instant::now())
    }

    /// Asks the breaker to let an attempt through (`first`: the request's
    /// first attempt, which also deposits into the budget). The permit
    /// records the outcome; dropped without one, a probe is given back.
    pub(crate) fn admit(self: &Arc<Self>, first: bool) -> Result<Permit, Duration> {
        let now = Instant::now();
        let mut state = lock(&self.state);
        match state.1.admit(now) {
            Ok(admitted) => {
                if first {
                    state.0.deposit(now);
                }
                Ok(Permit {
                    owner: self.clone(),
                    admitted,
                    done: false,
                })
            }
            Err(wait) => {
                self.stats.rejections.fetch_add(1, Ordering::Relaxed);
                Err(wait)
            }
        }
    }

    /// Asks the budget for a retry; counts the retry or the refusal.
    pub(crate) fn retry(&self) -> bool {
        let allowed = lock(&self.state).0.withdraw(Instant::now());
        let counter = if allowed {
            &self.stats.retries
        } else {
            &self.stats.budget_exhausted
        };
        counter.fetch_add(1, Ordering::Relaxed);
        allowed
    }
}

/// An attempt the breaker let through.
#[derive(Debug)]
pub(crate) struct Permit {
    owner: Arc<Resilience>,
    admitted: Admitted,
    done: bool,
}

impl Permit {
    /// Whether this attempt is the half-open probe (never retried).
    pub(crate) fn is_probe(&self) -> bool {
        self.admitted == Admitted::Probe
    }

    /// Records the attempt's outcome; whether the breaker is closed after
    /// it (a retry is worth waiting for).
    pub(crate) fn record(mut self, outcome: Outcome) -> bool {
        self.done = true;
        let now = Instant::now();
        let mut state = lock(&self.owner.state);
        if state.1.record(self.admitted, outcome, now) {
            self.owner.stats.openings.fetch_add(1, Ordering::Relaxed);
        }
        state.1.state(now) == BreakerState::Closed
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.done {
            lock(&self.owner.state).1.abandon(self.admitted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn the_budget_allows_a_share_of_requests_plus_a_floor() {
        let t0 = Instant::now();
        let mut b = Budget::new(RetryBudget::default(), t0);
        // Starts full: 10 retries at once, then none.
        for _ in 0..10 {
            assert!(b.withdraw(t0));
        }
        assert!(!b.withdraw(t0));
        // 100 requests in the same instant earn 10 retries.
        for _ in 0..100 {
            b.deposit(t0);
        }
        let allowed = (0..50).filter(|_| b.withdraw(t0)).count();
        assert_eq!(allowed, 10);
        // The floor: one a second with no traffic at all.
        assert!(!b.withdraw(t0 + 500 * MS));
        assert!(b.withdraw(t0 + 1000 * MS));
        assert!(!b.withdraw(t0 + 1000 * MS));
        // Never more than max_tokens saved up.
        let later = t0 + Duration::from_secs(3600);
        b.deposit(later);
        assert!((b.tokens() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn under_sustained_failure_retries_stay_near_the_share() {
        // 1000 requests over 10 s (100 a second), each wanting 3 retries.
        let t0 = Instant::now();
        let mut b = Budget::new(RetryBudget::default(), t0);
        let mut retries = 0;
        for i in 0..1000u32 {
            let now = t0 + 10 * MS * i;
            b.deposit(now);
            retries += (0..3).filter(|_| b.withdraw(now)).count();
        }
        // 10% of 1000 + 1/s over 10 s + the initial 10.
        assert!(retries <= 100 + 10 + 10, "{retries}");
        assert!(retries >= 100, "{retries}");
    }

    #[test]
    fn a_zero_budget_never_retries() {
        let t0 = Instant::now();
        let mut b = Budget::new(
            RetryBudget {
                percent: 0,
                min_per_second: 0,
                max_tokens: 0,
            },
            t0,
        );
        b.deposit(t0);
        assert!(!b.withdraw(t0 + Duration::from_secs(60)));
    }

    fn breaker() -> Breaker {
        Breaker::new(BreakerPolicy {
            failure_threshold: 3,
            cool_down: 100 * MS,
        })
    }

    #[test]
    fn the_breaker_opens_after_consecutive_failures_only() {
        let t0 = Instant::now();
        let mut b = breaker();
        let fail = |b: &mut Breaker| {
            let a = b.admit(t0).unwrap();
            b.record(a, Outcome::Down, t0)
        };
        assert!(!fail(&mut b));
        assert!(!fail(&mut b));
        // An answer (a 4xx, a 429, a success) resets the count.
        let a = b.admit(t0).unwrap();
        b.record(a, Outcome::Answered, t0);
        assert!(!fail(&mut b));
        assert!(!fail(&mut b));
        assert_eq!(b.state(t0), BreakerState::Closed);
        assert!(fail(&mut b));
        assert_eq!(b.state(t0), BreakerState::Open);
        assert_eq!(b.admit(t0 + 40 * MS), Err(60 * MS));
    }

    #[test]
    fn half_open_lets_one_probe_through_and_closes_on_success() {
        let t0 = Instant::now();
        let mut b = breaker();
        for _ in 0..3 {
            let a = b.admit(t0).unwrap();
            b.record(a, Outcome::Down, t0);
        }
        let t1 = t0 + 100 * MS;
        assert_eq!(b.state(t1), BreakerState::HalfOpen);
        let probe = b.admit(t1).unwrap();
        assert_eq!(probe, Admitted::Probe);
        // Everyone else waits while the probe is out.
        assert_eq!(b.admit(t1), Err(100 * MS));
        // A late answer of an attempt sent before the breaker opened does
        // not decide anything.
        assert!(!b.record(Admitted::Normal, Outcome::Answered, t1));
        assert_eq!(b.state(t1), BreakerState::HalfOpen);
        b.record(probe, Outcome::Answered, t1 + MS);
        assert_eq!(b.state(t1), BreakerState::Closed);
        assert_eq!(b.admit(t1), Ok(Admitted::Normal));
    }

    #[test]
    fn a_failed_probe_reopens_for_a_full_cool_down() {
        let t0 = Instant::now();
        let mut b = breaker();
        for _ in 0..3 {
            let a = b.admit(t0).unwrap();
            b.record(a, Outcome::Down, t0);
        }
        let t1 = t0 + 150 * MS;
        let probe = b.admit(t1).unwrap();
        assert!(b.record(probe, Outcome::Down, t1));
        assert_eq!(b.state(t1), BreakerState::Open);
        assert_eq!(b.admit(t1 + 30 * MS), Err(70 * MS));
        assert_eq!(b.admit(t1 + 100 * MS), Ok(Admitted::Probe));
    }

    #[test]
    fn an_abandoned_probe_lets_the_next_request_probe() {
        let t0 = Instant::now();
        let mut b = breaker();
        for _ in 0..3 {
            let a = b.admit(t0).unwrap();
            b.record(a, Outcome::Down, t0);
        }
        let t1 = t0 + 100 * MS;
        let probe = b.admit(t1).unwrap();
        b.abandon(probe);
        assert_eq!(b.admit(t1), Ok(Admitted::Probe));
    }

    #[test]
    fn a_zero_threshold_never_opens() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BreakerPolicy {
            failure_threshold: 0,
            cool_down: MS,
        });
        for _ in 0..1000 {
            let a = b.admit(t0).unwrap();
            assert!(!b.record(a, Outcome::Down, t0));
        }
        assert_eq!(b.state(t0), BreakerState::Closed);
    }

    #[test]
    fn permits_count_and_give_back_probes() {
        let r = Resilience::new(
            "resilience-unit-test",
            RetryBudget {
                percent: 0,
                min_per_second: 0,
                max_tokens: 1,
            },
            BreakerPolicy {
                failure_threshold: 1,
                cool_down: Duration::ZERO,
            },
        );
        assert!(r.retry());
        assert!(!r.retry());
        r.admit(true).unwrap().record(Outcome::Down);
        // Cool-down zero: half-open at once; a dropped probe is given back.
        let probe = r.admit(false).unwrap();
        assert!(probe.is_probe());
        assert!(r.admit(false).is_err());
        drop(probe);
        r.admit(false).unwrap().record(Outcome::Answered);
        assert_eq!(r.state(), BreakerState::Closed);
        let h = health()
            .into_iter()
            .find(|h| h.provider == "resilience-unit-test")
            .unwrap();
        assert_eq!(
            (
                h.retries,
                h.budget_exhausted,
                h.breaker_rejections,
                h.breaker_openings
            ),
            (1, 1, 1, 1)
        );
        assert_eq!(h.state, BreakerState::Closed);
    }
}
