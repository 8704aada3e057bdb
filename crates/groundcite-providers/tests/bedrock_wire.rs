//! Amazon Bedrock Converse through the official AWS SDK against recorded
//! wire exchanges (`testdata/providers/bedrock/`): the SDK is pointed at the
//! replay server with `endpoint_url` and fixed fake credentials, and every
//! request is asserted (path, body, the SigV4 `authorization` shape, the
//! session token, the SDK's own retries off); ConverseStream answers are
//! replayed as binary event-stream frames. Never loosen a recording to make
//! a test pass.

#![cfg(feature = "bedrock")]
// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use groundcite_core::native::{SourceLayout, bedrock};
use groundcite_core::schema::{Target, request_fragment};
use groundcite_core::{
    ChunkSet, ClaimPolicy, GroundedAnswer, MatchProfile, Provenance, verify_with,
};
use groundcite_providers::replay::{Cassette, ReplayServer};
use groundcite_providers::{
    Bedrock, BedrockConfig, BedrockMode, BedrockStructured, Generation, GenerationRequest,
    Generator, HttpConfig, Mode, NativeSources, Output, ProviderError, RetryPolicy, SecretString,
    StaticCredentials,
};
use serde_json::Value;

/// The model of a cassette without `input.model`.
const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const SECRET_KEY: &str = "FAKE-bedrock-secret-key-0001";
const SESSION_TOKEN: &str = "FAKE-session-token-bedrock-0001";

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/providers/bedrock")
}

fn cases() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(testdata())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    out
}

fn provenance() -> Provenance {
    Provenance {
        trace_id: "t".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        question: None,
        model: None,
    }
}

fn generator(input: &Value, base: &str) -> Bedrock {
    let mode = match input["mode"].as_str().unwrap() {
        "tool" => BedrockMode::ToolUse,
        "citations" => BedrockMode::Citations,
        other => panic!("unknown mode {other}"),
    };
    let mut config = BedrockConfig::new(input["model"].as_str().unwrap_or(MODEL), mode);
    if let Some(structured) = input["structured"].as_str() {
        config.structured = structured.parse().unwrap();
    }
    config.region = Some("us-east-1".into());
    config.endpoint_url = Some(base.parse().unwrap());
    config.credentials = Some(StaticCredentials {
        access_key_id: "AKIAFAKEBEDROCK0001".into(),
        secret_access_key: SecretString::new(SECRET_KEY),
        session_token: Some(SecretString::new(SESSION_TOKEN)),
    });
    config.http = HttpConfig {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_millis(input["timeout_ms"].as_u64().unwrap_or(10_000)),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            max_retry_after: Duration::from_secs(5),
        },
        ..HttpConfig::default()
    };
    Bedrock::new(config).unwrap()
}

/// Whether the cassette's generator uses native structured output.
fn bedrock_config_native(input: &Value) -> bool {
    let structured: BedrockStructured = input["structured"]
        .as_str()
        .map_or(BedrockStructured::Auto, |s| s.parse().unwrap());
    structured.resolve(input["model"].as_str().unwrap_or(MODEL)) == BedrockStructured::Native
}

fn check_no_secret(what: &str, text: &str) {
    for s in [SECRET_KEY, SESSION_TOKEN] {
        assert!(!text.contains(s), "{what} contains the secret {s}: {text}");
    }
}

async fn run(
    g: &Bedrock,
    request: &GenerationRequest,
    stream: bool,
) -> (Result<Generation, ProviderError>, usize) {
    if !stream {
        return (g.generate(request).await, 0);
    }
    let mut s = match g.generate_stream(request).await {
        Ok(s) => s,
        Err(e) => return (Err(e), 0),
    };
    let mut deltas = 0;
    let mut text = String::new();
    while let Some(d) = s.next_delta().await.unwrap() {
        deltas += 1;
        text.push_str(&d);
    }
    let r = s.finish().await;
    if let Ok(Generation {
        output: Output::Json(j),
        ..
    }) = &r
    {
        assert_eq!(&text, j, "the deltas must concatenate to the output");
    }
    (r, deltas)
}

