//! The Bedrock client itself: the SDK client (hyper + rustls connector;
//! region, credentials and endpoint from the config or the SDK's chains),
//! one Converse or ConverseStream attempt with the raw body captured, the
//! classification of SDK errors, and the retry loop around attempts.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_config::BehaviorVersion;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_bedrockruntime as sdk;
use groundcite_core::truncate_chars;
use sdk::config::interceptors::AfterDeserializationInterceptorContextRef;
use sdk::config::{ConfigBag, Intercept, RuntimeComponents};
use sdk::error::{ProvideErrorMetadata, SdkError};
use sdk::types::ConverseStreamOutput;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::error::{ErrorKind, ProviderError};
use crate::http::{Failed, retrying};
use crate::resilience::Resilience;
use crate::secret::{SecretString, scrub};
use crate::types::{GenerationRequest, Timings};

use super::config::{BEDROCK_REQUEST_ID_HEADER, BedrockConfig, provider_name};
use super::request::ConverseParts;

/// Largest error body kept.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// An Amazon Bedrock Converse client. The SDK configuration (region and
/// credential chains) is loaded on the first request, inside the caller's
/// runtime.
pub struct Bedrock {
    pub(super) config: BedrockConfig,
    client: OnceCell<sdk::Client>,
    /// Secrets to scrub from kept bodies and messages.
    secrets: Vec<SecretString>,
    /// The retry budget and circuit breaker of this client.
    resilience: Arc<Resilience>,
}

impl fmt::Debug for Bedrock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bedrock")
            .field("provider", &provider_name(self.config.mode))
            .field("model_id", &self.config.model_id)
            .field("region", &self.config.region)
            .field(
                "endpoint_url",
                &self
                    .config
                    .endpoint_url
                    .as_ref()
                    .map(crate::secret::redact_endpoint_url),
            )
            .field("strict_tool", &self.config.strict_tool)
            .finish_non_exhaustive()
    }
}

/// What the interceptor saw of the last response.
#[derive(Debug, Default)]
struct Captured {
    request_id: Option<String>,
    body: Option<Vec<u8>>,
}

/// Keeps the raw body and request ID of the response the SDK deserialized.
#[derive(Debug, Clone, Default)]
struct Capture(Arc<Mutex<Captured>>);

impl Intercept for Capture {
    fn name(&self) -> &'static str {
        "groundcite-response-capture"
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), sdk::error::BoxError> {
        if let Some(response) = context.inner().response()
            && let Ok(mut c) = self.0.lock()
        {
            c.request_id = response
                .headers()
                .get(BEDROCK_REQUEST_ID_HEADER)
                .map(str::to_string);
            c.body = response.body().bytes().map(<[u8]>::to_vec);
        }
        Ok(())
    }
}

/// One attempt's failure, classified for the shared retry loop.
type AttemptError = Failed<ProviderError>;

/// The events of a ConverseStream response.
pub(super) type Events = sdk::primitives::event_stream::EventReceiver<
    ConverseStreamOutput,
    sdk::types::error::ConverseStreamOutputError,
>;

impl Bedrock {
    /// A client; nothing is sent or loaded until the first request.
    pub fn new(config: BedrockConfig) -> Result<Bedrock, ProviderError> {
        let provider = provider_name(config.mode);
        if config.model_id.trim().is_empty() {
            return Err(ProviderError::new(
                ErrorKind::Config,
                provider,
                "the model ID is empty",
            ));
        }
        let mut secrets = Vec::new();
        if let Some(c) = &config.credentials {
            secrets.push(c.secret_access_key.clone());
            secrets.extend(c.session_token.clone());
        }
        // The SDK reads these itself; they are read here only so that no
        // error body or message can echo them.
        secrets.extend(crate::env::secret(crate::env::AWS_SECRET_ACCESS_KEY));
        secrets.extend(crate::env::secret(crate::env::AWS_SESSION_TOKEN));
        Ok(Bedrock {
            resilience: Resilience::new(provider, config.http.retry_budget, config.http.breaker),
            config,
            client: OnceCell::new(),
            secrets,
        })
    }

