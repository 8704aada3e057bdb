//! One error shape for every endpoint: `{"error": {"code", "message",
//! "trace_id"?, "path"?}}` with a stable `code`. 5xx bodies carry no
//! internals: the details go to the log under the trace ID.
//!
//! Every code is an [`ErrorCode`] with one HTTP status and one message of
//! its own. An error that carries request-specific detail (which value,
//! which limit, which trace) sends that detail as its message instead; the
//! code's status never changes.

use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use groundcite_ask::AskError;
use groundcite_core::TraceIdError;
use groundcite_core::prose::CitationFormatError;
use groundcite_providers::pipeline::AnswerError;
use groundcite_providers::{ErrorKind, ProviderError};
use groundcite_store::{ReverifyError, StoreError};
use serde::Serialize;

/// The stable `code` of an error response: one HTTP status and one
/// message each. Serialized as its snake_case name (`"not_configured"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 401: no valid API key.
    Unauthorized,
    /// 400: the body is not JSON.
    MalformedJson,
    /// 422: JSON of the wrong shape or an unacceptable value (with `path`).
    InvalidRequest,
    /// 422: a value is larger than the service accepts (with `path`).
    LimitExceeded,
    /// 413: the body is larger than the service accepts.
    BodyTooLarge,
    /// 413: more chunks than the service accepts.
    TooManyChunks,
    /// 415: the body is not sent as JSON.
    UnsupportedMediaType,
    /// 404: no such endpoint, asset or trace (of this tenant).
    NotFound,
    /// 405: the endpoint does not take that method.
    MethodNotAllowed,
    /// 409: the client's trace ID is taken.
    DuplicateTraceId,
    /// 422: a free-form answer has no citation this service can read.
    NoCitations,
    /// 501: the endpoint needs a model this service was started without.
    NotConfigured,
    /// 409: `/v1/ask` on a service started without a corpus.
    NoCorpus,
    /// 503 with `Retry-After`: every request or generation slot is busy.
    Overloaded,
    /// 503: the request ran past the request timeout.
    Timeout,
    /// 503: the trace could not be stored, so no answer is returned.
    TraceStoreUnavailable,
    /// 502: the answer provider failed.
    ProviderError,
    /// 504: the answer provider timed out.
    ProviderTimeout,
    /// 503 with `Retry-After`: the answer provider kept failing and its
    /// circuit breaker is open, so the request was not sent to it.
    ProviderUnavailable,
    /// 422: the answer provider cannot take this request.
    ProviderRejectedRequest,
    /// 502: the search service `/v1/ask` retrieves chunks from failed.
    RetrieverError,
    /// 409: a stored trace cannot be re-verified.
    TraceNotVerifiable,
    /// 400: the client went away before the answer was complete.
    Cancelled,
    /// 500: a bug or an unexpected failure (details in the log only).
    Internal,
}

impl ErrorCode {
    /// Every code, in the order the documentation lists them.
    pub const ALL: [ErrorCode; 24] = [
        ErrorCode::Unauthorized,
        ErrorCode::MalformedJson,
        ErrorCode::InvalidRequest,
        ErrorCode::LimitExceeded,
        ErrorCode::BodyTooLarge,
        ErrorCode::TooManyChunks,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::DuplicateTraceId,
        ErrorCode::NoCitations,
        ErrorCode::NotConfigured,
        ErrorCode::NoCorpus,
        ErrorCode::Overloaded,
        ErrorCode::Timeout,
        ErrorCode::TraceStoreUnavailable,
        ErrorCode::ProviderError,
        ErrorCode::ProviderTimeout,
        ErrorCode::ProviderUnavailable,
        ErrorCode::ProviderRejectedRequest,
        ErrorCode::RetrieverError,
        ErrorCode::TraceNotVerifiable,
        ErrorCode::Cancelled,
        ErrorCode::Internal,
    ];

