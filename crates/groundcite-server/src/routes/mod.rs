//! The router and its middleware.

mod answer;
mod ask;
mod chat;
mod documents;
mod ops;
mod traces;
mod verify;
mod web;

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use groundcite_core::{Chunk, ChunkSet, GroundedAnswer, validate_trace_id};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::Tenant;
use crate::error::{ApiError, ErrorCode};
use crate::state::{AppState, Limits};

/// The ID of one request: the trace ID of what it stores, and the
/// `X-Trace-Id` response header.
#[derive(Debug, Clone)]
pub(crate) struct RequestId(pub String);

/// The service's router (no socket: tests drive it with `tower::ServiceExt`).
pub fn app(state: AppState) -> Router {
    let protected = Router::new()
        .route("/v1/ask", post(ask::ask))
        .route("/v1/info", get(web::info))
        .route("/v1/answer", post(answer::answer))
        .route("/v1/verify", post(verify::verify))
        .route("/v1/parse", post(verify::parse))
        .route("/v1/convert", post(verify::convert))
        .route("/v1/traces/{trace_id}", get(traces::get_trace))
        .route("/v1/chunks/{chunk_id}/document", get(documents::document))
        .route("/v1/traces/{trace_id}/verify", post(traces::reverify))
        .route("/v1/chat/completions", post(chat::completions))
        .route_layer(middleware::from_fn_with_state(state.clone(), guard))
        .route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    let public = Router::new()
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .route("/openapi.json", get(ops::openapi))
        // The web app's shell and assets are public: they hold no data; the
        // page fetches everything from /v1 with the user's key.
        .route("/", get(web::index))
        .route("/traces/{trace_id}", get(web::trace_page))
        .route("/assets/{file}", get(web::asset));
    let mut router = protected
        .merge(public)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(
            state.0.limits.max_body_bytes,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), observe));
    if !state.0.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> = state
            .0
            .cors_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok())
            .collect();
        router = router.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::POST])
                .allow_headers([
                    axum::http::header::AUTHORIZATION,
                    axum::http::header::CONTENT_TYPE,
                    axum::http::header::ACCEPT,
                ])
                .expose_headers([
                    axum::http::HeaderName::from_static("x-trace-id"),
                    axum::http::HeaderName::from_static(chat::MAX_TOKENS_CAPPED_HEADER),
                ]),
        );
    }
    router.with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint; see /openapi.json")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(ErrorCode::MethodNotAllowed)
}

/// Request ID, in-flight gauge, request metrics and the access log line.
async fn observe(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let method = req.method().as_str().to_string();
    let id = uuid::Uuid::now_v7().to_string();
    req.extensions_mut().insert(RequestId(id.clone()));
    let metrics = state.metrics();
    metrics.in_flight().inc();
    let mut response = next.run(req).await;
    metrics.in_flight().dec();
    let took = started.elapsed();
    let status = response.status().as_u16();
    let headers = response.headers_mut();
    if !headers.contains_key("x-trace-id")
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        headers.insert("x-trace-id", v);
    }
    let trace_id = headers
        .get("x-trace-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or(&id)
        .to_string();
    metrics.http(&route, &method, status, took);
    // Never log headers or bodies: they carry keys and user content.
    tracing::info!(
        trace_id = %trace_id,
        method = %method,
        route = %route,
        status,
        took_ms = took.as_secs_f64() * 1000.0,
        "request"
    );
    response
}

/// API key → tenant; 401 otherwise.
async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    match state.0.keys.authenticate(req.headers()) {
        Some(tenant) => {
            req.extensions_mut().insert(tenant);
            next.run(req).await
        }
        None => ApiError::unauthorized().into_response(),
    }
}

/// The concurrency limit (503 + Retry-After when saturated) and the
/// request timeout.
async fn guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Ok(_permit) = state.0.requests.clone().try_acquire_owned() else {
        return ApiError::overloaded("the service is at its concurrency limit; retry shortly", 1)
            .into_response();
    };
    match tokio::time::timeout(state.0.limits.request_timeout, next.run(req)).await {
        Ok(r) => r,
        Err(_) => ApiError::new(ErrorCode::Timeout)
            .detail(format!(
                "the request took longer than {} s",
                state.0.limits.request_timeout.as_secs()
            ))
            .into_response(),
    }
}

