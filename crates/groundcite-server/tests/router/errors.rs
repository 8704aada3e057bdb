//! One error shape with a stable code for bad requests and limits, and
//! 503 with Retry-After when the service is saturated.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use groundcite_server::Limits;
use serde_json::json;

use crate::common::{KEY_A, Script, answer, chunks, get, post, send, state_with};

#[tokio::test]
async fn bad_requests_get_one_error_shape_with_a_stable_code() {
    let limits = Limits {
        max_body_bytes: 4096,
        max_chunks: 2,
        max_quote_chars: 50,
        ..Limits::default()
    };
    let (s, _) = state_with(None, limits).await;
    let raw = |body: &str, ct: &str| {
        Request::post("/v1/verify")
            .header(header::CONTENT_TYPE, ct)
            .header(header::AUTHORIZATION, format!("Bearer {KEY_A}"))
            .body(Body::from(body.to_string()))
            .expect("request")
    };
    let r = send(&s, raw("{not json", "application/json")).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::BAD_REQUEST, "malformed_json")
    );
    // Bytes after the value, and bytes that are not UTF-8, are not JSON.
    let good = json!({"chunks": chunks(), "answer": answer()}).to_string();
    let r = send(&s, raw(&format!("{good} {{}}"), "application/json")).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::BAD_REQUEST, "malformed_json")
    );
    let text = String::from_utf8_lossy(&r.body).into_owned();
    assert!(text.contains("trailing characters"), "{text}");
    let mut latin1 = good.into_bytes();
    let at = latin1.len() - 20;
    latin1.splice(at..at, [0xe9]);
    let r = send(
        &s,
        Request::post("/v1/verify")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::AUTHORIZATION, format!("Bearer {KEY_A}"))
            .body(Body::from(latin1))
            .expect("request"),
    )
    .await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::BAD_REQUEST, "malformed_json")
    );
    let r = send(&s, raw("{}", "text/plain")).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
    );
    let r = send(&s, raw(&"x".repeat(5000), "application/json")).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large")
    );

    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": chunks(), "answer": answer(), "chunk": 1}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "invalid_request")
    );
    assert_eq!(r.json()["error"]["path"], "chunk");
    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": chunks(), "answer": {"answerable": "yes", "claims": []}}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["error"]["path"], "answer.answerable");
    let three = json!([{"chunk_id": "a", "content": "x"}, {"chunk_id": "b", "content": "y"}, {"chunk_id": "c", "content": "z"}]);
    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": three, "answer": answer()}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, "too_many_chunks")
    );
    let long = json!({"answerable": true, "claims": [{"text": "t", "citations": [{"chunk_id": "refunds#1", "quote": "q".repeat(51)}]}]});
    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": chunks(), "answer": long}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "limit_exceeded")
    );
    assert_eq!(
        r.json()["error"]["path"],
        "answer.claims[0].citations[0].quote"
    );
    let dup = json!([{"chunk_id": "a", "content": "x"}, {"chunk_id": "a", "content": "y"}]);
    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": dup, "answer": answer()}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = send(
        &s,
        post(
            "/v1/verify",
            Some(KEY_A),
            &json!({"chunks": chunks(), "answer": answer(), "trace_id": "bad id"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["error"]["path"], "trace_id");

    let r = send(&s, get("/v1/nothing", Some(KEY_A))).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::NOT_FOUND, "not_found")
    );
    let r = send(&s, get("/v1/verify", Some(KEY_A))).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
    let r = send(&s, get("/v1/traces/has%20space", Some(KEY_A))).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn a_saturated_service_says_retry_after() {
    let release = Arc::new(tokio::sync::Notify::new());
    let limits = Limits {
        max_generations: 1,
        ..Limits::default()
    };
    let (s, g) = state_with(Some(Script::Block(release.clone())), limits).await;
    let body = json!({"question": "Refunds?", "chunks": chunks()});
    let first = tokio::spawn({
        let s = s.clone();
        let body = body.clone();
        async move { send(&s, post("/v1/answer", Some(KEY_A), &body)).await }
    });
    // Wait until the first request holds the only generation slot.
    while g.as_ref().map_or(0, |g| g.calls.load(Ordering::SeqCst)) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "overloaded")
    );
    assert_eq!(r.headers[header::RETRY_AFTER], "2");
    release.notify_one();
    assert_eq!(first.await.expect("join").status, StatusCode::OK);
}

#[tokio::test]
async fn an_open_circuit_breaker_is_503_with_retry_after() {
    use groundcite_core::schema::Target;
    use groundcite_providers::{
        Backend, BreakerPolicy, ChatCompletions, GenerationRequest, Generator, HttpConfig,
        RetryPolicy, SecretString,
    };
    use groundcite_server::{ApiKeys, AppState, ServerConfig, Store};

    // A provider that is down: nothing listens on the port.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let openai = ChatCompletions::openai(
        format!("http://127.0.0.1:{port}/v1").parse().expect("url"),
        SecretString::new("sk-test-FAKE-openai-0001"),
        "gpt-4o-2024-08-06".into(),
        HttpConfig {
            retry: RetryPolicy {
                max_retries: 0,
                ..RetryPolicy::default()
            },
            breaker: BreakerPolicy {
                failure_threshold: 1,
                cool_down: Duration::from_secs(30),
            },
            ..HttpConfig::default()
        },
    )
    .expect("client");
    let backend = Backend::new(
        Arc::new(openai) as Arc<dyn Generator>,
        |chunks, question| GenerationRequest::grounded(chunks, question, Target::OpenAi),
    );
    let s = AppState::new(ServerConfig {
        store: Store::open("sqlite::memory:").await.expect("store"),
        keys: ApiKeys::from_plain([("acme", KEY_A)]),
        limits: Limits::default(),
        backend: Some(backend),
        chat: None,
        corpus: None,
        profile: Default::default(),
        retention: None,
        cors_origins: Vec::new(),
    });
    s.set_ready(true);
    let body = json!({"question": "Refunds?", "chunks": chunks()});

    // The connection failure opens the breaker (threshold 1).
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::BAD_GATEWAY, "provider_error")
    );
    assert!(r.headers.get(header::RETRY_AFTER).is_none());

    // Open: 503 with the time to the next probe, nothing sent.
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "provider_unavailable")
    );
    let secs: u64 = r.headers[header::RETRY_AFTER]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=30).contains(&secs), "{secs}");
    assert!(r.json()["error"]["trace_id"].is_string());

    // /metrics shows the open breaker and the request it refused.
    let m = send(&s, get("/metrics", None)).await;
    let text = String::from_utf8(m.body).expect("utf-8");
    assert!(
        text.contains("groundcite_provider_breaker_state{provider=\"openai\"} 2"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l
            .strip_prefix("groundcite_provider_breaker_rejections_total{provider=\"openai\"} ")
            .is_some_and(|n| n.parse::<u64>().is_ok_and(|n| n >= 1))),
        "{text}"
    );
    assert!(text.contains("groundcite_provider_retries_total{provider=\"openai\"}"));
    assert!(text.contains("groundcite_provider_retry_budget_exhausted_total{provider=\"openai\"}"));
}