    /// The code as sent (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::MalformedJson => "malformed_json",
            ErrorCode::InvalidRequest => "invalid_request",
            ErrorCode::LimitExceeded => "limit_exceeded",
            ErrorCode::BodyTooLarge => "body_too_large",
            ErrorCode::TooManyChunks => "too_many_chunks",
            ErrorCode::UnsupportedMediaType => "unsupported_media_type",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::DuplicateTraceId => "duplicate_trace_id",
            ErrorCode::NoCitations => "no_citations",
            ErrorCode::NotConfigured => "not_configured",
            ErrorCode::NoCorpus => "no_corpus",
            ErrorCode::Overloaded => "overloaded",
            ErrorCode::Timeout => "timeout",
            ErrorCode::TraceStoreUnavailable => "trace_store_unavailable",
            ErrorCode::ProviderError => "provider_error",
            ErrorCode::ProviderTimeout => "provider_timeout",
            ErrorCode::ProviderUnavailable => "provider_unavailable",
            ErrorCode::ProviderRejectedRequest => "provider_rejected_request",
            ErrorCode::RetrieverError => "retriever_error",
            ErrorCode::TraceNotVerifiable => "trace_not_verifiable",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Internal => "internal",
        }
    }

    /// The code's one HTTP status.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::MalformedJson | ErrorCode::Cancelled => StatusCode::BAD_REQUEST,
            ErrorCode::InvalidRequest
            | ErrorCode::LimitExceeded
            | ErrorCode::NoCitations
            | ErrorCode::ProviderRejectedRequest => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::BodyTooLarge | ErrorCode::TooManyChunks => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::DuplicateTraceId | ErrorCode::NoCorpus | ErrorCode::TraceNotVerifiable => {
                StatusCode::CONFLICT
            }
            ErrorCode::NotConfigured => StatusCode::NOT_IMPLEMENTED,
            ErrorCode::Overloaded
            | ErrorCode::Timeout
            | ErrorCode::TraceStoreUnavailable
            | ErrorCode::ProviderUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::ProviderError | ErrorCode::RetrieverError => StatusCode::BAD_GATEWAY,
            ErrorCode::ProviderTimeout => StatusCode::GATEWAY_TIMEOUT,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The code's one message: what happened and what to do. Sent as the
    /// error's `message` unless the error carries request-specific detail.
    pub fn message(self) -> &'static str {
        match self {
            ErrorCode::Unauthorized => {
                "a valid API key is required: send `Authorization: Bearer <key>`"
            }
            ErrorCode::MalformedJson => "the request body is not valid JSON",
            ErrorCode::InvalidRequest => {
                "the request does not have the expected shape or values; `path` names the offending value"
            }
            ErrorCode::LimitExceeded => {
                "a value is larger than the service accepts; `path` names it (see limits in the OpenAPI document)"
            }
            ErrorCode::BodyTooLarge => {
                "the request body is larger than the service accepts (see limits in the OpenAPI document)"
            }
            ErrorCode::TooManyChunks => {
                "more chunks than the service accepts in one request (see limits in the OpenAPI document)"
            }
            ErrorCode::UnsupportedMediaType => {
                "send the body as JSON with `Content-Type: application/json`"
            }
            ErrorCode::NotFound => "no such endpoint or resource; see /openapi.json",
            ErrorCode::MethodNotAllowed => {
                "this endpoint does not accept that method; see /openapi.json"
            }
            ErrorCode::DuplicateTraceId => {
                "a trace with this trace_id already exists; send a new trace_id or none"
            }
            ErrorCode::NoCitations => {
                "the answer text has no citation this service can read against the chunks"
            }
            ErrorCode::NotConfigured => {
                "this service runs without the model this endpoint needs: /v1/answer and /v1/ask need an answer provider (start `groundcite serve` without --no-model), /v1/chat/completions the embedded model (--provider local)"
            }
            ErrorCode::NoCorpus => {
                "this service has no document corpus: start `groundcite serve` with --docs DIR (or [ask] docs) to ask questions; /v1/answer, /v1/verify and /v1/parse take chunks in the request"
            }
            ErrorCode::Overloaded => "the service is busy; retry after Retry-After seconds",
            ErrorCode::Timeout => "the request took longer than the service's request timeout",
            ErrorCode::TraceStoreUnavailable => {
                "the trace could not be stored, so no answer is returned; retry later"
            }
            ErrorCode::ProviderError => {
                "the answer provider failed (the message gives its status and request ID, never its body)"
            }
            ErrorCode::ProviderTimeout => "the answer provider timed out",
            ErrorCode::ProviderUnavailable => {
                "the answer provider is failing, so the service is not sending it requests for now; retry after Retry-After seconds"
            }
            ErrorCode::ProviderRejectedRequest => {
                "the answer provider cannot take this request as configured"
            }
            ErrorCode::RetrieverError => {
                "the search service this service retrieves chunks from failed; the service log has the details under this request's trace ID"
            }
            ErrorCode::TraceNotVerifiable => "this trace cannot be re-verified",
            ErrorCode::Cancelled => "the client went away",
            ErrorCode::Internal => {
                "internal error; the service log has the details under this request's trace ID"
            }
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error response.
#[derive(Debug, Clone)]
pub struct ApiError {
    code: ErrorCode,
    /// Request-specific detail, sent instead of the code's own message.
    detail: Option<String>,
    path: Option<String>,
    trace_id: Option<String>,
    retry_after: Option<u64>,
}

#[derive(Serialize)]
struct Body<'a> {
    error: Inner<'a>,
}

