//! OpenAI Chat Completions (`/chat/completions`), shared by OpenAI, Azure
//! OpenAI and OpenAI-compatible servers (vLLM, llama.cpp, Ollama), whose
//! differences are configuration ([`Quirks`]), not code paths.
//!
//! Structured output: `response_format: {type: "json_schema", json_schema:
//! {name, schema, strict: true}}`. A `refusal` on the message gives
//! [`ErrorKind::Refusal`] (R4); `finish_reason: "length"` gives
//! [`ErrorKind::Truncated`] and `"content_filter"` [`ErrorKind::ContentFilter`].

use std::str::FromStr;
use std::sync::Arc;

use groundcite_core::schema::Target;
use serde_json::{Map, Value, json};
use url::Url;

use crate::credential::TokenProvider;
use crate::error::{ErrorKind, ProviderError};
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode, StreamDecoder, StreamMeta};
pub(crate) use crate::http::join;
use crate::http::{Http, HttpConfig, read_body};
use crate::secret::SecretString;
use crate::sse::SseEvent;
use crate::types::{FinishReason, Generation, GenerationRequest, Output, Timings, Usage};

/// Default OpenAI base URL.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// Request-ID headers OpenAI and compatible servers send.
const OPENAI_REQUEST_ID_HEADERS: &[&str] = &["x-request-id"];
/// Azure sends `apim-request-id` always and `x-request-id` too.
pub(crate) const AZURE_REQUEST_ID_HEADERS: &[&str] = &["apim-request-id", "x-request-id"];

/// How the chat endpoint is authenticated.
#[derive(Debug, Clone)]
pub enum ChatAuth {
    /// No credentials (a local server).
    None,
    /// `Authorization: Bearer KEY` (OpenAI, compatible servers).
    Bearer(SecretString),
    /// `api-key: KEY` (Azure OpenAI key authentication).
    AzureApiKey(SecretString),
    /// `Authorization: Bearer TOKEN` with a Microsoft Entra token from a
    /// credential, refreshed before it expires.
    Entra(Arc<TokenProvider>),
}

/// POSTs `body` as JSON to `url`, authenticated under `auth`, asking for an
/// event stream or for JSON: the request of both OpenAI clients (Chat
/// Completions and Responses), sent under the retry policy of `http`.
pub(crate) async fn post_json(
    http: &Http,
    provider: &'static str,
    url: &Url,
    auth: &ChatAuth,
    request_id_headers: &'static [&'static str],
    body: &Value,
    stream: bool,
) -> Result<crate::http::Sent, ProviderError> {
    let (header, secret, secrets) = auth_header(auth, http).await?;
    let client = http.client().clone();
    let accept = if stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    http.send(
        provider,
        || {
            let mut rb = client.post(url.clone()).header("accept", accept).json(body);
            if let (Some(h), Some(s)) = (header, &secret) {
                rb = rb.header(h, s.expose());
            }
            rb
        },
        request_id_headers,
        &secrets,
    )
    .await
}

/// The header that authenticates a request under `auth` (name and value),
/// and every secret the value holds, to scrub from error bodies.
async fn auth_header(
    auth: &ChatAuth,
    http: &Http,
) -> Result<
    (
        Option<&'static str>,
        Option<SecretString>,
        Vec<SecretString>,
    ),
    ProviderError,
> {
    let (header, secret) = match auth {
        ChatAuth::None => (None, None),
        ChatAuth::Bearer(k) => (
            Some("authorization"),
            Some(SecretString::new(format!("Bearer {}", k.expose()))),
        ),
        ChatAuth::AzureApiKey(k) => (Some("api-key"), Some(k.clone())),
        ChatAuth::Entra(p) => {
            let token = p.token(http).await?;
            (
                Some("authorization"),
                Some(SecretString::new(format!("Bearer {}", token.expose()))),
            )
        }
    };
    let mut secrets: Vec<SecretString> = Vec::new();
    match auth {
        ChatAuth::Bearer(k) | ChatAuth::AzureApiKey(k) => secrets.push(k.clone()),
        _ => {}
    }
    if let Some(s) = &secret {
        secrets.push(s.clone());
        if let Some(t) = s.expose().strip_prefix("Bearer ") {
            secrets.push(SecretString::new(t));
        }
    }
    Ok((header, secret, secrets))
}

