//! `GET /v1/traces/{id}` and `POST /v1/traces/{id}/verify`: a tenant reads
//! and re-verifies its own traces only (another tenant's ID is a 404, the
//! same as an unknown one, so IDs cannot be probed).

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use groundcite_store::{TraceRecord, validate_trace_id};
use serde_json::json;

use super::Who;
use crate::error::ApiError;
use crate::state::AppState;

async fn fetch(state: &AppState, who: &Who, id: &str) -> Result<TraceRecord, ApiError> {
    validate_trace_id(id)?;
    state
        .store()
        .get(id, who.0.name())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no trace {id:?}")))
}

pub(crate) async fn get_trace(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let record = fetch(&state, &who, &id).await?;
    Ok(super::with_trace_header(Json(record).into_response(), &id))
}

pub(crate) async fn reverify(
    State(state): State<AppState>,
    who: Who,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let record = fetch(&state, &who, &id).await?;
    let r = groundcite_store::reverify(&record)?;
    let body = json!({
        "trace_id": id,
        "same": r.same,
        "note": r.note,
        "contract": r.contract,
        "stored_contract": record.contract,
    });
    Ok(super::with_trace_header(Json(body).into_response(), &id))
}