#[derive(Serialize)]
struct Inner<'a> {
    code: ErrorCode,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<&'a str>,
}

impl ApiError {
    /// An error with `code`, its status and its own message.
    pub fn new(code: ErrorCode) -> ApiError {
        ApiError {
            code,
            detail: None,
            path: None,
            trace_id: None,
            retry_after: None,
        }
    }

    /// The same error, with request-specific detail as its message.
    pub fn detail(mut self, detail: impl Into<String>) -> ApiError {
        self.detail = Some(detail.into());
        self
    }

    /// The same error, naming the JSON path of the offending value
    /// (dropped when empty or the root).
    pub fn at(mut self, path: impl Into<String>) -> ApiError {
        self.path = Some(path.into()).filter(|p| !p.is_empty() && p != ".");
        self
    }

    /// 422 `invalid_request`: well-formed JSON that is not acceptable;
    /// `path` is the JSON path of the offending value, when known.
    pub fn invalid(message: impl Into<String>, path: Option<String>) -> ApiError {
        let e = ApiError::new(ErrorCode::InvalidRequest).detail(message);
        match path {
            Some(p) => e.at(p),
            None => e,
        }
    }

    /// 422 `limit_exceeded`: a value is larger than the service accepts.
    pub fn limit_exceeded(message: impl Into<String>, path: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::LimitExceeded)
            .detail(message)
            .at(path)
    }

    /// 400 `malformed_json`: the body is not JSON.
    pub fn malformed(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::MalformedJson).detail(message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(ErrorCode::NotFound).detail(message)
    }

    /// 401 `unauthorized`.
    pub fn unauthorized() -> ApiError {
        ApiError::new(ErrorCode::Unauthorized)
    }

    /// 503 `overloaded` with `Retry-After`; `message` says which limit.
    pub fn overloaded(message: impl Into<String>, retry_after_secs: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after_secs),
            ..ApiError::new(ErrorCode::Overloaded).detail(message)
        }
    }

    /// 500 `internal` with the code's fixed message; `detail` is logged,
    /// never sent.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %detail, "internal error");
        ApiError::new(ErrorCode::Internal)
    }

    /// The same error, naming the request's trace ID.
    pub fn with_trace_id(mut self, trace_id: &str) -> ApiError {
        self.trace_id = Some(trace_id.to_string());
        self
    }

    /// The HTTP status (the code's).
    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The message sent to the client: the detail, else the code's own.
    pub fn message(&self) -> &str {
        self.detail.as_deref().unwrap_or(self.code.message())
    }

    /// The body as a JSON value (for SSE `error` events).
    pub fn body(&self) -> serde_json::Value {
        serde_json::to_value(Body {
            error: Inner {
                code: self.code,
                message: self.message(),
                path: self.path.as_deref(),
                trace_id: self.trace_id.as_deref(),
            },
        })
        .unwrap_or(serde_json::Value::Null)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status().as_u16(),
            self.code,
            self.message()
        )
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// A client's trace ID that is not acceptable: 422 at `trace_id`.
impl From<TraceIdError> for ApiError {
    fn from(e: TraceIdError) -> ApiError {
        ApiError::invalid(e.to_string(), Some("trace_id".into()))
    }
}

