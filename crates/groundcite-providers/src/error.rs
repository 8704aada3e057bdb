//! The one error type of every provider, keeping what a trace needs.

use std::fmt;
use std::time::Duration;

use groundcite_core::RefusalCode;

use crate::types::{StopReason, Usage};

/// What went wrong, classified the same way for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The model declined to answer (OpenAI `refusal`, Anthropic
    /// `stop_reason: "refusal"`): refusal R4.
    Refusal,
    /// The provider's content filter blocked the prompt or the answer
    /// (`finish_reason: "content_filter"`, an HTTP 400 with code
    /// `content_filter`): refusal R4, the answer was declined.
    ContentFilter,
    /// The output stopped at the token limit (`finish_reason: "length"`,
    /// `stop_reason: "max_tokens"`): refusal R3, a schema-parsing error.
    Truncated,
    /// The output is not valid JSON (or empty): refusal R3, a
    /// schema-parsing error.
    InvalidOutput,
    /// HTTP 429 after every allowed retry, or a `Retry-After` longer than
    /// the policy accepts.
    RateLimited,
    /// Any other non-success status (4xx, or 5xx after every allowed retry).
    Status,
    /// The connect or total timeout expired.
    Timeout,
    /// The connection failed or was reset, after every allowed retry.
    Connection,
    /// A Microsoft Entra token (or AWS credentials) could not be obtained.
    Credential,
    /// The provider's settings are unusable (bad URL, a schema that fails the
    /// target's lint, …). Nothing was sent.
    Config,
    /// The response is not what the API documents (not JSON, no choices, …).
    Protocol,
    /// Nothing was sent: the client's circuit breaker is open after
    /// repeated provider failures (5xx, timeouts, connection failures).
    /// [`ProviderError::retry_after`] is the time until the breaker lets a
    /// probe through (see `groundcite_providers::resilience`).
    CircuitOpen,
}

impl ErrorKind {
    /// Stable lower-case name (for traces and metrics).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Refusal => "refusal",
            ErrorKind::ContentFilter => "content_filter",
            ErrorKind::Truncated => "truncated",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Status => "status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Connection => "connection",
            ErrorKind::Credential => "credential",
            ErrorKind::Config => "config",
            ErrorKind::Protocol => "protocol",
            ErrorKind::CircuitOpen => "circuit_open",
        }
    }
}

// Here rather than beside `StopReason` (types): errors know the types a
// generation carries, not the other way round.
impl StopReason {
    /// The stop reason behind a failed generation.
    pub fn of_error(e: &ProviderError) -> StopReason {
        match e.kind() {
            ErrorKind::Truncated => StopReason::Length,
            ErrorKind::Refusal => StopReason::Refusal,
            ErrorKind::ContentFilter => StopReason::ContentFilter,
            ErrorKind::InvalidOutput => StopReason::InvalidOutput,
            _ => StopReason::Error,
        }
    }
}

/// A failed generation, with the provider's raw failure kept for the trace:
/// HTTP status, body (secrets scrubbed), request ID, `Retry-After`, the
/// number of attempts, and any partial output.
///
/// The error is one pointer wide; its `Display` never contains a secret.
#[derive(thiserror::Error)]
#[error("{}: {}{}", .0.provider, .0.message, .0.details())]
pub struct ProviderError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: ErrorKind,
    provider: &'static str,
    message: String,
    status: Option<u16>,
    body: Option<String>,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    attempts: u32,
    partial_output: Option<String>,
    model: Option<String>,
    usage: Usage,
}

impl Inner {
    /// ` (HTTP 503, request id …, after 3 attempts)`, or nothing: the
    /// parts of the `Display` after the message.
    fn details(&self) -> String {
        let mut extra = Vec::new();
        if let Some(s) = self.status {
            extra.push(format!("HTTP {s}"));
        }
        if let Some(id) = &self.request_id {
            extra.push(format!("request id {id}"));
        }
        if self.attempts > 1 {
            extra.push(format!("after {} attempts", self.attempts));
        }
        if extra.is_empty() {
            String::new()
        } else {
            format!(" ({})", extra.join(", "))
        }
    }
}

impl ProviderError {
    /// A new error of `kind` from `provider`.
    pub fn new(kind: ErrorKind, provider: &'static str, message: impl Into<String>) -> Self {
        ProviderError(Box::new(Inner {
            kind,
            provider,
            message: message.into(),
            status: None,
            body: None,
            request_id: None,
            retry_after: None,
            attempts: 1,
            partial_output: None,
            model: None,
            usage: Usage::default(),
        }))
    }

