//! Anthropic Messages API (`POST /v1/messages`) in its two modes, which the
//! API forbids mixing in one request:
//!
//! - **structured** ([`AnthropicMode::Structured`]): `output_config:
//!   {format: {type: "json_schema", schema}}`; the text content is the JSON.
//! - **native citations** ([`AnthropicMode::Citations`]): one `document`
//!   (or `search_result`) block per chunk with `citations: {enabled: true}`;
//!   the response is returned raw ([`Output::AnthropicCitations`]) for
//!   [`groundcite_core::native::anthropic::convert`].
//!
//! Every documented `stop_reason` is mapped explicitly (`stop_outcome`):
//!
//! | `stop_reason` | outcome |
//! |---|---|
//! | `end_turn` | the answer (structured mode: it must parse as JSON) |
//! | `stop_sequence` | the answer, as `end_turn` (groundcite sends no `stop_sequences`; a stop is validated like any output) |
//! | `max_tokens` | [`ErrorKind::Truncated`] (R3) |
//! | `model_context_window_exceeded` | [`ErrorKind::Truncated`] (R3): the output filled the context window |
//! | `refusal` | [`ErrorKind::Refusal`] (R4) |
//! | `tool_use` | [`ErrorKind::InvalidOutput`] (R3): neither mode offers a tool, so the turn holds no answer |
//! | `pause_turn` | [`ErrorKind::InvalidOutput`] (R3): a paused server-tool loop; groundcite sends no server tools and does not resume turns, so the turn holds no complete answer |
//! | missing | [`ErrorKind::Truncated`] (R3): the message is incomplete |
//! | anything else | [`ErrorKind::InvalidOutput`] naming the value |

use groundcite_core::schema::Target;
use serde_json::{Map, Value, json};
use url::Url;

use crate::error::{ErrorKind, ProviderError};
use crate::generator::{BoxFuture, GenerationStream, Generator, Mode, StreamDecoder, StreamMeta};
use crate::http::{Http, HttpConfig, read_body};
use crate::openai::join;
use crate::secret::SecretString;
use crate::sse::SseEvent;
use crate::types::{
    FinishReason, Generation, GenerationRequest, NativeSources, Output, Timings, Usage,
};

/// Default Anthropic base URL.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

const REQUEST_ID_HEADERS: &[&str] = &["request-id", "x-request-id"];

/// Which of the two exclusive modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnthropicMode {
    /// JSON constrained by `output_config.format`.
    Structured,
    /// Native citations over document or search-result blocks.
    Citations,
}

/// An Anthropic Messages client.
#[derive(Debug, Clone)]
pub struct Anthropic {
    url: Url,
    api_key: SecretString,
    model: String,
    mode: AnthropicMode,
    http: Http,
}

impl Anthropic {
    /// A client for `{base_url}/v1/messages`.
    pub fn new(
        base_url: Url,
        api_key: SecretString,
        model: String,
        mode: AnthropicMode,
        http: HttpConfig,
    ) -> Result<Anthropic, ProviderError> {
        let provider = provider_name(mode);
        let url = join(&base_url, "v1/messages").map_err(|e| {
            ProviderError::new(ErrorKind::Config, provider, format!("bad base URL: {e}"))
        })?;
        Ok(Anthropic {
            url,
            api_key,
            model,
            mode,
            http: Http::new(http, provider)?,
        })
    }

