//! `POST /v1/verify`, `/v1/parse`, `/v1/convert`: answers produced
//! elsewhere, verified with the one rule and traced.

use axum::extract::State;
use axum::response::Response;
use groundcite_core::native::{self, NativeFormat, NativeInput, anthropic};
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance, prose,
    verify_with,
};
use groundcite_store::{JsonText, TraceBuilder, TraceOptions};
use serde::Deserialize;
use serde_json::Value;

use super::{Who, check_answer, check_text, chunk_set, trace_id, warning_codes};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

/// Options every verification request may set.
#[derive(Debug, Deserialize, Default)]
pub(crate) struct Common {
    /// The user's question, copied into the contract.
    question: Option<String>,
    /// The model that produced the answer, copied into the contract.
    model: Option<String>,
    /// A trace ID of the caller's (else the request's own).
    trace_id: Option<String>,
    /// `default` or `lenient`.
    #[serde(rename = "match")]
    profile: Option<MatchProfile>,
    /// `strict` or `lenient`.
    claims: Option<ClaimPolicy>,
    /// Whatever else the body holds: refused by [`Common::check`] (serde's
    /// `deny_unknown_fields` does not work with `flatten`).
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct VerifyRequest {
    chunks: Vec<Chunk>,
    answer: GroundedAnswer,
    #[serde(flatten)]
    common: Common,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ParseRequest {
    chunks: Vec<Chunk>,
    /// The free-form answer with its citation markers.
    text: String,
    #[serde(flatten)]
    common: Common,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ConvertRequest {
    chunks: Vec<Chunk>,
    from: NativeFormat,
    /// The provider's response (for Anthropic also its SSE text, as a string).
    response: Value,
    /// The request sent to the provider, when sources were not one per chunk.
    request: Option<Value>,
    #[serde(flatten)]
    common: Common,
}

/// What every verification endpoint shares once its contract exists.
pub(crate) struct Verified<'a> {
    pub kind: &'static str,
    /// How the raw output is read back on re-verification (the trace's
    /// `answer_form`): `grounded`, `prose` or a native format's name.
    pub form: &'static str,
    pub tenant: &'a Tenant,
    pub chunks: &'a ChunkSet,
    pub raw_output: Option<String>,
    pub options: TraceOptions,
    pub claims_in: usize,
    pub provider: &'static str,
}

impl Verified<'_> {
    /// Stores the trace, counts the contract, and responds (after the commit).
    pub async fn deliver(self, state: &AppState, contract: Contract) -> Result<Response, ApiError> {
        let trace_id = contract.trace_id.clone();
        // Serialized once: the stored contract and the response are the same bytes.
        let text = JsonText::serialize(&contract).map_err(ApiError::internal)?;
        let response = super::json_text_response(&text);
        let record = TraceBuilder::new(&contract.trace_id, self.kind)
            .tenant(self.tenant.name().map(str::to_string))
            .question(contract.question.clone())
            .chunks(self.chunks.chunks())
            .raw_output(self.raw_output)
            .answer_form(Some(self.form.to_string()))
            .model(contract.model.clone())
            .provider(self.provider)
            .options(self.options)
            .warnings(warning_codes(&contract))
            .contract(Some(text))
            .build();
        state
            .commit(record)
            .await
            .map_err(|e| e.with_trace_id(&trace_id))?;
        state.metrics().contract(
            self.provider,
            contract.model.as_deref(),
            self.claims_in,
            &contract,
        );
        Ok(super::with_trace_header(response, &trace_id))
    }
}

impl Common {
    fn settings(&self, state: &AppState) -> (MatchProfile, ClaimPolicy) {
        (
            self.profile.unwrap_or(state.0.profile),
            self.claims.unwrap_or_default(),
        )
    }

    fn provenance(&mut self, request: &super::RequestId) -> Result<Provenance, ApiError> {
        Ok(Provenance {
            trace_id: trace_id(self.trace_id.take(), request)?,
            created_at: groundcite_store::now_rfc3339(),
            question: self.question.take(),
            model: self.model.take(),
        })
    }

