//! What a batch applies to every request.

use groundcite_core::{ClaimPolicy, MatchProfile};

/// How a contract is stamped: the caller's trace ID and clock.
///
/// A request without a `trace_id` gets `(trace_id)()`; every contract gets
/// `(created_at)()` as its creation time (RFC 3339 UTC). The CLI passes a
/// UUIDv7 and the current time in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Stamp {
    /// A fresh trace ID.
    pub trace_id: fn() -> String,
    /// The current time, RFC 3339 UTC.
    pub created_at: fn() -> String,
}

/// The rules, defaults and parallelism of one batch.
#[derive(Debug, Clone)]
pub struct Options {
    /// Matching profile for every quote.
    pub profile: MatchProfile,
    /// What happens to a claim asserting a quantity its quotes lack.
    pub policy: ClaimPolicy,
    /// The model named in contracts whose request names none.
    pub model: Option<String>,
    /// Worker threads; `None`: as many as there are cores (2 when unknown).
    /// `Some(0)` counts as 1.
    pub jobs: Option<usize>,
    /// Trace IDs and creation times.
    pub stamp: Stamp,
}

impl Options {
    /// The default rules (profile `default`, claim policy `strict`), no
    /// default model, one thread per core.
    pub fn new(stamp: Stamp) -> Options {
        Options {
            profile: MatchProfile::default(),
            policy: ClaimPolicy::default(),
            model: None,
            jobs: None,
            stamp,
        }
    }

    /// The number of worker threads these options ask for (at least 1).
    pub fn threads(&self) -> usize {
        self.jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
            .max(1)
    }
}
