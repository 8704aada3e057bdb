//! The HTTP layer every adapter shares: connect and total timeouts, bounded
//! retries with jittered exponential backoff that honour `Retry-After`
//! within a retry budget and behind a circuit breaker ([`crate::resilience`]),
//! and error bodies kept (secrets scrubbed) with the request ID.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use crate::error::{ErrorKind, ProviderError};
use crate::resilience::{BreakerPolicy, Outcome, Resilience, RetryBudget};
use crate::secret::{SecretString, scrub};

/// Retry policy for HTTP 429, 5xx and connection failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retrying).
    pub max_retries: u32,
    /// First backoff; doubled on each retry.
    pub base_delay: Duration,
    /// Largest backoff without `Retry-After`.
    pub max_delay: Duration,
    /// Longest `Retry-After` honoured; a longer one ends the retries at once
    /// (the error keeps it, so a caller can reschedule).
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// Timeouts and retries of one provider client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// Time to establish a connection (TCP and TLS).
    pub connect_timeout: Duration,
    /// Time for one whole attempt, reading the body (or the stream) included.
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
    /// Most bytes read of a successful response: its body, or for a
    /// stream one unfinished event and the output text (the whole stream
    /// may be 8 times this: each token comes in its own event). More fails
    /// the call ([`ErrorKind::Protocol`](crate::ErrorKind::Protocol))
    /// rather than being held in memory: a misbehaving server or proxy must
    /// not be able to exhaust the service's memory. Default
    /// [`DEFAULT_MAX_RESPONSE_BYTES`]. (Bedrock's SDK reads its own
    /// responses; this applies to the HTTP adapters.)
    pub max_response_bytes: usize,
    /// The share of recent requests that may be retried (per client; see
    /// [`crate::resilience`]).
    pub retry_budget: RetryBudget,
    /// When the client stops sending to a failing provider, and how it
    /// probes (per client; see [`crate::resilience`]).
    pub breaker: BreakerPolicy,
}

/// [`HttpConfig::max_response_bytes`] by default: 16 MiB, far above any
/// answer within a model's output-token limit (a 128k-token answer is
/// well under 1 MiB of text).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 << 20;

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            retry_budget: RetryBudget::default(),
            breaker: BreakerPolicy::default(),
        }
    }
}

/// A client with the policy applied. Clones share the retry budget and the
/// circuit breaker.
#[derive(Debug, Clone)]
pub(crate) struct Http {
    client: reqwest::Client,
    config: HttpConfig,
    resilience: Arc<Resilience>,
}

/// A successful (2xx) response, with what the caller needs for the trace.
pub(crate) struct Sent {
    pub response: reqwest::Response,
    pub request_id: Option<String>,
    pub attempts: u32,
    pub started: Instant,
    pub time_to_headers: Duration,
    /// [`HttpConfig::max_response_bytes`] of the client that sent it.
    pub max_bytes: usize,
}

/// Largest error body kept.
const MAX_ERROR_BODY: usize = 64 * 1024;

