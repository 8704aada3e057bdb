//! Amazon Bedrock Converse through the official AWS SDK
//! (`aws-sdk-bedrockruntime`, feature `bedrock`), in two modes:
//!
//! - **tool use** ([`BedrockMode::ToolUse`], `--provider bedrock`): one tool
//!   whose input schema is the strict schema of the request (the core's
//!   `GroundedAnswer` schema in Anthropic's dialect, or a caller's own),
//!   `strict: true` unless turned off, and `toolChoice` forcing that tool;
//!   the tool's input is the structured output ([`Output::Json`]).
//! - **native citations** ([`BedrockMode::Citations`],
//!   `--provider bedrock-citations`): one plain-text `document` block per
//!   chunk with `citations: {enabled: true}`; the response goes raw
//!   ([`Output::BedrockCitations`]) to
//!   [`groundcite_core::native::bedrock::convert_converse`].
//!
//! Region, credentials and endpoint come from the SDK's default chains
//! (`AWS_REGION`, profiles, web identity, ECS and IMDS), each overridable.
//! The SDK signs and sends; its own retries are disabled and every call
//! goes through groundcite's [`RetryPolicy`](crate::RetryPolicy) instead (429 and 5xx, and
//! connection failures, retried with the same backoff and `Retry-After`
//! handling as the HTTP adapters; timeouts are not retried), so
//! `--max-retries` means the same for every provider. The SDK's attempt
//! timeout is [`HttpConfig::timeout`], its connect timeout
//! [`HttpConfig::connect_timeout`].
//!
//! The response is read from the raw body the SDK received (captured by an
//! interceptor), as the other adapters read theirs: the trace keeps what
//! the provider sent, key order included, which the SDK's `Document` type
//! (a `HashMap`) would lose. The request ID is `x-amzn-requestid`.
//!
//! Failures map as for the other providers: `stopReason` `max_tokens` or
//! `model_context_window_exceeded` → [`ErrorKind::Truncated`] (R3);
//! `content_filtered` or `guardrail_intervened` →
//! [`ErrorKind::ContentFilter`] (R4); `malformed_model_output`,
//! `malformed_tool_use`, no call of the tool, or a tool input that is not a
//! JSON object → [`ErrorKind::InvalidOutput`] (R3).
//!
//! Streaming: in tool use, [`Generator::generate_stream`] calls
//! ConverseStream and each `contentBlockDelta.toolUse.input` fragment is a
//! delta as it arrives (so claims are verified as their JSON objects
//! close); at the end the message is rebuilt in Converse's shape and
//! classified like a whole response. Native citations have no claim objects
//! to stream: there it runs Converse and hands over the whole response.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aws_config::BehaviorVersion;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_sdk_bedrockruntime as sdk;
use aws_smithy_types::Document;
use groundcite_core::schema::Target;
use groundcite_core::truncate_chars;
use sdk::config::interceptors::AfterDeserializationInterceptorContextRef;
use sdk::config::{ConfigBag, Intercept, RuntimeComponents};
use sdk::error::{ProvideErrorMetadata, SdkError};
use sdk::types::{
    CitationsConfig, ContentBlock, ContentBlockDelta, ContentBlockStart, ConversationRole,
    ConverseStreamOutput, DocumentBlock, DocumentFormat, DocumentSource, InferenceConfiguration,
    Message, SpecificToolChoice, SystemContentBlock, Tool, ToolChoice, ToolConfiguration,
    ToolInputSchema, ToolSpecification,
};
use serde_json::Value;
use tokio::sync::OnceCell;
use url::Url;

use crate::error::{ErrorKind, ProviderError};
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode, StreamSender};
use crate::http::{Failed, HttpConfig, retrying};
use crate::secret::{SecretString, scrub};
use crate::types::{FinishReason, Generation, GenerationRequest, Output, Timings, Usage};

/// The response header carrying Bedrock's request ID.
pub const BEDROCK_REQUEST_ID_HEADER: &str = "x-amzn-requestid";

/// The tool's description (what the model reads about it).
const TOOL_DESCRIPTION: &str = "Record the answer: whether the sources answer the question, and each claim with the chunk IDs and verbatim quotes that support it.";

/// Largest error body kept.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Which of the two modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BedrockMode {
    /// Structured output through one forced tool.
    ToolUse,
    /// Native citations over one document block per chunk.
    Citations,
}

