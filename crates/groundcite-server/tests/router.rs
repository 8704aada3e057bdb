//! Router tests without a socket: every endpoint, its errors, tenancy,
//! traces, metrics and streaming, against an in-memory SQLite store and a
//! scripted generator (the providers crate tests the real wire formats).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use groundcite_core::schema::Target;
use groundcite_providers::{
    Backend, BoxFuture, ErrorKind, FinishReason, Generation, GenerationRequest, GenerationStream,
    Generator, Mode, Output, ProviderError, Timings, Usage,
};
use groundcite_server::{ApiKeys, AppState, Corpus, Limits, ServerConfig, Store, app};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

const KEY_A: &str = "key-of-acme";
const KEY_B: &str = "key-of-globex";

/// What the scripted generator does.
#[derive(Debug, Clone)]
enum Script {
    /// Answer with this JSON text (streamed in pieces of `piece` bytes).
    Answer(String),
    /// Fail with this kind.
    Fail(ErrorKind),
    /// Answer with this Anthropic message (native citations).
    Native(Value),
    /// Wait until released (to hold a generation slot).
    Block(Arc<tokio::sync::Notify>),
}

#[derive(Debug)]
struct Scripted {
    script: Script,
    calls: AtomicUsize,
    seen: std::sync::Mutex<Vec<GenerationRequest>>,
}

impl Scripted {
    fn generation(text: &str) -> Generation {
        Generation {
            output: Output::Json(text.to_string()),
            model: Some("scripted-1".into()),
            finish_reason: Some(FinishReason::Stop),
            usage: Usage {
                input_tokens: Some(10),
                output_tokens: Some(20),
            },
            request_id: Some("req-123".into()),
            timings: Timings::default(),
            p_answerable: None,
        }
    }
}

impl Generator for Scripted {
    fn provider(&self) -> &'static str {
        "scripted"
    }
    fn mode(&self) -> Mode {
        Mode::Structured(Target::OpenAi)
    }
    fn generate<'a>(
        &'a self,
        _request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<Generation, ProviderError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(_request.clone());
        }
        Box::pin(async move {
            match &self.script {
                Script::Answer(t) => Ok(Scripted::generation(t)),
                Script::Native(message) => Ok(Generation {
                    output: Output::AnthropicCitations(message.clone()),
                    ..Scripted::generation("")
                }),
                Script::Fail(kind) => {
                    Err(ProviderError::new(*kind, "scripted", "scripted failure"))
                }
                Script::Block(n) => {
                    n.notified().await;
                    Ok(Scripted::generation(
                        r#"{"answerable": false, "claims": []}"#,
                    ))
                }
            }
        })
    }
    fn generate_stream<'a>(
        &'a self,
        request: &'a GenerationRequest,
    ) -> BoxFuture<'a, Result<GenerationStream, ProviderError>> {
        Box::pin(async move {
            let (stream, sender) = GenerationStream::channel("scripted");
            let script = self.script.clone();
            let whole = self.generate(request).await;
            tokio::spawn(async move {
                if let (Script::Answer(text), Ok(_)) = (&script, &whole) {
                    // Byte-sized pieces at char boundaries: claims close mid-stream.
                    let mut rest = text.as_str();
                    while !rest.is_empty() {
                        let mut cut = rest.len().min(7);
                        while !rest.is_char_boundary(cut) {
                            cut += 1;
                        }
                        if sender.deltas.send(rest[..cut].to_string()).await.is_err() {
                            return;
                        }
                        rest = &rest[cut..];
                    }
                }
                drop(sender.deltas);
                let _ = sender.result.send(whole);
            });
            Ok(stream)
        })
    }
}

fn chunks() -> Value {
    json!([
        {"chunk_id": "refunds#1", "content": "Refunds are available within 30 days of purchase.",
         "source_title": "Refund policy", "source_url": "https://help.example.com/refunds", "page_number": 3},
        {"chunk_id": "shipping#1", "content": "Standard shipping takes 3 to 5 business days.",
         "source_title": null, "source_url": null}
    ])
}

