//! The JSON body extractor: every rejection in the service's error shape,
//! with the JSON path of a bad value.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// A JSON request body of type `T`.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| {
                let m = m.trim();
                m.eq_ignore_ascii_case("application/json")
                    || (m.len() > 5 && m[m.len() - 5..].eq_ignore_ascii_case("+json"))
            });
        if !is_json {
            return Err(ApiError::new(ErrorCode::UnsupportedMediaType));
        }
        let bytes = Bytes::from_request(req, state).await?;
        parse(&bytes).map(ApiJson)
    }
}

/// Parses `bytes` as `T`: 400 for bytes that are not JSON, 422 (with the
/// JSON path) for JSON of the wrong shape.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Tracking the path costs on every value of every request; only a
    // rejected body needs it, so it is parsed a second time to say where.
    // UTF-8 is checked once for the whole body: parsing bytes checks each
    // run between escapes on its own, and prose has an escape every few
    // dozen bytes.
    let first = match std::str::from_utf8(bytes) {
        Ok(text) => match serde_json::from_str(text) {
            Ok(v) => return Ok(v),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize::<_, T>(de)?;
    // Only bytes after the value get here: this parse stops at the
    // value's end, the first one refuses trailing characters.
    Err(ApiError::malformed(format!(
        "the request body is not valid JSON: {first}"
    )))
}
