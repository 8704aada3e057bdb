//! The output-limit default of each hosted provider, as sent: `groundcite
//! answer` without `--max-tokens` against each provider's recorded success
//! exchange, whose expected request is the recording's with the limit it
//! defaults to (the recordings themselves set `--max-tokens 1024`).
//!
//! - `openai`, `azure`: `max_completion_tokens: 16384` (reasoning models
//!   count their reasoning tokens in it); `openai-responses`:
//!   `max_output_tokens: 16384`, for the same reason;
//!   azure's v1 Responses route: `max_output_tokens: 16384`; `gemini`:
//!   `generationConfig.maxOutputTokens: 16384` (thinking models count
//!   their thoughts in it);
//! - `openai-compatible`: no limit at all (the server allows what its
//!   context leaves);
//! - `anthropic`: `max_tokens: 4096` (the API requires one); `bedrock`:
//!   `inferenceConfig.maxTokens: 4096` (with the `bedrock` feature).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::process::Command;

use groundcite_providers::replay::{Cassette, ReplayServer};
use serde_json::Value;

use crate::common::{repo, text, workdir};

/// Loads `case`, sets the expected request's token limit (`field`, a
/// JSON pointer into the body) to `default` (`None`: the field must be
/// absent), replays it to `groundcite answer` with `args` and `env`, and
/// checks the exchange and the contract.
fn answers_with_the_default(
    case: &str,
    field: &str,
    default: Option<u64>,
    env: &[(&str, &str)],
    args: &[&str],
) {
    let mut cassette = Cassette::load(&repo().join("testdata/providers").join(case)).unwrap();
    let (parent, field) = field.rsplit_once('/').unwrap();
    let body = cassette.exchanges[0]
        .request
        .body
        .as_mut()
        .and_then(|b| b.pointer_mut(parent))
        .and_then(Value::as_object_mut)
        .unwrap();
    assert!(
        body.contains_key(field),
        "{case}: the recording has no {field}"
    );
    match default {
        Some(n) => body.insert(field.into(), n.into()),
        None => body.remove(field),
    };
    let server = ReplayServer::for_cassette(&cassette).unwrap();
    let base = server.base_url();
    let dir = workdir(&case.replace('/', "-"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.env_clear()
        .current_dir(&dir)
        .arg("answer")
        .arg("--chunks")
        .arg(repo().join("testdata/providers/chunks.json"))
        .args([
            "--question",
            cassette.input["question"].as_str().unwrap(),
            "--temperature",
            "0",
            "--base-url",
        ])
        .arg(
            if case.starts_with("azure")
                || case.starts_with("anthropic")
                || case.starts_with("bedrock")
            {
                base.clone()
            } else if case.starts_with("gemini") {
                format!("{base}/v1beta")
            } else {
                format!("{base}/v1")
            },
        )
        .args(args)
        .envs(env.iter().copied());
    let out = cmd.output().unwrap();
    let problems = server.problems();
    assert!(problems.is_empty(), "{case}: {}", problems.join("\n"));
    assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out.stderr));
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["answerable"], true, "{case}: {c}");
}

#[test]
fn openai_defaults_to_16384_completion_tokens() {
    answers_with_the_default(
        "openai/success.json",
        "/max_completion_tokens",
        Some(16_384),
        &[("OPENAI_API_KEY", "sk-test-FAKE-openai-0001")],
        &["--provider", "openai", "--model", "gpt-4o-2024-08-06"],
    );
}

#[test]
fn openai_responses_defaults_to_16384_output_tokens() {
    answers_with_the_default(
        "openai-responses/success.json",
        "/max_output_tokens",
        Some(16_384),
        &[("OPENAI_API_KEY", "sk-test-FAKE-openai-0001")],
        &[
            "--provider",
            "openai-responses",
            "--model",
            "gpt-4o-2024-08-06",
        ],
    );
}

#[test]
fn azure_defaults_to_16384_completion_tokens() {
    answers_with_the_default(
        "azure/success.json",
        "/max_completion_tokens",
        Some(16_384),
        &[
            ("CHAT_DEPLOYMENT", "gpt-4o"),
            ("AZURE_OPENAI_API_KEY", "aoai-test-FAKE-key-0001"),
        ],
        &["--provider", "azure"],
    );
}

#[test]
fn azure_v1_responses_defaults_to_16384_output_tokens() {
    answers_with_the_default(
        "azure/responses_success.json",
        "/max_output_tokens",
        Some(16_384),
        &[
            ("CHAT_DEPLOYMENT", "gpt-4o"),
            ("AZURE_OPENAI_API_KEY", "aoai-test-FAKE-key-0001"),
        ],
        &["--provider", "azure", "--azure-api", "v1-responses"],
    );
}

#[test]
fn gemini_defaults_to_16384_output_tokens() {
    answers_with_the_default(
        "gemini/success.json",
        "/generationConfig/maxOutputTokens",
        Some(16_384),
        &[("GEMINI_API_KEY", "AIza-test-FAKE-gemini-0001")],
        &["--provider", "gemini", "--model", "gemini-2.5-flash"],
    );
}

#[cfg(feature = "bedrock")]
#[test]
fn bedrock_defaults_to_4096_tokens() {
    let dir = workdir("bedrock-home");
    let home = dir.display().to_string();
    answers_with_the_default(
        "bedrock/native_success.json",
        "/inferenceConfig/maxTokens",
        Some(4096),
        &[
            ("HOME", home.as_str()),
            ("AWS_EC2_METADATA_DISABLED", "true"),
            ("AWS_ACCESS_KEY_ID", "AKIAFAKEBEDROCK0001"),
            ("AWS_SECRET_ACCESS_KEY", "FAKE-bedrock-secret-key-0001"),
            ("AWS_SESSION_TOKEN", "FAKE-session-token-bedrock-0001"),
            ("AWS_REGION", "us-east-1"),
        ],
        &[
            "--provider",
            "bedrock",
            "--model",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ],
    );
}

#[test]
fn openai_compatible_sends_no_limit() {
    answers_with_the_default(
        "openai-compatible/success.json",
        "/max_tokens",
        None,
        &[],
        &[
            "--provider",
            "openai-compatible",
            "--server",
            "vllm",
            "--model",
            "Qwen/Qwen2.5-7B-Instruct",
        ],
    );
}

#[test]
fn anthropic_defaults_to_4096_tokens() {
    answers_with_the_default(
        "anthropic/success.json",
        "/max_tokens",
        Some(4096),
        &[("ANTHROPIC_API_KEY", "sk-ant-test-FAKE-0001")],
        &["--provider", "anthropic", "--model", "claude-sonnet-4-5"],
    );
}

#[test]
fn a_zero_limit_is_refused() {
    let dir = workdir("zero");
    let out = Command::new(env!("CARGO_BIN_EXE_groundcite"))
        .env_clear()
        .current_dir(&dir)
        .args(["answer", "--chunks"])
        .arg(repo().join("testdata/providers/chunks.json"))
        .args(["--question", "Anything?", "--max-tokens", "0"])
        .args(["--provider", "openai-compatible", "--model", "m"])
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("must be at least 1"),
        "{}",
        text(&out.stderr)
    );
}
