//! Provider-native citations: realistic Anthropic and Bedrock payloads in
//! `testdata/native/`, converted to contract v1 and checked against
//! `testdata/native/cases.json`; streaming equals non-streaming.

#![allow(clippy::unwrap_used)]

use groundcite_core::native::{SourceLayout, anthropic, bedrock};
use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, Contract, MatchKind, MatchProfile, Provenance, normalize,
};
use serde::Deserialize;
use serde_json::Value;

mod common;
use common::{check_contract, contract_validator, repo_root};

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo_root().join("testdata/native").join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&read(rel)).unwrap()
}

fn chunks(rel: &str) -> ChunkSet {
    let list: Vec<Chunk> = serde_json::from_str(&read(rel)).unwrap();
    ChunkSet::new(list).unwrap()
}

fn provenance() -> Provenance {
    Provenance {
        trace_id: "test-trace".into(),
        created_at: "2026-11-30T00:00:00Z".into(),
        question: None,
        model: None,
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    from: String,
    chunks: String,
    response: String,
    #[serde(default)]
    request: Option<String>,
    expect: Value,
}

fn convert(case: &Case, set: &ChunkSet) -> Contract {
    let response: Value = match case.from.as_str() {
        "anthropic" => anthropic::read_response(&read(&case.response)).unwrap(),
        _ => json(&case.response),
    };
    let layout = match (&case.request, case.from.as_str()) {
        (Some(r), "anthropic") => SourceLayout::from_anthropic_request(&json(r), set).unwrap(),
        (Some(r), "bedrock-converse") => {
            SourceLayout::from_converse_request(&json(r), set).unwrap()
        }
        (Some(_), other) => panic!("no request layout for {other}"),
        (None, _) => SourceLayout::one_per_chunk(set),
    };
    let p = MatchProfile::Default;
    match case.from.as_str() {
        "anthropic" => anthropic::convert(
            &response,
            set,
            &layout,
            p,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap(),
        "bedrock-rag" => bedrock::convert_retrieve_and_generate(
            &response,
            set,
            p,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap(),
        "bedrock-converse" => bedrock::convert_converse(
            &response,
            set,
            &layout,
            p,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap(),
        other => panic!("unknown provider {other}"),
    }
}

#[test]
fn native_cases() {
    let v = contract_validator();
    let cases: Vec<Case> = serde_json::from_str(&read("cases.json")).unwrap();
    let mut failed = Vec::new();
    for case in &cases {
        let ctx = format!("testdata/native/cases.json: {:?}", case.name);
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let set = chunks(&case.chunks);
            let contract = convert(case, &set);
            let actual = serde_json::to_value(&contract).unwrap();
            if std::env::var_os("GROUNDCITE_PRINT").is_some() {
                eprintln!("{ctx}:\n{actual:#}");
            }
            if let Err(e) = v.validate(&actual) {
                panic!("{ctx}: schema: {e}\n{actual:#}");
            }
            check_contract(&case.expect, &actual, &ctx);
            for claim in &contract.claims {
                for cit in &claim.citations {
                    let chunk = set.get(&cit.chunk_id).unwrap();
                    if cit.kind != MatchKind::Reference {
                        let st = cit.source_text.as_deref().unwrap();
                        assert_eq!(cit.span.unwrap().slice(&chunk.content), Some(st), "{ctx}");
                        assert_eq!(
                            normalize(st, MatchProfile::Default),
                            normalize(cit.quote.as_deref().unwrap(), MatchProfile::Default),
                            "{ctx}"
                        );
                    }
                }
            }
        }));
        if ok.is_err() {
            failed.push(ctx);
        }
    }
    assert!(
        failed.is_empty(),
        "{} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(cases.len() >= 10, "only {} native cases", cases.len());
}

/// The SSE stream of a response, accumulated, gives the same message and
/// the same contract as the non-streamed response.
#[test]
fn streaming_equals_non_streaming() {
    let set = chunks("anthropic/documents.chunks.json");
    let layout = SourceLayout::one_per_chunk(&set);
    let whole = json("anthropic/documents.response.json");
    let events = anthropic::parse_sse(&read("anthropic/documents.stream.sse")).unwrap();
    assert!(events.len() > 40);
    let streamed = anthropic::accumulate_stream(&events).unwrap();
    assert_eq!(streamed["content"], whole["content"]);
    assert_eq!(streamed["stop_reason"], whole["stop_reason"]);
    let a = anthropic::convert(
        &whole,
        &set,
        &layout,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    let b = anthropic::convert(
        &streamed,
        &set,
        &layout,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    assert_eq!(a, b);
    // The same events as a JSON array and as JSON Lines.
    let arr = serde_json::to_string(&events).unwrap();
    let jsonl: String = events.iter().map(|e| format!("{e}\n")).collect();
    for body in [arr, jsonl] {
        let m = anthropic::read_response(&body).unwrap();
        let c = anthropic::convert(
            &m,
            &set,
            &layout,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap();
        assert_eq!(c, a);
    }
}

/// Streams whose citation deltas arrive after the text, or whose block
/// start carries no `citations` key, accumulate the same.
#[test]
fn stream_variants_accumulate_the_same() {
    let whole = json("anthropic/documents.response.json");
    let mut events = anthropic::parse_sse(&read("anthropic/documents.stream.sse")).unwrap();
    for e in &mut events {
        if e["type"] == "content_block_start" {
            e["content_block"]
                .as_object_mut()
                .unwrap()
                .remove("citations");
        }
    }
    // Move every citations_delta after the last text_delta of its block.
    let (cits, mut rest): (Vec<Value>, Vec<Value>) = events
        .into_iter()
        .partition(|e| e["delta"]["type"] == "citations_delta");
    for c in cits {
        let idx = c["index"].clone();
        let stop = rest
            .iter()
            .position(|e| e["type"] == "content_block_stop" && e["index"] == idx)
            .unwrap();
        rest.insert(stop, c);
    }
    let streamed = anthropic::accumulate_stream(&rest).unwrap();
    assert_eq!(streamed["content"], whole["content"]);
}

#[test]
fn stream_errors_are_bad_input_or_refusals() {
    let e = anthropic::accumulate_stream(&[serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}})])
        .unwrap_err();
    assert!(e.message.contains("before message_start"), "{e}");
    let err = anthropic::read_response("event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n").unwrap();
    let set = chunks("anthropic/documents.chunks.json");
    let c = anthropic::convert(
        &err,
        &set,
        &SourceLayout::one_per_chunk(&set),
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    assert_eq!(c.refusal.unwrap().code, groundcite_core::RefusalCode::R3);
    let bad = anthropic::parse_sse("data: {not json}\n\n").unwrap_err();
    assert!(bad.message.contains("not JSON"), "{bad}");
}

#[test]
fn layout_from_request_must_match_the_chunks() {
    let set = chunks("anthropic/documents.chunks.json");
    let e = SourceLayout::from_anthropic_request(&json("anthropic/content.request.json"), &set)
        .unwrap_err();
    assert!(
        e.message.contains("sent 4 source unit(s)") && e.message.contains("3 chunk(s)"),
        "{e}"
    );
    let set = chunks("bedrock/converse.chunks.json");
    assert!(
        SourceLayout::from_converse_request(&json("bedrock/converse.request.json"), &set).is_ok()
    );
}

#[test]
fn malformed_citations_name_their_path() {
    let set = chunks("anthropic/documents.chunks.json");
    let layout = SourceLayout::one_per_chunk(&set);
    let r = serde_json::json!({"type": "message", "content": [
        {"type": "text", "text": "x"},
        {"type": "text", "text": "y", "citations": [{"type": "char_location", "cited_text": "a", "document_index": 0, "start_char_index": "zero", "end_char_index": 3}]}
    ]});
    let e = anthropic::convert(
        &r,
        &set,
        &layout,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap_err();
    assert_eq!(e.path, ".content[1].citations[0].start_char_index");
    let r = serde_json::json!({"output": {"text": "a"}, "citations": [{"retrievedReferences": [{"content": {"text": 5}}], "generatedResponsePart": {"textResponsePart": {"text": "a"}}}]});
    let e = bedrock::convert_retrieve_and_generate(
        &r,
        &set,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap_err();
    assert_eq!(e.path, ".citations[0].retrievedReferences[0].content.text");
}

/// The model named in the response reaches the contract when the caller
/// gave none.
#[test]
fn model_is_taken_from_the_response() {
    let set = chunks("anthropic/documents.chunks.json");
    let c = anthropic::convert(
        &json("anthropic/documents.response.json"),
        &set,
        &SourceLayout::one_per_chunk(&set),
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    assert_eq!(c.model.as_deref(), Some("claude-sonnet-4-5-20250929"));
}

/// Indices at the edge of the integer range are warnings, not overflows.
#[test]
fn huge_indices_do_not_overflow() {
    let set = chunks("anthropic/documents.chunks.json");
    let layout = SourceLayout::one_per_chunk(&set);
    let max = u64::MAX;
    let r = serde_json::json!({"type": "message", "content": [
        {"type": "text", "text": "a", "citations": [
            {"type": "char_location", "cited_text": "Refund policy", "document_index": 0, "start_char_index": max, "end_char_index": max},
            {"type": "content_block_location", "cited_text": "x", "document_index": max, "start_block_index": 0, "end_block_index": max},
            {"type": "page_location", "cited_text": "x", "document_index": 1, "start_page_number": max, "end_page_number": max},
            {"type": "search_result_location", "cited_text": "x", "search_result_index": 0, "start_block_index": 0, "end_block_index": max}
        ]}
    ]});
    let c = anthropic::convert(
        &r,
        &set,
        &layout,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    assert_eq!(
        c.claims.len(),
        1,
        "the char citation's text is in the chunk"
    );
    assert_eq!(c.warnings[0].code.as_str(), "citation_location_mismatch");
    let r = serde_json::json!({"output": {"text": "Refunds."}, "citations": [{"generatedResponsePart": {"textResponsePart": {"text": "Refunds.", "span": {"start": max, "end": max}}}, "retrievedReferences": [{"content": {"text": set.chunks()[0].content}}]}]});
    let c = bedrock::convert_retrieve_and_generate(
        &r,
        &set,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .unwrap();
    assert_eq!(c.warnings[0].code.as_str(), "span_out_of_range");
    assert_eq!(c.claims.len(), 1);
}