/// Shape of `response_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormatShape {
    /// `{type: "json_schema", json_schema: {name, schema, strict?}}`
    /// (OpenAI, Azure, vLLM, llama.cpp, Ollama ≥ 0.5).
    JsonSchema,
    /// `{type: "json_object", schema}` (llama.cpp's older extension).
    JsonObjectWithSchema,
}

/// Name of the output-token limit field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenLimitField {
    /// `max_completion_tokens` (OpenAI's current name; required by
    /// reasoning models).
    MaxCompletionTokens,
    /// `max_tokens` (the name compatible servers and Azure's 2024-10-21
    /// versioned route document).
    MaxTokens,
}

/// Per-server differences of the Chat Completions API, as configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quirks {
    /// Send `json_schema.strict: true` (servers that reject or ignore the
    /// field get it omitted).
    pub strict: bool,
    /// Shape of `response_format`.
    pub response_format: ResponseFormatShape,
    /// Name of the token-limit field.
    pub token_limit_field: TokenLimitField,
    /// Ask for usage in streams (`stream_options: {include_usage: true}`).
    pub stream_usage: bool,
}

impl Quirks {
    /// OpenAI itself (and Azure OpenAI's v1 route).
    pub const OPENAI: Quirks = Quirks {
        strict: true,
        response_format: ResponseFormatShape::JsonSchema,
        token_limit_field: TokenLimitField::MaxCompletionTokens,
        stream_usage: true,
    };
}

/// Known OpenAI-compatible servers, each with its documented quirks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompatServer {
    /// vLLM: accepts OpenAI's `response_format` (guided decoding) and
    /// `stream_options`; `strict` is accepted.
    Vllm,
    /// llama.cpp `llama-server`: `response_format` json_schema compiled to a
    /// grammar; `strict` is not part of its API (omitted); the last stream
    /// chunk carries usage without being asked.
    LlamaCpp,
    /// Ollama's `/v1` API: `response_format` json_schema, `max_tokens`,
    /// `stream_options.include_usage`; `strict` is not documented (omitted).
    Ollama,
    /// Any other server: the OpenAI shape with `max_tokens`, no stream usage.
    Generic,
}

impl CompatServer {
    /// The server's quirks.
    pub fn quirks(self) -> Quirks {
        let base = Quirks {
            strict: true,
            response_format: ResponseFormatShape::JsonSchema,
            token_limit_field: TokenLimitField::MaxTokens,
            stream_usage: false,
        };
        match self {
            CompatServer::Vllm => Quirks {
                stream_usage: true,
                ..base
            },
            CompatServer::LlamaCpp => Quirks {
                strict: false,
                ..base
            },
            CompatServer::Ollama => Quirks {
                strict: false,
                stream_usage: true,
                ..base
            },
            CompatServer::Generic => base,
        }
    }

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CompatServer::Vllm => "vllm",
            CompatServer::LlamaCpp => "llamacpp",
            CompatServer::Ollama => "ollama",
            CompatServer::Generic => "generic",
        }
    }
}

impl FromStr for CompatServer {
    type Err = UnknownServer;

    fn from_str(s: &str) -> Result<Self, UnknownServer> {
        match s {
            "vllm" => Ok(CompatServer::Vllm),
            "llamacpp" | "llama.cpp" | "llama-server" => Ok(CompatServer::LlamaCpp),
            "ollama" => Ok(CompatServer::Ollama),
            "generic" => Ok(CompatServer::Generic),
            _ => Err(UnknownServer(s.to_string())),
        }
    }
}