    fn provider(&self) -> &'static str {
        provider_name(self.mode)
    }

    /// The request body this client sends for `request`.
    pub fn body(&self, request: &GenerationRequest, stream: bool) -> Result<Value, ProviderError> {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("max_tokens".into(), json!(request.max_tokens));
        body.insert("system".into(), json!(request.system));
        match self.mode {
            AnthropicMode::Structured => {
                let Some(schema) = &request.schema else {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        self.provider(),
                        "structured mode needs a schema",
                    ));
                };
                body.insert(
                    "messages".into(),
                    json!([{"role": "user", "content": request.user}]),
                );
                body.insert(
                    "output_config".into(),
                    json!({"format": {"type": "json_schema", "schema": schema.schema}}),
                );
            }
            AnthropicMode::Citations => {
                if request.schema.is_some() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        self.provider(),
                        "native citations cannot be combined with a structured-output schema (the API rejects the request)",
                    ));
                }
                if request.chunks.is_empty() {
                    return Err(ProviderError::new(
                        ErrorKind::Config,
                        self.provider(),
                        "native citations need at least one chunk to send as a document",
                    ));
                }
                let mut content: Vec<Value> = request
                    .chunks
                    .iter()
                    .map(|c| source_block(c, request.native_sources))
                    .collect();
                content.push(json!({"type": "text", "text": request.user}));
                body.insert(
                    "messages".into(),
                    json!([{"role": "user", "content": content}]),
                );
            }
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
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
        let client = self.http.client().clone();
        let url = self.url.clone();
        let key = self.api_key.clone();
        let accept = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        self.http
            .send(
                self.provider(),
                || {
                    client
                        .post(url.clone())
                        .header("x-api-key", key.expose())
                        .header("anthropic-version", ANTHROPIC_VERSION)
                        .header("accept", accept)
                        .json(&body)
                },
                REQUEST_ID_HEADERS,
                std::slice::from_ref(&self.api_key),
            )
            .await
    }

    async fn run(&self, request: &GenerationRequest) -> Result<Generation, ProviderError> {
        let sent = self.send(request, false).await?;
        let (body, request_id, attempts, started, time_to_headers) =
            read_body(sent, self.provider()).await?;
        let message: Value = serde_json::from_str(&body).map_err(|e| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider(),
                format!("the response is not JSON: {e}"),
            )
            .with_body(body.clone())
            .with_request_id(request_id.clone())
        })?;
        let timings = Timings {
            time_to_headers,
            time_to_first_token: None,
            total: started.elapsed(),
            attempts,
        };
        classify(self.provider(), self.mode, message, request_id, timings)
    }

    async fn run_stream(
        &self,
        request: &GenerationRequest,
    ) -> Result<GenerationStream, ProviderError> {
        let sent = self.send(request, true).await?;
        Ok(GenerationStream::new(
            self.provider(),
            sent,
            Box::new(MessageStreamDecoder {
                provider: self.provider(),
                mode: self.mode,
                events: Vec::new(),
            }),
        ))
    }
}

fn provider_name(mode: AnthropicMode) -> &'static str {
    match mode {
        AnthropicMode::Structured => "anthropic",
        AnthropicMode::Citations => "anthropic-citations",
    }
}

/// One chunk as a citable source block. Content is sent exactly as
/// retrieved: citation indices must land on the chunk's own text.
fn source_block(c: &groundcite_core::Chunk, sources: NativeSources) -> Value {
    match sources {
        NativeSources::Documents => {
            let mut b = json!({
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": c.content},
                "citations": {"enabled": true},
            });
            if let Some(t) = &c.source_title {
                b["title"] = json!(t);
            }
            b
        }
        NativeSources::SearchResults => json!({
            "type": "search_result",
            "source": c.source_url.clone().unwrap_or_else(|| c.chunk_id.clone()),
            "title": c.source_title.clone().unwrap_or_else(|| c.chunk_id.clone()),
            "content": [{"type": "text", "text": c.content}],
            "citations": {"enabled": true},
        }),
    }
}

/// What a `stop_reason` means for the message that carries it.
#[derive(Debug, PartialEq, Eq)]
enum StopOutcome {
    /// The turn ended with an answer: validate and return it.
    Answer,
    /// The turn holds no usable answer: fail with this kind and message.
    Fail(ErrorKind, String),
}

