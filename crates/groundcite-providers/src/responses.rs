//! OpenAI Responses API (`POST {base}/responses`), OpenAI's recommended
//! generation API, with structured output.
//!
//! Request: `model`, `instructions` (the system prompt), `input` (one user
//! message), `max_output_tokens`, `temperature`, `text.format: {type:
//! "json_schema", name, schema, strict: true}` (the same strict schema
//! dialect as Chat Completions, [`Target::OpenAi`]) and `store: false`
//! (groundcite never continues a stored response).
//!
//! Classification of the response object (whole, or the one a stream's
//! terminal event carries):
//!
//! | response                                            | result                        |
//! |-----------------------------------------------------|-------------------------------|
//! | `status: "completed"`, `output_text` parts          | the JSON text                 |
//! | a `refusal` content part                            | [`ErrorKind::Refusal`] (R4)   |
//! | `incomplete`, reason `max_output_tokens`            | [`ErrorKind::Truncated`] (R3), partial output kept |
//! | `incomplete`, reason `content_filter`               | [`ErrorKind::ContentFilter`] (R4) |
//! | `failed`, `error.code: "rate_limit_exceeded"`           | [`ErrorKind::RateLimited`] |
//! | `failed`, `error.code: "server_error"`                  | [`ErrorKind::Status`], "the provider failed" (retried when whole, [`RETRYABLE_CODES`]) |
//! | `failed`, any other code (`invalid_prompt`, …), stream `error` event | [`ErrorKind::Status`], "the request was rejected", with the code and message |
//! | a stream that ends without a terminal event         | [`ErrorKind::Truncated`]      |
//! | not JSON, no `output`, wrong types                  | [`ErrorKind::Protocol`]       |
//!
//! The same client serves Azure OpenAI's v1 Responses route
//! (`{endpoint}/openai/v1/responses`, see [`crate::azure`]): the deployment
//! as `model`, an `api-key` header or a Microsoft Entra bearer token.

use groundcite_core::schema::Target;
use serde_json::{Map, Value, json};
use url::Url;

use crate::error::{ErrorKind, ProviderError};
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode, StreamDecoder, StreamMeta};
use crate::http::{Http, HttpConfig, join, read_body};
use crate::openai::{AZURE_REQUEST_ID_HEADERS, ChatAuth, post_json};
use crate::secret::SecretString;
use crate::sse::SseEvent;
use crate::types::{FinishReason, Generation, GenerationRequest, Output, Timings, Usage};

const PROVIDER: &str = "openai-responses";
const REQUEST_ID_HEADERS: &[&str] = &["x-request-id"];

/// The `error.code`s of a `failed` response that say the provider, not the
/// request, failed: the whole (non-streamed) call is sent again under the
/// retry policy, as for an HTTP 429 or 5xx.
pub const RETRYABLE_CODES: &[&str] = &["rate_limit_exceeded", "server_error"];

/// A Responses API client (OpenAI with `Authorization: Bearer`; Azure
/// OpenAI's v1 route with `api-key` or an Entra token).
#[derive(Debug, Clone)]
pub struct Responses {
    provider: &'static str,
    url: Url,
    model: String,
    auth: ChatAuth,
    target: Target,
    request_id_headers: &'static [&'static str],
    http: Http,
}

impl Responses {
    /// OpenAI: `POST {base_url}/responses` with `Authorization: Bearer`.
    pub fn openai(
        base_url: Url,
        api_key: SecretString,
        model: String,
        http: HttpConfig,
    ) -> Result<Responses, ProviderError> {
        let url = join(&base_url, "responses").map_err(|e| {
            ProviderError::new(ErrorKind::Config, PROVIDER, format!("bad base URL: {e}"))
        })?;
        Ok(Responses {
            provider: PROVIDER,
            url,
            model,
            auth: ChatAuth::Bearer(api_key),
            target: Target::OpenAi,
            request_id_headers: REQUEST_ID_HEADERS,
            http: Http::new(http, PROVIDER)?,
        })
    }

