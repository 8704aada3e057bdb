//! Data-driven tests: `testdata/match/*.toml` (the matching rule) and
//! `testdata/verify/*.json` (the verifier and contract), each payload also
//! validated against the published contract JSON Schema.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use groundcite_core::{
    Chunk, ChunkSet, ClaimPolicy, GroundedAnswer, MatchKind, MatchProfile, Provenance,
    QuoteVerdict, find_quote, normalize, verify_with,
};
use serde::Deserialize;
use serde_json::Value;

mod common;
use common::{check_contract, contract_validator, repo_root};

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no {ext} files in {dir}");
    v
}

#[derive(Deserialize)]
struct MatchFile {
    case: Vec<MatchCase>,
}

#[derive(Deserialize)]
struct MatchCase {
    name: String,
    chunk: String,
    quote: String,
    #[serde(default)]
    profile: Option<MatchProfile>,
    expect: String,
    span: Option<[usize; 2]>,
    source_text: Option<String>,
}

#[test]
fn matching_rule_cases() {
    let mut n = 0;
    for path in files("testdata/match", "toml") {
        let file: MatchFile = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for c in file.case {
            n += 1;
            let profile = c.profile.unwrap_or_default();
            let verdict = find_quote(&c.chunk, &c.quote, profile);
            let ctx = format!("{}: case {:?}: got {verdict:?}", path.display(), c.name);
            match (c.expect.as_str(), &verdict) {
                ("exact" | "normalized", QuoteVerdict::Found(m)) => {
                    let kind = if c.expect == "exact" {
                        MatchKind::Exact
                    } else {
                        MatchKind::Normalized
                    };
                    assert_eq!(m.kind, kind, "{ctx}");
                    let [s, e] = c.span.expect("found cases give a span");
                    assert_eq!((m.span.start(), m.span.end()), (s, e), "{ctx}");
                    let text = m.span.slice(&c.chunk).unwrap();
                    assert_eq!(text, &c.chunk[m.bytes.clone()], "{ctx}");
                    assert_eq!(
                        normalize(text, profile),
                        normalize(&c.quote, profile),
                        "{ctx}"
                    );
                    if let Some(st) = &c.source_text {
                        assert_eq!(text, st, "{ctx}");
                    }
                }
                ("not_found", QuoteVerdict::NotFound(_)) | ("empty", QuoteVerdict::Empty) => {}
                _ => panic!("{ctx}: expected {}", c.expect),
            }
        }
    }
    assert!(n >= 50, "only {n} match cases");
}

#[derive(Deserialize)]
struct VerifyCase {
    name: String,
    #[serde(default)]
    profile: Option<MatchProfile>,
    #[serde(default)]
    claim_policy: ClaimPolicy,
    chunks: Vec<Chunk>,
    answer: GroundedAnswer,
    expect: Value,
}

#[test]
fn verify_cases() {
    let validator = contract_validator();
    let mut n = 0;
    for path in files("testdata/verify", "json") {
        let cases: Vec<VerifyCase> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for case in cases {
            n += 1;
            let profile = case.profile.unwrap_or_default();
            let chunks = ChunkSet::new(case.chunks).unwrap();
            let contract = verify_with(
                &case.answer,
                &chunks,
                profile,
                case.claim_policy,
                Provenance {
                    trace_id: "test-trace".into(),
                    created_at: "2026-11-30T00:00:00Z".into(),
                    question: Some("q?".into()),
                    model: None,
                },
            );
            let actual = serde_json::to_value(&contract).unwrap();
            let ctx = format!("{}: case {:?}", path.display(), case.name);
            if let Err(e) = validator.validate(&actual) {
                panic!("{ctx}: contract violates the schema: {e}\n{actual:#}");
            }
            check_contract(&case.expect, &actual, &ctx);
            // The invariant, on every verified citation.
            for claim in &contract.claims {
                for cit in &claim.citations {
                    let chunk = chunks.get(&cit.chunk_id).unwrap();
                    let st = cit.source_text.as_deref().unwrap();
                    assert_eq!(cit.span.unwrap().slice(&chunk.content), Some(st), "{ctx}");
                    assert_eq!(
                        normalize(st, profile),
                        normalize(cit.quote.as_deref().unwrap(), profile),
                        "{ctx}"
                    );
                }
            }
        }
    }
    assert!(n >= 15, "only {n} verify cases");
}