/// A [`CompatServer`] spelling that names no known server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown OpenAI-compatible server {0:?}; expected vllm, llamacpp, ollama or generic")]
pub struct UnknownServer(pub String);

/// A Chat Completions client.
#[derive(Debug, Clone)]
pub struct ChatCompletions {
    provider: &'static str,
    url: Url,
    model: Option<String>,
    auth: ChatAuth,
    quirks: Quirks,
    target: Target,
    request_id_headers: &'static [&'static str],
    http: Http,
}

/// What [`ChatCompletions::build`] makes a client from: the endpoint
/// (`path` under `base`) and everything that differs between OpenAI and
/// compatible servers.
struct Setup<'a> {
    provider: &'static str,
    base: &'a Url,
    path: &'a str,
    model: Option<String>,
    auth: ChatAuth,
    quirks: Quirks,
    target: Target,
    request_id_headers: &'static [&'static str],
    http: HttpConfig,
}

/// Parses a base URL setting.
pub fn parse_base_url(provider: &'static str, raw: &str) -> Result<Url, ProviderError> {
    let url = Url::parse(raw.trim()).map_err(|e| {
        ProviderError::new(
            ErrorKind::Config,
            provider,
            format!("the base URL is not a URL: {e}"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ProviderError::new(
            ErrorKind::Config,
            provider,
            format!(
                "the base URL {} is not http(s)",
                crate::secret::redact_endpoint_url(&url)
            ),
        ));
    }
    Ok(url)
}

impl ChatCompletions {
    /// OpenAI: `POST {base_url}/chat/completions` with `Authorization: Bearer`.
    pub fn openai(
        base_url: Url,
        api_key: SecretString,
        model: String,
        http: HttpConfig,
    ) -> Result<ChatCompletions, ProviderError> {
        Self::build(Setup {
            provider: "openai",
            base: &base_url,
            path: "chat/completions",
            model: Some(model),
            auth: ChatAuth::Bearer(api_key),
            quirks: Quirks::OPENAI,
            target: Target::OpenAi,
            request_id_headers: OPENAI_REQUEST_ID_HEADERS,
            http,
        })
    }

    /// An OpenAI-compatible server: `POST {base_url}/chat/completions`,
    /// with a bearer key only if one is given.
    pub fn compatible(
        base_url: Url,
        api_key: Option<SecretString>,
        model: String,
        quirks: Quirks,
        http: HttpConfig,
    ) -> Result<ChatCompletions, ProviderError> {
        Self::build(Setup {
            provider: "openai-compatible",
            base: &base_url,
            path: "chat/completions",
            model: Some(model),
            auth: api_key.map_or(ChatAuth::None, ChatAuth::Bearer),
            quirks,
            target: Target::OpenAi,
            request_id_headers: OPENAI_REQUEST_ID_HEADERS,
            http,
        })
    }

    /// Azure OpenAI at a fully built endpoint (see [`crate::azure`]).
    pub(crate) fn azure(
        url: Url,
        model: Option<String>,
        auth: ChatAuth,
        quirks: Quirks,
        http: HttpConfig,
    ) -> Result<ChatCompletions, ProviderError> {
        Ok(ChatCompletions {
            provider: "azure",
            url,
            model,
            auth,
            quirks,
            target: Target::Azure,
            request_id_headers: AZURE_REQUEST_ID_HEADERS,
            http: Http::new(http, "azure")?,
        })
    }

    fn build(setup: Setup<'_>) -> Result<ChatCompletions, ProviderError> {
        let Setup {
            provider,
            base,
            path,
            model,
            auth,
            quirks,
            target,
            request_id_headers,
            http,
        } = setup;
        let url = join(base, path).map_err(|e| {
            ProviderError::new(ErrorKind::Config, provider, format!("bad base URL: {e}"))
        })?;
        Ok(ChatCompletions {
            provider,
            url,
            model,
            auth,
            quirks,
            target,
            request_id_headers,
            http: Http::new(http, provider)?,
        })
    }

    /// The endpoint, for display (credentials and query values redacted).
    pub fn endpoint(&self) -> String {
        crate::secret::redact_endpoint_url(&self.url)
    }

    /// The request body this client sends for `request`.
    pub fn body(&self, request: &GenerationRequest, stream: bool) -> Result<Value, ProviderError> {
        let Some(schema) = &request.schema else {
            return Err(ProviderError::new(
                ErrorKind::Config,
                self.provider,
                "a structured-output schema is required (native citations are an Anthropic mode)",
            ));
        };
        let mut body = Map::new();
        if let Some(m) = &self.model {
            body.insert("model".into(), json!(m));
        }
        body.insert(
            "messages".into(),
            json!([
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ]),
        );
        let limit = match self.quirks.token_limit_field {
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
            TokenLimitField::MaxTokens => "max_tokens",
        };
        // No limit when the server is to choose (`openai-compatible`'s default).
        if let Some(n) = request.token_limit() {
            body.insert(limit.into(), json!(n));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        let format = match self.quirks.response_format {
            ResponseFormatShape::JsonSchema => {
                let mut js = Map::new();
                js.insert("name".into(), json!(schema.name));
                js.insert("schema".into(), schema.schema.clone());
                if self.quirks.strict {
                    js.insert("strict".into(), json!(true));
                }
                json!({"type": "json_schema", "json_schema": js})
            }
            ResponseFormatShape::JsonObjectWithSchema => {
                json!({"type": "json_object", "schema": schema.schema})
            }
        };
        body.insert("response_format".into(), format);
        if stream {
            body.insert("stream".into(), json!(true));
            if self.quirks.stream_usage {
                body.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
        Ok(Value::Object(body))
    }

    async fn send(
        &self,
        request: &GenerationRequest,
        stream: bool,
    ) -> Result<crate::http::Sent, ProviderError> {
        let body = self.body(request, stream)?;
        post_json(
            &self.http,
            self.provider,
            &self.url,
            &self.auth,
            self.request_id_headers,
            &body,
            stream,
        )
        .await
    }

    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let sent = self.send(request, false).await?;
        let (body, request_id, attempts, started, time_to_headers) =
            read_body(sent, self.provider).await?;
        let value: Value = serde_json::from_str(&body).map_err(|e| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider,
                format!("the response is not JSON: {e}"),
            )
            .with_body(body.clone())
            .with_request_id(request_id.clone())
        })?;
        let choice = value.pointer("/choices/0").ok_or_else(|| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider,
                "the response has no choices",
            )
            .with_body(body.clone())
            .with_request_id(request_id.clone())
        })?;
        let acc = Accumulated {
            content: choice
                .pointer("/message/content")
                .and_then(Value::as_str)
                .map(str::to_string),
            refusal: choice
                .pointer("/message/refusal")
                .and_then(Value::as_str)
                .map(str::to_string),
            finish_reason: choice
                .get("finish_reason")
                .and_then(Value::as_str)
                .map(str::to_string),
            model: value
                .get("model")
                .and_then(Value::as_str)
                .map(str::to_string),
            usage: usage(value.get("usage")),
            done: true,
        };
        let timings = Timings {
            time_to_headers,
            time_to_first_token: None,
            total: started.elapsed(),
            attempts,
        };
        acc.into_generation(self.provider, request_id, timings)
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        let sent = self.send(request, true).await?;
        Ok(GenerationStream::new(
            self.provider,
            sent,
            Box::new(ChatStreamDecoder {
                provider: self.provider,
                acc: Accumulated::default(),
            }),
        ))
    }
}