/// The request's tenant and ID, as handlers take them.
pub(crate) type Who = (Extension<Tenant>, Extension<RequestId>);

/// The chunks as a validated set within the limits.
pub(crate) fn chunk_set(chunks: Vec<Chunk>, limits: &Limits) -> Result<ChunkSet, ApiError> {
    if chunks.len() > limits.max_chunks {
        return Err(ApiError::new(ErrorCode::TooManyChunks).detail(format!(
            "{} chunks; the service accepts at most {}",
            chunks.len(),
            limits.max_chunks
        )));
    }
    if let Some((i, c)) = chunks
        .iter()
        .enumerate()
        .find(|(_, c)| c.content.len() > limits.max_chunk_bytes)
    {
        return Err(limit(
            format!(
                "chunk {:?} has {} bytes of content; the limit is {}",
                c.chunk_id,
                c.content.len(),
                limits.max_chunk_bytes
            ),
            format!("chunks[{i}].content"),
        ));
    }
    ChunkSet::new(chunks).map_err(|e| {
        ApiError::invalid(
            e.message,
            Some(if e.path.is_empty() {
                "chunks".to_string()
            } else {
                format!("chunks{}", e.path)
            }),
        )
    })
}

/// A 422 `limit_exceeded` at `path`.
pub(crate) fn limit(message: String, path: String) -> ApiError {
    ApiError::limit_exceeded(message, path)
}

/// The answer within the claim, citation, quote and text limits.
pub(crate) fn check_answer(answer: &GroundedAnswer, limits: &Limits) -> Result<(), ApiError> {
    if answer.claims.len() > limits.max_claims {
        return Err(limit(
            format!(
                "{} claims; the limit is {}",
                answer.claims.len(),
                limits.max_claims
            ),
            "answer.claims".into(),
        ));
    }
    for (i, claim) in answer.claims.iter().enumerate() {
        if claim.text.chars().count() > limits.max_claim_chars {
            return Err(limit(
                format!(
                    "claim text longer than {} characters",
                    limits.max_claim_chars
                ),
                format!("answer.claims[{i}].text"),
            ));
        }
        if claim.citations.len() > limits.max_citations {
            return Err(limit(
                format!(
                    "{} citations; the limit is {} per claim",
                    claim.citations.len(),
                    limits.max_citations
                ),
                format!("answer.claims[{i}].citations"),
            ));
        }
        for (j, c) in claim.citations.iter().enumerate() {
            if c.quote.chars().count() > limits.max_quote_chars {
                return Err(limit(
                    format!("quote longer than {} characters", limits.max_quote_chars),
                    format!("answer.claims[{i}].citations[{j}].quote"),
                ));
            }
        }
    }
    Ok(())
}

/// A text field within the text limit.
pub(crate) fn check_text(text: &str, field: &str, limits: &Limits) -> Result<(), ApiError> {
    if text.len() > limits.max_text_bytes {
        return Err(limit(
            format!(
                "{field} has {} bytes; the limit is {}",
                text.len(),
                limits.max_text_bytes
            ),
            field.to_string(),
        ));
    }
    Ok(())
}

/// The trace ID: the client's (validated) or the request's own.
pub(crate) fn trace_id(client: Option<String>, request: &RequestId) -> Result<String, ApiError> {
    match client {
        Some(id) => {
            validate_trace_id(&id)?;
            Ok(id)
        }
        None => Ok(request.0.clone()),
    }
}

/// A JSON response of `text` as it is (the contract exactly as stored).
pub(crate) fn json_text_response(text: &groundcite_store::JsonText) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        text.as_str().to_owned(),
    )
        .into_response()
}

/// A JSON response carrying `X-Trace-Id`.
pub(crate) fn with_trace_header(mut response: Response, trace_id: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(trace_id) {
        response.headers_mut().insert("x-trace-id", v);
    }
    response
}

/// Warning codes of a contract, as the trace stores them.
pub(crate) fn warning_codes(c: &groundcite_core::Contract) -> Vec<String> {
    c.warnings
        .iter()
        .map(|w| w.code.as_str().to_string())
        .collect()
}