    /// Azure OpenAI's v1 Responses route at a fully built URL (see
    /// [`crate::azure`]): the deployment as `model`, Azure's schema limits.
    pub(crate) fn azure(
        url: Url,
        deployment: String,
        auth: ChatAuth,
        http: HttpConfig,
    ) -> Result<Responses, ProviderError> {
        Ok(Responses {
            provider: "azure",
            url,
            model: deployment,
            auth,
            target: Target::Azure,
            request_id_headers: AZURE_REQUEST_ID_HEADERS,
            http: Http::new(http, "azure")?,
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
        body.insert("model".into(), json!(self.model));
        body.insert("instructions".into(), json!(request.system));
        body.insert(
            "input".into(),
            json!([{"role": "user", "content": request.user}]),
        );
        if let Some(n) = request.token_limit() {
            body.insert("max_output_tokens".into(), json!(n));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        body.insert(
            "text".into(),
            json!({"format": {
                "type": "json_schema",
                "name": schema.name,
                "schema": schema.schema,
                "strict": true,
            }}),
        );
        body.insert("store".into(), json!(false));
        if stream {
            body.insert("stream".into(), json!(true));
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

    /// The whole response; a `failed` one whose code is in
    /// [`RETRYABLE_CODES`] is sent again under the retry policy and budget
    /// (HTTP-level retries happen inside each send).
    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let policy = *self.http.retry_policy();
        let started = std::time::Instant::now();
        let mut attempts = 0u32;
        let mut retries = 0u32;
        loop {
            let (acc, request_id, timings) = self.run_once(request).await?;
            attempts += timings.attempts;
            let retryable = acc
                .error
                .as_ref()
                .and_then(|(code, _)| code.as_deref())
                .is_some_and(|c| RETRYABLE_CODES.contains(&c));
            if retryable && retries < policy.max_retries && self.http.spend_retry() {
                retries += 1;
                tokio::time::sleep(crate::http::backoff(&policy, retries)).await;
                continue;
            }
            return acc.into_generation(
                request_id,
                Timings {
                    attempts,
                    total: started.elapsed(),
                    ..timings
                },
            );
        }
    }

    /// One send of the whole request, read and parsed (not yet classified).
    async fn run_once(
        &self,
        request: &GenerationRequest,
    ) -> Result<(Accumulated, Option<String>, Timings), ProviderError> {
        let sent = self.send(request, false).await?;
        let (body, request_id, attempts, started, time_to_headers) =
            read_body(sent, self.provider).await?;
        let protocol = |message: String| {
            ProviderError::new(ErrorKind::Protocol, self.provider, message)
                .with_body(body.clone())
                .with_request_id(request_id.clone())
                .with_attempts(attempts)
        };
        let value: Value = serde_json::from_str(&body)
            .map_err(|e| protocol(format!("the response is not JSON: {e}")))?;
        let mut acc = Accumulated::new(self.provider);
        acc.absorb_response(&value, true).map_err(protocol)?;
        let timings = Timings {
            time_to_headers,
            time_to_first_token: None,
            total: started.elapsed(),
            attempts,
        };
        Ok((acc, request_id, timings))
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        let sent = self.send(request, true).await?;
        Ok(GenerationStream::new(
            self.provider,
            sent,
            Box::new(ResponsesStreamDecoder {
                acc: Accumulated::new(self.provider),
            }),
        ))
    }
}

impl Generator for Responses {
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

/// What a response (whole or streamed) said, before classification.
#[derive(Debug)]
struct Accumulated {
    provider: &'static str,
    text: Option<String>,
    refusal: Option<String>,
    /// `completed`, `incomplete`, `failed`, … (absent until a terminal
    /// stream event).
    status: Option<String>,
    incomplete_reason: Option<String>,
    /// `(code, message)` of `error` (a failed response or an `error` event).
    error: Option<(Option<String>, String)>,
    model: Option<String>,
    usage: Usage,
}

fn opt_str<'v>(v: &'v Value, key: &str) -> Result<Option<&'v str>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(format!("`{key}` is not a string: {other}")),
    }
}

fn error_of(v: &Value) -> Result<Option<(Option<String>, String)>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some((
            opt_str(v, "code")?.map(str::to_string),
            opt_str(v, "message")?
                .unwrap_or("the provider reported an error")
                .to_string(),
        ))),
        other => Err(format!("`error` is not an object: {other}")),
    }
}

impl Accumulated {
    fn new(provider: &'static str) -> Accumulated {
        Accumulated {
            provider,
            text: None,
            refusal: None,
            status: None,
            incomplete_reason: None,
            error: None,
            model: None,
            usage: Usage::default(),
        }
    }

