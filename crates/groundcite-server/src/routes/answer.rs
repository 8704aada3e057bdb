//! `POST /v1/answer`: generate with the configured provider, verify, trace;
//! as one JSON contract or as server-sent events (`claim`,
//! `claim_dropped`, then `done` with the contract, or `error`).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use groundcite_core::{Chunk, ChunkSet, ClaimOutcome, ClaimPolicy, MatchProfile, Provenance};
use groundcite_providers::pipeline::{self, AnswerError, AnswerSettings, Answered};
use groundcite_providers::{Backend, GenerationRequest};
use groundcite_store::{JsonText, Timings, TraceBuilder, TraceOptions, TraceRecord};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::{RequestId, Who, check_text, chunk_set, trace_id, warning_codes};
use crate::auth::Tenant;
use crate::error::{ApiError, ErrorCode};
use crate::extract::ApiJson;
use crate::state::AppState;

/// Highest `max_tokens` an answer request may ask for.
const ANSWER_MAX_TOKENS_CAP: u32 = 32_768;

#[derive(Debug, Deserialize)]
pub(crate) struct AnswerRequest {
    question: String,
    chunks: Vec<Chunk>,
    /// Stream events (same as `Accept: text/event-stream`).
    stream: Option<bool>,
    max_tokens: Option<u32>,
    temperature: Option<f64>,
    trace_id: Option<String>,
    #[serde(rename = "match")]
    profile: Option<MatchProfile>,
    claims: Option<ClaimPolicy>,
    #[serde(flatten)]
    unknown: BTreeMap<String, IgnoredAny>,
}

/// Everything one answer needs, owned (a streamed answer runs in its own task).
struct Job {
    state: AppState,
    backend: Backend,
    tenant: Tenant,
    chunks: ChunkSet,
    request: GenerationRequest,
    settings: AnswerSettings,
    provenance: Provenance,
    started: Instant,
}

pub(crate) async fn answer(
    State(state): State<AppState>,
    (tenant, request_id): Who,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AnswerRequest>,
) -> Result<Response, ApiError> {
    let sse = wants_sse(body.stream, &headers);
    let job = prepare(&state, tenant.0, &request_id, body, sse)?;
    let trace_id = job.provenance.trace_id.clone();
    respond(&state, trace_id, sse, true, move |on_claim| {
        job.run(on_claim)
    })
    .await
}

/// Streams verified claims to the client (`claim`, `claim_dropped`); return
/// `false` to stop (the client went away).
pub(crate) type OnClaim = Box<dyn FnMut(usize, &ClaimOutcome) -> bool + Send>;

/// Whether the client asked for server-sent events (`"stream": true` or
/// `Accept: text/event-stream`).
pub(crate) fn wants_sse(stream: Option<bool>, headers: &HeaderMap) -> bool {
    stream.unwrap_or(false)
        || headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/event-stream"))
}

/// Runs one generation job (`/v1/answer`, `/v1/ask`), in a generation slot
/// when `generates` (503 when none is free; a question the relevance gate
/// answers never reaches the model, so it takes none): as one JSON
/// response, or as server-sent events — a `claim` / `claim_dropped` event
/// per verified claim, then `done` with the contract (sent after the trace
/// is committed) or `error`. A client that disconnects drops the job, which
/// cancels the generation.
pub(crate) async fn respond<Fut>(
    state: &AppState,
    trace_id: String,
    sse: bool,
    generates: bool,
    run: impl FnOnce(OnClaim) -> Fut + Send + 'static,
) -> Result<Response, ApiError>
where
    Fut: Future<Output = Result<Response, ApiError>> + Send + 'static,
{
    let permit = if generates {
        let Ok(permit) = state.0.generations.clone().try_acquire_owned() else {
            return Err(ApiError::overloaded(
                "every generation slot is busy; retry shortly",
                2,
            ));
        };
        Some(permit)
    } else {
        None
    };
    if !sse {
        let response = run(Box::new(|_, _| true)).await;
        drop(permit);
        return response.map(|r| super::with_trace_header(r, &trace_id));
    }
    let (tx, rx) = mpsc::unbounded_channel::<Event>();
    tokio::spawn(async move {
        let _permit = permit;
        let events = tx.clone();
        let on_claim: OnClaim = Box::new(move |index: usize, outcome: &ClaimOutcome| {
            let event = match outcome {
                ClaimOutcome::Kept(c) => event("claim", &json!({"index": index, "claim": c})),
                ClaimOutcome::Dropped(w) => {
                    event("claim_dropped", &json!({"index": index, "warnings": w}))
                }
            };
            events.send(event).is_ok()
        });
        tokio::select! {
            // The client went away: dropping the job cancels the generation.
            () = tx.closed() => {}
            done = run(on_claim) => {
                let last = match done {
                    Ok(response) => match response_json(response).await {
                        Some(contract) => event("done", &contract),
                        None => event("error", &ApiError::internal("unreadable contract").body()),
                    },
                    Err(e) => event("error", &e.body()),
                };
                let _ = tx.send(last);
            }
        }
    });
    let stream =
        tokio_stream::StreamExt::map(UnboundedReceiverStream::new(rx), Ok::<_, Infallible>);
    let sse = Sse::new(stream).keep_alive(KeepAlive::default());
    Ok(super::with_trace_header(sse.into_response(), &trace_id))
}

pub(crate) fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