impl Http {
    pub fn new(config: HttpConfig, provider: &'static str) -> Result<Http, ProviderError> {
        // reqwest is built without a default crypto provider (no aws-lc C
        // build); install ring once per process. An error means another
        // provider is installed already, which is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            .user_agent(concat!("groundcite/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| {
                ProviderError::new(
                    ErrorKind::Config,
                    provider,
                    format!("cannot build the HTTP client: {e}"),
                )
            })?;
        Ok(Http {
            client,
            resilience: Resilience::new(provider, config.retry_budget, config.breaker),
            config,
        })
    }

    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }

    /// The retry policy, for an adapter that retries a failure the provider
    /// reports inside a successful (2xx) body.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.config.retry
    }

    /// Asks the shared retry budget for one such retry.
    pub fn spend_retry(&self) -> bool {
        self.resilience.retry()
    }

    /// Sends the request built by `build` (called once per attempt) and
    /// retries 429, 5xx and connection failures under the policy, the retry
    /// budget and the circuit breaker. Timeouts are not retried: the
    /// attempt already used the whole time allowed.
    pub async fn send(
        &self,
        provider: &'static str,
        build: impl Fn() -> reqwest::RequestBuilder,
        request_id_headers: &[&str],
        secrets: &[SecretString],
    ) -> Result<Sent, ProviderError> {
        let started = Instant::now();
        let outcome = retrying(&self.config.retry, &self.resilience, || async {
            match build().send().await {
                Ok(response) if response.status().is_success() => Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    Err(Failed {
                        retryable: status == 429 || (500..600).contains(&status),
                        retry_after: retry_after(response.headers()),
                        error: Unsent::Status(response),
                    })
                }
                Err(e) => Err(Failed {
                    retryable: !e.is_timeout(),
                    retry_after: None,
                    error: Unsent::Transport(e),
                }),
            }
        })
        .await;
        match outcome {
            Ok((response, attempts)) => Ok(Sent {
                request_id: request_id(response.headers(), request_id_headers),
                response,
                attempts,
                started,
                time_to_headers: started.elapsed(),
                max_bytes: self.config.max_response_bytes,
            }),
            Err((Unsent::Status(response), attempts)) => {
                let status = response.status().as_u16();
                let request_id = request_id(response.headers(), request_id_headers);
                let retry_after = retry_after(response.headers());
                let body = read_error_body(response).await;
                let body = scrub(&body, secrets);
                Err(status_error(provider, status, body, request_id)
                    .with_retry_after(retry_after)
                    .with_attempts(attempts))
            }
            Err((Unsent::Transport(e), attempts)) if e.is_timeout() => Err(ProviderError::new(
                ErrorKind::Timeout,
                provider,
                format!(
                    "no complete response within the timeout ({}s total, {}s to connect)",
                    self.config.timeout.as_secs_f64(),
                    self.config.connect_timeout.as_secs_f64()
                ),
            )
            .with_attempts(attempts)),
            Err((Unsent::Transport(e), attempts)) => Err(ProviderError::new(
                ErrorKind::Connection,
                provider,
                format!("the connection failed: {}", describe(&e)),
            )
            .with_attempts(attempts)),
            Err((Unsent::CircuitOpen(wait), attempts)) => {
                Err(ProviderError::circuit_open(provider, wait).with_attempts(attempts))
            }
        }
    }
}

/// Why an HTTP attempt got no successful response; turned into a
/// [`ProviderError`] once no retry follows (an error status's body is read
/// only then).
enum Unsent {
    /// A response with an error status.
    Status(reqwest::Response),
    /// No response (connection failure or timeout).
    Transport(reqwest::Error),
    /// Not sent: the circuit breaker is open (the next probe in this long).
    CircuitOpen(Duration),
}

/// What the retry loop needs to know of an attempt's failure beyond
/// [`Failed`]: whether it means the provider is down (for the circuit
/// breaker), and how to say that the breaker stopped the request.
pub(crate) trait AttemptFailure {
    /// HTTP 5xx, a timeout or a connection failure: the provider is down.
    /// Anything else (a 4xx of the request, a 429) means it answered.
    fn is_outage(&self) -> bool;
    /// The failure of a request the open breaker did not send.
    fn circuit_open(provider: &'static str, retry_in: Duration) -> Self;
}

impl AttemptFailure for Unsent {
    fn is_outage(&self) -> bool {
        match self {
            Unsent::Status(r) => r.status().is_server_error(),
            Unsent::Transport(e) => !e.is_builder(),
            Unsent::CircuitOpen(_) => false,
        }
    }

    fn circuit_open(_: &'static str, retry_in: Duration) -> Self {
        Unsent::CircuitOpen(retry_in)
    }
}

impl AttemptFailure for ProviderError {
    fn is_outage(&self) -> bool {
        match self.kind() {
            ErrorKind::Timeout | ErrorKind::Connection => true,
            _ => self.status().is_some_and(|s| (500..600).contains(&s)),
        }
    }

