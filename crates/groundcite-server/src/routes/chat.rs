//! `POST /v1/chat/completions`: the OpenAI Chat Completions API with
//! structured outputs, backed by the embedded model, so code written for
//! OpenAI (`client.beta.chat.completions.parse(response_format=Model)`)
//! runs offline with `base_url` pointed here.
//!
//! Decisions: only structured outputs are served (`response_format` of
//! type `json_schema` or `json_object`; plain text gets a 422 saying so),
//! because the embedded model is here to produce schema-valid JSON;
//! decoding is greedy, so `temperature`/`top_p`/`seed` are accepted and
//! ignored; `n` must be 1; other OpenAI parameters are accepted and
//! ignored. A truncated output comes back with `finish_reason: "length"`,
//! as OpenAI does (the SDK's `parse` then raises its length error).
//!
//! Output limit: `max_completion_tokens` (else `max_tokens`, else 1024) is
//! capped to what the model's context leaves after the prompt, as
//! llama.cpp's server does, instead of rejecting the request: a client's
//! default limit (groundcite's own hosted-provider default, an SDK's) may
//! exceed the embedded model's 4,096-token context. A capped request says
//! so in the [`MAX_TOKENS_CAPPED_HEADER`] response header (the limit
//! applied; headers are what every OpenAI SDK tolerates), in the log and in
//! the trace's `max_tokens`; output that reaches the capped limit ends with
//! `finish_reason: "length"`. Only a prompt that alone does not fit is an
//! error (422 `limit_exceeded`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use groundcite_providers::{
    ErrorKind, Generation, GenerationRequest, Generator, Output, ProviderError, ResponseSchema,
    StopReason,
};
use groundcite_store::{Timings, TraceBuilder, TraceOptions};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::{Who, check_text};
use crate::error::{ApiError, ErrorCode};
use crate::extract::ApiJson;
use crate::state::AppState;

/// Output tokens of a chat completion that sets no limit (not the
/// providers' `DEFAULT_MAX_TOKENS`, which is for answers).
const CHAT_DEFAULT_MAX_TOKENS: u32 = 1024;
/// The most output tokens a chat completion gets from a generator that does
/// not know its context (the embedded model's context is 4096).
const CHAT_MAX_TOKENS_CAP: u32 = 4096;

/// Response header of a chat completion whose requested output limit was
/// capped to what the context leaves: the limit applied.
pub(crate) const MAX_TOKENS_CAPPED_HEADER: &str = "x-groundcite-max-tokens-capped";

#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest {
    model: Option<String>,
    messages: Vec<Message>,
    response_format: Option<ResponseFormat>,
    max_tokens: Option<u32>,
    max_completion_tokens: Option<u32>,
    stream: Option<bool>,
    n: Option<u32>,
    /// Other OpenAI parameters: accepted and ignored (see the module docs).
    #[serde(flatten)]
    _other: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize)]
struct Message {
    role: Role,
    content: Option<Content>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Role {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Parts(Vec<Part>),
}

#[derive(Debug, Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResponseFormat {
    JsonSchema { json_schema: JsonSchema },
    JsonObject,
    Text,
}

#[derive(Debug, Deserialize)]
struct JsonSchema {
    name: String,
    schema: Option<Value>,
}

impl Content {
    fn text(&self) -> Result<String, ApiError> {
        match self {
            Content::Text(t) => Ok(t.clone()),
            Content::Parts(parts) => {
                let mut out = String::new();
                for (i, p) in parts.iter().enumerate() {
                    match (p.kind.as_str(), &p.text) {
                        ("text", Some(t)) => out.push_str(t),
                        _ => {
                            return Err(ApiError::invalid(
                                "only text content parts are supported",
                                Some(format!("messages.content[{i}]")),
                            ));
                        }
                    }
                }
                Ok(out)
            }
        }
    }
}