/// Fixed credentials instead of the SDK's default chain (tests, or a caller
/// that already holds them). Never shown by `Debug`.
#[derive(Clone)]
pub struct StaticCredentials {
    /// Access key ID (not a secret by itself, but not shown either).
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: SecretString,
    /// Session token of temporary credentials.
    pub session_token: Option<SecretString>,
}

impl fmt::Debug for StaticCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticCredentials([REDACTED])")
    }
}

/// Settings of a Bedrock client; `None` fields fall back to the SDK's chains.
#[derive(Debug, Clone)]
pub struct BedrockConfig {
    /// Model ID, inference profile ID or ARN.
    pub model_id: String,
    /// The mode.
    pub mode: BedrockMode,
    /// Region (else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile, IMDS).
    pub region: Option<String>,
    /// Endpoint (else the SDK's: `AWS_ENDPOINT_URL_BEDROCK_RUNTIME`, or the
    /// regional `bedrock-runtime` endpoint). Used by the recorded-exchange
    /// tests and for VPC endpoints.
    pub endpoint_url: Option<Url>,
    /// Credentials (else the SDK's default chain).
    pub credentials: Option<StaticCredentials>,
    /// Send `toolSpec.strict: true` (constrained decoding where the model
    /// supports it; turn off for models that reject the field).
    pub strict_tool: bool,
    /// Timeouts and retries.
    pub http: HttpConfig,
}

impl BedrockConfig {
    /// Settings with the SDK's chains for everything but the model.
    pub fn new(model_id: impl Into<String>, mode: BedrockMode) -> BedrockConfig {
        BedrockConfig {
            model_id: model_id.into(),
            mode,
            region: None,
            endpoint_url: None,
            credentials: None,
            strict_tool: true,
            http: HttpConfig::default(),
        }
    }
}