impl Generator for ChatCompletions {
    fn provider(&self) -> &'static str {
        self.provider
    }

    fn mode(&self) -> Mode {
        Mode::Structured(self.target)
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

pub(crate) fn usage(u: Option<&Value>) -> Usage {
    let get = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_u64);
    Usage {
        input_tokens: get("prompt_tokens").or_else(|| get("input_tokens")),
        output_tokens: get("completion_tokens").or_else(|| get("output_tokens")),
    }
}

/// What a response (whole or streamed) said, before classification.
#[derive(Debug, Default)]
struct Accumulated {
    content: Option<String>,
    refusal: Option<String>,
    finish_reason: Option<String>,
    model: Option<String>,
    usage: Usage,
    /// The stream reached its end marker (or the response was whole).
    done: bool,
}

impl Accumulated {
    fn into_generation(
        self,
        provider: &'static str,
        request_id: Option<String>,
        timings: Timings,
    ) -> Result<Generation, ProviderError> {
        let fail = |kind, message: String, partial: Option<String>| {
            ProviderError::new(kind, provider, message)
                .with_request_id(request_id.clone())
                .with_attempts(timings.attempts)
                .with_partial_output(partial)
                .with_model(self.model.clone())
        };
        if let Some(r) = self.refusal.as_ref().filter(|r| !r.trim().is_empty()) {
            return Err(fail(
                ErrorKind::Refusal,
                "the model refused to answer".into(),
                Some(r.clone()),
            ));
        }
        match self.finish_reason.as_deref() {
            Some("content_filter") => {
                return Err(fail(
                    ErrorKind::ContentFilter,
                    "the content filter stopped the answer".into(),
                    self.content,
                ));
            }
            Some("length") => {
                return Err(fail(
                    ErrorKind::Truncated,
                    "the output stopped at the token limit (finish_reason: length)".into(),
                    self.content,
                ));
            }
            None if !self.done => {
                return Err(fail(
                    ErrorKind::Truncated,
                    "the stream ended before the model finished".into(),
                    self.content,
                ));
            }
            _ => {}
        }
        let output = Output::json(self.content.unwrap_or_default())
            .map_err(|(why, partial)| fail(ErrorKind::InvalidOutput, why, partial))?;
        Ok(Generation {
            output,
            model: self.model,
            finish_reason: self
                .finish_reason
                .as_deref()
                .map(FinishReason::from_provider),
            usage: self.usage,
            request_id,
            timings,
            p_answerable: None,
        })
    }
}

