//! Data-driven tests of the prose parser: `testdata/prose/*.json` (every
//! marker family and its traps), the loud-failure path, and long answers.
//! Every contract is validated against the published JSON Schema and the
//! verifier's invariant (`span` slices the chunk to `source_text`).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use groundcite_core::prose::{self, CitationFormatError, MarkerFamily};
use groundcite_core::{Chunk, ChunkSet, MatchKind, MatchProfile, Provenance, normalize};
use serde::Deserialize;
use serde_json::Value;

mod common;
use common::{check_contract, contract_validator, repo_root};

fn chunk_sets() -> BTreeMap<String, Vec<Chunk>> {
    serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("testdata/prose/chunks.json")).unwrap(),
    )
    .unwrap()
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
#[serde(untagged)]
enum Text {
    One(String),
    Lines(Vec<String>),
}

impl Text {
    fn join(self) -> String {
        match self {
            Text::One(s) => s,
            Text::Lines(l) => l.join("\n"),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Chunks {
    Named(String),
    Inline(Vec<Chunk>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    chunks: Chunks,
    answer: Text,
    #[serde(default)]
    profile: Option<MatchProfile>,
    #[serde(default)]
    expect: Option<Value>,
    /// Substrings of the CitationFormatError message.
    #[serde(default)]
    error: Option<Vec<String>>,
    /// Marker families of the surviving citations, claim by claim.
    #[serde(default)]
    families: Option<Vec<Vec<String>>>,
}

fn files() -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(repo_root().join("testdata/prose"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name().is_some_and(|n| n != "chunks.json")
        })
        .collect();
    v.sort();
    assert!(!v.is_empty());
    v
}

fn family_name(f: MarkerFamily) -> String {
    f.as_str().to_string()
}

#[test]
fn prose_cases() {
    let validator = contract_validator();
    let sets = chunk_sets();
    let mut n = 0;
    let mut per_file = Vec::new();
    let mut failed = Vec::new();
    for path in files() {
        let cases: Vec<Case> =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        per_file.push((
            path.file_name().unwrap().to_string_lossy().to_string(),
            cases.len(),
        ));
        for case in cases {
            n += 1;
            let ctx = format!("{}: case {:?}", path.display(), case.name);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_case(case, &sets, &validator, &ctx);
            }));
            if outcome.is_err() {
                failed.push(ctx);
            }
        }
    }
    eprintln!("prose cases per file: {per_file:?}");
    assert!(
        failed.is_empty(),
        "{} case(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
    assert!(n >= 60, "only {n} prose cases");
}

fn run_case(
    case: Case,
    sets: &BTreeMap<String, Vec<Chunk>>,
    validator: &jsonschema::Validator,
    ctx: &str,
) {
    let chunks = match case.chunks {
        Chunks::Named(name) => sets
            .get(&name)
            .unwrap_or_else(|| panic!("{ctx}: no chunk set {name}"))
            .clone(),
        Chunks::Inline(c) => c,
    };
    let chunks = ChunkSet::new(chunks).unwrap();
    let profile = case.profile.unwrap_or_default();
    let answer = case.answer.join();
    let result = prose::verify_prose(&answer, &chunks, profile, provenance());
    match (&case.error, result) {
        (Some(parts), Err(e)) => {
            let msg = e.to_string();
            for p in parts {
                assert!(msg.contains(p.as_str()), "{ctx}: {msg:?} lacks {p:?}");
            }
            assert!(case.expect.is_none(), "{ctx}: error cases have no expect");
        }
        (Some(_), Ok(c)) => panic!(
            "{ctx}: expected a CitationFormatError, got {:#}",
            serde_json::to_value(&c).unwrap()
        ),
        (None, Err(e)) => panic!("{ctx}: unexpected CitationFormatError: {e}"),
        (None, Ok(contract)) => {
            let actual = serde_json::to_value(&contract).unwrap();
            if let Err(e) = validator.validate(&actual) {
                panic!("{ctx}: contract violates the schema: {e}\n{actual:#}");
            }
            let expect = case
                .expect
                .as_ref()
                .unwrap_or_else(|| panic!("{ctx}: no expect"));
            check_contract(expect, &actual, ctx);
            for claim in &contract.claims {
                for cit in &claim.citations {
                    let chunk = chunks.get(&cit.chunk_id).unwrap();
                    match cit.kind {
                        MatchKind::Reference => {
                            assert!(cit.quote.is_none() && cit.span.is_none(), "{ctx}");
                        }
                        _ => {
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
            if let Some(families) = &case.families {
                let parsed = prose::parse(&answer, &chunks, profile).unwrap();
                let got: Vec<Vec<String>> = parsed
                    .claims
                    .iter()
                    .filter(|c| !c.citations.is_empty())
                    .map(|c| c.citations.iter().map(|x| family_name(x.family)).collect())
                    .collect();
                assert_eq!(&got, families, "{ctx}: families");
            }
        }
    }
}

fn policy_chunks() -> ChunkSet {
    ChunkSet::new(chunk_sets().remove("policy").unwrap()).unwrap()
}

#[test]
fn loud_failure_message_names_length_chunks_and_head() {
    let chunks = policy_chunks();
    let answer = format!(
        "Refunds are available within thirty days of purchase, as the policy explains in detail (see below), and {}",
        "shipping is free. ".repeat(20)
    );
    let err: CitationFormatError =
        prose::parse(&answer, &chunks, MatchProfile::Default).unwrap_err();
    assert_eq!(err.answer_chars, answer.chars().count());
    assert_eq!(err.chunks, 3);
    assert_eq!(err.head.chars().count(), 120);
    assert!(answer.starts_with(&err.head));
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("{}-character answer", answer.chars().count())),
        "{msg}"
    );
    assert!(msg.contains("over 3 chunk(s)"), "{msg}");
    assert!(msg.contains(&format!("{:?}", err.head)), "{msg}");
    assert_eq!(err.rejected, 0);
}

#[test]
fn loud_failure_counts_rejected_markers() {
    let chunks = policy_chunks();
    let err = prose::parse(
        "Refunds take 30 days [4]. Shipping is free [0].",
        &chunks,
        MatchProfile::Default,
    )
    .unwrap_err();
    assert_eq!(err.rejected, 2);
    let msg = err.to_string();
    assert!(
        msg.contains("2 marker(s) were recognised but rejected"),
        "{msg}"
    );
    assert!(msg.contains("position 4"), "{msg}");
}

#[test]
fn head_is_cut_on_characters_not_bytes() {
    let chunks = policy_chunks();
    let answer = "é".repeat(300);
    let err = prose::parse(&answer, &chunks, MatchProfile::Default).unwrap_err();
    assert_eq!(err.head, "é".repeat(120));
    assert_eq!(err.answer_chars, 300);
}

#[test]
fn blank_answer_and_no_chunks_are_not_format_errors() {
    let chunks = policy_chunks();
    assert!(
        prose::parse("  \n ", &chunks, MatchProfile::Default)
            .unwrap()
            .claims
            .is_empty()
    );
    let c = prose::verify_prose(" \n", &chunks, MatchProfile::Default, provenance()).unwrap();
    assert_eq!(c.refusal.unwrap().code, groundcite_core::RefusalCode::R3);
    assert_eq!(c.warnings[0].code.as_str(), "empty_answer");
    let none = ChunkSet::new(Vec::new()).unwrap();
    let c = prose::verify_prose(
        "Refunds take 30 days [1].",
        &none,
        MatchProfile::Default,
        provenance(),
    )
    .unwrap();
    assert_eq!(c.refusal.unwrap().code, groundcite_core::RefusalCode::R2);
    assert_eq!(c.warnings[0].code.as_str(), "marker_out_of_range");
}

/// A long answer (about 100 KB) with a trailing reference section and no
/// inline markers: one claim citing every listed source.
#[test]
fn reference_section_after_a_long_answer() {
    let chunks = policy_chunks();
    let mut answer = String::new();
    let mut i = 0;
    while answer.len() < 100_000 {
        answer.push_str(&format!(
            "Paragraph {i}: customers may return items and ask for their money back; delivery times vary by region and carrier, and the exact terms are listed in the documents below.\n\n"
        ));
        i += 1;
    }
    answer.push_str(
        "**Sources:**\n1. Refund policy\n2. *Shipping FAQ* — https://example.com/help/shipping\n",
    );
    let parsed = prose::parse(&answer, &chunks, MatchProfile::Default).unwrap();
    assert_eq!(parsed.claims.len(), 1);
    let claim = &parsed.claims[0];
    assert!(claim.text.starts_with("Paragraph 0:"));
    assert!(!claim.text.contains("Sources"));
    let ids: Vec<&str> = claim
        .citations
        .iter()
        .map(|c| c.chunk_id.as_str())
        .collect();
    assert_eq!(ids, ["refunds#1", "shipping#1"]);
    assert!(
        claim
            .citations
            .iter()
            .all(|c| c.family == MarkerFamily::ReferenceSection)
    );
    let c = prose::verify_prose(&answer, &chunks, MatchProfile::Default, provenance()).unwrap();
    assert!(c.answerable);
    assert_eq!(c.sources.len(), 2);
}

/// A long answer with inline markers in every paragraph parses every claim,
/// and parsing is linear enough to be fast in debug builds too.
#[test]
fn long_answer_with_many_markers() {
    let chunks = policy_chunks();
    let mut answer = String::new();
    let mut expected = 0;
    while answer.len() < 100_000 {
        answer.push_str("Refunds are available within 30 days [1]. Shipping is free over 50 euros (Source: Shipping FAQ). The warranty covers defects [^3].\n\n");
        expected += 3;
    }
    answer.push_str("[^3]: Warranty terms\n");
    let start = std::time::Instant::now();
    let parsed = prose::parse(&answer, &chunks, MatchProfile::Default).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(parsed.claims.len(), expected);
    assert!(parsed.claims.iter().all(|c| c.citations.len() == 1));
    assert!(elapsed.as_secs() < 10, "took {elapsed:?}");
}

/// Chunk order is the order shown to the model: reversing the chunk list
/// changes which chunk `[1]` names, and nothing else.
#[test]
fn positions_follow_the_order_shown_to_the_model() {
    let mut list = chunk_sets().remove("policy").unwrap();
    let a = ChunkSet::new(list.clone()).unwrap();
    list.reverse();
    let b = ChunkSet::new(list).unwrap();
    let text = "Something holds [1].";
    let pa = prose::parse(text, &a, MatchProfile::Default).unwrap();
    let pb = prose::parse(text, &b, MatchProfile::Default).unwrap();
    assert_eq!(pa.claims[0].citations[0].chunk_id, "refunds#1");
    assert_eq!(pb.claims[0].citations[0].chunk_id, "warranty#4");
}