async fn run_case(path: &Path) {
    let ctx = path.file_stem().unwrap().to_string_lossy().into_owned();
    let cassette = Cassette::load(path).unwrap();
    let (input, expect) = (&cassette.input, &cassette.expect);
    let server = ReplayServer::for_cassette(&cassette).unwrap();
    let g = generator(input, &server.base_url());
    check_no_secret(&format!("{ctx}: the generator's Debug"), &format!("{g:?}"));
    let chunks_text = std::fs::read_to_string(
        path.parent()
            .unwrap()
            .join(input["chunks"].as_str().unwrap()),
    )
    .unwrap();
    let chunks = ChunkSet::new(serde_json::from_str(&chunks_text).unwrap()).unwrap();
    let question = input["question"].as_str().unwrap();
    let mut request = match g.mode() {
        Mode::Structured(target) => {
            // Native structured output checks Bedrock's subset; a tool's
            // input schema is linted as Anthropic's.
            let native = bedrock_config_native(input);
            let want = if native {
                Target::Bedrock
            } else {
                Target::Anthropic
            };
            assert_eq!(target, want, "{ctx}");
            GenerationRequest::grounded(&chunks, question, target)
        }
        Mode::NativeCitations => {
            GenerationRequest::native(&chunks, question, NativeSources::Documents)
        }
    };
    request.max_tokens = u32::try_from(input["max_tokens"].as_u64().unwrap()).unwrap();
    request.temperature = input["temperature"].as_f64();
    let stream = input["stream"].as_bool().unwrap_or(false);
    let started = Instant::now();
    let (result, deltas) = run(&g, &request, stream).await;
    let elapsed = started.elapsed();
    check_no_secret(
        &format!("{ctx}: Debug of the result"),
        &format!("{result:?}"),
    );
    let outcome = expect["outcome"].as_str().unwrap();
    match &result {
        Ok(generation) => {
            assert_eq!(
                outcome, "ok",
                "{ctx}: expected {outcome}, got {generation:?}"
            );
            let contract = match &generation.output {
                Output::Json(j) => {
                    if let Some(want) = expect["output"].as_str() {
                        assert_eq!(j, want, "{ctx}");
                    }
                    let answer: GroundedAnswer = serde_json::from_str(j).unwrap();
                    verify_with(
                        &answer,
                        &chunks,
                        MatchProfile::Default,
                        ClaimPolicy::default(),
                        provenance(),
                    )
                }
                Output::BedrockCitations(v) => bedrock::convert_converse(
                    v,
                    &chunks,
                    &SourceLayout::one_per_chunk(&chunks),
                    MatchProfile::Default,
                    ClaimPolicy::default(),
                    provenance(),
                )
                .unwrap(),
                other => panic!("{ctx}: unexpected output {other:?}"),
            };
            if let Some(n) = expect["verified_claims"].as_u64() {
                assert_eq!(contract.claims.len() as u64, n, "{ctx}: {contract:?}");
            }
            if let Some(m) = expect["model"].as_str() {
                assert_eq!(generation.model.as_deref(), Some(m), "{ctx}");
            }
            if let Some(id) = expect["request_id"].as_str() {
                assert_eq!(generation.request_id.as_deref(), Some(id), "{ctx}");
            }
            if let Some(u) = expect["usage"].as_array() {
                assert_eq!(generation.usage.input_tokens, u[0].as_u64(), "{ctx}");
                assert_eq!(generation.usage.output_tokens, u[1].as_u64(), "{ctx}");
            }
            if let Some(a) = expect["attempts"].as_u64() {
                assert_eq!(u64::from(generation.timings.attempts), a, "{ctx}");
            }
        }
        Err(e) => {
            check_no_secret(&format!("{ctx}: error Display"), &e.to_string());
            check_no_secret(&format!("{ctx}: error body"), e.body().unwrap_or(""));
            check_no_secret(&format!("{ctx}: error summary"), &e.summary().to_string());
            assert_eq!(e.kind().as_str(), outcome, "{ctx}: {e:?}");
            if let Some(code) = expect["refusal_code"].as_str() {
                assert_eq!(format!("{:?}", e.refusal_code()), code, "{ctx}");
            }
            if let Some(s) = expect["status"].as_u64() {
                assert_eq!(e.status().map(u64::from), Some(s), "{ctx}");
            }
            if let Some(a) = expect["attempts"].as_u64() {
                assert_eq!(u64::from(e.attempts()), a, "{ctx}: {e:?}");
            }
            if let Some(id) = expect["request_id"].as_str() {
                assert_eq!(e.request_id(), Some(id), "{ctx}: {e:?}");
            }
            if let Some(b) = expect["body_contains"].as_str() {
                assert!(e.body().unwrap_or("").contains(b), "{ctx}: {e:?}");
            }
            if let Some(p) = expect["partial_output"].as_str() {
                assert_eq!(e.partial_output(), Some(p), "{ctx}");
            }
        }
    }
    if let Some(n) = expect["min_deltas"].as_u64() {
        assert!(stream, "{ctx}: min_deltas on a non-streamed case");
        assert!(deltas as u64 >= n, "{ctx}: {deltas} deltas");
    }
    if let Some(ms) = expect["min_elapsed_ms"].as_u64() {
        assert!(
            elapsed >= Duration::from_millis(ms),
            "{ctx}: Retry-After not honoured ({elapsed:?})"
        );
    }
    let problems = server.problems();
    assert!(problems.is_empty(), "{ctx}: {}", problems.join("\n"));
}