fn answer() -> Value {
    json!({"answerable": true, "claims": [
        {"text": "Refunds are possible for 30 days.", "citations": [{"chunk_id": "refunds#1", "quote": "refunds are available within 30 days"}]},
        {"text": "Shipping is instant.", "citations": [{"chunk_id": "shipping#1", "quote": "Shipping is instant"}]},
        {"text": "Made up.", "citations": [{"chunk_id": "nope#9", "quote": "anything"}]}
    ]})
}

async fn state_with(script: Option<Script>, limits: Limits) -> (AppState, Option<Arc<Scripted>>) {
    state_full(script, limits, None).await
}

async fn state_full(
    script: Option<Script>,
    limits: Limits,
    corpus: Option<Corpus>,
) -> (AppState, Option<Arc<Scripted>>) {
    let store = Store::open("sqlite::memory:").await.expect("store");
    let scripted = script.map(|s| {
        Arc::new(Scripted {
            script: s,
            calls: AtomicUsize::new(0),
            seen: Default::default(),
        })
    });
    let backend = scripted.clone().map(|g| {
        Backend::new(g as Arc<dyn Generator>, |chunks, question| {
            GenerationRequest::grounded(chunks, question, Target::OpenAi)
        })
    });
    let state = AppState::new(ServerConfig {
        store,
        keys: ApiKeys::from_plain([("acme", KEY_A), ("globex", KEY_B)]),
        limits,
        backend,
        chat: None,
        corpus,
        profile: Default::default(),
        retention: None,
        cors_origins: Vec::new(),
    });
    state.set_ready(true);
    (state, scripted)
}

async fn state() -> AppState {
    state_with(None, Limits::default()).await.0
}

struct Reply {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    fn code(&self) -> String {
        self.json()["error"]["code"]
            .as_str()
            .unwrap_or("<none>")
            .to_string()
    }
}

async fn send(state: &AppState, req: Request<Body>) -> Reply {
    let response = app(state.clone()).oneshot(req).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .to_vec();
    Reply {
        status,
        headers,
        body,
    }
}