/// The body of a JSON response, for the `done` event.
pub(crate) async fn response_json(response: Response) -> Option<Value> {
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn prepare(
    state: &AppState,
    tenant: Tenant,
    request_id: &RequestId,
    body: AnswerRequest,
    stream: bool,
) -> Result<Job, ApiError> {
    if let Some(field) = body.unknown.keys().next() {
        return Err(ApiError::invalid(
            format!("unknown field {field:?}"),
            Some(field.clone()),
        ));
    }
    let Some(backend) = state.0.backend.clone() else {
        return Err(ApiError::new(ErrorCode::NotConfigured));
    };
    let limits = &state.0.limits;
    if body.question.trim().is_empty() {
        return Err(ApiError::invalid(
            "the question is empty",
            Some("question".into()),
        ));
    }
    check_text(&body.question, "question", limits)?;
    let chunks = chunk_set(body.chunks, limits)?;
    if chunks.is_empty() {
        return Err(ApiError::invalid(
            "no chunks: there is nothing to answer from",
            Some("chunks".into()),
        ));
    }
    let mut request = backend.request(&chunks, &body.question);
    if let Some(n) = body.max_tokens {
        if n == 0 || n > ANSWER_MAX_TOKENS_CAP {
            return Err(ApiError::invalid(
                format!("max_tokens must be 1 to {ANSWER_MAX_TOKENS_CAP}"),
                Some("max_tokens".into()),
            ));
        }
        request.max_tokens = n;
    }
    if let Some(t) = body.temperature {
        if !(0.0..=2.0).contains(&t) {
            return Err(ApiError::invalid(
                "temperature must be between 0 and 2",
                Some("temperature".into()),
            ));
        }
        request.temperature = Some(t);
    }
    let provenance = Provenance {
        trace_id: trace_id(body.trace_id, request_id)?,
        created_at: groundcite_store::now_rfc3339(),
        question: Some(body.question),
        model: None,
    };
    Ok(Job {
        state: state.clone(),
        backend,
        tenant,
        chunks,
        request,
        settings: AnswerSettings {
            profile: body.profile.unwrap_or(state.0.profile),
            policy: body.claims.unwrap_or_default(),
            stream,
        },
        provenance,
        started: Instant::now(),
    })
}

impl Job {
    /// Generates, verifies, commits the trace, and returns the response.
    async fn run(self, mut on_claim: OnClaim) -> Result<Response, ApiError> {
        let provider = self.backend.generator().provider();
        let trace_id = self.provenance.trace_id.clone();
        let result = pipeline::answer(
            self.backend.generator(),
            &self.request,
            &self.chunks,
            self.settings,
            self.provenance.clone(),
            &mut *on_claim,
        )
        .await;
        let trace = self.trace();
        let metrics = self.state.metrics();
        match result {
            Ok(answered) => {
                metrics.generation(
                    provider,
                    answered.model.as_deref(),
                    answered.generate_time,
                    answered.is_schema_parsing_error(),
                );
                let claims_in = claims_in(&answered);
                let record = fill(trace, &answered, self.started)?;
                let response = record.contract.as_ref().map(super::json_text_response);
                self.state
                    .commit(record)
                    .await
                    .map_err(|e| e.with_trace_id(&trace_id))?;
                metrics.contract(
                    provider,
                    answered.model.as_deref(),
                    claims_in,
                    &answered.contract,
                );
                Ok(response.unwrap_or_else(|| Json(answered.contract).into_response()))
            }
            Err(e @ AnswerError::Cancelled) => Err(e.into()),
            Err(AnswerError::Provider { error, raw_output }) => {
                metrics.generation(
                    provider,
                    error.model(),
                    self.started.elapsed(),
                    error.is_schema_parsing_error(),
                );
                let record = groundcite_ask::record_failure(trace, &error, raw_output)
                    .timings(Timings::total(self.started.elapsed()))
                    .build();
                self.state
                    .commit(record)
                    .await
                    .map_err(|e| e.with_trace_id(&trace_id))?;
                Err(ApiError::from(&error).with_trace_id(&trace_id))
            }
        }
    }

    /// The trace as far as it is known before generating.
    fn trace(&self) -> TraceBuilder {
        TraceBuilder::new(&self.provenance.trace_id, "answer")
            .tenant(self.tenant.name().map(str::to_string))
            .question(self.provenance.question.clone())
            .chunks(self.chunks.chunks())
            .prompt(
                &self.request.system,
                &self.request.user,
                self.request.schema.as_ref().map(|s| &s.schema),
            )
            .provider(self.backend.generator().provider())
            .options(TraceOptions {
                profile: Some(self.settings.profile),
                policy: Some(self.settings.policy),
                stream: Some(self.settings.stream),
                max_tokens: self.request.token_limit(),
                temperature: self.request.temperature,
                ..TraceOptions::default()
            })
    }
}

/// Claims the model produced: kept plus those that failed verification.
pub(crate) fn claims_in(a: &Answered) -> usize {
    a.contract.claims.len()
        + a.contract
            .warnings
            .iter()
            .filter(|w| w.code.is_verification_failure())
            .count()
}

/// The trace of a verified answer.
fn fill(trace: TraceBuilder, a: &Answered, started: Instant) -> Result<TraceRecord, ApiError> {
    let contract = JsonText::serialize(&a.contract).map_err(ApiError::internal)?;
    Ok(groundcite_ask::record_outcome(trace, a)
        .warnings(warning_codes(&a.contract))
        .contract(Some(contract))
        .timings(Timings {
            generate_ms: Some(Timings::millis(a.generate_time)),
            total_ms: Some(Timings::millis(started.elapsed())),
            input_tokens: a.usage.and_then(|u| u.input_tokens),
            output_tokens: a.usage.and_then(|u| u.output_tokens),
            ..Timings::default()
        })
        .build())
}