/// The generation request: system and developer messages become the system
/// prompt; the conversation becomes the user message (a single user turn
/// verbatim, several turns labelled by role).
fn generation_request(body: &ChatRequest) -> Result<GenerationRequest, ApiError> {
    if body.n.is_some_and(|n| n != 1) {
        return Err(ApiError::invalid(
            "only n = 1 is supported",
            Some("n".into()),
        ));
    }
    let schema = match &body.response_format {
        Some(ResponseFormat::JsonSchema { json_schema }) => ResponseSchema {
            name: json_schema.name.clone(),
            schema: json_schema
                .schema
                .clone()
                .unwrap_or_else(|| json!({"type": "object"})),
        },
        Some(ResponseFormat::JsonObject) => ResponseSchema {
            name: "json_object".into(),
            schema: json!({"type": "object"}),
        },
        Some(ResponseFormat::Text) | None => {
            return Err(ApiError::invalid(
                "this endpoint serves structured outputs only: set response_format to {\"type\": \"json_schema\", …} or {\"type\": \"json_object\"}",
                Some("response_format".into()),
            ));
        }
    };
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for (i, m) in body.messages.iter().enumerate() {
        let text = match &m.content {
            Some(c) => c.text().map_err(|e| {
                ApiError::invalid(
                    e.message().to_string(),
                    Some(format!("messages[{i}].content")),
                )
            })?,
            None => String::new(),
        };
        match m.role {
            Role::System | Role::Developer => system.push(text),
            Role::User => turns.push(("User", text)),
            Role::Assistant => turns.push(("Assistant", text)),
            Role::Tool => turns.push(("Tool", text)),
        }
    }
    let user = match turns.as_slice() {
        [] => {
            return Err(ApiError::invalid(
                "at least one user message is needed",
                Some("messages".into()),
            ));
        }
        [("User", only)] => only.clone(),
        many => many
            .iter()
            .map(|(role, text)| format!("{role}: {text}"))
            .collect::<Vec<_>>()
            .join("\n\n"),
    };
    let max_tokens = match (body.max_completion_tokens, body.max_tokens) {
        (Some(0), _) => {
            return Err(ApiError::invalid(
                "max_completion_tokens must be at least 1",
                Some("max_completion_tokens".into()),
            ));
        }
        (None, Some(0)) => {
            return Err(ApiError::invalid(
                "max_tokens must be at least 1",
                Some("max_tokens".into()),
            ));
        }
        // Capped to what the context leaves in `completions`.
        (Some(n), _) | (None, Some(n)) => n,
        (None, None) => CHAT_DEFAULT_MAX_TOKENS,
    };
    Ok(GenerationRequest {
        system: system.join("\n\n"),
        user,
        schema: Some(schema),
        chunks: Vec::new(),
        native_sources: Default::default(),
        max_tokens,
        temperature: None,
        candidates: Vec::new(),
        form: Default::default(),
        min_p_answerable: None,
    })
}

pub(crate) async fn completions(
    State(state): State<AppState>,
    (tenant, request_id): Who,
    ApiJson(body): ApiJson<ChatRequest>,
) -> Result<Response, ApiError> {
    let Some(generator) = state.0.chat.clone() else {
        return Err(ApiError::new(ErrorCode::NotConfigured));
    };
    let mut request = generation_request(&body)?;
    check_text(&request.user, "messages", &state.0.limits)?;
    check_text(&request.system, "messages", &state.0.limits)?;
    let capped = cap_max_tokens(generator.as_ref(), &mut request)?;
    let Ok(permit) = state.0.generations.clone().try_acquire_owned() else {
        return Err(ApiError::overloaded(
            "every generation slot is busy; retry shortly",
            2,
        ));
    };
    let id = format!("chatcmpl-{}", request_id.0.0.replace('-', ""));
    let created = jiff::Timestamp::now().as_second();
    let started = Instant::now();
    let trace = TraceBuilder::new(&request_id.0.0, "chat")
        .tenant(tenant.name().map(str::to_string))
        .prompt(
            &request.system,
            &request.user,
            request.schema.as_ref().map(|s| &s.schema),
        )
        .provider(generator.provider())
        .options(TraceOptions {
            max_tokens: Some(request.max_tokens),
            requested_model: body.model.clone(),
            ..TraceOptions::default()
        });
    let chat = Chat {
        state,
        generator,
        request,
        trace,
        id,
        created,
        started,
    };
    if body.stream.unwrap_or(false) {
        return Ok(with_capped_header(chat.streamed(permit).await, capped));
    }
    let result = chat.generate(&mut |_| true).await;
    drop(permit);
    result.map(|r| with_capped_header(r, capped))
}

