//! Health, readiness, metrics and the OpenAPI document (no API key).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::state::AppState;

/// The process is up.
pub(crate) async fn healthz() -> Response {
    axum::Json(json!({"status": "ok"})).into_response()
}

/// The store answers and warm-up is done.
pub(crate) async fn readyz(State(state): State<AppState>) -> Response {
    if !state.is_ready() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"status": "starting"})),
        )
            .into_response();
    }
    match state.store().ping().await {
        Ok(()) => axum::Json(json!({"status": "ready"})).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: trace store unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(json!({"status": "trace_store_unavailable"})),
            )
                .into_response()
        }
    }
}

/// Prometheus text format.
pub(crate) async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics().render(),
    )
        .into_response()
}

/// The OpenAPI 3.1 document.
pub(crate) async fn openapi() -> Response {
    axum::Json(crate::openapi::document()).into_response()
}
