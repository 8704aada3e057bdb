//! Recorded wire exchanges replayed by a local server that asserts every
//! request (method, path, query, headers, JSON body): one data file per
//! case in `testdata/providers/<provider>/`. Never loosen a recording to make
//! a test pass.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use groundcite_core::native::{SourceLayout, anthropic};
use groundcite_core::{ChunkSet, ClaimPolicy, MatchProfile, Provenance};
use groundcite_providers::azure::{
    AppServiceIdentity, AzureConfig, AzureCredential, AzureRoute, IdentityEndpoints,
};
use groundcite_providers::replay::{Cassette, ReplayServer};
use groundcite_providers::{
    Anthropic, AnthropicMode, ChatCompletions, CompatServer, DEFAULT_MAX_RESPONSE_BYTES, Gemini,
    Generation, GenerationRequest, Generator, HttpConfig, Mode, NativeSources, Output,
    ProviderError, Responses, RetryPolicy, SecretString, TokenLimitField,
};
use serde_json::Value;

/// Every secret the cassettes use; none may ever be formatted.
const SECRETS: &[&str] = &[
    "sk-test-FAKE-openai-0001",
    "aoai-test-FAKE-key-0001",
    "eyFAKE.entra-token.0001",
    "secret-test-FAKE-0001",
    "federated-FAKE-assertion-0001",
    "sk-ant-test-FAKE-0001",
    "compat-test-FAKE-0001",
    "identity-header-FAKE-0001",
    "AIza-test-FAKE-gemini-0001",
];

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/providers")
}

fn cases(provider: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(testdata().join(provider))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no cases for {provider}");
    out
}

fn http(input: &Value) -> HttpConfig {
    HttpConfig {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_millis(input["timeout_ms"].as_u64().unwrap_or(10_000)),
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(40),
            max_retry_after: Duration::from_secs(5),
        },
        max_response_bytes: input["max_response_bytes"]
            .as_u64()
            .map_or(DEFAULT_MAX_RESPONSE_BYTES, |n| n as usize),
        ..HttpConfig::default()
    }
}

/// A case's working folder (a token file, a stand-in `az`), removed when the
/// case ends, pass or fail.
struct Scratch(PathBuf);

