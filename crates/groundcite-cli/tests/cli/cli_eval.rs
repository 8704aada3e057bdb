//! `groundcite eval` end to end against the replay server (the recorded
//! OpenAI exchange, request asserted): the result file, the report, the
//! summary, exit codes for passing and failing thresholds, `--compare`, and
//! bad suites refused before any request. The sample suite with the
//! embedded model runs in scripts/test (it is the CI gate).

#![allow(clippy::unwrap_used)]

use crate::common::workdir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use groundcite_providers::replay::{Cassette, ReplayServer};
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A one-case suite over the recorded exchange's chunks; `extra` is
/// appended (thresholds).
fn suite(dir: &Path, extra: &str) -> PathBuf {
    let chunks = repo().join("testdata/providers/chunks.json");
    let text = format!(
        r#"name = "replay"
[corpus]
chunks = "{}"
[[cases]]
id = "refunds-and-shipping"
kind = "multi_chunk"
question = "How long do refunds and shipping take?"
gold_chunks = ["refunds#1", "shipping#3"]
key_facts = ["30 days", "3–5 business days"]
{extra}"#,
        chunks.display()
    );
    let p = dir.join("suite.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn eval(dir: &Path, base: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_groundcite"));
    cmd.env_clear()
        .env("OPENAI_API_KEY", "sk-test-FAKE-openai-0001")
        .current_dir(dir)
        .arg("eval")
        .args(args)
        .args([
            "--max-tokens",
            "1024",
            "--temperature",
            "0",
            "--no-progress",
        ]);
    if let Some(base) = base {
        cmd.args([
            "--provider",
            "openai",
            "--model",
            "gpt-4o-2024-08-06",
            "--base-url",
            &format!("{base}/v1"),
        ]);
    }
    let out = cmd.output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("sk-test-FAKE"), "the key was printed: {all}");
    out
}

fn server() -> ReplayServer {
    let c = Cassette::load(&repo().join("testdata/providers/openai/success.json")).unwrap();
    ReplayServer::for_cassette(&c).unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_suite_runs_scores_reports_and_gates() {
    let dir = workdir("gates");
    let s = server();
    let path = suite(
        &dir,
        "[thresholds]\nmulti_chunk_synthesis = { min = 1.0 }\n",
    );
    let out = eval(
        &dir,
        Some(&s.base_url()),
        &[path.to_str().unwrap(), "--out", "first"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(s.problems().is_empty(), "{:?}", s.problems());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("all 1 thresholds passed"), "{stdout}");
    assert!(stdout.contains("multi_chunk 1/1"), "{stdout}");

    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("first/results.json")).unwrap())
            .unwrap();
    assert_eq!(result["format"], "groundcite-eval-result/1");
    assert_eq!(result["provider"], "openai");
    assert_eq!(result["model"], "gpt-4o-2024-08-06");
    let m = &result["metrics"]["values"];
    assert_eq!(m["multi_chunk_synthesis"], 1.0);
    assert_eq!(m["citation_recall"], 1.0);
    assert_eq!(m["key_fact_recall"], 1.0);
    assert_eq!(m["hallucination_rejection"], 1.0);
    assert_eq!(m["schema_error_rate"], 0.0);
    // Unanswerable precision: no such case, so not measured.
    assert_eq!(m["unanswerable_precision"], Value::Null);
    // Both recorded citations are verified ("3–5" exactly as in the chunk).
    assert_eq!(result["metrics"]["citations_emitted"], 2);
    assert_eq!(result["metrics"]["citations_verified"], 2);
    assert_eq!(result["runs"][0]["claims_in"], 2);
    let report = std::fs::read_to_string(dir.join("first/report.html")).unwrap();
    assert!(report.contains("refunds-and-shipping"));
    assert!(report.contains("<svg"), "charts are inline SVG");
    assert!(!report.contains("<script"), "the report runs no script");

    // The same run against a stricter gate fails with exit 4, and the
    // comparison with the first run is printed.
    let s = server();
    let out = eval(
        &dir,
        Some(&s.base_url()),
        &[
            path.to_str().unwrap(),
            "--out",
            "second",
            "--threshold",
            "latency_p95_ms<=0",
            "--threshold",
            "unanswerable_precision>=0.5",
            "--compare",
            "first/results.json",
        ],
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("THRESHOLDS FAILED: latency_p95_ms, unanswerable_precision"),
        "{stdout}"
    );
    assert!(
        stdout.contains("compared with openai gpt-4o-2024-08-06"),
        "{stdout}"
    );
    let second: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("second/results.json")).unwrap())
            .unwrap();
    assert_eq!(second["passed"], false);
}

#[test]
fn bad_input_is_refused_before_any_request() {
    let dir = workdir("bad");
    let s = server();
    let base = s.base_url();
    let path = suite(&dir, "");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                path.display().to_string(),
                "--threshold".into(),
                "answerable_rate>=95".into(),
            ],
            "0.95, not 95",
        ),
        (
            vec![
                path.display().to_string(),
                "--threshold".into(),
                "speed>=1".into(),
            ],
            "not a metric",
        ),
        (
            vec![
                path.display().to_string(),
                "--compare".into(),
                path.display().to_string(),
            ],
            "not JSON",
        ),
        (
            vec![path.display().to_string(), "--repeat".into(), "0".into()],
            "--repeat",
        ),
        (vec!["missing.toml".into()], "missing.toml"),
        (
            vec![path.display().to_string(), "--docs".into(), ".".into()],
            "replaces a docs corpus",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = eval(&dir, Some(&base), &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(needle),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // A malformed suite names the field.
    std::fs::write(
        dir.join("bad.toml"),
        "name = \"x\"\n[corpus]\ndocs = \".\"\n[[cases]]\nid = \"a\"\nkind = \"multi_chunk\"\nquestion = \"q\"\ngold_chunks = [\"one\"]\n",
    )
    .unwrap();
    let out = eval(&dir, Some(&base), &["bad.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cases[0].gold_chunks"),
        "{}",
        text(&out.stderr)
    );
    // None of these reached the provider.
    assert_eq!(s.served(), 0);
}

/// A docs folder that is not there is named after where it came from:
/// `--docs` when given there (a control character in it shown escaped), the
/// suite's `corpus.docs` otherwise.
#[test]
fn a_missing_docs_folder_names_its_source() {
    let dir = workdir("missing-docs");
    let suite = dir.join("docs.toml");
    std::fs::write(
        &suite,
        "name = \"d\"\n[corpus]\ndocs = \"nowhere\"\n[[cases]]\nid = \"a\"\nkind = \"unanswerable\"\nquestion = \"q?\"\n",
    )
    .unwrap();
    let out = eval(&dir, None, &["docs.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("docs.toml") && err.contains("corpus.docs:"),
        "{err}"
    );
    assert!(
        err.contains("nowhere") && err.contains("is not a directory"),
        "{err}"
    );

    let out = eval(&dir, None, &["docs.toml", "--docs", "gone\u{7}away"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("--docs") && !err.contains("corpus.docs"),
        "{err}"
    );
    assert!(
        err.contains("gone\\u{7}away") && !err.contains('\u{7}'),
        "{err}"
    );
}