    fn check(&self, state: &AppState) -> Result<(), ApiError> {
        if let Some(field) = self.unknown.keys().next() {
            return Err(ApiError::invalid(
                format!("unknown field {field:?}"),
                Some(field.clone()),
            ));
        }
        if let Some(q) = &self.question {
            check_text(q, "question", &state.0.limits)?;
        }
        Ok(())
    }
}

fn options(profile: MatchProfile, policy: ClaimPolicy) -> TraceOptions {
    TraceOptions {
        profile: Some(profile),
        policy: Some(policy),
        ..TraceOptions::default()
    }
}

pub(crate) async fn verify(
    State(state): State<AppState>,
    (tenant, request): Who,
    ApiJson(mut body): ApiJson<VerifyRequest>,
) -> Result<Response, ApiError> {
    body.common.check(&state)?;
    let chunks = chunk_set(body.chunks, &state.0.limits)?;
    check_answer(&body.answer, &state.0.limits)?;
    let (profile, policy) = body.common.settings(&state);
    let provenance = body.common.provenance(&request)?;
    // The stored raw output is what re-verification reads back.
    let raw = serde_json::to_string(&body.answer).map_err(ApiError::internal)?;
    let contract = verify_with(&body.answer, &chunks, profile, policy, provenance);
    Verified {
        kind: "verify",
        form: "grounded",
        tenant: &tenant,
        chunks: &chunks,
        raw_output: Some(raw),
        options: options(profile, policy),
        claims_in: body.answer.claims.len(),
        provider: "client",
    }
    .deliver(&state, contract)
    .await
}

pub(crate) async fn parse(
    State(state): State<AppState>,
    (tenant, request): Who,
    ApiJson(mut body): ApiJson<ParseRequest>,
) -> Result<Response, ApiError> {
    body.common.check(&state)?;
    check_text(&body.text, "text", &state.0.limits)?;
    let chunks = chunk_set(body.chunks, &state.0.limits)?;
    if body.text.trim().is_empty() {
        return Err(ApiError::invalid(
            "the answer text is empty",
            Some("text".into()),
        ));
    }
    let (profile, policy) = body.common.settings(&state);
    let provenance = body.common.provenance(&request)?;
    let contract = prose::verify_prose_with(&body.text, &chunks, profile, policy, provenance)?;
    let claims_in = contract.claims.len() + failed(&contract);
    Verified {
        kind: "parse",
        form: "prose",
        tenant: &tenant,
        chunks: &chunks,
        raw_output: Some(body.text),
        options: options(profile, policy),
        claims_in,
        provider: "client",
    }
    .deliver(&state, contract)
    .await
}

fn failed(c: &Contract) -> usize {
    c.warnings
        .iter()
        .filter(|w| w.code.is_verification_failure())
        .count()
}

pub(crate) async fn convert(
    State(state): State<AppState>,
    (tenant, request): Who,
    ApiJson(mut body): ApiJson<ConvertRequest>,
) -> Result<Response, ApiError> {
    body.common.check(&state)?;
    let chunks = chunk_set(body.chunks, &state.0.limits)?;
    let (profile, policy) = body.common.settings(&state);
    let provenance = body.common.provenance(&request)?;
    let bad = |field: &str, e: groundcite_core::InputError| {
        ApiError::invalid(e.message, Some(format!("{field}{}", e.path)))
    };
    let response = match (&body.response, body.from) {
        (Value::String(sse), NativeFormat::Anthropic) => {
            check_text(sse, "response", &state.0.limits)?;
            anthropic::read_response(sse).map_err(|e| bad("response", e))?
        }
        (v, _) => v.clone(),
    };
    let contract = native::convert(
        body.from,
        &response,
        body.request.as_ref(),
        &chunks,
        profile,
        policy,
        provenance,
    )
    .map_err(|(which, e)| match which {
        NativeInput::Request => bad("request", e),
        NativeInput::Response => bad("response", e),
    })?;
    let opts = TraceOptions {
        from: Some(body.from.as_str().to_string()),
        request: body.request,
        ..options(profile, policy)
    };
    let claims_in = contract.claims.len() + failed(&contract);
    Verified {
        kind: "convert",
        form: body.from.as_str(),
        tenant: &tenant,
        chunks: &chunks,
        raw_output: Some(response.to_string()),
        options: opts,
        claims_in,
        provider: "client",
    }
    .deliver(&state, contract)
    .await
}
