//! `POST /v1/verify`: the contract after its trace is stored, tenancy,
//! metrics, and a client trace ID used once.

use axum::http::StatusCode;
use serde_json::json;

use crate::common::{KEY_A, KEY_B, answer, chunks, get, post, send, state};

#[tokio::test]
async fn verify_returns_the_contract_after_storing_its_trace() {
    let s = state().await;
    let body =
        json!({"chunks": chunks(), "answer": answer(), "question": "Refunds?", "model": "gpt-x"});
    let r = send(&s, post("/v1/verify", Some(KEY_A), &body)).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let c = r.json();
    assert_eq!(c["contract_version"], "1");
    assert_eq!(c["claims"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        c["claims"][0]["citations"][0]["source_text"],
        "Refunds are available within 30 days"
    );
    let trace_id = c["trace_id"].as_str().expect("trace id").to_string();
    assert_eq!(r.headers["x-trace-id"], trace_id.as_str());

    // The trace is there, for this tenant only.
    let t = send(&s, get(&format!("/v1/traces/{trace_id}"), Some(KEY_A))).await;
    assert_eq!(t.status, StatusCode::OK);
    let t = t.json();
    assert_eq!(t["tenant"], "acme");
    assert_eq!(t["kind"], "verify");
    assert_eq!(t["question"], "Refunds?");
    assert_eq!(t["contract"], c);
    assert_eq!(t["chunks"].as_array().map(Vec::len), Some(2));
    let other = send(&s, get(&format!("/v1/traces/{trace_id}"), Some(KEY_B))).await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
    assert_eq!(other.code(), "not_found");

    // Re-verification gives the same contract.
    let rv = send(
        &s,
        post(
            &format!("/v1/traces/{trace_id}/verify"),
            Some(KEY_A),
            &json!({}),
        ),
    )
    .await;
    assert_eq!(rv.status, StatusCode::OK);
    assert_eq!(rv.json()["same"], true);
    assert_eq!(rv.json()["contract"], c);
    let rv = send(
        &s,
        post(
            &format!("/v1/traces/{trace_id}/verify"),
            Some(KEY_B),
            &json!({}),
        ),
    )
    .await;
    assert_eq!(rv.status, StatusCode::NOT_FOUND);

    // The seed's signals moved: 3 claims, 2 failed, labelled by model.
    let m = String::from_utf8(send(&s, get("/metrics", None)).await.body).expect("utf-8");
    assert!(
        m.contains(r#"groundcite_claims_total{model="gpt-x",provider="client"} 3"#),
        "{m}"
    );
    assert!(
        m.contains(r#"groundcite_claims_failed_total{model="gpt-x",provider="client"} 2"#),
        "{m}"
    );
    assert!(
        m.contains(r#"groundcite_answers_total{model="gpt-x",provider="client"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(
            r#"groundcite_http_requests_total{method="POST",route="/v1/verify",status="200"} 1"#
        ),
        "{m}"
    );
}

#[tokio::test]
async fn a_trace_id_is_used_once() {
    let s = state().await;
    let body = json!({"chunks": chunks(), "answer": answer(), "trace_id": "client-trace-1"});
    let r = send(&s, post("/v1/verify", Some(KEY_A), &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["trace_id"], "client-trace-1");
    assert_eq!(r.headers["x-trace-id"], "client-trace-1");
    let again = send(&s, post("/v1/verify", Some(KEY_B), &body)).await;
    assert_eq!(
        (again.status, again.code().as_str()),
        (StatusCode::CONFLICT, "duplicate_trace_id")
    );
}