fn post(path: &str, key: Option<&str>, body: &Value) -> Request<Body> {
    let mut b = Request::post(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    b.body(Body::from(body.to_string())).expect("request")
}

fn get(path: &str, key: Option<&str>) -> Request<Body> {
    let mut b = Request::get(path);
    if let Some(k) = key {
        b = b.header(header::AUTHORIZATION, format!("Bearer {k}"));
    }
    b.body(Body::empty()).expect("request")
}

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

#[tokio::test]
async fn parse_and_convert_verify_answers_from_elsewhere() {
    let s = state().await;
    let text = "Refunds are available within 30 days of purchase [1]. Shipping is free [7].";
    let r = send(
        &s,
        post(
            "/v1/parse",
            Some(KEY_A),
            &json!({"chunks": chunks(), "text": text}),
        ),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let c = r.json();
    assert_eq!(c["claims"].as_array().map(Vec::len), Some(1));
    assert!(
        c["warnings"]
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w["code"] == "marker_out_of_range")),
        "{c}"
    );
    let t = send(
        &s,
        get(
            &format!("/v1/traces/{}", c["trace_id"].as_str().unwrap_or("")),
            Some(KEY_A),
        ),
    )
    .await;
    assert_eq!(t.json()["kind"], "parse");
    assert_eq!(t.json()["raw_output"], text);
    assert_eq!(t.json()["answer_form"], "prose");
    // Same rule, same result: a prose trace re-verifies as prose.
    let again = reverified(&s, c["trace_id"].as_str().unwrap_or("")).await;
    assert_eq!(again["same"], true, "{again}");

    let r = send(
        &s,
        post(
            "/v1/parse",
            Some(KEY_A),
            &json!({"chunks": chunks(), "text": "No markers at all."}),
        ),
    )
    .await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, "no_citations")
    );

    let anthropic = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Refunds are available within 30 days of purchase.",
            "citations": [{"type": "char_location", "cited_text": "Refunds are available within 30 days of purchase.",
                           "document_index": 0, "start_char_index": 0, "end_char_index": 50}]}]
    });
    let r = send(
        &s,
        post(
            "/v1/convert",
            Some(KEY_A),
            &json!({"chunks": chunks(), "from": "anthropic", "response": anthropic}),
        ),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    assert_eq!(r.json()["answerable"], true);
    let again = reverified(&s, r.json()["trace_id"].as_str().unwrap_or("")).await;
    assert_eq!(again["same"], true, "{again}");
    // With the request that was sent to the provider, laid out from it.
    let request = json!({"messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain",
         "data": "Refunds are available within 30 days of purchase."}, "citations": {"enabled": true}},
        {"type": "document", "source": {"type": "text", "media_type": "text/plain",
         "data": "Standard shipping takes 3 to 5 business days."}, "citations": {"enabled": true}}]}]});
    let r = send(
        &s,
        post(
            "/v1/convert",
            Some(KEY_A),
            &json!({"chunks": chunks(), "from": "anthropic", "response": anthropic, "request": request}),
        ),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let again = reverified(&s, r.json()["trace_id"].as_str().unwrap_or("")).await;
    assert_eq!(again["same"], true, "{again}");
    let r = send(
        &s,
        post(
            "/v1/convert",
            Some(KEY_A),
            &json!({"chunks": chunks(), "from": "other", "response": {}}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(r.json()["error"]["path"], "from");
}

/// `GET /v1/traces/{id}`'s body.
async fn stored_trace(s: &AppState, id: &str) -> Value {
    send(s, get(&format!("/v1/traces/{id}"), Some(KEY_A)))
        .await
        .json()
}

/// `POST /v1/traces/{id}/verify`'s body.
async fn reverified(s: &AppState, id: &str) -> Value {
    let r = send(
        s,
        post(&format!("/v1/traces/{id}/verify"), Some(KEY_A), &json!({})),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

fn model_answer() -> String {
    json!({"answerable": true, "claims": [
        {"citations": [{"quote": "Refunds are available within 30 days of purchase.", "chunk_id": "refunds#1"}],
         "text": "Refunds are available within 30 days of purchase."},
        {"citations": [{"quote": "Shipping is instant.", "chunk_id": "shipping#1"}], "text": "Shipping is instant."},
        {"citations": [{"quote": "Standard shipping takes 3 to 5 business days.", "chunk_id": "shipping#1"}],
         "text": "Standard shipping takes 3 to 5 business days."}
    ]})
    .to_string()
}

#[tokio::test]
async fn answer_generates_verifies_and_traces() {
    let (s, g) = state_with(Some(Script::Answer(model_answer())), Limits::default()).await;
    let body = json!({"question": "How long for refunds?", "chunks": chunks()});
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let c = r.json();
    assert_eq!(c["claims"].as_array().map(Vec::len), Some(2));
    assert_eq!(c["model"], "scripted-1");
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(1));
    let t = send(
        &s,
        get(
            &format!("/v1/traces/{}", c["trace_id"].as_str().unwrap_or("")),
            Some(KEY_A),
        ),
    )
    .await
    .json();
    assert_eq!(t["kind"], "answer");
    assert_eq!(t["raw_output"], model_answer());
    assert_eq!(t["provider"], "scripted");
    assert_eq!(t["provider_request_id"], "req-123");
    assert!(
        t["prompt"]["user"]
            .as_str()
            .is_some_and(|u| u.contains("How long for refunds?"))
    );
    assert!(
        t["schema_hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:"))
    );
    assert_eq!(t["contract"], c);
    assert_eq!(t["stop_reason"], "stop");
    assert_eq!(t["answer_form"], "grounded");
    let again = reverified(&s, c["trace_id"].as_str().unwrap_or("")).await;
    assert_eq!(again["same"], true, "{again}");
    let m = String::from_utf8(send(&s, get("/metrics", None)).await.body).expect("utf-8");
    assert!(
        m.contains(r#"groundcite_generations_total{model="scripted-1",provider="scripted"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"groundcite_claims_failed_total{model="scripted-1",provider="scripted"} 1"#),
        "{m}"
    );
    assert!(
        m.contains("groundcite_inference_duration_seconds_bucket"),
        "{m}"
    );
}

/// Splits an SSE body into (event, data) pairs.
fn sse_events(body: &[u8]) -> Vec<(String, Value)> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .filter_map(|block| {
            let mut event = String::from("message");
            let mut data = String::new();
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.trim_start());
                }
            }
            (!data.is_empty()).then(|| {
                (
                    event,
                    serde_json::from_str(&data).unwrap_or(Value::String(data)),
                )
            })
        })
        .collect()
}