    /// The failure of a request that was not sent because `provider`'s
    /// circuit breaker is open; the next probe may go in `retry_in`
    /// ([`ErrorKind::CircuitOpen`], kept as [`ProviderError::retry_after`]).
    pub fn circuit_open(provider: &'static str, retry_in: Duration) -> Self {
        let mut e = ProviderError::new(
            ErrorKind::CircuitOpen,
            provider,
            format!(
                "not sent: the provider failed repeatedly and the circuit breaker is open; \
                 the next attempt may go in {:.1}s",
                retry_in.as_secs_f64()
            ),
        )
        .with_retry_after(Some(retry_in));
        e.0.attempts = 0;
        e
    }

    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.0.status = Some(status);
        self
    }

    pub(crate) fn with_body(mut self, body: String) -> Self {
        self.0.body = Some(body);
        self
    }

    pub(crate) fn with_request_id(mut self, id: Option<String>) -> Self {
        if id.is_some() {
            self.0.request_id = id;
        }
        self
    }

    pub(crate) fn with_retry_after(mut self, d: Option<Duration>) -> Self {
        self.0.retry_after = d;
        self
    }

    pub(crate) fn with_attempts(mut self, attempts: u32) -> Self {
        self.0.attempts = attempts;
        self
    }

    /// Attaches the output received before the failure (kept in the trace).
    pub fn with_partial_output(mut self, output: Option<String>) -> Self {
        self.0.partial_output = output.filter(|o| !o.is_empty());
        self
    }

    /// Attaches the token counts of the failed generation (kept in the
    /// trace: a truncated answer shows how far it got).
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.0.usage = usage;
        self
    }

    /// Token counts of the failed generation, where known.
    pub fn usage(&self) -> Usage {
        self.0.usage
    }

    pub(crate) fn with_model(mut self, model: Option<String>) -> Self {
        if model.is_some() {
            self.0.model = model;
        }
        self
    }

    /// The classification.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Which provider failed (`openai`, `azure`, `anthropic`, …).
    pub fn provider(&self) -> &'static str {
        self.0.provider
    }

    /// What happened, as a sentence (no secret, no raw body).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The last HTTP status, if a response was received.
    pub fn status(&self) -> Option<u16> {
        self.0.status
    }

    /// The provider's raw error body (secrets that were sent are scrubbed).
    pub fn body(&self) -> Option<&str> {
        self.0.body.as_deref()
    }

    /// The provider's request ID (`x-request-id`, `apim-request-id`, `request-id`).
    pub fn request_id(&self) -> Option<&str> {
        self.0.request_id.as_deref()
    }

    /// The last `Retry-After` the provider sent.
    pub fn retry_after(&self) -> Option<Duration> {
        self.0.retry_after
    }

    /// Requests sent, retries included.
    pub fn attempts(&self) -> u32 {
        self.0.attempts
    }

    /// Output received before the failure (truncated or invalid JSON, the
    /// refusal text), for the trace only: never shown as an answer.
    pub fn partial_output(&self) -> Option<&str> {
        self.0.partial_output.as_deref()
    }

    /// The model that answered, when the response named it.
    pub fn model(&self) -> Option<&str> {
        self.0.model.as_deref()
    }

    /// The refusal code the contract carries for this failure: R4 when the
    /// model or its content filter declined, R3 for every other failure.
    pub fn refusal_code(&self) -> RefusalCode {
        match self.0.kind {
            ErrorKind::Refusal | ErrorKind::ContentFilter => RefusalCode::R4,
            _ => RefusalCode::R3,
        }
    }

    /// Whether the provider answered but its output cannot be used
    /// (refusal, content filter, truncation, invalid output), as opposed to
    /// a failure to get an answer at all.
    pub fn is_output_failure(&self) -> bool {
        matches!(
            self.0.kind,
            ErrorKind::Refusal
                | ErrorKind::ContentFilter
                | ErrorKind::Truncated
                | ErrorKind::InvalidOutput
        )
    }

    /// The error as a trace records it: kind, provider, status, request ID,
    /// message and attempts (never a secret: messages are scrubbed, and the
    /// raw body is left out).
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind().as_str(),
            "provider": self.provider(),
            "status": self.status(),
            "request_id": self.request_id(),
            "message": self.message(),
            "attempts": self.attempts(),
        })
    }

    /// Whether this counts as a schema-parsing error (`SchemaParsingErrorRate`).
    pub fn is_schema_parsing_error(&self) -> bool {
        matches!(self.0.kind, ErrorKind::Truncated | ErrorKind::InvalidOutput)
    }
}

impl fmt::Debug for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The body and partial output are data, not secrets (secrets were
        // scrubbed from the body when it was kept); show them in full.
        self.0.fmt(f)
    }
}
