//! `POST /v1/ask`: retrieval, the relevance gate, generation, streaming and
//! its bad requests, over a small indexed corpus.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::{StatusCode, header};
use groundcite_server::{Corpus, Limits};
use serde_json::{Value, json};

use crate::common::{
    KEY_A, KEY_B, Script, get, post, send, sse_events, state_full, state_with, stored_trace,
};

/// A corpus of two plain-text documents, indexed into `dir`.
pub(crate) fn corpus(dir: &std::path::Path) -> Corpus {
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
        source: groundcite_server::CorpusSource::Index(Arc::new(index)),
        embed: None,
        // A hosted provider's gate: refuse only when retrieval found nothing.
        settings: groundcite_ask::AskSettings::with_gate(groundcite_ask::GateMode::Retrieval),
        trace_options: groundcite_store::TraceOptions {
            docs: Some("test-docs".into()),
            ..Default::default()
        },
        docs_dir: Some(docs),
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

/// A search service that returns one refunds chunk, or nothing, or fails.
struct Service(Result<Vec<groundcite_core::Chunk>, &'static str>);

impl groundcite_ask::Retriever for Service {
    fn name(&self) -> &'static str {
        "postgres"
    }
    fn search(
        &self,
        _question: &str,
        _limit: usize,
    ) -> Result<Vec<groundcite_core::Chunk>, groundcite_ask::RetrieverError> {
        self.0.clone().map_err(|m| groundcite_ask::RetrieverError {
            retriever: "postgres",
            message: m.into(),
        })
    }
    fn score_floor(&self) -> f64 {
        0.1
    }
}

fn service_corpus(service: Service) -> Corpus {
    Corpus {
        source: groundcite_server::CorpusSource::Retriever(Arc::new(service)),
        embed: None,
        settings: groundcite_ask::AskSettings::with_gate(groundcite_ask::GateMode::Retrieval),
        trace_options: groundcite_store::TraceOptions::default(),
        docs_dir: None,
    }
}

#[tokio::test]
async fn ask_searches_a_service_instead_of_the_index() {
    let refunds = groundcite_core::Chunk {
        chunk_id: "refunds.txt#chunk-1".into(),
        content: "Refunds are available within 30 days of purchase.".into(),
        source_title: Some("Refunds".into()),
        source_url: None,
        page_number: Some(2),
        score: Some(0.7),
    };
    let (s, g) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(service_corpus(Service(Ok(vec![refunds])))),
    )
    .await;
    let info = send(&s, get("/v1/info", Some(KEY_A))).await.json();
    assert_eq!(info["corpus"]["retriever"], "postgres");
    assert_eq!(info["corpus"]["documents"], Value::Null);
    let r = send(
        &s,
        post(
            "/v1/ask",
            Some(KEY_A),
            &json!({"question": "Refunds within 30 days?"}),
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
    assert_eq!(c["answerable"], true);
    assert_eq!(c["sources"][0]["chunk_id"], "refunds.txt#chunk-1");
    assert_eq!(
        c["sources"][0]["page_number"], 2,
        "the service's page, kept"
    );
    assert_eq!(c["sources"][0]["source_url"], Value::Null, "not invented");
    let t = stored_trace(&s, c["trace_id"].as_str().expect("id")).await;
    assert_eq!(t["options"]["signals"]["external"]["retriever"], "postgres");
    assert_eq!(t["options"]["signals"]["external"]["hits"], 1);
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(1));
    // Its documents are not served.
    let r = send(&s, get("/v1/chunks/a.pdf%23chunk-0/document", Some(KEY_A))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_service_that_finds_nothing_refuses_and_one_that_fails_is_a_502() {
    let (s, g) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(service_corpus(Service(Ok(Vec::new())))),
    )
    .await;
    let r = send(
        &s,
        post("/v1/ask", Some(KEY_A), &json!({"question": "Refunds?"})),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(r.json()["refusal"]["code"], "R1");
    assert_eq!(g.as_ref().map(|g| g.calls.load(Ordering::SeqCst)), Some(0));
    let (s, _) = state_full(
        Some(Script::Answer(ask_answer())),
        Limits::default(),
        Some(service_corpus(Service(Err("connection refused")))),
    )
    .await;
    let r = send(
        &s,
        post("/v1/ask", Some(KEY_A), &json!({"question": "Refunds?"})),
    )
    .await;
    // An upstream failure, named as such: the retriever's kind and the
    // request's trace ID, not its error text (that is logged).
    assert_eq!(r.status, StatusCode::BAD_GATEWAY);
    assert_eq!(r.code(), "retriever_error");
    let e = r.json();
    let message = e["error"]["message"].as_str().expect("message");
    assert!(message.contains("(postgres)"), "{message}");
    assert!(!message.contains("connection refused"), "{message}");
    assert!(e["error"]["trace_id"].is_string(), "{e}");
}