#[tokio::test]
async fn a_streamed_answer_sends_each_claim_then_the_same_contract() {
    let (s, _) = state_with(Some(Script::Answer(model_answer())), Limits::default()).await;
    let body = json!({"question": "How long for refunds?", "chunks": chunks()});
    let plain = send(&s, post("/v1/answer", Some(KEY_A), &body))
        .await
        .json();
    let mut req = post("/v1/answer", Some(KEY_A), &body);
    req.headers_mut()
        .insert(header::ACCEPT, "text/event-stream".parse().expect("header"));
    let r = send(&s, req).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap_or("")
            .starts_with("text/event-stream")
    );
    let events = sse_events(&r.body);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        names,
        ["claim", "claim_dropped", "claim", "done"],
        "{events:?}"
    );
    assert_eq!(events[0].1["index"], 0);
    assert_eq!(events[1].1["index"], 1);
    assert_eq!(events[1].1["warnings"][0]["code"], "quote_not_found");
    let done = &events[3].1;
    // Same result as the non-streamed call, up to the trace ID and time.
    let strip = |mut v: Value| {
        v["trace_id"] = Value::Null;
        v["created_at"] = Value::Null;
        v
    };
    assert_eq!(strip(done.clone()), strip(plain));
    assert_eq!(events[0].1["claim"], done["claims"][0]);
    // The done event came after the commit: the trace is readable.
    let id = r.headers["x-trace-id"].to_str().expect("id").to_string();
    assert_eq!(done["trace_id"], id.as_str());
    let t = send(&s, get(&format!("/v1/traces/{id}"), Some(KEY_A))).await;
    assert_eq!(t.status, StatusCode::OK);
    assert_eq!(t.json()["options"]["stream"], true);
}

#[tokio::test]
async fn provider_failures_are_traced_and_mapped() {
    let (s, _) = state_with(
        Some(Script::Fail(ErrorKind::RateLimited)),
        Limits::default(),
    )
    .await;
    let body = json!({"question": "Refunds?", "chunks": chunks()});
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::BAD_GATEWAY, "provider_error")
    );
    let id = r.json()["error"]["trace_id"]
        .as_str()
        .expect("trace id")
        .to_string();
    let t = stored_trace(&s, &id).await;
    assert_eq!(t["error"]["kind"], "rate_limited");
    assert_eq!(t["contract"], Value::Null);
    assert_eq!(t["stop_reason"], "error");

    // An output failure is a refusal contract, not an error; its trace
    // says why it stopped and re-verifies to the same refusal.
    let (s, _) = state_with(Some(Script::Fail(ErrorKind::Truncated)), Limits::default()).await;
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["refusal"]["code"], "R3");
    let id = r.json()["trace_id"].as_str().unwrap_or("").to_string();
    let t = stored_trace(&s, &id).await;
    assert_eq!(t["stop_reason"], "length", "{t}");
    let again = reverified(&s, &id).await;
    assert_eq!(again["same"], true, "{again}");
    let m = String::from_utf8(send(&s, get("/metrics", None)).await.body).expect("utf-8");
    assert!(
        m.contains(
            r#"groundcite_schema_parse_errors_total{model="unknown",provider="scripted"} 1"#
        ),
        "{m}"
    );

    let s = state().await;
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::NOT_IMPLEMENTED, "not_configured")
    );
}

/// An answer with a provider's native citations is traced as such and
/// re-verifies through the same converter.
#[tokio::test]
async fn a_native_citation_answer_re_verifies_as_native() {
    let message = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Refunds are available within 30 days of purchase.",
            "citations": [{"type": "char_location", "cited_text": "Refunds are available within 30 days of purchase.",
                           "document_index": 0, "start_char_index": 0, "end_char_index": 50}]}]
    });
    let (s, _) = state_with(Some(Script::Native(message)), Limits::default()).await;
    let body = json!({"question": "Refunds?", "chunks": chunks()});
    let r = send(&s, post("/v1/answer", Some(KEY_A), &body)).await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let c = r.json();
    assert_eq!(c["answerable"], true, "{c}");
    let id = c["trace_id"].as_str().unwrap_or("").to_string();
    let t = stored_trace(&s, &id).await;
    assert_eq!(t["answer_form"], "anthropic", "{t}");
    let again = reverified(&s, &id).await;
    assert_eq!(again["same"], true, "{again}");
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

