//! Provider-native citations: realistic Anthropic and Bedrock payloads in
//! `testdata/native/`, converted to contract v1 and checked against
//! `testdata/native/cases.json`; streaming equals non-streaming.

#![allow(clippy::unwrap_used)]

use groundcite_core::native::{self, NativeFormat, SourceLayout, anthropic, bedrock};
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
        // The formats that came after the dispatch: through it.
        other => {
            let format: NativeFormat = serde_json::from_value(Value::String(other.into()))
                .unwrap_or_else(|_| panic!("unknown provider {other}"));
            native::convert(
                format,
                &response,
                None,
                set,
                p,
                ClaimPolicy::Strict,
                provenance(),
            )
            .unwrap()
        }
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

fn dispatch(format: NativeFormat, response: &Value, set: &ChunkSet) -> Result<Contract, String> {
    native::convert(
        format,
        response,
        None,
        set,
        MatchProfile::Default,
        ClaimPolicy::Strict,
        provenance(),
    )
    .map_err(|(_, e)| format!("at {}: {}", e.path, e.message))
}

/// Every citation of a contract names a supplied chunk, and every quoted
/// citation's span holds its source text.
fn sound(c: &Contract, set: &ChunkSet) {
    for claim in &c.claims {
        for cit in &claim.citations {
            let chunk = set.get(&cit.chunk_id).unwrap();
            if let (Some(span), Some(st)) = (cit.span, cit.source_text.as_deref()) {
                assert_eq!(span.slice(&chunk.content), Some(st));
            }
        }
    }
}