    /// Reads a response object. `with_output`: take the text from
    /// `output[]` (a whole response; a stream's text comes from its deltas,
    /// and its terminal event only fills in what the deltas lacked).
    fn absorb_response(&mut self, v: &Value, with_output: bool) -> Result<(), String> {
        if !v.is_object() {
            return Err("the response is not an object".into());
        }
        if let Some(m) = opt_str(v, "model")?.filter(|m| !m.is_empty()) {
            self.model = Some(m.to_string());
        }
        if let Some(s) = opt_str(v, "status")? {
            self.status = Some(s.to_string());
        }
        if let Some(d) = v.get("incomplete_details").filter(|d| !d.is_null()) {
            if !d.is_object() {
                return Err(format!("`incomplete_details` is not an object: {d}"));
            }
            self.incomplete_reason = opt_str(d, "reason")?.map(str::to_string);
        }
        if let Some(e) = v.get("error")
            && let Some(e) = error_of(e)?
        {
            self.error = Some(e);
        }
        match v.get("usage") {
            None | Some(Value::Null) => {}
            Some(u @ Value::Object(_)) => {
                let get = |k: &str| u.get(k).and_then(Value::as_u64);
                self.usage = Usage {
                    input_tokens: get("input_tokens"),
                    output_tokens: get("output_tokens"),
                };
            }
            Some(other) => return Err(format!("`usage` is not an object: {other}")),
        }
        let output = match v.get("output") {
            Some(Value::Array(items)) => items,
            // A failed response may carry no output; anything else must.
            None | Some(Value::Null) if self.status.as_deref() == Some("failed") => return Ok(()),
            None | Some(Value::Null) => return Err("the response has no `output`".into()),
            Some(other) => return Err(format!("`output` is not an array: {other}")),
        };
        let mut text: Option<String> = None;
        let mut refusal: Option<String> = None;
        for item in output {
            // Reasoning items, tool calls and the like carry no answer.
            if opt_str(item, "type")? != Some("message") {
                continue;
            }
            let parts = match item.get("content") {
                Some(Value::Array(parts)) => parts,
                None | Some(Value::Null) => continue,
                Some(other) => {
                    return Err(format!("a message's `content` is not an array: {other}"));
                }
            };
            for part in parts {
                match opt_str(part, "type")? {
                    Some("output_text") => text
                        .get_or_insert_with(String::new)
                        .push_str(opt_str(part, "text")?.unwrap_or("")),
                    Some("refusal") => refusal
                        .get_or_insert_with(String::new)
                        .push_str(opt_str(part, "refusal")?.unwrap_or("")),
                    _ => {}
                }
            }
        }
        if with_output || self.text.is_none() {
            self.text = text.or(self.text.take());
        }
        if refusal.is_some() {
            self.refusal = refusal;
        }
        Ok(())
    }

    fn into_generation(
        self,
        request_id: Option<String>,
        timings: Timings,
    ) -> Result<Generation, ProviderError> {
        let provider = self.provider;
        let fail = |kind, message: String, partial: Option<String>| {
            ProviderError::new(kind, provider, message)
                .with_request_id(request_id.clone())
                .with_attempts(timings.attempts)
                .with_partial_output(partial)
                .with_model(self.model.clone())
                .with_usage(self.usage)
        };
        if let Some((code, message)) = &self.error {
            // OpenAI's documented `error.code`s of a failed response: a
            // rate limit and a server error are the provider's; every other
            // code (`invalid_prompt`, image and vector-store errors, …)
            // rejects the request.
            let (kind, what) = match code.as_deref() {
                Some("rate_limit_exceeded") => (ErrorKind::RateLimited, "rate limited"),
                Some("server_error") => (ErrorKind::Status, "the provider failed"),
                _ => (ErrorKind::Status, "the request was rejected"),
            };
            let code = code.as_deref().unwrap_or("no code");
            return Err(fail(
                kind,
                format!("{what}: the response failed ({code}): {message}"),
                self.text,
            ));
        }
        if let Some(r) = self.refusal.as_ref().filter(|r| !r.trim().is_empty()) {
            return Err(fail(
                ErrorKind::Refusal,
                "the model refused to answer".into(),
                Some(r.clone()),
            ));
        }
        match self.status.as_deref() {
            Some("completed") => {}
            Some("incomplete") => {
                return Err(match self.incomplete_reason.as_deref() {
                    Some("content_filter") => fail(
                        ErrorKind::ContentFilter,
                        "the content filter stopped the answer (incomplete: content_filter)".into(),
                        self.text,
                    ),
                    Some("max_output_tokens") => fail(
                        ErrorKind::Truncated,
                        "the output stopped at the token limit (incomplete: max_output_tokens)"
                            .into(),
                        self.text,
                    ),
                    other => fail(
                        ErrorKind::Truncated,
                        format!(
                            "the response is incomplete (reason: {})",
                            other.unwrap_or("none given")
                        ),
                        self.text,
                    ),
                });
            }
            Some("failed") => {
                return Err(fail(
                    ErrorKind::Status,
                    "the response failed without an error object".into(),
                    self.text,
                ));
            }
            None => {
                return Err(fail(
                    ErrorKind::Truncated,
                    "the stream ended before the response completed".into(),
                    self.text,
                ));
            }
            Some(other) => {
                return Err(fail(
                    ErrorKind::Protocol,
                    format!("the response did not complete (status: {other})"),
                    self.text,
                ));
            }
        }
        let output = Output::json(self.text.unwrap_or_default())
            .map_err(|(why, partial)| fail(ErrorKind::InvalidOutput, why, partial))?;
        Ok(Generation {
            output,
            model: self.model,
            finish_reason: Some(FinishReason::Stop),
            usage: self.usage,
            request_id,
            timings,
            p_answerable: None,
        })
    }
}