/// Reading the trace store: a taken ID is 409 `duplicate_trace_id`, an
/// unacceptable one 422 at `trace_id`, anything else 500 (logged). A failed
/// commit is 503 `trace_store_unavailable` instead: see `AppState::commit`.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        match e {
            StoreError::Duplicate { trace_id } => ApiError::new(ErrorCode::DuplicateTraceId)
                .detail(format!(
                    "a trace with ID {trace_id:?} already exists; send a new trace_id or none"
                )),
            e @ StoreError::InvalidTraceId(_) => {
                ApiError::invalid(e.to_string(), Some("trace_id".into()))
            }
            e => ApiError::internal(e),
        }
    }
}

/// A stored trace that cannot be re-verified: 409 `trace_not_verifiable`.
impl From<ReverifyError> for ApiError {
    fn from(e: ReverifyError) -> ApiError {
        ApiError::new(ErrorCode::TraceNotVerifiable)
            .detail(format!("this trace cannot be re-verified: {e}"))
    }
}

/// A free-form answer without readable citations: 422 `no_citations`.
impl From<CitationFormatError> for ApiError {
    fn from(e: CitationFormatError) -> ApiError {
        ApiError::new(ErrorCode::NoCitations).detail(e.to_string())
    }
}

/// 502 `provider_error` (504 `provider_timeout` for timeouts, 422
/// `provider_rejected_request` for a request the provider cannot take, 503
/// `provider_unavailable` with `Retry-After` — the time until the breaker's
/// next probe, rounded up — while the provider's circuit breaker is open):
/// what failed, never the provider's raw body.
impl From<&ProviderError> for ApiError {
    fn from(e: &ProviderError) -> ApiError {
        let code = match e.kind() {
            ErrorKind::Timeout => ErrorCode::ProviderTimeout,
            ErrorKind::Config => ErrorCode::ProviderRejectedRequest,
            ErrorKind::CircuitOpen => ErrorCode::ProviderUnavailable,
            _ => ErrorCode::ProviderError,
        };
        let retry_after = (code == ErrorCode::ProviderUnavailable).then(|| {
            e.retry_after()
                .map_or(1, |d| d.as_secs() + u64::from(d.subsec_nanos() > 0))
                .max(1)
        });
        ApiError {
            retry_after,
            ..ApiError::new(code).detail(e.to_string())
        }
    }
}

/// As for `&ProviderError`.
impl From<ProviderError> for ApiError {
    fn from(e: ProviderError) -> ApiError {
        ApiError::from(&e)
    }
}

/// A cancelled answer is 400 `cancelled`; a provider failure as
/// [`ProviderError`] maps.
impl From<AnswerError> for ApiError {
    fn from(e: AnswerError) -> ApiError {
        match e {
            AnswerError::Cancelled => ApiError::new(ErrorCode::Cancelled),
            AnswerError::Provider { error, .. } => ApiError::from(&error),
        }
    }
}

/// `/v1/ask`: out-of-range settings are 422, no model 501
/// `not_configured`, a generation failure as [`AnswerError`] maps, a
/// failing search service 502 `retriever_error` (its kind in the message,
/// the rest logged); a failing index or embedding model is 500 (logged).
impl From<AskError> for ApiError {
    fn from(e: AskError) -> ApiError {
        match e {
            AskError::Settings(m) => ApiError::invalid(m.to_string(), None),
            AskError::NoBackend => ApiError::new(ErrorCode::NotConfigured),
            AskError::Answer(e) => ApiError::from(e),
            AskError::Retriever(e) => {
                // The message never holds a password or key (RetrieverError).
                tracing::error!(retriever = e.retriever, error = %e.message, "search service failed");
                ApiError::new(ErrorCode::RetrieverError).detail(format!(
                    "the search service ({}) could not be searched; the service log has the details under this request's trace ID",
                    e.retriever
                ))
            }
            e @ (AskError::Index(_) | AskError::Chunks(_) | AskError::Embedding(_)) => {
                ApiError::internal(e)
            }
        }
    }
}

