//! API keys: every protected endpoint needs one; the public ones do not.

use axum::http::{StatusCode, header};
use serde_json::json;

use crate::common::{get, post, send, state};

#[tokio::test]
async fn every_protected_endpoint_needs_a_valid_key() {
    let s = state().await;
    for path in [
        "/v1/verify",
        "/v1/parse",
        "/v1/convert",
        "/v1/answer",
        "/v1/ask",
        "/v1/chat/completions",
        "/v1/traces/x/verify",
    ] {
        for key in [None, Some("wrong")] {
            let r = send(&s, post(path, key, &json!({}))).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{path} {key:?}");
            assert_eq!(r.code(), "unauthorized");
            assert_eq!(r.headers[header::WWW_AUTHENTICATE], "Bearer");
        }
    }
    let r = send(&s, get("/v1/traces/abc", None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    let r = send(&s, get("/v1/info", None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    for path in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/",
        "/traces/abc",
        "/assets/groundcite-render.js",
    ] {
        assert_eq!(
            send(&s, get(path, None)).await.status,
            StatusCode::OK,
            "{path}"
        );
    }
}