/// Decodes a Responses API body as the non-streamed client does (one send:
/// a retryable `failed` is classified, not sent again), for the fuzz
/// target: never panics, whatever the bytes.
pub fn decode_response(body: &[u8]) -> Result<Generation, ProviderError> {
    let text = String::from_utf8_lossy(body);
    let protocol = |m: String| ProviderError::new(ErrorKind::Protocol, PROVIDER, m);
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| protocol(format!("the response is not JSON: {e}")))?;
    let mut acc = Accumulated::new(PROVIDER);
    acc.absorb_response(&value, true).map_err(protocol)?;
    acc.into_generation(None, Timings::default())
}

/// Decodes Server-Sent Events (`(event name, data)`) as the streaming
/// client does, for the fuzz target: the text deltas handed out, and the
/// generation or error at the end. Never panics.
pub fn decode_stream<'a>(
    events: impl IntoIterator<Item = (Option<&'a str>, &'a str)>,
) -> (Vec<String>, Result<Generation, ProviderError>) {
    crate::generator::replay(
        Box::new(ResponsesStreamDecoder {
            acc: Accumulated::new(PROVIDER),
        }),
        events.into_iter().map(|(event, data)| SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }),
    )
}

struct ResponsesStreamDecoder {
    acc: Accumulated,
}

impl StreamDecoder for ResponsesStreamDecoder {
    fn event(&mut self, event: &SseEvent, deltas: &mut Vec<String>) -> Result<(), ProviderError> {
        let provider = self.acc.provider;
        let protocol = |message: String| {
            ProviderError::new(ErrorKind::Protocol, provider, message).with_body(event.data.clone())
        };
        if event.data.trim().is_empty() || event.data.trim() == "[DONE]" {
            return Ok(());
        }
        let v: Value = serde_json::from_str(&event.data)
            .map_err(|e| protocol(format!("a stream event is not JSON: {e}")))?;
        // The `type` field names the event; the SSE `event:` line repeats it.
        let kind = opt_str(&v, "type")
            .map_err(protocol)?
            .map(str::to_string)
            .or_else(|| event.event.clone())
            .unwrap_or_default();
        match kind.as_str() {
            "response.output_text.delta" => {
                let d = opt_str(&v, "delta").map_err(protocol)?.unwrap_or("");
                if !d.is_empty() {
                    self.acc.text.get_or_insert_with(String::new).push_str(d);
                    deltas.push(d.to_string());
                }
            }
            "response.refusal.delta" => {
                let d = opt_str(&v, "delta").map_err(protocol)?.unwrap_or("");
                self.acc.refusal.get_or_insert_with(String::new).push_str(d);
            }
            "response.created"
            | "response.in_progress"
            | "response.completed"
            | "response.incomplete"
            | "response.failed" => {
                let response = v
                    .get("response")
                    .ok_or_else(|| protocol(format!("`{kind}` has no `response`")))?;
                let terminal =
                    !matches!(kind.as_str(), "response.created" | "response.in_progress");
                if terminal {
                    self.acc
                        .absorb_response(response, false)
                        .map_err(protocol)?;
                } else if let Some(m) = opt_str(response, "model").map_err(protocol)? {
                    self.acc.model = Some(m.to_string());
                }
            }
            "error" => {
                let e = error_of(&v).map_err(protocol)?;
                self.acc.error = e;
            }
            // Item and part boundaries, annotations, `*.done` events: the
            // deltas and the terminal response carry everything needed.
            _ => {}
        }
        Ok(())
    }