/// Gemini segment offsets are UTF-8 bytes: code-point offsets of the same
/// text miss it past the first astral character, and an offset inside a
/// character reads nothing (no panic), whatever the offsets.
#[test]
fn gemini_byte_offsets_and_hostile_segments() {
    let set = chunks("gemini/chunks.json");
    let text = "🧾 Refunds are available within 30 days of purchase.";
    let claim = "Refunds are available within 30 days of purchase.";
    let support = |segment: Value| {
        serde_json::json!({"candidates": [{"content": {"parts": [{"text": text}]},
            "groundingMetadata": {"groundingChunks": [{"retrievedContext": {"uri": "https://help.example.com/refunds", "text": "Refunds are available within 30 days of purchase."}}],
                                  "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}]}}]})
    };
    // Bytes: the claim starts at byte 5 (🧾 is 4 bytes, then a space).
    let c = dispatch(
        NativeFormat::Gemini,
        &support(serde_json::json!({"startIndex": 5, "endIndex": 5 + claim.len()})),
        &set,
    )
    .unwrap();
    assert_eq!(c.claims.len(), 1, "{c:?}");
    assert_eq!(c.claims[0].text, claim);
    assert_eq!(c.claims[0].citations[0].chunk_id, "refunds#0");
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    // The same span in code points (2..) misses the text: no claim from it.
    let c = dispatch(
        NativeFormat::Gemini,
        &support(serde_json::json!({"startIndex": 2, "endIndex": 2 + claim.len()})),
        &set,
    )
    .unwrap();
    assert!(c.claims.is_empty(), "{c:?}");
    assert_eq!(c.warnings[0].code.as_str(), "span_out_of_range");
    // Every start/end pair over the text (inside characters, reversed,
    // beyond the end), with and without the stated text: no panic.
    for start in 0..text.len() + 2 {
        for end in [0, 1, 3, 4, 5, 6, text.len() - 1, text.len(), text.len() + 1] {
            for stated in [None, Some(claim)] {
                let mut seg = serde_json::json!({"startIndex": start, "endIndex": end});
                if let Some(t) = stated {
                    seg["text"] = t.into();
                }
                let c = dispatch(NativeFormat::Gemini, &support(seg), &set).unwrap();
                sound(&c, &set);
            }
        }
    }
    let huge = serde_json::json!({"partIndex": u64::MAX, "startIndex": u64::MAX, "endIndex": u64::MAX, "text": claim});
    let c = dispatch(NativeFormat::Gemini, &support(huge), &set).unwrap();
    assert_eq!(c.claims.len(), 1, "the stated text is in the answer");
    let mut r = support(serde_json::json!({"startIndex": 5, "endIndex": 5 + claim.len()}));
    r["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["groundingChunkIndices"] =
        serde_json::json!([u64::MAX]);
    let c = dispatch(NativeFormat::Gemini, &r, &set).unwrap();
    assert!(
        c.warnings
            .iter()
            .any(|w| w.code.as_str() == "source_index_out_of_range")
    );
}

/// Wrong types are bad input naming their path, for each new channel.
#[test]
fn new_channels_name_the_path_of_wrong_types() {
    let set = chunks("gemini/chunks.json");
    let cases: Vec<(NativeFormat, Value, &str)> = vec![
        (NativeFormat::Gemini, serde_json::json!([]), ""),
        (
            NativeFormat::Gemini,
            serde_json::json!({"candidates": {}}),
            ".candidates",
        ),
        (
            NativeFormat::Gemini,
            serde_json::json!({"candidates": [{"content": {"parts": [{"text": 5}]}}]}),
            ".candidates[0].content.parts[0].text",
        ),
        (
            NativeFormat::Gemini,
            serde_json::json!({"candidates": [{"groundingMetadata": {"groundingSupports": [{"segment": {"startIndex": -1, "endIndex": 2}, "groundingChunkIndices": [0]}]}}]}),
            ".candidates[0].groundingMetadata.groundingSupports[0].segment.startIndex",
        ),
        (
            NativeFormat::Gemini,
            serde_json::json!({"candidates": [{"groundingMetadata": {"groundingSupports": [{"segment": {"endIndex": 2}, "groundingChunkIndices": ["0"]}]}}]}),
            ".candidates[0].groundingMetadata.groundingSupports[0].groundingChunkIndices[0]",
        ),
        (
            NativeFormat::Gemini,
            serde_json::json!({"candidates": [{"groundingMetadata": {"groundingChunks": [{"retrievedContext": {"uri": 3}}]}}]}),
            ".candidates[0].groundingMetadata.groundingChunks[0].retrievedContext.uri",
        ),
        (NativeFormat::Cohere, serde_json::json!({}), ".message"),
        (
            NativeFormat::Cohere,
            serde_json::json!({"message": {"content": [{"type": "text", "text": ["x"]}]}}),
            ".message.content[0].text",
        ),
        (
            NativeFormat::Cohere,
            serde_json::json!({"message": {"citations": [{"start": 1.5, "end": 2, "sources": [{"id": "a"}]}]}}),
            ".message.citations[0].start",
        ),
        (
            NativeFormat::Cohere,
            serde_json::json!({"message": {"citations": [{"start": 0, "end": 2, "sources": [{"id": 7}]}]}}),
            ".message.citations[0].sources[0].id",
        ),
        (
            NativeFormat::OpenaiResponses,
            serde_json::json!({}),
            ".output",
        ),
        (
            NativeFormat::OpenaiResponses,
            serde_json::json!({"output": [{"type": "message", "content": [{"type": "output_text", "text": "x", "annotations": [{"type": "file_citation", "file_id": "f", "index": "0"}]}]}]}),
            ".output[0].content[0].annotations[0].index",
        ),
        (
            NativeFormat::OpenaiResponses,
            serde_json::json!({"output": [{"type": "file_search_call", "results": [{"text": "x"}]}]}),
            ".output[0].results[0].file_id",
        ),
    ];
    for (format, response, path) in cases {
        let e = native::convert(
            format,
            &response,
            None,
            &set,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap_err();
        assert_eq!(e.1.path, path, "{format:?} {response}: {}", e.1.message);
    }
    // A request is refused for the formats that carry their own sources.
    for format in [
        NativeFormat::Gemini,
        NativeFormat::Cohere,
        NativeFormat::OpenaiResponses,
    ] {
        let e = native::convert(
            format,
            &serde_json::json!({}),
            Some(&serde_json::json!({})),
            &set,
            MatchProfile::Default,
            ClaimPolicy::Strict,
            provenance(),
        )
        .unwrap_err();
        assert_eq!(e.0, native::NativeInput::Request);
    }
}

/// File citations without the search results in the response cannot be
/// mapped: bad input that says what to include, never an empty list.
#[test]
fn openai_file_citations_need_the_search_results() {
    let set = chunks("openai-responses/chunks.json");
    let e = dispatch(
        NativeFormat::OpenaiResponses,
        &json("openai-responses/no_results.response.json"),
        &set,
    )
    .unwrap_err();
    assert!(
        e.contains("6 file_citation annotation(s)")
            && e.contains(native::openai_responses::INCLUDE_RESULTS),
        "{e}"
    );
    // The recorded request is the one that asks for them.
    let request = json("openai-responses/file_search.request.json");
    assert!(
        request["include"]
            .as_array()
            .unwrap()
            .contains(&Value::from(native::openai_responses::INCLUDE_RESULTS))
    );
    // Annotations at every index over a text with astral characters, and
    // huge ones: no panic.
    let text = "a𝄞b. é𝄞.";
    for index in (0..14).chain([u64::MAX]) {
        let r = serde_json::json!({"output": [
            {"type": "file_search_call", "results": [{"file_id": "f", "text": set.chunks()[0].content}]},
            {"type": "message", "content": [{"type": "output_text", "text": text, "annotations": [
                {"type": "file_citation", "file_id": "f", "index": index},
                {"type": "url_citation", "start_index": u64::MAX, "end_index": index, "url": "https://x"}]}]}]});
        let c = dispatch(NativeFormat::OpenaiResponses, &r, &set).unwrap();
        sound(&c, &set);
    }
}

/// Cohere offsets are code points: an astral character counts one.
#[test]
fn cohere_offsets_are_code_points() {
    let set = chunks("cohere/chunks.json");
    let text = "𝄞 The warranty covers defects for two years.";
    let claim = "The warranty covers defects for two years.";
    let r = |start: u64, end: u64, stated: Option<&str>| {
        let mut c = serde_json::json!({"start": start, "end": end, "sources": [{"type": "document", "id": "warranty#0"}]});
        if let Some(t) = stated {
            c["text"] = t.into();
        }
        serde_json::json!({"message": {"content": [{"type": "text", "text": text}], "citations": [c]}})
    };
    let n = claim.chars().count() as u64;
    let c = dispatch(NativeFormat::Cohere, &r(2, 2 + n, None), &set).unwrap();
    assert_eq!(c.claims.len(), 1, "{c:?}");
    assert_eq!(c.claims[0].text, claim);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    for start in (0..50).chain([u64::MAX]) {
        for end in [0, 1, 2, 5, 44, 45, u64::MAX] {
            for stated in [None, Some(claim), Some("")] {
                let c = dispatch(NativeFormat::Cohere, &r(start, end, stated), &set).unwrap();
                sound(&c, &set);
            }
        }
    }
}

/// Cohere's `start`/`end` count code points, not UTF-16 units nor UTF-8
/// bytes (docs/native.md gives the sources): with BMP non-ASCII characters
/// (`ü`, `°`, `—`: one code point, one UTF-16 unit, two or three bytes) and
/// astral ones (`𝄞`, `💶`: one code point, two UTF-16 units, four bytes)
/// before the cited span, the code-point span is the claim exactly and
/// warns nothing, while the same span counted in UTF-16 units or in bytes
/// misses the stated text and is reported as `span_out_of_range`.
#[test]
fn cohere_offsets_past_non_ascii_and_astral_characters_are_code_points() {
    let set = chunks("cohere/chunks.json");
    let prefix = "Für Kunden — 20°C 𝄞 💶: ";
    let claim = "The warranty covers manufacturing defects for two years.";
    let text = format!("{prefix}{claim}");
    let response = |start: usize, end: usize, stated: Option<&str>| {
        let mut c = serde_json::json!({"start": start, "end": end, "type": "TEXT_CONTENT",
            "sources": [{"type": "document", "id": "warranty#0"}]});
        if let Some(t) = stated {
            c["text"] = t.into();
        }
        serde_json::json!({"message": {"role": "assistant",
            "content": [{"type": "text", "text": text}], "citations": [c]},
            "finish_reason": "COMPLETE"})
    };
    let points = (prefix.chars().count(), claim.chars().count());
    let units = (prefix.encode_utf16().count(), claim.encode_utf16().count());
    let bytes = (prefix.len(), claim.len());
    // The three units really differ here, so the test tells them apart.
    assert!(
        points.0 < units.0 && units.0 < bytes.0,
        "{points:?} {units:?} {bytes:?}"
    );

    let (start, len) = points;
    for stated in [None, Some(claim)] {
        let c = dispatch(
            NativeFormat::Cohere,
            &response(start, start + len, stated),
            &set,
        )
        .unwrap();
        assert_eq!(c.claims.len(), 1, "{c:?}");
        assert_eq!(c.claims[0].text, claim);
        assert_eq!(c.claims[0].citations[0].chunk_id, "warranty#0");
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        sound(&c, &set);
    }
    for (start, len) in [units, bytes] {
        let c = dispatch(
            NativeFormat::Cohere,
            &response(start, start + len, Some(claim)),
            &set,
        )
        .unwrap();
        let codes: Vec<&str> = c.warnings.iter().map(|w| w.code.as_str()).collect();
        assert!(codes.contains(&"span_out_of_range"), "{start}..: {codes:?}");
        // The stated text occurs in the answer, so the claim is kept as stated.
        assert_eq!(c.claims.len(), 1, "{c:?}");
        assert_eq!(c.claims[0].text, claim);
        sound(&c, &set);
        // Without a stated text, the misread span is not the claim.
        let c = dispatch(
            NativeFormat::Cohere,
            &response(start, start + len, None),
            &set,
        )
        .unwrap();
        assert!(c.claims.iter().all(|k| k.text != claim), "{start}..: {c:?}");
        sound(&c, &set);
    }
}
