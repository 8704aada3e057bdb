//! `groundcite answer --schema FILE`: a caller's own schema is linted for
//! the provider's dialect, must still describe a GroundedAnswer, and is the
//! schema sent on the wire (asserted by the replay server against the
//! recorded request with the schema swapped in).

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common::workdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use groundcite_providers::replay::{Cassette, ReplayServer};
use serde_json::{Value, json};

const QUESTION: &str = "How long do refunds and shipping take?";
const OPENAI_KEY: &str = "sk-test-FAKE-openai-0001";
const ANTHROPIC_KEY: &str = "sk-ant-test-FAKE-0001";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn custom_schema_path() -> PathBuf {
    repo().join("testdata/providers/bedrock/schemas/support_answer.json")
}

fn custom_schema() -> Value {
    serde_json::from_str(&std::fs::read_to_string(custom_schema_path()).unwrap()).unwrap()
}

/// Runs `groundcite answer` with a clean environment in `dir`.
fn answer(dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.env_clear()
        .current_dir(dir)
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
    for s in [OPENAI_KEY, ANTHROPIC_KEY] {
        assert!(!all.contains(s), "a secret was printed: {all}");
    }
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The recorded exchange of `name` with the request's schema replaced by
/// `schema` at `pointer` (and the name at `name_pointer`, if any).
fn with_schema(name: &str, pointer: &str, name_pointer: Option<&str>) -> ReplayServer {
    let mut c = Cassette::load(&repo().join("testdata/providers").join(name)).unwrap();
    for ex in &mut c.exchanges {
        let body = ex.request.body.as_mut().unwrap();
        let slot = body.pointer_mut(pointer).unwrap();
        assert_ne!(*slot, custom_schema(), "the recording already has it");
        *slot = custom_schema();
        if let Some(p) = name_pointer {
            *body.pointer_mut(p).unwrap() = json!("SupportAnswer");
        }
    }
    ReplayServer::for_cassette(&c).unwrap()
}

fn no_problems(server: &ReplayServer) {
    let p = server.problems();
    assert!(p.is_empty(), "{}", p.join("\n"));
}

fn openai_args(base: &str, schema: &Path) -> Vec<String> {
    vec![
        "--provider".into(),
        "openai".into(),
        "--model".into(),
        "gpt-4o-2024-08-06".into(),
        "--base-url".into(),
        format!("{base}/v1"),
        "--schema".into(),
        schema.to_string_lossy().into_owned(),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn the_custom_schema_is_sent_to_openai() {
    let server = with_schema(
        "openai/success.json",
        "/response_format/json_schema/schema",
        Some("/response_format/json_schema/name"),
    );
    let out = answer(
        &workdir("openai"),
        &[("OPENAI_API_KEY", OPENAI_KEY)],
        &strs(&openai_args(&server.base_url(), &custom_schema_path())),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["claims"].as_array().unwrap().len(), 2, "{c}");
}

#[test]
fn the_custom_schema_is_sent_to_anthropic() {
    let server = with_schema(
        "anthropic/success.json",
        "/output_config/format/schema",
        None,
    );
    let out = answer(
        &workdir("anthropic"),
        &[("ANTHROPIC_API_KEY", ANTHROPIC_KEY)],
        &[
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--base-url",
            &server.base_url(),
            "--schema",
            custom_schema_path().to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
}

#[test]
fn the_schema_can_come_from_groundcite_toml() {
    let server = with_schema(
        "openai/success.json",
        "/response_format/json_schema/schema",
        Some("/response_format/json_schema/name"),
    );
    let dir = workdir("toml");
    std::fs::write(
        dir.join("groundcite.toml"),
        format!(
            "[answer]\nschema = {:?}\n",
            custom_schema_path().to_string_lossy()
        ),
    )
    .unwrap();
    let mut args = openai_args(&server.base_url(), Path::new("unused"));
    args.truncate(args.len() - 2);
    let out = answer(&dir, &[("OPENAI_API_KEY", OPENAI_KEY)], &strs(&args));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    no_problems(&server);
}

/// Runs openai with `schema` written to a file; nothing may be sent.
fn rejected(name: &str, schema: &str, provider_args: &[&str]) -> String {
    let dir = workdir(name);
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, schema).unwrap();
    let server = ReplayServer::start(Vec::new()).unwrap();
    let mut args: Vec<String> = provider_args.iter().map(|s| s.to_string()).collect();
    args.extend([
        "--base-url".into(),
        format!("{}/v1", server.base_url()),
        "--schema".into(),
        file.to_string_lossy().into_owned(),
    ]);
    let out = answer(
        &dir,
        &[
            ("OPENAI_API_KEY", OPENAI_KEY),
            ("ANTHROPIC_API_KEY", ANTHROPIC_KEY),
        ],
        &strs(&args),
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(server.served(), 0, "a rejected schema must not be sent");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let shown = file.to_string_lossy().into_owned();
    assert!(err.starts_with(&format!("error: {shown}")), "{err}");
    err.replacen(&shown, "FILE", 1)
}

const OPENAI: &[&str] = &["--provider", "openai", "--model", "gpt-4o-2024-08-06"];

#[test]
fn a_schema_that_is_not_json_is_named() {
    let err = rejected("notjson", "{\"type\": \"object\",", OPENAI);
    assert!(err.starts_with("error: FILE:1:"), "{err}");
    assert!(err.contains("the schema is not JSON"), "{err}");
}

#[test]
fn a_schema_breaking_the_dialect_is_linted_for_the_provider() {
    // minLength: Azure and OpenAI reject it; the message names the keyword.
    let mut schema = custom_schema();
    schema["$defs"]["Citation"]["properties"]["quote"]["minLength"] = json!(1);
    let err = rejected("lint", &schema.to_string(), OPENAI);
    assert_eq!(
        err,
        "error: FILE: the schema breaks openai's strict structured-output rules: \
         /$defs/Citation/properties/quote/minLength: \
         'minLength' is not in openai's strict subset (unsupported-keyword).\n",
    );
    // A property left out of `required` is fine for Anthropic's dialect only.
    let mut schema = custom_schema();
    schema["required"] = json!(["answerable", "claims"]);
    let err = rejected("required", &schema.to_string(), OPENAI);
    assert!(err.contains("property-not-required"), "{err}");
}

#[test]
fn a_schema_that_is_not_a_grounded_answer_says_why() {
    let mut schema = custom_schema();
    let props = schema["$defs"]["Citation"]["properties"]
        .as_object_mut()
        .unwrap();
    props.remove("quote");
    schema["$defs"]["Citation"]["required"] = json!(["chunk_id"]);
    let err = rejected("shape", &schema.to_string(), OPENAI);
    assert_eq!(
        err,
        "error: FILE: the schema does not describe a GroundedAnswer (answerable, claims[].text, \
         claims[].citations[].chunk_id and quote), so its output could not be verified: \
         claims[].citations[].quote is missing.\n"
    );
    let mut schema = custom_schema();
    schema["properties"]["answerable"] = json!({"type": "string"});
    let err = rejected("shape2", &schema.to_string(), OPENAI);
    assert!(
        err.ends_with("answerable must have type \"boolean\".\n"),
        "{err}"
    );
}

#[test]
fn native_citation_providers_take_no_schema() {
    let err = rejected(
        "native",
        &custom_schema().to_string(),
        &[
            "--provider",
            "anthropic-citations",
            "--model",
            "claude-sonnet-4-5",
        ],
    );
    assert_eq!(
        err,
        "error: FILE: --schema cannot be used with anthropic-citations, which answers with native citations instead of structured output.\n"
    );
}