#[tokio::test]
async fn warm_up_sends_the_exact_schema_and_tolerates_an_output_failure() {
    let backend = |script| {
        let g = Arc::new(Scripted {
            script,
            calls: AtomicUsize::new(0),
            seen: Default::default(),
        });
        let b = Backend::new(g.clone() as Arc<dyn Generator>, |chunks, question| {
            GenerationRequest::grounded(chunks, question, Target::OpenAi)
        });
        (b, g)
    };
    let (b, g) = backend(Script::Answer(model_answer()));
    groundcite_providers::pipeline::warm_up(&b)
        .await
        .expect("warm-up");
    let seen = g.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].max_tokens <= 16);
    // The same strict schema a real request over the same chunk carries.
    let chunks = groundcite_core::ChunkSet::new(vec![groundcite_core::Chunk {
        chunk_id: "warmup#1".into(),
        content: String::new(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }])
    .expect("chunks");
    assert_eq!(
        seen[0].schema,
        b.request(&chunks, "q").schema,
        "the warm-up carries the backend's exact schema"
    );
    let (b, _) = backend(Script::Fail(ErrorKind::Truncated));
    assert!(groundcite_providers::pipeline::warm_up(&b).await.is_ok());
    let (b, _) = backend(Script::Fail(ErrorKind::Connection));
    assert!(groundcite_providers::pipeline::warm_up(&b).await.is_err());
}

/// A corpus of two plain-text documents, indexed into `dir`.
fn corpus(dir: &std::path::Path) -> Corpus {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).expect("docs dir");
    std::fs::write(
        docs.join("refunds.txt"),
        "Refunds are available within 30 days of purchase.\n",
    )
    .expect("write");
    std::fs::write(
        docs.join("shipping.txt"),
        "Standard shipping takes 3 to 5 business days.\n",
    )
    .expect("write");
    let mut index = groundcite_index::Index::open_or_create(&dir.join("index")).expect("index");
    index
        .update(
            &docs,
            &groundcite_index::IndexConfig::default(),
            &mut |_| {},
        )
        .expect("indexed");
    Corpus {
        index: Arc::new(index),
        embed: None,
        // A hosted provider's gate: refuse only when retrieval found nothing.
        settings: groundcite_ask::AskSettings::with_gate(groundcite_ask::GateMode::Retrieval),
        trace_options: groundcite_store::TraceOptions {
            docs: Some("test-docs".into()),
            ..Default::default()
        },
    }
}

fn ask_answer() -> String {
    json!({"answerable": true, "claims": [
        {"text": "Refunds are available within 30 days of purchase.",
         "citations": [{"chunk_id": "refunds.txt#chunk-1", "quote": "Refunds are available within 30 days of purchase."}]},
        {"text": "Refunds are instant.",
         "citations": [{"chunk_id": "refunds.txt#chunk-1", "quote": "Refunds are instant."}]}
    ]})
    .to_string()
}