#[tokio::test]
async fn bedrock_recorded_exchanges() {
    let cases = cases();
    assert!(cases.len() >= 20, "{} cases", cases.len());
    for case in cases {
        run_case(&case).await;
    }
}

#[test]
fn every_failure_case_is_recorded() {
    let names: Vec<String> = cases()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for needed in [
        "success",
        "streaming",
        "stream_truncated",
        "stream_error_event",
        "stream_reset_midway",
        "content_filtered",
        "guardrail_intervened",
        "truncation",
        "invalid_json",
        "rate_limited_then_success",
        "server_error",
        "timeout",
        "connection_reset",
        "forbidden_echoes_secrets",
        "citations_success",
        "citations_guardrail_intervened",
        "citations_truncation",
        "citations_malformed_response",
        "native_success",
        "native_streaming",
        "native_truncation",
        "native_not_an_object",
        "tool_forced_on_native_model",
    ] {
        assert!(names.iter().any(|n| n == needed), "no {needed} case");
    }
}

/// The native request's `outputConfig` is, byte for byte, the fragment the
/// core emits for Bedrock (`groundcite schema --target bedrock`): the schema
/// string included, the same for every request (chunk IDs are not in it).
#[test]
fn native_request_carries_the_core_fragment_byte_for_byte() {
    let body: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("requests/converse_native.json")).unwrap(),
    )
    .unwrap();
    let fragment = request_fragment(Target::Bedrock, None);
    assert_eq!(body["outputConfig"], fragment.value["outputConfig"]);
    let pointer = "/outputConfig/textFormat/structure/jsonSchema/schema";
    let sent = body.pointer(pointer).unwrap().as_str().unwrap();
    let emitted = fragment.value.pointer(pointer).unwrap().as_str().unwrap();
    assert_eq!(sent.as_bytes(), emitted.as_bytes());
    // The schema is the one a tool-use request carries, as JSON text.
    let tool: Value = serde_json::from_str(
        &std::fs::read_to_string(testdata().join("requests/converse_tool.json")).unwrap(),
    )
    .unwrap();
    let tool_schema = &tool["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"];
    assert_eq!(&serde_json::from_str::<Value>(sent).unwrap(), tool_schema);
    // No tool, no toolChoice: the answer is the text.
    assert!(body.get("toolConfig").is_none());
    assert!(groundcite_core::schema::lint(&fragment.value, Target::Bedrock).is_empty());
}
