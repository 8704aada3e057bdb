//! `POST /v1/ask`: the whole pipeline over the service's own corpus
//! (`groundcite_ask`): retrieve, relevance gate, generate, verify, trace;
//! as one JSON contract or as server-sent events, exactly like
//! `/v1/answer` (`claim`, `claim_dropped`, then `done` or `error`).
//!
//! Without a corpus (`groundcite serve` started without `--docs`) it answers
//! 409 `no_corpus`: a client error about this deployment, not a 5xx that
//! would page someone.

use std::collections::BTreeMap;
use std::time::Instant;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use groundcite_ask::{AskError, AskSettings, Failure, MAX_TOP_K, Retrieval};
use groundcite_core::{ClaimPolicy, MatchProfile, Provenance};
use groundcite_providers::pipeline::AnswerError;
use groundcite_store::{Timings, TraceOptions};
use serde::Deserialize;
use serde::de::IgnoredAny;

use super::answer::{OnClaim, claims_in, respond, wants_sse};
use super::{Who, check_text, trace_id};
use crate::auth::Tenant;
use crate::error::{ApiError, ErrorCode};
use crate::extract::ApiJson;
use crate::state::{AppState, Corpus, CorpusSource};

#[derive(Debug, Deserialize)]
pub(crate) struct AskRequest {
    question: String,
    /// Stream events (same as `Accept: text/event-stream`).
    stream: Option<bool>,
    /// Chunks to retrieve (default: the service's).
    top_k: Option<usize>,
    trace_id: Option<String>,
    #[serde(rename = "match")]
    profile: Option<MatchProfile>,
    claims: Option<ClaimPolicy>,
    #[serde(flatten)]
    unknown: BTreeMap<String, IgnoredAny>,
}

/// 409 `no_corpus`.
pub(crate) fn no_corpus() -> ApiError {
    ApiError::new(ErrorCode::NoCorpus)
}

/// One question, owned (a streamed answer runs in its own task).
struct Job {
    state: AppState,
    corpus: Corpus,
    tenant: Tenant,
    question: String,
    settings: AskSettings,
    provenance: Provenance,
    started: Instant,
}

pub(crate) async fn ask(
    State(state): State<AppState>,
    (tenant, request_id): Who,
    headers: HeaderMap,
    ApiJson(body): ApiJson<AskRequest>,
) -> Result<Response, ApiError> {
    let sse = wants_sse(body.stream, &headers);
    let job = prepare(&state, tenant.0, &request_id, body, sse)?;
    let trace_id = job.provenance.trace_id.clone();
    // Retrieval and the gate come first: a question the gate answers takes
    // no generation slot, so off-topic traffic cannot crowd out answers.
    let retrieval = job.retrieve().await?;
    let generates = retrieval.gate_passed();
    respond(&state, trace_id, sse, generates, move |on_claim| {
        job.run(retrieval, on_claim)
    })
    .await
}

fn prepare(
    state: &AppState,
    tenant: Tenant,
    request_id: &super::RequestId,
    body: AskRequest,
    stream: bool,
) -> Result<Job, ApiError> {
    if let Some(field) = body.unknown.keys().next() {
        return Err(ApiError::invalid(
            format!("unknown field {field:?}"),
            Some(field.clone()),
        ));
    }
    if body.question.trim().is_empty() {
        return Err(ApiError::invalid(
            "the question is empty",
            Some("question".into()),
        ));
    }
    check_text(&body.question, "question", &state.0.limits)?;
    if let Some(k) = body.top_k
        && (k == 0 || k > MAX_TOP_K)
    {
        return Err(ApiError::invalid(
            format!("top_k must be 1 to {MAX_TOP_K}"),
            Some("top_k".into()),
        ));
    }
    let trace_id = trace_id(body.trace_id, request_id)?;
    let Some(corpus) = state.0.corpus.clone() else {
        return Err(no_corpus());
    };
    let mut settings = corpus.settings;
    settings.top_k = body.top_k.unwrap_or(settings.top_k);
    settings.profile = body.profile.unwrap_or(settings.profile);
    settings.policy = body.claims.unwrap_or(settings.policy);
    settings.stream = stream;
    settings
        .validate()
        .map_err(|m| ApiError::invalid(m.to_string(), Some("top_k".into())))?;
    Ok(Job {
        state: state.clone(),
        corpus,
        tenant,
        provenance: Provenance {
            trace_id,
            created_at: groundcite_store::now_rfc3339(),
            question: Some(body.question.clone()),
            model: None,
        },
        question: body.question,
        settings,
        started: Instant::now(),
    })
}

