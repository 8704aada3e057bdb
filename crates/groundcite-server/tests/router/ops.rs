//! Readiness and the OpenAPI document.

use axum::http::StatusCode;
use groundcite_server::Limits;
use serde_json::Value;

use crate::common::{get, send, state, state_with};

#[tokio::test]
async fn readiness_waits_for_warm_up() {
    let (s, _) = state_with(None, Limits::default()).await;
    s.set_ready(false);
    let r = send(&s, get("/readyz", None)).await;
    assert_eq!(r.status, StatusCode::SERVICE_UNAVAILABLE);
    s.set_ready(true);
    assert_eq!(send(&s, get("/readyz", None)).await.status, StatusCode::OK);
}

#[tokio::test]
async fn the_openapi_document_covers_every_route() {
    let s = state().await;
    let doc = send(&s, get("/openapi.json", None)).await.json();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().expect("paths");
    for p in [
        "/v1/answer",
        "/v1/ask",
        "/v1/info",
        "/v1/verify",
        "/v1/parse",
        "/v1/convert",
        "/v1/traces/{trace_id}",
        "/v1/traces/{trace_id}/verify",
        "/v1/chat/completions",
        "/metrics",
        "/healthz",
        "/readyz",
        "/openapi.json",
    ] {
        assert!(paths.contains_key(p), "{p} undocumented");
    }
    // Every $ref resolves.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|c| refs(c, out));
            }
            Value::Array(a) => a.iter().for_each(|c| refs(c, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").expect("local ref");
        assert!(
            doc["components"]["schemas"].get(name).is_some(),
            "{r} dangles"
        );
    }
}
