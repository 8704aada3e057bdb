//! `POST /v1/answer`: generate, verify, trace; streamed; provider failures;
//! native citations; warm-up.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{StatusCode, header};
use groundcite_core::schema::Target;
use groundcite_providers::{Backend, ErrorKind, GenerationRequest, Generator};
use groundcite_server::Limits;
use serde_json::{Value, json};

use crate::common::{
    KEY_A, Script, Scripted, chunks, get, post, reverified, send, sse_events, state, state_with,
    stored_trace,
};

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
    // Byte for byte the schema a real request carries, over any chunks: the
    // schema does not depend on the request, so the provider's compiled
    // grammar and cached prefix are the ones real requests use.
    let chunks = groundcite_core::ChunkSet::new(vec![
        groundcite_core::Chunk {
            chunk_id: "refunds.md#chunk-2".into(),
            content: "Refunds are available within 30 days.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        },
        groundcite_core::Chunk {
            chunk_id: "shipping.md#chunk-1".into(),
            content: "Express shipping costs $12.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        },
    ])
    .expect("chunks");
    let real = b.request(&chunks, "How long do refunds take?").schema;
    let warm = seen[0].schema.clone();
    assert_eq!(
        serde_json::to_string(&warm.as_ref().map(|s| &s.schema)).expect("json"),
        serde_json::to_string(&real.as_ref().map(|s| &s.schema)).expect("json"),
        "the warm-up carries a real request's exact schema"
    );
    assert_eq!(warm, real);
    let (b, _) = backend(Script::Fail(ErrorKind::Truncated));
    assert!(groundcite_providers::pipeline::warm_up(&b).await.is_ok());
    let (b, _) = backend(Script::Fail(ErrorKind::Connection));
    assert!(groundcite_providers::pipeline::warm_up(&b).await.is_err());
}