impl Job {
    /// Retrieves the chunks and applies the relevance gate.
    async fn retrieve(&self) -> Result<Retrieval, ApiError> {
        // Searching reads the index from disk (memory-mapped): off the
        // async workers.
        let source = self.corpus.source.clone();
        let embed = self.corpus.embed.clone();
        let (question, settings) = (self.question.clone(), self.settings);
        tokio::task::spawn_blocking(move || match source {
            CorpusSource::Index(index) => {
                groundcite_ask::retrieve(&index, embed.as_deref(), &question, &settings)
            }
            CorpusSource::Retriever(r) => groundcite_ask::retrieve_external(
                r.as_ref(),
                embed.as_deref(),
                &question,
                &settings,
            ),
        })
        .await?
        .map_err(|e| ApiError::from(e).with_trace_id(&self.provenance.trace_id))
    }

    /// Generates (when the gate passed), verifies, commits the trace, and
    /// returns the response.
    async fn run(self, retrieval: Retrieval, mut on_claim: OnClaim) -> Result<Response, ApiError> {
        let trace_id = self.provenance.trace_id.clone();
        // Kept for the trace of a failed generation (`answer` consumes it).
        let kept = retrieval.clone();
        let backend = self.state.0.backend.as_ref();
        let result = groundcite_ask::answer(
            retrieval,
            backend,
            &self.question,
            &self.settings,
            self.provenance.clone(),
            &mut *on_claim,
        )
        .await;
        let metrics = self.state.metrics();
        let tenant = self.tenant.name().map(str::to_string);
        match result {
            Ok(mut asked) => {
                // Quotes of PDF chunks get their rectangles on the page (the
                // contract's optional `location`; a small file read).
                // An external retriever has no page layout.
                if let CorpusSource::Index(index) = &self.corpus.source {
                    index.attach_locations(&mut asked.contract);
                }
                let model = asked.answered.as_ref().and_then(|a| a.model.clone());
                let claims = match &asked.answered {
                    Some(a) => {
                        metrics.generation(
                            &asked.provider,
                            a.model.as_deref(),
                            a.generate_time,
                            a.is_schema_parsing_error(),
                        );
                        claims_in(a)
                    }
                    None => 0,
                };
                let mut record = asked.trace_record(
                    &trace_id,
                    "ask",
                    &self.question,
                    &self.settings,
                    self.options(),
                );
                record.tenant = tenant;
                record.timings.total_ms = Some(Timings::millis(self.started.elapsed()));
                self.state
                    .commit(record)
                    .await
                    .map_err(|e| e.with_trace_id(&trace_id))?;
                metrics.contract(&asked.provider, model.as_deref(), claims, &asked.contract);
                Ok(Json(asked.contract).into_response())
            }
            Err(AskError::Answer(AnswerError::Provider { error, raw_output })) => {
                let provider = backend.map_or("none", |b| b.generator().provider());
                metrics.generation(
                    provider,
                    error.model(),
                    self.started.elapsed(),
                    error.is_schema_parsing_error(),
                );
                let mut record = kept.failed_trace_record(
                    &trace_id,
                    "ask",
                    &self.question,
                    &self.settings,
                    Failure {
                        provider,
                        error: &error,
                        raw_output,
                    },
                    self.options(),
                );
                record.tenant = tenant;
                record.timings.total_ms = Some(Timings::millis(self.started.elapsed()));
                self.state
                    .commit(record)
                    .await
                    .map_err(|e| e.with_trace_id(&trace_id))?;
                Err(ApiError::from(&error).with_trace_id(&trace_id))
            }
            // As before: a cancelled answer and out-of-range settings name
            // no trace.
            Err(e @ (AskError::Answer(AnswerError::Cancelled) | AskError::Settings(_))) => {
                Err(e.into())
            }
            Err(e) => Err(ApiError::from(e).with_trace_id(&trace_id)),
        }
    }

    /// The trace's options beyond what `groundcite_ask` records.
    fn options(&self) -> TraceOptions {
        let mut o = TraceOptions {
            profile: Some(self.settings.profile),
            policy: Some(self.settings.policy),
            stream: Some(self.settings.stream),
            ..TraceOptions::default()
        };
        o.merge(self.corpus.trace_options.clone());
        o
    }
}