#[tokio::test]
async fn ask_without_a_corpus_is_a_clear_client_error() {
    let (s, _) = state_with(Some(Script::Answer(ask_answer())), Limits::default()).await;
    let r = send(
        &s,
        post("/v1/ask", Some(KEY_A), &json!({"question": "Refunds?"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    assert_eq!(r.code(), "no_corpus");
    // Streaming asks get the same JSON error, not an event stream.
    let r = send(
        &s,
        post(
            "/v1/ask",
            Some(KEY_A),
            &json!({"question": "Refunds?", "stream": true}),
        ),
    )
    .await;
    assert_eq!(r.code(), "no_corpus");
    let info = send(&s, get("/v1/info", Some(KEY_A))).await;
    assert_eq!(info.status, StatusCode::OK);
    assert_eq!(info.json()["corpus"], Value::Null);
    assert_eq!(info.json()["tenant"], "acme");
    assert_eq!(info.json()["provider"], "scripted");
}

#[tokio::test]
async fn ask_retrieves_generates_verifies_and_traces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, g) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(corpus(dir.path())),
    )
    .await;
    let info = send(&s, get("/v1/info", Some(KEY_A))).await.json();
    assert_eq!(info["corpus"]["documents"], 2);
    let question = "Are refunds available within 30 days of purchase?";
    let r = send(
        &s,
        post("/v1/ask", Some(KEY_A), &json!({"question": question})),
    )
    .await;
    assert_eq!(
        r.status,
        StatusCode::OK,
        "{}",
        String::from_utf8_lossy(&r.body)
    );
    let c = r.json();
    assert_eq!(c["answerable"], true);
    assert_eq!(c["claims"].as_array().map(Vec::len), Some(1));
    assert_eq!(c["sources"][0]["chunk_id"], "refunds.txt#chunk-1");
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(1));
    let id = c["trace_id"].as_str().expect("trace id").to_string();
    assert_eq!(r.headers["x-trace-id"], id.as_str());
    let t = stored_trace(&s, &id).await;
    assert_eq!(t["kind"], "ask");
    assert_eq!(t["tenant"], "acme");
    assert_eq!(t["question"], question);
    assert_eq!(t["raw_output"], ask_answer());
    assert_eq!(t["contract"], c);
    assert_eq!(t["options"]["gate_verdict"]["verdict"], "pass");
    assert_eq!(t["options"]["docs"], "test-docs");
    assert!(t["timings"]["total_ms"].is_number(), "{t}");
    assert!(
        t["chunks"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["chunk_id"] == "refunds.txt#chunk-1"))
    );
    assert_eq!(
        send(&s, get(&format!("/v1/traces/{id}"), Some(KEY_B)))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let rv = send(
        &s,
        post(&format!("/v1/traces/{id}/verify"), Some(KEY_A), &json!({})),
    )
    .await
    .json();
    assert_eq!(rv["same"], true, "{rv}");
    let m = String::from_utf8(send(&s, get("/metrics", None)).await.body).expect("utf-8");
    assert!(
        m.contains(r#"groundcite_generations_total{model="scripted-1",provider="scripted"} 1"#),
        "{m}"
    );
    assert!(
        m.contains(r#"groundcite_claims_failed_total{model="scripted-1",provider="scripted"} 1"#),
        "{m}"
    );
}

#[tokio::test]
async fn ask_gates_questions_the_documents_cannot_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, g) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(corpus(dir.path())),
    )
    .await;
    let r = send(
        &s,
        post(
            "/v1/ask",
            Some(KEY_A),
            &json!({"question": "What are the opening hours of your store in Tokyo?"}),
        ),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    let c = r.json();
    assert_eq!(c["answerable"], false);
    assert_eq!(c["refusal"]["code"], "R1");
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(0));
    let id = c["trace_id"].as_str().expect("id");
    let t = stored_trace(&s, id).await;
    assert_eq!(t["provider"], "none");
    assert_eq!(t["options"]["gate_verdict"]["verdict"], "refuse");
    let m = String::from_utf8(send(&s, get("/metrics", None)).await.body).expect("utf-8");
    assert!(m.contains("groundcite_unanswerable_total"), "{m}");
}