/// Caps `request.max_tokens` to what the generator's context leaves after
/// the prompt (or to [`CHAT_MAX_TOKENS_CAP`] when the generator does not
/// know its context); returns the limit applied when it was lowered. A
/// prompt that alone does not fit is 422 `limit_exceeded`.
fn cap_max_tokens(
    generator: &dyn Generator,
    request: &mut GenerationRequest,
) -> Result<Option<u32>, ApiError> {
    let room = match generator.output_room(request) {
        Ok(room) => room.unwrap_or(CHAT_MAX_TOKENS_CAP),
        Err(e) if e.kind() == ErrorKind::Config => {
            return Err(ApiError::limit_exceeded(e.message(), "messages"));
        }
        Err(e) => return Err(ApiError::from(&e)),
    };
    if request.max_tokens <= room {
        return Ok(None);
    }
    tracing::info!(
        requested = request.max_tokens,
        applied = room,
        "chat completion: max_tokens capped to what the context leaves after the prompt"
    );
    request.max_tokens = room;
    Ok(Some(room))
}

/// `response` with [`MAX_TOKENS_CAPPED_HEADER`] when the limit was capped.
fn with_capped_header(mut response: Response, capped: Option<u32>) -> Response {
    if let Some(n) = capped {
        response
            .headers_mut()
            .insert(MAX_TOKENS_CAPPED_HEADER, axum::http::HeaderValue::from(n));
    }
    response
}

struct Chat {
    state: AppState,
    generator: std::sync::Arc<dyn Generator>,
    request: GenerationRequest,
    /// The trace so far; completed when the generation ends.
    trace: TraceBuilder,
    id: String,
    created: i64,
    started: Instant,
}