/// An Amazon Bedrock Converse client. The SDK configuration (region and
/// credential chains) is loaded on the first request, inside the caller's
/// runtime.
pub struct Bedrock {
    config: BedrockConfig,
    client: OnceCell<sdk::Client>,
    /// Secrets to scrub from kept bodies and messages.
    secrets: Vec<SecretString>,
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

fn provider_name(mode: BedrockMode) -> &'static str {
    match mode {
        BedrockMode::ToolUse => "bedrock",
        BedrockMode::Citations => "bedrock-citations",
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
            config,
            client: OnceCell::new(),
            secrets,
        })
    }

    fn provider(&self) -> &'static str {
        provider_name(self.config.mode)
    }

    async fn client(&self) -> Result<&sdk::Client, ProviderError> {
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

    /// The Converse request for `request`, as typed SDK values.
    fn parts(&self, request: &GenerationRequest) -> Result<ConverseParts, ProviderError> {
        let provider = self.provider();
        let build = |e: aws_smithy_types::error::operation::BuildError| {
            ProviderError::new(
                ErrorKind::Config,
                provider,
                format!("cannot build the request: {e}"),
            )
        };
        let mut content = Vec::new();
        let mut tool_config = None;
        let mut tool_name = None;
        match self.config.mode {
            BedrockMode::ToolUse => {
                let Some(schema) = &request.schema else {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "tool use needs a schema",
                    ));
                };
                let name = tool_name_for(&schema.name);
                let mut spec = ToolSpecification::builder()
                    .name(&name)
                    .description(TOOL_DESCRIPTION)
                    .input_schema(ToolInputSchema::Json(to_document(&schema.schema)));
                if self.config.strict_tool {
                    spec = spec.strict(true);
                }
                tool_config = Some(
                    ToolConfiguration::builder()
                        .tools(Tool::ToolSpec(spec.build().map_err(build)?))
                        .tool_choice(ToolChoice::Tool(
                            SpecificToolChoice::builder()
                                .name(&name)
                                .build()
                                .map_err(build)?,
                        ))
                        .build()
                        .map_err(build)?,
                );
                tool_name = Some(name);
                content.push(ContentBlock::Text(request.user.clone()));
            }
            BedrockMode::Citations => {
                if request.schema.is_some() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "native citations cannot be combined with a structured-output schema",
                    ));
                }
                if request.chunks.is_empty() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        provider,
                        "native citations need at least one chunk to send as a document",
                    ));
                }
                for (i, c) in request.chunks.iter().enumerate() {
                    // Neutral, valid names (letters, digits, single spaces):
                    // chunk IDs hold characters Bedrock rejects, and the
                    // documentIndex, not the name, maps a citation back.
                    content.push(ContentBlock::Document(
                        DocumentBlock::builder()
                            .format(DocumentFormat::Txt)
                            .name(format!("Document {}", i + 1))
                            .source(DocumentSource::Text(c.content.clone()))
                            .citations(
                                CitationsConfig::builder()
                                    .enabled(true)
                                    .build()
                                    .map_err(build)?,
                            )
                            .build()
                            .map_err(build)?,
                    ));
                }
                content.push(ContentBlock::Text(request.user.clone()));
            }
        }
        let message = Message::builder()
            .role(ConversationRole::User)
            .set_content(Some(content))
            .build()
            .map_err(build)?;
        let max_tokens = i32::try_from(request.max_tokens).unwrap_or(i32::MAX);
        let mut inference = InferenceConfiguration::builder().max_tokens(max_tokens);
        if let Some(t) = request.temperature {
            // Bedrock takes a float; a temperature is a small number.
            inference = inference.temperature(t as f32);
        }
        Ok(ConverseParts {
            message,
            system: SystemContentBlock::Text(request.system.clone()),
            inference: inference.build(),
            tool_config,
            tool_name,
        })
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
    async fn with_retries<T, F, Fut>(&self, attempt: F) -> Result<(T, u32, Instant), ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, AttemptError>>,
    {
        let started = Instant::now();
        match retrying(&self.config.http.retry, attempt).await {
            Ok((v, n)) => Ok((v, n, started)),
            Err((error, n)) => Err(error.with_attempts(n)),
        }
    }

    /// Sends the request (Converse) under the retry policy; the raw body of
    /// the successful response as JSON, its request ID, the tool's name and
    /// the timings.
    async fn send(
        &self,
        request: &GenerationRequest,
    ) -> Result<(Value, Option<String>, Option<String>, Timings), ProviderError> {
        let parts = self.parts(request)?;
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
    async fn stream_attempt(
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

    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let (response, request_id, tool_name, timings) = self.send(request).await?;
        classify(
            self.provider(),
            self.config.mode,
            tool_name.as_deref(),
            &self.config.model_id,
            response,
            request_id,
            timings,
        )
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        if self.config.mode == BedrockMode::Citations {
            // Native citations have no claim objects to stream: the whole
            // response, then the contract.
            let generation = self.run(request).await?;
            let (stream, sender) = GenerationStream::channel(self.provider());
            let _ = sender.result.send(Ok(generation));
            return Ok(stream);
        }
        let parts = self.parts(request)?;
        let client = self.client().await?;
        let ((events, request_id), attempts, started) = self
            .with_retries(|| self.stream_attempt(client, &parts))
            .await?;
        let (stream, sender) = GenerationStream::channel(self.provider());
        let pump = StreamPump {
            provider: self.provider(),
            tool_name: parts.tool_name.clone(),
            model_id: self.config.model_id.clone(),
            request_id,
            attempts,
            started,
            time_to_headers: started.elapsed(),
        };
        tokio::spawn(pump.run(events, sender));
        Ok(stream)
    }
}

/// The events of a ConverseStream response.
type Events = sdk::primitives::event_stream::EventReceiver<
    ConverseStreamOutput,
    sdk::types::error::ConverseStreamOutputError,
>;

/// Reads a ConverseStream response: each fragment of the tool's input goes
/// out as a delta as it arrives; at the end the message is rebuilt in
/// Converse's shape and classified exactly like a whole response.
struct StreamPump {
    provider: &'static str,
    tool_name: Option<String>,
    model_id: String,
    request_id: Option<String>,
    attempts: u32,
    started: Instant,
    time_to_headers: Duration,
}