/// Every `stop_reason` the Messages API documents, mapped explicitly (the
/// table in the module documentation); `None` is a message without one.
fn stop_outcome(stop: Option<&str>) -> StopOutcome {
    let fail = |kind, msg: &str| StopOutcome::Fail(kind, msg.to_string());
    match stop {
        Some("end_turn" | "stop_sequence") => StopOutcome::Answer,
        Some("max_tokens") => fail(
            ErrorKind::Truncated,
            "the output stopped at the token limit (stop_reason: max_tokens)",
        ),
        Some("model_context_window_exceeded") => fail(
            ErrorKind::Truncated,
            "the output stopped when the model's context window was full (stop_reason: model_context_window_exceeded); send fewer or shorter chunks",
        ),
        Some("refusal") => fail(
            ErrorKind::Refusal,
            "the model refused to answer (stop_reason: refusal)",
        ),
        Some("tool_use") => fail(
            ErrorKind::InvalidOutput,
            "the model stopped to call a tool (stop_reason: tool_use), but the request offers none: no answer",
        ),
        Some("pause_turn") => fail(
            ErrorKind::InvalidOutput,
            "the model paused its turn (stop_reason: pause_turn), which only server tools do and the request sends none; groundcite does not resume paused turns: no complete answer",
        ),
        None => fail(
            ErrorKind::Truncated,
            "the response has no stop_reason: the output is incomplete",
        ),
        Some(other) => StopOutcome::Fail(
            ErrorKind::InvalidOutput,
            format!(
                "unknown stop_reason {:?}: the output cannot be trusted as an answer",
                groundcite_core::truncate_chars(other, 64)
            ),
        ),
    }
}

/// Turns a complete message into a generation or a classified error.
fn classify(
    provider: &'static str,
    mode: AnthropicMode,
    message: Value,
    request_id: Option<String>,
    timings: Timings,
) -> Result<Generation, ProviderError> {
    let model = message
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let text: String = message
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let fail = |kind, msg: &str, partial: Option<String>| {
        ProviderError::new(kind, provider, msg)
            .with_request_id(request_id.clone())
            .with_attempts(timings.attempts)
            .with_partial_output(partial)
            .with_model(model.clone())
    };
    if message.get("type").and_then(Value::as_str) == Some("error") {
        let msg = message
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the provider reported an error");
        return Err(ProviderError::new(
            ErrorKind::Status,
            provider,
            format!("error in the response: {msg}"),
        )
        .with_body(message.to_string())
        .with_request_id(request_id.clone())
        .with_attempts(timings.attempts));
    }
    let stop = message
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let StopOutcome::Fail(kind, msg) = stop_outcome(stop.as_deref()) {
        return Err(fail(kind, &msg, Some(text)));
    }
    let usage = Usage {
        input_tokens: message
            .pointer("/usage/input_tokens")
            .and_then(Value::as_u64),
        output_tokens: message
            .pointer("/usage/output_tokens")
            .and_then(Value::as_u64),
    };
    let output = match mode {
        AnthropicMode::Structured => Output::json(text)
            .map_err(|(why, partial)| fail(ErrorKind::InvalidOutput, &why, partial))?,
        AnthropicMode::Citations => Output::AnthropicCitations(message),
    };
    Ok(Generation {
        output,
        model,
        finish_reason: stop.as_deref().map(FinishReason::from_provider),
        usage,
        request_id,
        timings,
        p_answerable: None,
    })
}

