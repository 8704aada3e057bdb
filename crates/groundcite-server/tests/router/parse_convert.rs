//! `POST /v1/parse` and `POST /v1/convert`: answers from elsewhere,
//! verified, traced and re-verified.

use axum::http::StatusCode;
use serde_json::json;

use crate::common::{KEY_A, chunks, get, post, reverified, send, state};

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

/// The channels read after the first three — Gemini grounding, Cohere
/// citations, OpenAI Responses file citations — convert, are traced under
/// their format's name and re-verify to the same contract.
#[tokio::test]
async fn gemini_cohere_and_openai_responses_convert_and_re_verify() {
    let s = state().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/native");
    let read = |rel: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(rel)).unwrap_or_default())
            .unwrap_or_default()
    };
    for (from, folder, response) in [
        ("gemini", "gemini", "grounded.response.json"),
        ("cohere", "cohere", "rag.response.json"),
        (
            "openai-responses",
            "openai-responses",
            "file_search.response.json",
        ),
    ] {
        let body = json!({"chunks": read(&format!("{folder}/chunks.json")), "from": from,
                          "response": read(&format!("{folder}/{response}"))});
        let r = send(&s, post("/v1/convert", Some(KEY_A), &body)).await;
        assert_eq!(
            r.status,
            StatusCode::OK,
            "{from}: {}",
            String::from_utf8_lossy(&r.body)
        );
        let c = r.json();
        assert_eq!(c["answerable"], true, "{from}: {c}");
        assert_eq!(c["claims"][0]["citations"][0]["match"], "reference", "{c}");
        let id = c["trace_id"].as_str().unwrap_or("").to_string();
        let t = send(&s, get(&format!("/v1/traces/{id}"), Some(KEY_A))).await;
        assert_eq!(t.json()["answer_form"], from);
        let again = reverified(&s, &id).await;
        assert_eq!(again["same"], true, "{from}: {again}");
    }
    // File citations without their search results: 422 naming the include.
    let body = json!({"chunks": read("openai-responses/chunks.json"), "from": "openai-responses",
                      "response": read("openai-responses/no_results.response.json")});
    let r = send(&s, post("/v1/convert", Some(KEY_A), &body)).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        String::from_utf8_lossy(&r.body).contains("file_search_call.results"),
        "{}",
        String::from_utf8_lossy(&r.body)
    );
}