impl StreamPump {
    async fn run(self, mut events: Events, sender: StreamSender) {
        let mut text = String::new();
        let mut tool: Option<(String, String)> = None;
        let mut input = String::new();
        let mut stop: Option<String> = None;
        let mut usage = (None, None);
        let mut first_token = None;
        let result = loop {
            let event = match events.recv().await {
                Ok(Some(e)) => e,
                Ok(None) => break None,
                Err(e) => break Some(self.stream_error(&e, &text, &input)),
            };
            match event {
                ConverseStreamOutput::ContentBlockStart(e) => {
                    if let Some(ContentBlockStart::ToolUse(t)) = e.start() {
                        tool = Some((t.tool_use_id().to_string(), t.name().to_string()));
                    }
                }
                ConverseStreamOutput::ContentBlockDelta(e) => match e.delta() {
                    Some(ContentBlockDelta::ToolUse(d)) => {
                        input.push_str(d.input());
                        if first_token.is_none() {
                            first_token = Some(self.started.elapsed());
                        }
                        if sender.deltas.send(d.input().to_string()).await.is_err() {
                            // The reader dropped the stream: dropping the
                            // receiver here cancels the request.
                            return;
                        }
                    }
                    Some(ContentBlockDelta::Text(t)) => text.push_str(t),
                    _ => {}
                },
                ConverseStreamOutput::MessageStop(e) => {
                    stop = Some(e.stop_reason().as_str().to_string());
                }
                ConverseStreamOutput::Metadata(e) => {
                    if let Some(u) = e.usage() {
                        usage = (
                            u64::try_from(u.input_tokens()).ok(),
                            u64::try_from(u.output_tokens()).ok(),
                        );
                    }
                }
                _ => {}
            }
        };
        let result = match result {
            Some(e) => Err(e),
            None => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(serde_json::json!({"text": text}));
                }
                if let Some((id, name)) = tool {
                    // The input as the model wrote it, not re-serialized:
                    // the deltas must add up to the output.
                    content.push(serde_json::json!({"toolUse": {"toolUseId": id, "name": name, "input": input}}));
                }
                let mut response = serde_json::json!({
                    "output": {"message": {"role": "assistant", "content": content}},
                    "usage": {"inputTokens": usage.0, "outputTokens": usage.1},
                });
                if let Some(s) = stop {
                    response["stopReason"] = Value::String(s);
                }
                classify(
                    self.provider,
                    BedrockMode::ToolUse,
                    self.tool_name.as_deref(),
                    &self.model_id,
                    response,
                    self.request_id.clone(),
                    Timings {
                        time_to_headers: self.time_to_headers,
                        time_to_first_token: first_token,
                        total: self.started.elapsed(),
                        attempts: self.attempts,
                    },
                )
            }
        };
        let _ = sender.result.send(result);
    }

    /// An error event, or a failure of the stream after it started.
    fn stream_error<R: fmt::Debug>(
        &self,
        e: &SdkError<sdk::types::error::ConverseStreamOutputError, R>,
        text: &str,
        input: &str,
    ) -> ProviderError {
        let (kind, message) = match e {
            SdkError::ServiceError(s) => {
                use sdk::types::error::ConverseStreamOutputError as E;
                let err = s.err();
                // The event's `:exception-type` names the variant; the
                // error metadata may carry no code.
                let (kind, code) = match err {
                    E::ThrottlingException(_) => (ErrorKind::RateLimited, "ThrottlingException"),
                    E::InternalServerException(_) => (ErrorKind::Status, "InternalServerException"),
                    E::ModelStreamErrorException(_) => {
                        (ErrorKind::Status, "ModelStreamErrorException")
                    }
                    E::ValidationException(_) => (ErrorKind::Status, "ValidationException"),
                    E::ServiceUnavailableException(_) => {
                        (ErrorKind::Status, "ServiceUnavailableException")
                    }
                    _ => (ErrorKind::Status, err.code().unwrap_or("unknown error")),
                };
                let mut m = format!("error in the stream ({code})");
                if let Some(msg) = err.message() {
                    m.push_str(": ");
                    m.push_str(&truncate_chars(msg, 300));
                }
                (kind, m)
            }
            SdkError::TimeoutError(_) => (ErrorKind::Timeout, "the stream timed out".to_string()),
            _ => (
                ErrorKind::Connection,
                format!("the stream broke off: {}", chain(e)),
            ),
        };
        let partial = if input.is_empty() { text } else { input };
        ProviderError::new(kind, self.provider, message)
            .with_request_id(self.request_id.clone())
            .with_attempts(self.attempts)
            .with_partial_output(Some(partial.to_string()))
            .with_model(Some(self.model_id.clone()))
    }
}

/// The typed pieces of one Converse request.
struct ConverseParts {
    message: Message,
    system: SystemContentBlock,
    inference: InferenceConfiguration,
    tool_config: Option<ToolConfiguration>,
    tool_name: Option<String>,
}