struct ChatStreamDecoder {
    provider: &'static str,
    acc: Accumulated,
}

impl StreamDecoder for ChatStreamDecoder {
    fn event(&mut self, event: &SseEvent, deltas: &mut Vec<String>) -> Result<(), ProviderError> {
        if event.data.trim() == "[DONE]" {
            self.acc.done = true;
            return Ok(());
        }
        let v: Value = serde_json::from_str(&event.data).map_err(|e| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider,
                format!("a stream event is not JSON: {e}"),
            )
            .with_body(event.data.clone())
        })?;
        if let Some(err) = v.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the provider reported an error in the stream");
            return Err(ProviderError::new(
                ErrorKind::Status,
                self.provider,
                format!("error in the stream: {message}"),
            )
            .with_body(event.data.clone()));
        }
        if let Some(m) = v.get("model").and_then(Value::as_str)
            && !m.is_empty()
        {
            self.acc.model = Some(m.to_string());
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.acc.usage = usage(Some(u));
        }
        if let Some(choice) = v.pointer("/choices/0") {
            if let Some(text) = choice.pointer("/delta/content").and_then(Value::as_str) {
                self.acc
                    .content
                    .get_or_insert_with(String::new)
                    .push_str(text);
                deltas.push(text.to_string());
            }
            if let Some(r) = choice.pointer("/delta/refusal").and_then(Value::as_str) {
                self.acc.refusal.get_or_insert_with(String::new).push_str(r);
            }
            if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
                self.acc.finish_reason = Some(f.to_string());
                // A finish reason ends the choice even if the server never
                // sends `[DONE]`.
                self.acc.done = true;
            }
        }
        Ok(())
    }

    fn finish(self: Box<Self>, meta: StreamMeta) -> Result<Generation, ProviderError> {
        let timings = meta.timings();
        self.acc
            .into_generation(self.provider, meta.request_id, timings)
    }
}