    fn circuit_open(provider: &'static str, retry_in: Duration) -> Self {
        ProviderError::circuit_open(provider, retry_in)
    }
}

/// One attempt's failure, as the adapter classified it.
pub(crate) struct Failed<E> {
    /// The failure, handed back when no retry follows.
    pub error: E,
    /// Whether the policy may retry it (429, 5xx, connection failures).
    pub retryable: bool,
    /// The provider's `Retry-After`, if it sent one.
    pub retry_after: Option<Duration>,
}

/// Runs `attempt` under `policy`, the one retry loop of every adapter:
/// a retryable failure is retried after its `Retry-After` (with a little
/// jitter), or after [`backoff`] when there is none, until
/// [`RetryPolicy::max_retries`]; a `Retry-After` over
/// [`RetryPolicy::max_retry_after`] ends the retries at once, and so does
/// an empty retry budget. Every attempt first asks the circuit breaker
/// (`guard`): while it is open nothing is sent and the loop ends with
/// [`AttemptFailure::circuit_open`]; the half-open probe is never retried,
/// nor a failure after which the breaker is not closed (the request ends
/// with that failure).
/// Every attempt's outcome is recorded with the breaker. Returns the value
/// or the last failure, with the number of attempts made (0 when the
/// breaker sent nothing).
pub(crate) async fn retrying<T, E, F, Fut>(
    policy: &RetryPolicy,
    guard: &Arc<Resilience>,
    mut attempt: F,
) -> Result<(T, u32), (E, u32)>
where
    E: AttemptFailure,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failed<E>>>,
{
    let mut n = 0u32;
    loop {
        let permit = match guard.admit(n == 0) {
            Ok(permit) => permit,
            Err(wait) => return Err((E::circuit_open(guard.provider(), wait), n)),
        };
        n += 1;
        let probe = permit.is_probe();
        let failed = match attempt().await {
            Ok(v) => {
                permit.record(Outcome::Answered);
                return Ok((v, n));
            }
            Err(failed) => failed,
        };
        let closed = permit.record(if failed.error.is_outage() {
            Outcome::Down
        } else {
            Outcome::Answered
        });
        // A failure that opened the breaker ends the request with itself.
        if failed.retryable && closed && !probe && n <= policy.max_retries {
            let wait = match failed.retry_after {
                Some(wait) if wait > policy.max_retry_after => None,
                Some(wait) => Some(wait + jitter(wait / 10)),
                None => Some(backoff(policy, n)),
            };
            if let Some(wait) = wait
                && guard.retry()
            {
                // The failed response (its connection) is let go before
                // the wait.
                drop(failed);
                tokio::time::sleep(wait).await;
                continue;
            }
        }
        return Err((failed.error, n));
    }
}

/// Reads a successful response's body, mapping transport failures; at most
/// [`HttpConfig::max_response_bytes`] of it (else a `Protocol` error).
pub(crate) async fn read_body(
    sent: Sent,
    provider: &'static str,
) -> Result<(String, Option<String>, u32, Instant, Duration), ProviderError> {
    let Sent {
        mut response,
        request_id,
        attempts,
        started,
        time_to_headers,
        max_bytes,
    } = sent;
    let refuse = || {
        too_large(provider, "response body", max_bytes)
            .with_request_id(request_id.clone())
            .with_attempts(attempts)
    };
    // A declared length over the limit fails before a byte is read.
    if response
        .content_length()
        .is_some_and(|n| n > max_bytes as u64)
    {
        return Err(refuse());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| body_error(provider, &e, request_id.clone(), attempts))?
    {
        if chunk.len() > max_bytes - body.len() {
            return Err(refuse());
        }
        body.extend_from_slice(&chunk);
    }
    // JSON is UTF-8 (RFC 8259); anything else becomes replacement
    // characters and fails parsing with the provider's body attached.
    let mut text = match String::from_utf8(body) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok((text, request_id, attempts, started, time_to_headers))
}

/// The error for a response (or part of one, `what`) over `limit` bytes.
pub(crate) fn too_large(provider: &'static str, what: &str, limit: usize) -> ProviderError {
    ProviderError::new(
        ErrorKind::Protocol,
        provider,
        format!(
            "the {what} is larger than {limit} bytes, the most groundcite reads \
             (HttpConfig::max_response_bytes); nothing of it was used"
        ),
    )
}

/// A failure while reading a body that had started.
pub(crate) fn body_error(
    provider: &'static str,
    e: &reqwest::Error,
    request_id: Option<String>,
    attempts: u32,
) -> ProviderError {
    let kind = if e.is_timeout() {
        ErrorKind::Timeout
    } else {
        ErrorKind::Connection
    };
    ProviderError::new(
        kind,
        provider,
        format!("the response broke off: {}", describe(e)),
    )
    .with_request_id(request_id)
    .with_attempts(attempts)
}

/// The error chain of a reqwest error, its URL shown without credentials
/// or query values.
fn describe(e: &reqwest::Error) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    if let Some(url) = e.url() {
        out = out.replace(url.as_str(), &crate::secret::redact_endpoint_url(url));
    }
    out
}