/// A blocking task that panicked or was cancelled: 500 (logged).
impl From<tokio::task::JoinError> for ApiError {
    fn from(e: tokio::task::JoinError) -> ApiError {
        ApiError::internal(e)
    }
}

/// Reading the request body: 413 `body_too_large` past the body limit,
/// else 400 `malformed_json`.
impl From<BytesRejection> for ApiError {
    fn from(e: BytesRejection) -> ApiError {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::new(ErrorCode::BodyTooLarge)
        } else {
            ApiError::malformed(format!("the request body could not be read: {e}"))
        }
    }
}

/// A body that failed to parse (the second, path-tracking parse): 400
/// `malformed_json` for bytes that are not JSON, 422 `invalid_request` at
/// the JSON path for JSON of the wrong shape.
impl From<serde_path_to_error::Error<serde_json::Error>> for ApiError {
    fn from(e: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() || inner.is_io() {
            ApiError::malformed(format!("the request body is not valid JSON: {inner}"))
        } else {
            ApiError::invalid(
                format!("the request body does not have the expected shape: {inner}"),
                Some(path),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_serializes_to_its_name() {
        for code in ErrorCode::ALL {
            assert_eq!(
                serde_json::to_value(code).expect("serialize"),
                serde_json::Value::String(code.as_str().to_string())
            );
            assert_eq!(code.to_string(), code.as_str());
        }
        let names: std::collections::BTreeSet<_> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn the_body_carries_the_detail_or_the_codes_own_message() {
        let e = ApiError::new(ErrorCode::NotConfigured).with_trace_id("t-1");
        assert_eq!(e.status(), StatusCode::NOT_IMPLEMENTED);
        let body = e.body();
        assert_eq!(body["error"]["code"], "not_configured");
        assert_eq!(body["error"]["message"], ErrorCode::NotConfigured.message());
        assert_eq!(body["error"]["trace_id"], "t-1");
        assert!(body["error"].get("path").is_none());

        let e = ApiError::limit_exceeded("too long", "answer.claims[0].text");
        let body = e.body();
        assert_eq!(e.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["error"]["message"], "too long");
        assert_eq!(body["error"]["path"], "answer.claims[0].text");
        assert!(ApiError::invalid("x", Some(".".into())).body()["error"]["path"].is_null());
    }

    #[test]
    fn store_errors_keep_their_statuses() {
        let dup = ApiError::from(StoreError::Duplicate {
            trace_id: "t".into(),
        });
        assert_eq!(
            (dup.status(), dup.code()),
            (StatusCode::CONFLICT, ErrorCode::DuplicateTraceId)
        );
        let bad = ApiError::from(StoreError::InvalidTraceId("a b".into()));
        assert_eq!(bad.code(), ErrorCode::InvalidRequest);
        assert_eq!(bad.body()["error"]["path"], "trace_id");
        let other = ApiError::from(StoreError::InvalidRecord {
            field: "kind",
            reason: "is empty",
        });
        assert_eq!(other.code(), ErrorCode::Internal);
        assert!(!other.message().contains("kind"));
    }

    #[test]
    fn an_open_breaker_is_503_with_retry_after_rounded_up() {
        let e = ApiError::from(ProviderError::circuit_open(
            "openai",
            std::time::Duration::from_millis(2100),
        ));
        assert_eq!(
            (e.status(), e.code()),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::ProviderUnavailable
            )
        );
        let r = e.into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "3");
        let e = ApiError::from(ProviderError::circuit_open(
            "openai",
            std::time::Duration::ZERO,
        ));
        assert_eq!(e.into_response().headers()[header::RETRY_AFTER], "1");
        let other = ApiError::from(ProviderError::new(ErrorKind::Status, "openai", "x"));
        assert!(
            other
                .into_response()
                .headers()
                .get(header::RETRY_AFTER)
                .is_none()
        );
    }
}
