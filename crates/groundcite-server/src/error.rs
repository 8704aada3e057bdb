//! One error shape for every endpoint: `{"error": {"code", "message",
//! "trace_id"?, "path"?}}` with a stable `code`. 5xx bodies carry no
//! internals: the details go to the log under the trace ID.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// An error response.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
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
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_id: Option<&'a str>,
}

impl ApiError {
    /// An error with `status`, stable `code` and a message for the client.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            path: None,
            trace_id: None,
            retry_after: None,
        }
    }

    /// 422: the request is well-formed JSON but not acceptable; `path` is
    /// the JSON path of the offending value, when known.
    pub fn invalid(message: impl Into<String>, path: Option<String>) -> ApiError {
        ApiError {
            path: path.filter(|p| !p.is_empty() && p != "."),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message)
        }
    }

    /// 422 `limit_exceeded`: a value is larger than the service accepts.
    pub fn limit_exceeded(message: impl Into<String>, path: impl Into<String>) -> ApiError {
        ApiError {
            path: Some(path.into()),
            ..ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "limit_exceeded", message)
        }
    }

    /// 400: the body is not JSON.
    pub fn malformed(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "malformed_json", message)
    }

    /// 413 with `code`.
    pub fn too_large(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, code, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 401.
    pub fn unauthorized() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid API key is required: send `Authorization: Bearer <key>`",
        )
    }

    /// 503 with `Retry-After`.
    pub fn overloaded(message: impl Into<String>, retry_after_secs: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after_secs),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "overloaded", message)
        }
    }

    /// 500 with a fixed message; `detail` is logged, never sent.
    pub fn internal(detail: impl std::fmt::Display) -> ApiError {
        tracing::error!(error = %detail, "internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "internal error; the service log has the details under this request's trace ID",
        )
    }

    /// The same error, naming the request's trace ID.
    pub fn with_trace_id(mut self, trace_id: &str) -> ApiError {
        self.trace_id = Some(trace_id.to_string());
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The message sent to the client.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The body as a JSON value (for SSE `error` events).
    pub fn body(&self) -> serde_json::Value {
        serde_json::to_value(Body {
            error: Inner {
                code: self.code,
                message: &self.message,
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
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(secs) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
