//! End-to-end tests of `groundcite parse` and `groundcite convert`: output
//! snapshots, the loud-failure exit code 3, bad input (exit code 2) and
//! hostile bytes.

#![allow(clippy::unwrap_used)]

use std::process::Output;

use crate::common::{Tmp, groundcite, repo, schema_validator, settings, text};

const CHUNKS: &str = "testdata/prose/cli/chunks.json";
const ANSWER: &str = "testdata/prose/cli/answer.md";

fn ok_json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    schema_validator().validate(&v).unwrap();
    v
}

#[test]
fn parse_markdown_answer_json() {
    let out = groundcite(
        &[
            "parse",
            "--chunks",
            CHUNKS,
            "--text",
            ANSWER,
            "--question",
            "Can I return my order?",
        ],
        None,
    );
    let v = ok_json(&out);
    // Five sentences carry markers; the one citing [7] of 3 chunks is dropped.
    assert_eq!(v["claims"].as_array().unwrap().len(), 4);
    assert_eq!(v["warnings"][0]["code"], "marker_out_of_range");
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

#[test]
fn parse_markdown_answer_text() {
    let out = groundcite(
        &[
            "parse",
            "--chunks",
            CHUNKS,
            "--text",
            ANSWER,
            "--format",
            "text",
            "--trace-id",
            "demo-1",
            "--model",
            "some-model",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

#[test]
fn parse_reference_section_from_stdin() {
    let answer = std::fs::read(repo().join("testdata/prose/cli/sources.md")).unwrap();
    let out = groundcite(
        &[
            "parse",
            "--chunks",
            CHUNKS,
            "--text",
            "-",
            "--trace-id",
            "t-2",
        ],
        Some(&answer),
    );
    let v = ok_json(&out);
    assert_eq!(v["claims"].as_array().unwrap().len(), 1);
    assert_eq!(v["sources"].as_array().unwrap().len(), 2);
    assert_eq!(v["claims"][0]["citations"][0]["match"], "reference");
}

#[test]
fn parse_without_citations_exits_3_with_the_head_of_the_answer() {
    let out = groundcite(
        &[
            "parse",
            "--chunks",
            CHUNKS,
            "--text",
            "testdata/prose/cli/uncited.md",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("over 3 chunk(s)"), "{err}");
    assert!(
        err.contains("head=\"Refunds are available within 30 days of purchase;"),
        "{err}"
    );
    settings().bind(|| insta::assert_snapshot!(err));
}

#[test]
fn parse_rejected_markers_only_exits_3() {
    let out = groundcite(
        &["parse", "--chunks", CHUNKS, "--text", "-"],
        Some(b"Refunds take 30 days [9]."),
    );
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(err.starts_with("error: <stdin>: no citation could be extracted from a 25-character answer over 3 chunk(s)"), "{err}");
    assert!(
        err.contains("1 marker(s) were recognised but rejected"),
        "{err}"
    );
}

fn bad(name: &str, args: &[&str], stdin: Option<&[u8]>) {
    let out = groundcite(args, stdin);
    assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{name}");
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "{name}: {err}");
    settings().bind(|| insta::assert_snapshot!(name, err));
}

#[test]
fn parse_bad_input_exits_2() {
    bad(
        "parse_empty_text",
        &["parse", "--chunks", CHUNKS, "--text", "-"],
        Some(b" \n\t\n"),
    );
    bad(
        "parse_both_stdin",
        &["parse", "--chunks", "-", "--text", "-"],
        Some(b""),
    );
    bad(
        "parse_missing_text_file",
        &["parse", "--chunks", CHUNKS, "--text", "no/such/answer.md"],
        None,
    );
    bad(
        "parse_bad_chunks",
        &["parse", "--chunks", "-", "--text", ANSWER],
        Some(b"[{\"chunk_id\": \"c1\", \"content\": 5}]"),
    );
    bad(
        "parse_invalid_utf8",
        &["parse", "--chunks", CHUNKS, "--text", "-"],
        Some(b"Refunds [1] \xff\xfe"),
    );
    bad(
        "parse_bad_trace_id",
        &[
            "parse",
            "--chunks",
            CHUNKS,
            "--text",
            ANSWER,
            "--trace-id",
            "a b",
        ],
        None,
    );
}

const NATIVE: &str = "testdata/native";

#[test]
fn convert_anthropic_json_and_stream_agree() {
    let chunks = format!("{NATIVE}/anthropic/documents.chunks.json");
    let run = |response: &str| {
        let out = groundcite(
            &[
                "convert",
                "--from",
                "anthropic",
                "--response",
                response,
                "--chunks",
                &chunks,
                "--trace-id",
                "t-3",
            ],
            None,
        );
        let mut v = ok_json(&out);
        v["created_at"] = serde_json::Value::Null;
        v
    };
    let a = run(&format!("{NATIVE}/anthropic/documents.response.json"));
    let b = run(&format!("{NATIVE}/anthropic/documents.stream.sse"));
    assert_eq!(a, b);
    assert_eq!(a["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(a["claims"].as_array().unwrap().len(), 3);
}

#[test]
fn convert_anthropic_text_snapshot() {
    let out = groundcite(
        &[
            "convert",
            "--from",
            "anthropic",
            "--response",
            &format!("{NATIVE}/anthropic/content.response.json"),
            "--request",
            &format!("{NATIVE}/anthropic/content.request.json"),
            "--chunks",
            &format!("{NATIVE}/anthropic/content.chunks.json"),
            "--format",
            "text",
            "--trace-id",
            "demo-2",
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    settings().bind(|| insta::assert_snapshot!(text(&out.stdout)));
}

#[test]
fn convert_bedrock_rag_and_converse() {
    let out = groundcite(
        &[
            "convert",
            "--from",
            "bedrock-rag",
            "--response",
            &format!("{NATIVE}/bedrock/rag.response.json"),
            "--chunks",
            &format!("{NATIVE}/bedrock/rag.chunks.json"),
        ],
        None,
    );
    let v = ok_json(&out);
    assert_eq!(v["claims"].as_array().unwrap().len(), 3);
    let out = groundcite(
        &[
            "convert",
            "--from",
            "bedrock-converse",
            "--response",
            &format!("{NATIVE}/bedrock/converse.response.json"),
            "--request",
            &format!("{NATIVE}/bedrock/converse.request.json"),
            "--chunks",
            &format!("{NATIVE}/bedrock/converse.chunks.json"),
        ],
        None,
    );
    let v = ok_json(&out);
    assert_eq!(v["claims"].as_array().unwrap().len(), 4);
    settings()
        .bind(|| insta::assert_snapshot!(serde_json::to_string_pretty(&v["warnings"]).unwrap()));
}

/// Gemini grounding, Cohere citations and OpenAI Responses file citations
/// convert through the CLI; file citations without their search results
/// are bad input that says what to include.
#[test]
fn convert_gemini_cohere_and_openai_responses() {
    for (from, folder, response, claims) in [
        ("gemini", "gemini", "grounded.response.json", 4),
        ("cohere", "cohere", "rag.response.json", 4),
        (
            "openai-responses",
            "openai-responses",
            "file_search.response.json",
            3,
        ),
    ] {
        let out = groundcite(
            &[
                "convert",
                "--from",
                from,
                "--response",
                &format!("{NATIVE}/{folder}/{response}"),
                "--chunks",
                &format!("{NATIVE}/{folder}/chunks.json"),
            ],
            None,
        );
        let v = ok_json(&out);
        assert_eq!(v["claims"].as_array().unwrap().len(), claims, "{from}");
        assert!(
            v["claims"][0]["citations"][0]["match"] == "reference",
            "{from}: {v}"
        );
    }
    let out = groundcite(
        &[
            "convert",
            "--from",
            "openai-responses",
            "--response",
            &format!("{NATIVE}/openai-responses/no_results.response.json"),
            "--chunks",
            &format!("{NATIVE}/openai-responses/chunks.json"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("file_search_call.results"), "{err}");
    let out = groundcite(
        &[
            "convert",
            "--from",
            "cohere",
            "--response",
            &format!("{NATIVE}/cohere/rag.response.json"),
            "--chunks",
            &format!("{NATIVE}/cohere/chunks.json"),
            "--request",
            &format!("{NATIVE}/openai-responses/file_search.request.json"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--request"));
}

#[test]
fn convert_bad_input_exits_2() {
    let chunks = format!("{NATIVE}/anthropic/documents.chunks.json");
    bad(
        "convert_malformed_response",
        &[
            "convert",
            "--from",
            "bedrock-rag",
            "--response",
            "-",
            "--chunks",
            &chunks,
        ],
        Some(b"{\"output\": {\"text\": \"a\"},\n \"citations\": [,]}"),
    );
    bad("convert_missing_field", &["convert", "--from", "anthropic", "--response", "-", "--chunks", &chunks], Some(br#"{"type": "message", "content": [{"type": "text", "text": "x", "citations": [{"type": "char_location", "cited_text": "a", "start_char_index": 0, "end_char_index": 1}]}]}"#));
    bad(
        "convert_layout_mismatch",
        &[
            "convert",
            "--from",
            "anthropic",
            "--response",
            &format!("{NATIVE}/anthropic/content.response.json"),
            "--request",
            &format!("{NATIVE}/anthropic/content.request.json"),
            "--chunks",
            &chunks,
        ],
        None,
    );
    bad(
        "convert_request_for_rag",
        &[
            "convert",
            "--from",
            "bedrock-rag",
            "--response",
            "-",
            "--chunks",
            &chunks,
            "--request",
            "x.json",
        ],
        Some(b"{}"),
    );
    bad(
        "convert_empty_response",
        &[
            "convert",
            "--from",
            "bedrock-converse",
            "--response",
            "-",
            "--chunks",
            &chunks,
        ],
        Some(b"\n"),
    );
    bad(
        "convert_sse_garbage",
        &[
            "convert",
            "--from",
            "anthropic",
            "--response",
            "-",
            "--chunks",
            &chunks,
        ],
        Some(b"event: message_start\ndata: {oops\n\n"),
    );
}

/// No bytes make `parse` or `convert` panic; exit codes stay 0, 2 or 3.
#[test]
fn hostile_bytes_never_panic() {
    let tmp = Tmp::new("hostile");
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let seeds: Vec<Vec<u8>> = vec![
        std::fs::read(repo().join(ANSWER)).unwrap(),
        std::fs::read(repo().join(format!("{NATIVE}/anthropic/documents.response.json"))).unwrap(),
        std::fs::read(repo().join(format!("{NATIVE}/bedrock/rag.response.json"))).unwrap(),
        std::fs::read(repo().join(format!("{NATIVE}/anthropic/documents.stream.sse"))).unwrap(),
    ];
    let chunks = format!("{NATIVE}/anthropic/documents.chunks.json");
    for round in 0..24 {
        let mut blob = seeds[round % seeds.len()].clone();
        for _ in 0..(1 + rnd() % 12) {
            let pos = (rnd() as usize) % (blob.len() + 1);
            match rnd() % 3 {
                0 if pos < blob.len() => blob[pos] = rnd() as u8,
                1 => blob.insert(pos, b"[]()^\"{}:,\n0123"[(rnd() % 15) as usize]),
                _ if pos < blob.len() => {
                    blob.remove(pos);
                }
                _ => {}
            }
        }
        let f = tmp.file("blob", &blob);
        for args in [
            vec!["parse", "--chunks", CHUNKS, "--text", f.as_str()],
            vec![
                "convert",
                "--from",
                "anthropic",
                "--response",
                f.as_str(),
                "--chunks",
                chunks.as_str(),
            ],
            vec![
                "convert",
                "--from",
                "bedrock-rag",
                "--response",
                f.as_str(),
                "--chunks",
                chunks.as_str(),
            ],
            vec![
                "convert",
                "--from",
                "bedrock-converse",
                "--response",
                f.as_str(),
                "--chunks",
                chunks.as_str(),
            ],
        ] {
            let out = groundcite(&args, None);
            let err = text(&out.stderr);
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert!(
                matches!(out.status.code(), Some(0 | 2 | 3)),
                "{args:?}: {err}"
            );
        }
    }
}