    pub(super) fn provider(&self) -> &'static str {
        provider_name(self.config.mode)
    }

    pub(super) async fn client(&self) -> Result<&sdk::Client, ProviderError> {
        self.client.get_or_try_init(|| self.load()).await
    }

    async fn load(&self) -> Result<sdk::Client, ProviderError> {
        // hyper + rustls on ring: the SDK's default client would build
        // aws-lc (a C library) for nothing.
        let http_client = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let http = self.config.http;
        let mut loader = aws_config::defaults(BehaviorVersion::latest())
            .http_client(http_client)
            // groundcite's RetryPolicy retries (see the module docs).
            .retry_config(RetryConfig::disabled())
            .timeout_config(
                TimeoutConfig::builder()
                    .connect_timeout(http.connect_timeout)
                    .operation_attempt_timeout(http.timeout)
                    .build(),
            );
        if let Some(r) = &self.config.region {
            loader = loader.region(aws_config::Region::new(r.clone()));
        }
        if let Some(u) = &self.config.endpoint_url {
            loader = loader.endpoint_url(u.as_str().trim_end_matches('/'));
        }
        if let Some(c) = &self.config.credentials {
            loader = loader.credentials_provider(sdk::config::Credentials::new(
                c.access_key_id.clone(),
                c.secret_access_key.expose().to_string(),
                c.session_token.as_ref().map(|t| t.expose().to_string()),
                None,
                "groundcite-static",
            ));
        }
        let shared = loader.load().await;
        if shared.region().is_none() {
            return Err(ProviderError::new(
                ErrorKind::Config,
                self.provider(),
                "The AWS region is not set: set AWS_REGION, a region in the AWS profile, or [bedrock] region in groundcite.toml.",
            ));
        }
        Ok(sdk::Client::new(&shared))
    }

    async fn attempt(
        &self,
        client: &sdk::Client,
        parts: &ConverseParts,
    ) -> Result<(Vec<u8>, Option<String>), AttemptError> {
        let capture = Capture::default();
        let result = client
            .converse()
            .model_id(&self.config.model_id)
            .system(parts.system.clone())
            .messages(parts.message.clone())
            .inference_config(parts.inference.clone())
            .set_tool_config(parts.tool_config.clone())
            .set_output_config(parts.output_config.clone())
            .customize()
            .interceptor(capture.clone())
            .send()
            .await;
        let captured = capture
            .0
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default();
        match result {
            Ok(_) => match captured.body {
                Some(body) => Ok((body, captured.request_id)),
                None => Err(AttemptError {
                    error: ProviderError::new(
                        ErrorKind::Protocol,
                        self.provider(),
                        "the SDK did not expose the response body",
                    )
                    .with_request_id(captured.request_id),
                    retryable: false,
                    retry_after: None,
                }),
            },
            Err(e) => Err(self.classify_sdk_error(&e, captured.request_id)),
        }
    }

    fn classify_sdk_error<E>(
        &self,
        e: &SdkError<E, sdk::config::http::HttpResponse>,
        captured_id: Option<String>,
    ) -> AttemptError
    where
        E: ProvideErrorMetadata + std::error::Error + 'static,
    {
        let provider = self.provider();
        let simple = |kind, message: String, retryable| AttemptError {
            error: ProviderError::new(kind, provider, scrub(&message, &self.secrets))
                .with_request_id(captured_id.clone()),
            retryable,
            retry_after: None,
        };
        // Credentials are resolved before sending; the SDK reports a chain
        // that found none as a dispatch (or construction) failure. Retrying
        // cannot help.
        if matches!(
            e,
            SdkError::DispatchFailure(_) | SdkError::ConstructionFailure(_)
        ) {
            let text = chain(e);
            if text.to_ascii_lowercase().contains("credential") {
                return simple(
                    ErrorKind::Credential,
                    format!(
                        "no AWS credentials could be loaded (environment, profile, web identity, ECS or IMDS): {text}"
                    ),
                    false,
                );
            }
        }
        match e {
            SdkError::TimeoutError(_) => simple(
                ErrorKind::Timeout,
                format!(
                    "no complete response within the timeout ({}s per attempt, {}s to connect)",
                    self.config.http.timeout.as_secs_f64(),
                    self.config.http.connect_timeout.as_secs_f64()
                ),
                false,
            ),
            SdkError::DispatchFailure(d) if d.is_timeout() => simple(
                ErrorKind::Timeout,
                format!("the connection timed out: {}", chain(e)),
                false,
            ),
            SdkError::DispatchFailure(d) if d.is_user() => simple(
                ErrorKind::Config,
                format!("the request could not be sent: {}", chain(e)),
                false,
            ),
            SdkError::DispatchFailure(_) => simple(
                ErrorKind::Connection,
                format!("the connection failed: {}", chain(e)),
                true,
            ),
            SdkError::ResponseError(r) => {
                let status = r.raw().status().as_u16();
                let retryable = status == 429 || (500..600).contains(&status);
                let kind = if retryable || status < 400 {
                    // A body that broke off (reset) or could not be read.
                    ErrorKind::Connection
                } else {
                    ErrorKind::Protocol
                };
                let mut a = simple(
                    kind,
                    format!("the response could not be read: {}", chain(e)),
                    retryable || kind == ErrorKind::Connection,
                );
                a.error = a.error.with_status(status);
                a
            }
            SdkError::ConstructionFailure(_) => simple(
                ErrorKind::Config,
                format!("the request could not be built: {}", chain(e)),
                false,
            ),
            SdkError::ServiceError(s) => {
                let raw = s.raw();
                let status = raw.status().as_u16();
                let request_id = raw
                    .headers()
                    .get(BEDROCK_REQUEST_ID_HEADER)
                    .map(str::to_string)
                    .or(captured_id.clone());
                let body = raw
                    .body()
                    .bytes()
                    .map(|b| {
                        String::from_utf8_lossy(&b[..b.len().min(MAX_ERROR_BODY)]).into_owned()
                    })
                    .unwrap_or_default();
                let body = scrub(&body, &self.secrets);
                let err = s.err();
                if (200..300).contains(&status) {
                    // A 2xx whose body the SDK could not read as a Converse
                    // response.
                    return AttemptError {
                        error: ProviderError::new(
                            ErrorKind::Protocol,
                            provider,
                            "the response is not a Converse response",
                        )
                        .with_status(status)
                        .with_body(body)
                        .with_request_id(request_id),
                        retryable: false,
                        retry_after: None,
                    };
                }
                let retryable = status == 429 || (500..600).contains(&status);
                let kind = match err.code() {
                    Some("ThrottlingException") => ErrorKind::RateLimited,
                    _ if status == 429 => ErrorKind::RateLimited,
                    Some("ModelTimeoutException") => ErrorKind::Timeout,
                    _ => ErrorKind::Status,
                };
                let mut message = match status {
                    429 => "rate limited".to_string(),
                    401 | 403 => "the credentials were rejected".to_string(),
                    s if s >= 500 => "the provider failed".to_string(),
                    _ => "the request was rejected".to_string(),
                };
                if let Some(code) = err.code() {
                    message.push_str(&format!(" ({code})"));
                }
                if let Some(m) = err.message() {
                    message.push_str(": ");
                    message.push_str(&truncate_chars(m, 300));
                }
                let retry_after = retry_after_of(raw);
                AttemptError {
                    error: ProviderError::new(kind, provider, scrub(&message, &self.secrets))
                        .with_status(status)
                        .with_body(body)
                        .with_request_id(request_id)
                        .with_retry_after(retry_after),
                    retryable,
                    retry_after,
                }
            }
            _ => simple(
                ErrorKind::Protocol,
                format!("the SDK failed: {}", chain(e)),
                false,
            ),
        }
    }

    /// Runs `attempt` under the retry policy (the HTTP adapters' loop):
    /// its value, the attempts made and when the first began.
    pub(super) async fn with_retries<T, F, Fut>(
        &self,
        attempt: F,
    ) -> Result<(T, u32, Instant), ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, AttemptError>>,
    {
        let started = Instant::now();
        match retrying(&self.config.http.retry, &self.resilience, attempt).await {
            Ok((v, n)) => Ok((v, n, started)),
            Err((error, n)) => Err(error.with_attempts(n)),
        }
    }

    /// Sends the request (Converse) under the retry policy; the raw body of
    /// the successful response as JSON, its request ID, the tool's name and
    /// the timings.
    pub(super) async fn send(
        &self,
        request: &GenerationRequest,
    ) -> Result<(Value, Option<String>, Option<String>, Timings), ProviderError> {
        let parts = ConverseParts::new(&self.config, request)?;
        let client = self.client().await?;
        let ((body, request_id), attempts, started) =
            self.with_retries(|| self.attempt(client, &parts)).await?;
        let time_to_headers = started.elapsed();
        let value: Value = serde_json::from_slice(&body).map_err(|e| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider(),
                format!("the response is not JSON: {e}"),
            )
            .with_body(scrub(&String::from_utf8_lossy(&body), &self.secrets))
            .with_request_id(request_id.clone())
            .with_attempts(attempts)
        })?;
        let timings = Timings {
            time_to_headers,
            time_to_first_token: None,
            total: started.elapsed(),
            attempts,
        };
        Ok((value, request_id, parts.tool_name.clone(), timings))
    }

    /// One ConverseStream attempt: the event receiver and the request ID.
    pub(super) async fn stream_attempt(
        &self,
        client: &sdk::Client,
        parts: &ConverseParts,
    ) -> Result<(Events, Option<String>), AttemptError> {
        let capture = Capture::default();
        let result = client
            .converse_stream()
            .model_id(&self.config.model_id)
            .system(parts.system.clone())
            .messages(parts.message.clone())
            .inference_config(parts.inference.clone())
            .set_tool_config(parts.tool_config.clone())
            .set_output_config(parts.output_config.clone())
            .customize()
            .interceptor(capture.clone())
            .send()
            .await;
        let request_id = capture.0.lock().ok().and_then(|mut c| c.request_id.take());
        match result {
            Ok(out) => Ok((out.stream, request_id)),
            Err(e) => Err(self.classify_sdk_error(&e, request_id)),
        }
    }
}

/// `Retry-After` (or `retry-after-ms`) of an SDK response.
fn retry_after_of(response: &sdk::config::http::HttpResponse) -> Option<Duration> {
    let headers = response.headers();
    let mut map = reqwest::header::HeaderMap::new();
    for name in ["retry-after-ms", "retry-after"] {
        if let Some(v) = headers.get(name)
            && let Ok(v) = reqwest::header::HeaderValue::from_str(v)
        {
            map.insert(name, v);
        }
    }
    crate::http::retry_after(&map)
}

/// The error and its sources, one line.
pub(super) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