/// The relevance gate answers without the model, so a gated question needs
/// no generation slot: off-topic traffic neither waits for nor takes one.
#[tokio::test]
async fn a_gated_ask_takes_no_generation_slot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let release = Arc::new(tokio::sync::Notify::new());
    let limits = Limits {
        max_generations: 1,
        ..Limits::default()
    };
    let (s, g) = state_full(
        Some(Script::Block(release.clone())),
        limits,
        Some(corpus(dir.path())),
    )
    .await;
    let covered = json!({"question": "Are refunds available within 30 days of purchase?"});
    let first = tokio::spawn({
        let (s, body) = (s.clone(), covered.clone());
        async move { send(&s, post("/v1/ask", Some(KEY_A), &body)).await }
    });
    // Wait until the first question holds the only generation slot.
    while g.as_ref().map_or(0, |g| g.calls.load(Ordering::SeqCst)) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let off_topic = json!({"question": "What are the opening hours of your store in Tokyo?"});
    for stream in [false, true] {
        let mut body = off_topic.clone();
        body["stream"] = json!(stream);
        let r = send(&s, post("/v1/ask", Some(KEY_A), &body)).await;
        assert_eq!(r.status, StatusCode::OK, "stream={stream}");
        let contract = if stream {
            let events = sse_events(&r.body);
            let (name, data) = events.last().expect("an event").clone();
            assert_eq!(name, "done", "{events:?}");
            data
        } else {
            r.json()
        };
        assert_eq!(contract["refusal"]["code"], "R1", "stream={stream}");
    }
    // A covered question still needs the slot.
    let r = send(&s, post("/v1/ask", Some(KEY_A), &covered)).await;
    assert_eq!(
        (r.status, r.code().as_str()),
        (StatusCode::SERVICE_UNAVAILABLE, "overloaded")
    );
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(1));
    release.notify_one();
    assert_eq!(first.await.expect("join").status, StatusCode::OK);
}

#[tokio::test]
async fn a_streamed_ask_sends_each_claim_then_the_stored_contract() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, _) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(corpus(dir.path())),
    )
    .await;
    let body =
        json!({"question": "Are refunds available within 30 days of purchase?", "stream": true});
    let r = send(&s, post("/v1/ask", Some(KEY_A), &body)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap_or("")
            .starts_with("text/event-stream")
    );
    let events = sse_events(&r.body);
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(names, ["claim", "claim_dropped", "done"], "{events:?}");
    let done = &events[2].1;
    assert_eq!(events[0].1["claim"], done["claims"][0]);
    let id = r.headers["x-trace-id"].to_str().expect("id").to_string();
    let t = stored_trace(&s, &id).await;
    assert_eq!(&t["contract"], done);
    assert_eq!(t["options"]["stream"], true);
}

#[tokio::test]
async fn ask_refuses_bad_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, _) = state_full(None, Limits::default(), Some(corpus(dir.path()))).await;
    for (body, path) in [
        (json!({"question": "Refunds?", "top_k": 0}), "top_k"),
        (json!({"question": "Refunds?", "top_k": 51}), "top_k"),
        (json!({"question": "  "}), "question"),
        (json!({"question": "Refunds?", "chunks": []}), "chunks"),
        (
            json!({"question": "Refunds?", "trace_id": "a b"}),
            "trace_id",
        ),
    ] {
        let r = send(&s, post("/v1/ask", Some(KEY_A), &body)).await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(r.json()["error"]["path"], path, "{body}");
    }
    // A question that passes the gate with no model configured.
    let r = send(
        &s,
        post(
            "/v1/ask",
            Some(KEY_A),
            &json!({"question": "Are refunds available within 30 days of purchase?"}),
        ),
    )
    .await;
    assert_eq!(r.code(), "not_configured");
}

#[tokio::test]
async fn the_web_app_is_served_from_the_binary_with_a_strict_policy() {
    let s = state().await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/traces/0190-abc", "text/html"),
        ("/assets/groundcite-render.js", "text/javascript"),
        ("/assets/app.js", "text/javascript"),
        ("/assets/trace.js", "text/javascript"),
        ("/assets/api.js", "text/javascript"),
        ("/assets/style.css", "text/css"),
    ] {
        let r = send(&s, get(path, None)).await;
        assert_eq!(r.status, StatusCode::OK, "{path}");
        assert!(
            r.headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap_or("")
                .starts_with(kind),
            "{path}"
        );
        let csp = r.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap_or("");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}: {csp}");
        assert_eq!(r.headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }
    let page = String::from_utf8(send(&s, get("/", None)).await.body).expect("utf-8");
    // No CDN: every script and stylesheet comes from this origin.
    assert!(!page.contains("http://") && !page.contains("https://"));
    let missing = send(&s, get("/assets/../Cargo.toml", None)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let missing = send(&s, get("/assets/nope.js", None)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}