/// How the generation ended, in OpenAI's terms.
struct Finished {
    content: String,
    finish_reason: &'static str,
    model: String,
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl Chat {
    /// Runs the generation (always streamed inside, so a client that goes
    /// away cancels it), calls `on_delta` with each piece of text, stores the
    /// trace, and returns the completion.
    async fn generate(
        self,
        on_delta: &mut (dyn FnMut(&str) -> bool + Send),
    ) -> Result<Response, ApiError> {
        let (id, created) = (self.id.clone(), self.created);
        let finished = self.run(on_delta).await?;
        Ok(Json(json!({
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": finished.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": finished.content, "refusal": null},
                "logprobs": null,
                "finish_reason": finished.finish_reason,
            }],
            "usage": usage(&finished),
        }))
        .into_response())
    }

    async fn run(
        self,
        on_delta: &mut (dyn FnMut(&str) -> bool + Send),
    ) -> Result<Finished, ApiError> {
        let provider = self.generator.provider();
        let trace_id = self.trace.record().trace_id.clone();
        let mut text = String::new();
        let outcome = async {
            let mut stream = self.generator.generate_stream(&self.request).await?;
            while let Some(delta) = stream.next_delta().await? {
                text.push_str(&delta);
                if !on_delta(&delta) {
                    return Err(ProviderError::new(
                        ErrorKind::Connection,
                        provider,
                        "the client went away",
                    ));
                }
            }
            stream.finish().await
        }
        .await;
        let took = self.started.elapsed();
        let (finished, error) = match outcome {
            Ok(g) => (Some(finished(g, &text, "stop")), None),
            Err(e) if e.kind() == ErrorKind::Truncated => (
                Some(Finished {
                    content: text.clone(),
                    finish_reason: "length",
                    model: e.model().unwrap_or(provider).to_string(),
                    prompt_tokens: e.usage().input_tokens.unwrap_or(0),
                    completion_tokens: e.usage().output_tokens.unwrap_or(0),
                }),
                Some(e),
            ),
            Err(e) => (None, Some(e)),
        };
        self.state.metrics().generation(
            provider,
            finished.as_ref().map(|f| f.model.as_str()),
            took,
            error
                .as_ref()
                .is_some_and(ProviderError::is_schema_parsing_error),
        );
        // The outcome as typed fields, as every generation's trace has them.
        let stop = error
            .as_ref()
            .map_or(StopReason::Stop, StopReason::of_error);
        let usage = error.as_ref().map(ProviderError::usage);
        let record = self
            .trace
            .raw_output(Some(text))
            .model(finished.as_ref().map(|f| f.model.clone()))
            .error(error.as_ref().map(ProviderError::summary))
            .stop_reason(Some(stop.as_str().to_string()))
            .tokens(
                finished
                    .as_ref()
                    .map(|f| f.prompt_tokens)
                    .or(usage.and_then(|u| u.input_tokens)),
                finished
                    .as_ref()
                    .map(|f| f.completion_tokens)
                    .or(usage.and_then(|u| u.output_tokens)),
            )
            .timings(Timings {
                generate_ms: Some(Timings::millis(took)),
                ..Timings::default()
            })
            .build();
        self.state
            .commit(record)
            .await
            .map_err(|e| e.with_trace_id(&trace_id))?;
        match (finished, error) {
            (Some(f), _) => Ok(f),
            (None, Some(e)) => Err(ApiError::from(&e).with_trace_id(&trace_id)),
            (None, None) => Err(ApiError::internal("generation ended without a result")),
        }
    }

    async fn streamed(self, permit: tokio::sync::OwnedSemaphorePermit) -> Response {
        let (tx, rx) = mpsc::unbounded_channel::<Event>();
        let (id, created) = (self.id.clone(), self.created);
        let trace_id = self.trace.record().trace_id.clone();
        let chunk = move |delta: Value, finish: Value, model: &str| {
            json!({
                "id": id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
            })
        };
        tokio::spawn(async move {
            let _permit = permit;
            let model = self.generator.provider().to_string();
            let events = tx.clone();
            let first = chunk(
                json!({"role": "assistant", "content": ""}),
                Value::Null,
                &model,
            );
            let _ = events.send(Event::default().data(first.to_string()));
            let chunk_for_deltas = chunk.clone();
            let model_for_deltas = model.clone();
            let mut on_delta = move |d: &str| {
                let c = chunk_for_deltas(json!({"content": d}), Value::Null, &model_for_deltas);
                events.send(Event::default().data(c.to_string())).is_ok()
            };
            tokio::select! {
                () = tx.closed() => {}
                done = self.run(&mut on_delta) => {
                    match done {
                        Ok(f) => {
                            let mut last = chunk(json!({}), json!(f.finish_reason), &f.model);
                            last["usage"] = usage(&f);
                            let _ = tx.send(Event::default().data(last.to_string()));
                        }
                        Err(e) => {
                            let _ = tx.send(Event::default().data(e.body().to_string()));
                        }
                    }
                    let _ = tx.send(Event::default().data("[DONE]"));
                }
            }
        });
        let stream =
            tokio_stream::StreamExt::map(UnboundedReceiverStream::new(rx), Ok::<_, Infallible>);
        super::with_trace_header(Sse::new(stream).into_response(), &trace_id)
    }
}

fn finished(g: Generation, streamed: &str, reason: &'static str) -> Finished {
    let content = match g.output {
        Output::Json(t) if streamed.is_empty() => t,
        _ => streamed.to_string(),
    };
    Finished {
        content,
        finish_reason: reason,
        model: g.model.unwrap_or_else(|| "groundcite-local".into()),
        prompt_tokens: g.usage.input_tokens.unwrap_or(0),
        completion_tokens: g.usage.output_tokens.unwrap_or(0),
    }
}

fn usage(f: &Finished) -> Value {
    json!({
        "prompt_tokens": f.prompt_tokens,
        "completion_tokens": f.completion_tokens,
        "total_tokens": f.prompt_tokens + f.completion_tokens,
    })
}
