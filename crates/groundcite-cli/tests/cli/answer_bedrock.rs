//! `groundcite answer --provider bedrock|bedrock-citations` end to end: the
//! AWS SDK, configured only through the environment (fake static
//! credentials, `AWS_REGION`) and `--base-url` as its endpoint, against the
//! recorded exchanges of `testdata/providers/bedrock/`. Without the
//! `bedrock` feature, the provider names how to build with it.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common::workdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const QUESTION: &str = "How long do refunds and shipping take?";
const SECRET_KEY: &str = "FAKE-bedrock-secret-key-0001";
const SESSION_TOKEN: &str = "FAKE-session-token-bedrock-0001";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `groundcite answer` with a clean environment in `dir`: the AWS
/// SDK finds fake credentials and the region in the environment, and no
/// profile or instance metadata.
fn answer(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.env_clear()
        .current_dir(dir)
        .env("HOME", dir)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .arg("answer")
        .arg("--chunks")
        .arg(repo().join("testdata/providers/chunks.json"))
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
    for s in [SECRET_KEY, SESSION_TOKEN] {
        assert!(!all.contains(s), "a secret was printed: {all}");
    }
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[cfg(not(feature = "bedrock"))]
#[test]
fn without_the_feature_bedrock_says_how_to_build_it() {
    for p in ["bedrock", "bedrock-citations"] {
        let out = answer(&workdir("na"), &[], &["--provider", p]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            format!(
                "error: --provider: {p} needs the AWS SDK, which this groundcite was built without: rebuild with `cargo build -p groundcite-cli --features bedrock`.\n"
            )
        );
    }
}

#[cfg(feature = "bedrock")]
mod with_the_sdk {
    use super::*;
    use groundcite_providers::replay::{Cassette, ReplayServer};
    use serde_json::{Value, json};

    /// A model for the cases that send nothing.
    const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    const AWS_ENV: &[(&str, &str)] = &[
        ("AWS_ACCESS_KEY_ID", "AKIAFAKEBEDROCK0001"),
        ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
        ("AWS_SESSION_TOKEN", SESSION_TOKEN),
        ("AWS_REGION", "us-east-1"),
    ];

    fn load(name: &str) -> Cassette {
        Cassette::load(&repo().join("testdata/providers/bedrock").join(name)).unwrap()
    }

    /// The cassette's model (`input.model`).
    fn model(c: &Cassette) -> &str {
        c.input["model"].as_str().unwrap()
    }

    fn run(c: &Cassette, provider: &str, extra: &[&str]) -> (Output, ReplayServer) {
        let server = ReplayServer::for_cassette(c).unwrap();
        let base = server.base_url();
        let mut args = vec![
            "--provider",
            provider,
            "--model",
            model(c),
            "--base-url",
            &base,
            "--max-retries",
            "2",
        ];
        args.extend_from_slice(extra);
        let out = answer(&workdir(provider), AWS_ENV, &args);
        (out, server)
    }

    fn no_problems(server: &ReplayServer) {
        let p = server.problems();
        assert!(p.is_empty(), "{}", p.join("\n"));
    }

    fn contract(o: &Output) -> Value {
        assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    #[test]
    fn tool_use_answer_is_verified() {
        let cassette = load("success.json");
        let (out, server) = run(&cassette, "bedrock", &[]);
        let c = contract(&out);
        no_problems(&server);
        assert_eq!(c["answerable"], true);
        assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
        assert_eq!(c["model"], model(&cassette));
    }

    #[test]
    fn native_structured_output_is_verified() {
        // Claude Sonnet 4.5 is on Bedrock's structured-output list: the
        // default (auto) sends outputConfig.textFormat, no tool.
        let cassette = load("native_success.json");
        let (out, server) = run(&cassette, "bedrock", &[]);
        let c = contract(&out);
        no_problems(&server);
        assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
        assert_eq!(c["model"], model(&cassette));
    }

    #[test]
    fn native_citations_are_converted() {
        let (out, server) = run(&load("citations_success.json"), "bedrock-citations", &[]);
        let c = contract(&out);
        no_problems(&server);
        assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
        assert_eq!(c["claims"][1]["citations"][0]["chunk_id"], "shipping#3");
    }

    #[test]
    fn streamed_tool_use_prints_claims_then_the_contract() {
        let (out, server) = run(&load("streaming.json"), "bedrock", &["--stream"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        no_problems(&server);
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[2]["contract_version"], "1");
    }

    #[test]
    fn filters_truncation_and_invalid_output_are_refusals() {
        for (case, provider, code) in [
            ("content_filtered.json", "bedrock", "R4"),
            ("guardrail_intervened.json", "bedrock", "R4"),
            ("truncation.json", "bedrock", "R3"),
            ("invalid_json.json", "bedrock", "R3"),
            ("no_tool_use.json", "bedrock", "R3"),
            (
                "citations_guardrail_intervened.json",
                "bedrock-citations",
                "R4",
            ),
            ("citations_truncation.json", "bedrock-citations", "R3"),
        ] {
            let c = load(case);
            let (out, server) = run(&c, provider, &[]);
            no_problems(&server);
            let v = contract(&out);
            assert_eq!(v["refusal"]["code"], code, "{case}: {v}");
            assert!(v["claims"].as_array().unwrap().is_empty(), "{case}");
            if let Some(p) = c.expect["partial_output"].as_str() {
                let shown = String::from_utf8_lossy(&out.stdout).into_owned();
                assert!(!shown.contains(p), "{case}: unverified text shown: {shown}");
            }
            assert!(
                stderr(&out).starts_with(&format!("note: {provider}: ")),
                "{case}: {}",
                stderr(&out)
            );
        }
    }

    #[test]
    fn failures_exit_1_with_status_and_request_id_and_no_secret() {
        for (case, needle) in [
            ("server_error.json", "HTTP 500"),
            ("forbidden_echoes_secrets.json", "HTTP 403"),
            ("connection_reset.json", "connection failed"),
        ] {
            let c = load(case);
            let (out, server) = run(&c, "bedrock", &[]);
            no_problems(&server);
            assert_eq!(out.status.code(), Some(1), "{case}");
            let err = stderr(&out);
            assert!(err.contains(needle), "{case}: {err}");
            if let Some(id) = c.expect["request_id"].as_str() {
                assert!(err.contains(id), "{case}: {err}");
            }
        }
    }

    #[test]
    fn the_custom_schema_becomes_the_tool_schema() {
        let mut c = load("success.json");
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(
                repo().join("testdata/providers/bedrock/schemas/support_answer.json"),
            )
            .unwrap(),
        )
        .unwrap();
        for ex in &mut c.exchanges {
            let body = ex.request.body.as_mut().unwrap();
            let spec = body.pointer_mut("/toolConfig/tools/0/toolSpec").unwrap();
            spec["inputSchema"]["json"] = schema.clone();
            spec["name"] = json!("SupportAnswer");
            body["toolConfig"]["toolChoice"]["tool"]["name"] = json!("SupportAnswer");
        }
        // The recorded response calls GroundedAnswer; this model calls the
        // tool it was given.
        for ex in &mut c.exchanges {
            let b = ex.response.body.as_mut().unwrap();
            b["output"]["message"]["content"][0]["toolUse"]["name"] = json!("SupportAnswer");
        }
        let path = repo().join("testdata/providers/bedrock/schemas/support_answer.json");
        let (out, server) = run(&c, "bedrock", &["--schema", path.to_str().unwrap()]);
        let v = contract(&out);
        no_problems(&server);
        assert_eq!(v["claims"].as_array().unwrap().len(), 2, "{v}");
    }

    #[test]
    fn a_missing_model_names_what_to_set() {
        let out = answer(&workdir("missing"), AWS_ENV, &["--provider", "bedrock"]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            stderr(&out),
            "error: settings: The Bedrock model ID is not set: pass --model, set BEDROCK_MODEL_ID, or set [bedrock] model_id in groundcite.toml.\n"
        );
    }

    #[test]
    fn no_credentials_is_a_credential_error() {
        let server = ReplayServer::start(Vec::new()).unwrap();
        let out = answer(
            &workdir("nocreds"),
            &[("AWS_REGION", "us-east-1")],
            &[
                "--provider",
                "bedrock",
                "--model",
                MODEL,
                "--base-url",
                &server.base_url(),
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(server.served(), 0);
        let err = stderr(&out);
        assert!(
            err.starts_with("error: bedrock: no AWS credentials could be loaded"),
            "{err}"
        );
        // Not retried: no credential appears by waiting.
        assert!(!err.contains("attempts"), "{err}");
    }

    #[test]
    fn a_missing_region_names_what_to_set() {
        let server = ReplayServer::start(Vec::new()).unwrap();
        let out = answer(
            &workdir("noregion"),
            &AWS_ENV[..3],
            &[
                "--provider",
                "bedrock",
                "--model",
                MODEL,
                "--base-url",
                &server.base_url(),
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert_eq!(server.served(), 0);
        assert_eq!(
            stderr(&out),
            "error: bedrock: The AWS region is not set: set AWS_REGION, a region in the AWS profile, or [bedrock] region in groundcite.toml.\n"
        );
    }
}