impl Generator for Bedrock {
    fn provider(&self) -> &'static str {
        provider_name(self.config.mode)
    }

    fn mode(&self) -> Mode {
        match self.config.mode {
            // Bedrock documents no strict subset of its own; its tool-use
            // models are led by Claude, whose subset is Anthropic's.
            BedrockMode::ToolUse => Mode::Structured(Target::Anthropic),
            BedrockMode::Citations => Mode::NativeCitations,
        }
    }

    fn generate<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        Box::pin(self.run(request))
    }

    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(self.run_stream(request))
    }
}

/// A Bedrock tool name (`[a-zA-Z0-9_-]{1,64}`) from a schema name.
fn tool_name_for(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() {
        s = groundcite_core::schema::SCHEMA_NAME.to_string();
    }
    s
}

/// A JSON value as the SDK's `Document`.
fn to_document(v: &Value) -> Document {
    match v {
        Value::Null => Document::Null,
        Value::Bool(b) => Document::Bool(*b),
        Value::Number(n) => Document::Number(if let Some(u) = n.as_u64() {
            aws_smithy_types::Number::PosInt(u)
        } else if let Some(i) = n.as_i64() {
            aws_smithy_types::Number::NegInt(i)
        } else {
            aws_smithy_types::Number::Float(n.as_f64().unwrap_or(0.0))
        }),
        Value::String(s) => Document::String(s.clone()),
        Value::Array(a) => Document::Array(a.iter().map(to_document).collect()),
        Value::Object(o) => {
            Document::Object(o.iter().map(|(k, v)| (k.clone(), to_document(v))).collect())
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
fn chain(e: &dyn std::error::Error) -> String {
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

/// Turns a Converse response (raw JSON) into a generation or a classified
/// error.
fn classify(
    provider: &'static str,
    mode: BedrockMode,
    tool_name: Option<&str>,
    model_id: &str,
    response: Value,
    request_id: Option<String>,
    timings: Timings,
) -> Result<Generation, ProviderError> {
    let model = Some(model_id.to_string());
    let blocks: Vec<Value> = response
        .pointer("/output/message/content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text: String = blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let tool_input = blocks
        .iter()
        .filter_map(|b| b.get("toolUse"))
        .find(|t| tool_name.is_none_or(|n| t.get("name").and_then(Value::as_str) == Some(n)))
        .and_then(|t| t.get("input"))
        .cloned();
    let partial = || match &tool_input {
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => Some(v.to_string()),
        None => Some(text.clone()),
    };
    let fail = |kind, msg: &str, partial: Option<String>| {
        ProviderError::new(kind, provider, msg)
            .with_request_id(request_id.clone())
            .with_attempts(timings.attempts)
            .with_partial_output(partial)
            .with_model(model.clone())
    };
    let stop = response
        .get("stopReason")
        .and_then(Value::as_str)
        .map(str::to_string);
    match stop.as_deref() {
        Some(s @ ("content_filtered" | "guardrail_intervened")) => {
            return Err(fail(
                ErrorKind::ContentFilter,
                &format!("the content filter stopped the answer (stopReason: {s})"),
                partial(),
            ));
        }
        Some("refusal") => {
            return Err(fail(
                ErrorKind::Refusal,
                "the model refused to answer (stopReason: refusal)",
                partial(),
            ));
        }
        Some(s @ ("max_tokens" | "model_context_window_exceeded")) => {
            return Err(fail(
                ErrorKind::Truncated,
                &format!("the output stopped at the token limit (stopReason: {s})"),
                partial(),
            ));
        }
        Some(s @ ("malformed_model_output" | "malformed_tool_use")) => {
            return Err(fail(
                ErrorKind::InvalidOutput,
                &format!("the model's output could not be parsed (stopReason: {s})"),
                partial(),
            ));
        }
        None => {
            return Err(fail(
                ErrorKind::Truncated,
                "the response has no stopReason: the output is incomplete",
                partial(),
            ));
        }
        _ => {}
    }
    let usage = Usage {
        input_tokens: response
            .pointer("/usage/inputTokens")
            .and_then(Value::as_u64),
        output_tokens: response
            .pointer("/usage/outputTokens")
            .and_then(Value::as_u64),
    };
    let output = match mode {
        BedrockMode::ToolUse => {
            let name = tool_name.unwrap_or(groundcite_core::schema::SCHEMA_NAME);
            let json = match tool_input {
                None => {
                    return Err(fail(
                        ErrorKind::InvalidOutput,
                        &format!("the model did not call the {name} tool"),
                        Some(text),
                    ));
                }
                Some(v @ Value::Object(_)) => v.to_string(),
                // Some models send the input as a JSON string.
                Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
                    Ok(Value::Object(_)) => s,
                    Ok(_) => {
                        return Err(fail(
                            ErrorKind::InvalidOutput,
                            "the tool input is not a JSON object",
                            Some(s),
                        ));
                    }
                    Err(e) => {
                        return Err(fail(
                            ErrorKind::InvalidOutput,
                            &format!("the tool input is not valid JSON: {e}"),
                            Some(s),
                        ));
                    }
                },
                Some(v) => {
                    return Err(fail(
                        ErrorKind::InvalidOutput,
                        "the tool input is not a JSON object",
                        Some(v.to_string()),
                    ));
                }
            };
            Output::Json(json)
        }
        BedrockMode::Citations => {
            if response.pointer("/output/message/content").is_none() {
                return Err(fail(
                    ErrorKind::InvalidOutput,
                    "the response has no output message",
                    None,
                ));
            }
            Output::BedrockCitations(response)
        }
    };
    Ok(Generation {
        output,
        model,
        finish_reason: stop.as_deref().map(|s| match s {
            "tool_use" => FinishReason::Stop,
            other => FinishReason::from_provider(other),
        }),
        usage,
        request_id,
        timings,
        p_answerable: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn timings() -> Timings {
        Timings {
            attempts: 1,
            ..Timings::default()
        }
    }

    fn run(mode: BedrockMode, response: Value) -> Result<Generation, ProviderError> {
        classify(
            "bedrock",
            mode,
            Some("GroundedAnswer"),
            "m",
            response,
            None,
            timings(),
        )
    }

    #[test]
    fn tool_input_is_the_output() {
        let g = run(
            BedrockMode::ToolUse,
            json!({"output": {"message": {"role": "assistant", "content": [
                {"toolUse": {"toolUseId": "t", "name": "GroundedAnswer", "input": {"answerable": false, "claims": []}}}
            ]}}, "stopReason": "tool_use", "usage": {"inputTokens": 3, "outputTokens": 4}}),
        )
        .unwrap();
        assert_eq!(
            g.output,
            Output::Json(r#"{"answerable":false,"claims":[]}"#.into())
        );
        assert_eq!(g.usage.output_tokens, Some(4));
    }

    #[test]
    fn stop_reasons_map_like_the_other_providers() {
        let body = |stop: &str| json!({"output": {"message": {"role": "assistant", "content": [{"text": "x"}]}}, "stopReason": stop});
        for (stop, kind) in [
            ("max_tokens", ErrorKind::Truncated),
            ("model_context_window_exceeded", ErrorKind::Truncated),
            ("content_filtered", ErrorKind::ContentFilter),
            ("guardrail_intervened", ErrorKind::ContentFilter),
            ("malformed_tool_use", ErrorKind::InvalidOutput),
            ("end_turn", ErrorKind::InvalidOutput),
        ] {
            let e = run(BedrockMode::ToolUse, body(stop)).unwrap_err();
            assert_eq!(e.kind(), kind, "{stop}");
        }
    }

    #[test]
    fn tool_names_are_valid() {
        assert_eq!(tool_name_for("GroundedAnswer"), "GroundedAnswer");
        assert_eq!(tool_name_for("my answer.v2"), "my_answer_v2");
        assert_eq!(tool_name_for(""), "GroundedAnswer");
    }

    #[test]
    fn credentials_never_shown() {
        let c = StaticCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: SecretString::new("wJalrXUtnFEMI-FAKE"),
            session_token: Some(SecretString::new("session-FAKE")),
        };
        let mut config = BedrockConfig::new("m", BedrockMode::ToolUse);
        config.credentials = Some(c);
        let b = Bedrock::new(config).unwrap();
        let shown = format!("{b:?} {:?}", b.config);
        assert!(!shown.contains("wJalrXUtnFEMI-FAKE"), "{shown}");
        assert!(!shown.contains("session-FAKE"), "{shown}");
    }
}