fn status_error(
    provider: &'static str,
    status: u16,
    body: String,
    request_id: Option<String>,
) -> ProviderError {
    let provider_message = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            let code = v
                .pointer("/error/code")
                .and_then(|c| c.as_str().map(str::to_string));
            let msg = v
                .pointer("/error/message")
                .and_then(|m| m.as_str())
                .map(str::to_string);
            Some((code, msg?))
        });
    let content_filter = provider_message
        .as_ref()
        .and_then(|(code, _)| code.as_deref())
        .is_some_and(|c| c == "content_filter");
    let kind = if content_filter {
        ErrorKind::ContentFilter
    } else if status == 429 {
        ErrorKind::RateLimited
    } else {
        ErrorKind::Status
    };
    let mut message = match status {
        429 => "rate limited".to_string(),
        401 | 403 => "the credentials were rejected".to_string(),
        s if s >= 500 => "the provider failed".to_string(),
        _ => "the request was rejected".to_string(),
    };
    if content_filter {
        message = "the content filter blocked the request".to_string();
    }
    if let Some((_, m)) = provider_message {
        message.push_str(": ");
        message.push_str(&groundcite_core::truncate_chars(&m, 300));
    }
    ProviderError::new(kind, provider, message)
        .with_status(status)
        .with_body(body)
        .with_request_id(request_id)
}

async fn read_error_body(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = MAX_ERROR_BODY.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_ERROR_BODY {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The first request-ID header present, in the provider's order.
pub(crate) fn request_id(headers: &HeaderMap, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| {
        headers
            .get(*n)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    })
}

/// `retry-after-ms` (OpenAI, Azure), else `retry-after` in seconds or as an
/// HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |n: &str| headers.get(n).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = get("retry-after")?;
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)));
    }
    let when = jiff::fmt::rfc2822::parse(v).ok()?.timestamp();
    let now = jiff::Timestamp::now();
    let secs = when.as_second() - now.as_second();
    Some(Duration::from_secs(secs.max(0).unsigned_abs()))
}

/// Exponential backoff with "equal jitter": half fixed, half random.
pub(crate) fn backoff(policy: &RetryPolicy, attempt: u32) -> Duration {
    let exp = policy
        .base_delay
        .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    let capped = exp.min(policy.max_delay);
    capped / 2 + jitter(capped / 2)
}

/// A uniformly random duration in `[0, max]`, from the standard library's
/// per-process random hasher keys (no RNG dependency needed for jitter).
pub(crate) fn jitter(max: Duration) -> Duration {
    if max.is_zero() {
        return max;
    }
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let r = h.finish() as f64 / u64::MAX as f64;
    max.mul_f64(r)
}

/// `base` with `path` appended (one slash between them).
pub(crate) fn join(base: &url::Url, path: &str) -> Result<url::Url, String> {
    let mut s = base.as_str().trim_end_matches('/').to_string();
    s.push('/');
    s.push_str(path.trim_start_matches('/'));
    url::Url::parse(&s).map_err(|e| format!("{e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        assert_eq!(retry_after(&h), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn backoff_is_bounded_and_jittered() {
        let p = RetryPolicy::default();
        for attempt in 1..40 {
            let d = backoff(&p, attempt);
            assert!(d <= p.max_delay, "{attempt}: {d:?}");
            let floor = p
                .base_delay
                .saturating_mul(1 << (attempt - 1).min(16))
                .min(p.max_delay)
                / 2;
            assert!(d >= floor);
        }
    }
}