    fn finish(self: Box<Self>, meta: StreamMeta) -> Result<Generation, ProviderError> {
        let timings = meta.timings();
        self.acc.into_generation(meta.request_id, timings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn timings() -> Timings {
        Timings {
            time_to_headers: Duration::ZERO,
            time_to_first_token: None,
            total: Duration::ZERO,
            attempts: 1,
        }
    }

    fn classify(v: &Value) -> Result<Generation, ProviderError> {
        let mut acc = Accumulated::new(PROVIDER);
        acc.absorb_response(v, true)
            .map_err(|m| ProviderError::new(ErrorKind::Protocol, PROVIDER, m))?;
        acc.into_generation(None, timings())
    }

    #[test]
    fn hostile_responses_give_clear_errors_not_panics() {
        let cases = [
            (json!([]), "not an object"),
            (json!({"status": "completed"}), "no `output`"),
            (json!({"status": "completed", "output": {}}), "not an array"),
            (
                json!({"status": 7, "output": []}),
                "`status` is not a string",
            ),
            (
                json!({"status": "completed", "output": [{"type": "message", "content": "x"}]}),
                "`content` is not an array",
            ),
            (
                json!({"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": 5}]}]}),
                "`text` is not a string",
            ),
            (
                json!({"status": "completed", "usage": [1], "output": []}),
                "`usage` is not an object",
            ),
            (
                json!({"status": "incomplete", "incomplete_details": "x", "output": []}),
                "`incomplete_details` is not an object",
            ),
            (
                json!({"status": "failed", "error": 3}),
                "`error` is not an object",
            ),
        ];
        for (v, needle) in cases {
            let e = classify(&v).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{v}: {e}");
            assert!(e.to_string().contains(needle), "{v}: {e}");
        }
        let e = classify(&json!({"status": "completed", "output": []})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidOutput);
        let e = classify(&json!({"status": "completed", "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "{\"answerable\": tr"}]}
        ]}))
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidOutput);
        let e = classify(&json!({"status": "queued", "output": []})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Protocol);
    }

    #[test]
    fn hostile_stream_events_give_clear_errors_not_panics() {
        for (data, needle) in [
            ("{not json", "not JSON"),
            (r#"{"type": 3}"#, "`type` is not a string"),
            (
                r#"{"type": "response.output_text.delta", "delta": 1}"#,
                "`delta` is not a string",
            ),
            (r#"{"type": "response.completed"}"#, "has no `response`"),
            (
                r#"{"type": "response.completed", "response": {"status": "completed", "output": 1}}"#,
                "`output` is not an array",
            ),
        ] {
            let mut d = ResponsesStreamDecoder {
                acc: Accumulated::new(PROVIDER),
            };
            let e = d
                .event(
                    &SseEvent {
                        event: None,
                        data: data.into(),
                    },
                    &mut Vec::new(),
                )
                .unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Protocol, "{data}: {e}");
            assert!(e.to_string().contains(needle), "{data}: {e}");
        }
    }

    #[test]
    fn the_mapping() {
        let msg =
            |parts: Value| json!([{"type": "message", "role": "assistant", "content": parts}]);
        let e = classify(&json!({"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": msg(json!([{"type": "output_text", "text": "{\"a"}]))}))
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert_eq!(e.partial_output(), Some("{\"a"));
        let e = classify(&json!({"status": "incomplete",
            "incomplete_details": {"reason": "content_filter"}, "output": []}))
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ContentFilter);
        let e = classify(&json!({"status": "completed",
            "output": msg(json!([{"type": "refusal", "refusal": "I can't help with that."}]))}))
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Refusal);
        let e = classify(&json!({"status": "failed",
            "error": {"code": "server_error", "message": "boom"}, "output": []}))
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Status);
        assert!(e.to_string().contains("server_error") && e.to_string().contains("boom"));
        assert!(e.to_string().contains("the provider failed"), "{e}");
        let failed = |code: &str| {
            classify(&json!({"status": "failed",
                "error": {"code": code, "message": "m"}, "output": []}))
            .unwrap_err()
        };
        let e = failed("rate_limit_exceeded");
        assert_eq!(e.kind(), ErrorKind::RateLimited, "{e}");
        for code in ["invalid_prompt", "vector_store_timeout", "something_new"] {
            let e = failed(code);
            assert_eq!(e.kind(), ErrorKind::Status, "{e}");
            assert!(e.to_string().contains("the request was rejected"), "{e}");
            assert!(e.to_string().contains(code), "{e}");
        }
        let e = classify(&json!({"status": "failed", "error": {"message": "m"}, "output": []}))
            .unwrap_err();
        assert!(e.to_string().contains("no code"), "{e}");
        let g = classify(&json!({"status": "completed", "model": "m",
            "usage": {"input_tokens": 3, "output_tokens": 4},
            "output": [{"type": "reasoning", "summary": []},
                       {"type": "message", "content": [{"type": "output_text", "text": "{}"}]}]}))
        .unwrap();
        assert_eq!(g.output, Output::Json("{}".into()));
        assert_eq!(g.usage.input_tokens, Some(3));
        assert_eq!(g.usage.output_tokens, Some(4));
    }
}