impl Scratch {
    fn new(case: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("groundcite-wire-{}-{case}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn generator(provider: &str, scratch: &Path, input: &Value, base: &str) -> Box<dyn Generator> {
    let s = |k: &str| input[k].as_str().map(str::to_string);
    let url = |p: &str| format!("{base}{p}").parse().unwrap();
    match provider {
        "openai" => Box::new(
            ChatCompletions::openai(
                url("/v1"),
                SecretString::new("sk-test-FAKE-openai-0001"),
                s("model").unwrap_or_else(|| "gpt-4o-2024-08-06".into()),
                http(input),
            )
            .unwrap(),
        ),
        "openai-responses" => Box::new(
            Responses::openai(
                url("/v1"),
                SecretString::new("sk-test-FAKE-openai-0001"),
                s("model").unwrap_or_else(|| "gpt-4o-2024-08-06".into()),
                http(input),
            )
            .unwrap(),
        ),
        "gemini" => Box::new(
            Gemini::new(
                url("/v1beta"),
                SecretString::new("AIza-test-FAKE-gemini-0001"),
                s("model").unwrap_or_else(|| "gemini-2.5-flash".into()),
                http(input),
            )
            .unwrap(),
        ),
        "openai-compatible" => Box::new(
            ChatCompletions::compatible(
                url("/v1"),
                s("api_key").map(SecretString::new),
                s("model").unwrap_or_else(|| "Qwen/Qwen2.5-7B-Instruct".into()),
                CompatServer::from_str(&s("server").unwrap())
                    .unwrap()
                    .quirks(),
                http(input),
            )
            .unwrap(),
        ),
        "anthropic" | "anthropic-citations" => Box::new(
            Anthropic::new(
                url(""),
                SecretString::new("sk-ant-test-FAKE-0001"),
                "claude-sonnet-4-5".into(),
                if provider == "anthropic" {
                    AnthropicMode::Structured
                } else {
                    AnthropicMode::Citations
                },
                http(input),
            )
            .unwrap(),
        ),
        "azure" => {
            let tenant = "tenant-fake-0001".to_string();
            let client = "client-fake-0001".to_string();
            let mut identity = IdentityEndpoints {
                authority_host: url(""),
                imds: url("/metadata/identity/oauth2/token"),
                az_command: "az-not-used".into(),
                app_service: None,
            };
            let credential = match s("auth").as_deref().unwrap_or("api-key") {
                "api-key" => AzureCredential::ApiKey(SecretString::new("aoai-test-FAKE-key-0001")),
                "token" => AzureCredential::Token(SecretString::new("eyFAKE.entra-token.0001")),
                "client-secret" => AzureCredential::ClientSecret {
                    tenant_id: tenant,
                    client_id: client,
                    secret: SecretString::new("secret-test-FAKE-0001"),
                },
                "workload-identity" => {
                    let file = scratch.join("federated-token");
                    std::fs::write(&file, "federated-FAKE-assertion-0001\n").unwrap();
                    AzureCredential::WorkloadIdentity {
                        tenant_id: tenant,
                        client_id: client,
                        token_file: file,
                    }
                }
                "managed-identity" => AzureCredential::ManagedIdentity { client_id: None },
                "app-service-identity" => {
                    identity.app_service = Some(AppServiceIdentity {
                        endpoint: url("/msi/token"),
                        header: SecretString::new("identity-header-FAKE-0001"),
                    });
                    AzureCredential::ManagedIdentity {
                        client_id: Some("client-fake-0001".into()),
                    }
                }
                "azure-cli" => {
                    let az = scratch.join("az");
                    let expires = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_secs()
                        + 3600;
                    std::fs::write(
                        &az,
                        format!(
                            "#!/bin/sh\n[ \"$*\" = \"account get-access-token --resource https://cognitiveservices.azure.com -o json\" ] || {{ echo \"unexpected arguments: $*\" >&2; exit 2; }}\n\
                             printf '{{\"accessToken\": \"eyFAKE.entra-token.0001\", \"expires_on\": {expires}, \"tokenType\": \"Bearer\"}}'\n"
                        ),
                    )
                    .unwrap();
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        std::fs::set_permissions(&az, std::fs::Permissions::from_mode(0o755))
                            .unwrap();
                    }
                    identity.az_command = az.to_string_lossy().into_owned();
                    AzureCredential::AzureCli
                }
                other => panic!("unknown auth {other}"),
            };
            let route = match s("route").as_deref().unwrap_or("v1") {
                "v1" => AzureRoute::V1,
                "v1-responses" => AzureRoute::V1Responses,
                "versioned" => AzureRoute::Versioned {
                    api_version: s("api_version").unwrap_or_else(|| "2024-10-21".into()),
                },
                other => panic!("unknown route {other}"),
            };
            let token_limit_field = s("token_limit_field").map(|f| match f.as_str() {
                "max_tokens" => TokenLimitField::MaxTokens,
                "max_completion_tokens" => TokenLimitField::MaxCompletionTokens,
                other => panic!("unknown token_limit_field {other}"),
            });
            groundcite_providers::azure::azure_generator(AzureConfig {
                endpoint: url(""),
                deployment: s("deployment").unwrap_or_else(|| "gpt-4o".into()),
                route,
                credential,
                scope: None,
                identity,
                token_limit_field,
                http: http(input),
            })
            .unwrap()
        }
        other => panic!("unknown provider {other}"),
    }
}

struct Run {
    result: Result<Generation, ProviderError>,
    deltas: usize,
    elapsed: Duration,
}

async fn run_once(g: &dyn Generator, request: &GenerationRequest, stream: bool) -> Run {
    let start = Instant::now();
    let mut deltas = 0;
    let result = if stream {
        match g.generate_stream(request).await {
            Ok(mut s) => {
                let mut text = String::new();
                let mut failed = None;
                loop {
                    match s.next_delta().await {
                        Ok(Some(d)) => {
                            deltas += 1;
                            text.push_str(&d);
                        }
                        Ok(None) => break,
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                match failed {
                    Some(e) => Err(e),
                    None => {
                        let r = s.finish().await;
                        if let Ok(Generation {
                            output: Output::Json(j),
                            ..
                        }) = &r
                        {
                            assert_eq!(&text, j, "the deltas must concatenate to the output");
                        }
                        r
                    }
                }
            }
            Err(e) => Err(e),
        }
    } else {
        g.generate(request).await
    };
    Run {
        result,
        deltas,
        elapsed: start.elapsed(),
    }
}

fn check_no_secret(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} contains the secret {s}: {text}");
    }
}

async fn run_case(provider: &str, path: &Path) {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let cassette = Cassette::load(path).unwrap();
    let input = &cassette.input;
    let expect = &cassette.expect;
    let server = ReplayServer::for_cassette(&cassette).unwrap();
    let scratch = Scratch::new(&name);
    let g = generator(provider, &scratch.0, input, &server.base_url());
    check_no_secret("the generator's Debug", &format!("{g:?}"));
    let chunks_text = std::fs::read_to_string(
        path.parent()
            .unwrap()
            .join(input["chunks"].as_str().unwrap()),
    )
    .unwrap();
    let chunks = ChunkSet::new(serde_json::from_str(&chunks_text).unwrap()).unwrap();
    let question = input["question"].as_str().unwrap();
    let mut request = match g.mode() {
        // As groundcite-app builds them: OpenAI-compatible servers get the
        // chunk-ID enum, hosted providers one schema per target.
        Mode::Structured(target) if provider == "openai-compatible" => {
            GenerationRequest::grounded_restricted(&chunks, question, target)
        }
        Mode::Structured(target) => GenerationRequest::grounded(&chunks, question, target),
        Mode::NativeCitations => GenerationRequest::native(
            &chunks,
            question,
            match input["native_sources"].as_str() {
                Some("search_results") => NativeSources::SearchResults,
                _ => NativeSources::Documents,
            },
        ),
    };
    request.max_tokens = input["max_tokens"].as_u64().unwrap() as u32;
    request.temperature = input["temperature"].as_f64();
    let stream = input["stream"].as_bool().unwrap_or(false);
    let calls = input["calls"].as_u64().unwrap_or(1);
    let ctx = format!("{provider}/{name}");
    for _ in 0..calls {
        let run = run_once(g.as_ref(), &request, stream).await;
        check_no_secret(
            &format!("{ctx}: Debug of the result"),
            &format!("{:?}", run.result),
        );
        let outcome = expect["outcome"].as_str().unwrap();
        match &run.result {
            Ok(generation) => {
                assert_eq!(
                    outcome, "ok",
                    "{ctx}: expected {outcome}, got {generation:?}"
                );
                match &generation.output {
                    Output::Json(j) => {
                        if let Some(want) = expect["output"].as_str() {
                            assert_eq!(j, want, "{ctx}");
                        }
                    }
                    Output::AnthropicCitations(m) => {
                        if !expect["message"].is_null() {
                            assert_eq!(m, &expect["message"], "{ctx}");
                        }
                        if let Some(n) = expect["verified_claims"].as_u64() {
                            let contract = anthropic::convert(
                                m,
                                &chunks,
                                &SourceLayout::one_per_chunk(&chunks),
                                MatchProfile::Default,
                                ClaimPolicy::default(),
                                Provenance {
                                    trace_id: "t".into(),
                                    created_at: "2026-01-01T00:00:00Z".into(),
                                    question: None,
                                    model: None,
                                },
                            )
                            .unwrap();
                            assert_eq!(contract.claims.len() as u64, n, "{ctx}: {contract:?}");
                        }
                    }
                    Output::BedrockCitations(m) => {
                        panic!("{ctx}: an HTTP adapter returned Bedrock citations: {m}")
                    }
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
                if stream {
                    assert!(generation.timings.time_to_first_token.is_some(), "{ctx}");
                }
            }
            Err(e) => {
                check_no_secret(&format!("{ctx}: error Display"), &e.to_string());
                check_no_secret(&format!("{ctx}: error body"), e.body().unwrap_or(""));
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
                    assert_eq!(e.request_id(), Some(id), "{ctx}");
                }
                if let Some(m) = expect["message_contains"].as_str() {
                    assert!(e.to_string().contains(m), "{ctx}: {e}");
                }
                if let Some(b) = expect["body_contains"].as_str() {
                    assert!(e.body().unwrap_or("").contains(b), "{ctx}: {e:?}");
                }
                if let Some(p) = expect["partial_output"].as_str() {
                    assert_eq!(e.partial_output(), Some(p), "{ctx}");
                }
            }
        }
        if !stream && let Some(n) = expect["min_deltas"].as_u64() {
            panic!("{ctx}: min_deltas {n} on a non-streamed case");
        }
        if let Some(n) = expect["min_deltas"].as_u64() {
            assert!(run.deltas as u64 >= n, "{ctx}: {} deltas", run.deltas);
        }
        if let Some(ms) = expect["min_elapsed_ms"].as_u64() {
            assert!(
                run.elapsed >= Duration::from_millis(ms),
                "{ctx}: Retry-After not honoured ({:?})",
                run.elapsed
            );
        }
    }
    let problems = server.problems();
    assert!(problems.is_empty(), "{ctx}: {}", problems.join("\n"));
}

async fn run_provider(provider: &str) {
    for case in cases(provider) {
        run_case(provider, &case).await;
    }
}

#[tokio::test]
async fn openai() {
    run_provider("openai").await;
}

#[tokio::test]
async fn openai_responses() {
    run_provider("openai-responses").await;
}

#[tokio::test]
async fn gemini() {
    run_provider("gemini").await;
}

#[tokio::test]
async fn azure() {
    run_provider("azure").await;
}

#[tokio::test]
async fn anthropic_structured() {
    run_provider("anthropic").await;
}

#[tokio::test]
async fn anthropic_citations() {
    run_provider("anthropic-citations").await;
}

#[tokio::test]
async fn openai_compatible() {
    run_provider("openai-compatible").await;
}

#[test]
fn every_provider_has_the_failure_cases() {
    for provider in [
        "openai",
        "openai-responses",
        "gemini",
        "azure",
        "anthropic",
        "anthropic-citations",
        "openai-compatible",
    ] {
        let names: Vec<String> = cases(provider)
            .iter()
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        // Gemini has no refusal field: its declines are finish reasons
        // (`safety`, `recitation`, `prompt_blocked`).
        let refusal = if provider == "gemini" {
            "safety"
        } else {
            "refusal"
        };
        for required in [
            "success",
            "streaming",
            refusal,
            "truncation",
            "rate_limited_then_success",
            "server_error",
            "timeout",
            "connection_reset",
        ] {
            assert!(
                names.iter().any(|n| n == required),
                "{provider} lacks {required}"
            );
        }
        if provider != "anthropic-citations" {
            assert!(
                names.iter().any(|n| n == "invalid_json"),
                "{provider} lacks invalid_json"
            );
        }
    }
}

/// The replay server is only as good as its assertions: a request that
/// differs from the recording (model, key) must be reported and refused.
#[tokio::test]
async fn the_replay_server_reports_every_difference() {
    let path = testdata().join("openai/success.json");
    let cassette = Cassette::load(&path).unwrap();
    let chunks_text = std::fs::read_to_string(testdata().join("chunks.json")).unwrap();
    let chunks = ChunkSet::new(serde_json::from_str(&chunks_text).unwrap()).unwrap();
    let mut request = GenerationRequest::grounded(
        &chunks,
        cassette.input["question"].as_str().unwrap(),
        groundcite_core::schema::Target::OpenAi,
    );
    request.max_tokens = 1024;
    request.temperature = Some(0.0);
    for (key, model, needle) in [
        (
            "sk-test-FAKE-openai-0001",
            "gpt-4o-mini",
            "JSON body differs",
        ),
        (
            "sk-other",
            "gpt-4o-2024-08-06",
            "header authorization differs",
        ),
    ] {
        let server = ReplayServer::for_cassette(&cassette).unwrap();
        let g = ChatCompletions::openai(
            format!("{}/v1", server.base_url()).parse().unwrap(),
            SecretString::new(key),
            model.into(),
            http(&Value::Null),
        )
        .unwrap();
        let e = g.generate(&request).await.unwrap_err();
        assert_eq!(e.status(), Some(418), "{e:?}");
        let problems = server.problems().join("\n");
        assert!(problems.contains(needle), "{problems}");
        assert!(!problems.contains("sk-other"), "{problems}");
    }
}