impl Generator for Anthropic {
    fn provider(&self) -> &'static str {
        provider_name(self.mode)
    }

    fn mode(&self) -> Mode {
        match self.mode {
            AnthropicMode::Structured => Mode::Structured(Target::Anthropic),
            AnthropicMode::Citations => Mode::NativeCitations,
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

/// Collects the stream's events; at the end the core's accumulator rebuilds
/// the message the non-streamed API would have returned, and it is
/// classified exactly like one.
struct MessageStreamDecoder {
    provider: &'static str,
    mode: AnthropicMode,
    events: Vec<Value>,
}

impl StreamDecoder for MessageStreamDecoder {
    fn event(&mut self, event: &SseEvent, deltas: &mut Vec<String>) -> Result<(), ProviderError> {
        let v: Value = serde_json::from_str(&event.data).map_err(|e| {
            ProviderError::new(
                ErrorKind::Protocol,
                self.provider,
                format!("a stream event is not JSON: {e}"),
            )
            .with_body(event.data.clone())
        })?;
        match v.get("type").and_then(Value::as_str) {
            Some("error") => {
                let msg = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("the provider reported an error in the stream");
                let kind = match v.pointer("/error/type").and_then(Value::as_str) {
                    Some("overloaded_error" | "api_error") => ErrorKind::Status,
                    Some("rate_limit_error") => ErrorKind::RateLimited,
                    _ => ErrorKind::Status,
                };
                return Err(ProviderError::new(
                    kind,
                    self.provider,
                    format!("error in the stream: {msg}"),
                )
                .with_body(event.data.clone()));
            }
            Some("content_block_delta") => {
                if let Some(t) = v
                    .get("delta")
                    .filter(|d| d.get("type").and_then(Value::as_str) == Some("text_delta"))
                    .and_then(|d| d.get("text"))
                    .and_then(Value::as_str)
                {
                    deltas.push(t.to_string());
                }
            }
            _ => {}
        }
        self.events.push(v);
        Ok(())
    }

    fn finish(self: Box<Self>, meta: StreamMeta) -> Result<Generation, ProviderError> {
        let timings = meta.timings();
        let mut message = groundcite_core::native::anthropic::accumulate_stream(&self.events)
            .map_err(|e| {
                ProviderError::new(
                    ErrorKind::Protocol,
                    self.provider,
                    format!("the stream does not form a message: {e}"),
                )
                .with_request_id(meta.request_id.clone())
            })?;
        merge_start_usage(&mut message, &self.events);
        classify(self.provider, self.mode, message, meta.request_id, timings)
    }
}

/// `message_delta` carries cumulative usage that may omit fields of
/// `message_start`'s (its `input_tokens`, for one); the non-streamed message
/// has both, so the fields of the start are kept where the delta has none.
fn merge_start_usage(message: &mut Value, events: &[Value]) {
    let Some(Value::Object(start)) = events
        .iter()
        .find(|e| e.get("type").and_then(Value::as_str) == Some("message_start"))
        .and_then(|e| e.pointer("/message/usage"))
        .cloned()
    else {
        return;
    };
    let Some(obj) = message.as_object_mut() else {
        return;
    };
    let usage = obj
        .entry("usage")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(u) = usage {
        for (k, v) in start {
            u.entry(k).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every documented value has its own arm: none falls through to the
    /// unknown-value error.
    #[test]
    fn every_documented_stop_reason_is_mapped() {
        let cases: &[(Option<&str>, Option<ErrorKind>)] = &[
            (Some("end_turn"), None),
            (Some("stop_sequence"), None),
            (Some("max_tokens"), Some(ErrorKind::Truncated)),
            (
                Some("model_context_window_exceeded"),
                Some(ErrorKind::Truncated),
            ),
            (Some("refusal"), Some(ErrorKind::Refusal)),
            (Some("tool_use"), Some(ErrorKind::InvalidOutput)),
            (Some("pause_turn"), Some(ErrorKind::InvalidOutput)),
            (None, Some(ErrorKind::Truncated)),
        ];
        for (stop, want) in cases {
            match (stop_outcome(*stop), want) {
                (StopOutcome::Answer, None) => {}
                (StopOutcome::Fail(kind, msg), Some(w)) => {
                    assert_eq!(kind, *w, "{stop:?}");
                    assert!(!msg.contains("unknown"), "{stop:?}: {msg}");
                    if let Some(s) = stop {
                        assert!(msg.contains(s), "{stop:?}: {msg}");
                    }
                }
                (got, _) => panic!("{stop:?}: {got:?}, expected {want:?}"),
            }
        }
        match stop_outcome(Some("brand_new_reason")) {
            StopOutcome::Fail(ErrorKind::InvalidOutput, msg) => {
                assert!(msg.contains("\"brand_new_reason\""), "{msg}");
            }
            other => panic!("{other:?}"),
        }
    }
}
