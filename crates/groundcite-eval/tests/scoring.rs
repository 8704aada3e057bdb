//! The scoring on hand-made runs: each metric's definition and edge cases,
//! thresholds, comparison, the result file, the report's escaping and the
//! suite schema.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use groundcite_core::{
    Chunk, ChunkSet, Citation, Claim, ClaimPolicy, Contract, GroundedAnswer, MatchProfile,
    Provenance, RefusalCode, verify_with,
};
use groundcite_eval::{
    Bound, CaseRun, EvalResult, HallucinationCheck, Metric, Percentiles, RESULT_FORMAT, Suite,
    check_thresholds, compare, report, score, summary,
};

fn chunk(id: &str, content: &str) -> Chunk {
    Chunk {
        chunk_id: id.into(),
        content: content.into(),
        source_title: None,
        source_url: None,
        page_number: None,
        score: None,
    }
}

fn corpus() -> ChunkSet {
    ChunkSet::new(vec![
        chunk("a#chunk-1", "Refunds are issued within 5 business days."),
        chunk("b#chunk-1", "Each return label is valid for 14 days."),
        chunk("c#chunk-1", "Standard shipping takes 3 to 7 business days."),
    ])
    .unwrap()
}

fn prov() -> Provenance {
    Provenance {
        trace_id: "t".into(),
        created_at: "2026-01-01T00:00:00Z".into(),
        question: None,
        model: None,
    }
}

/// A claim citing each (chunk, quote).
fn claim(text: &str, cites: &[(&str, &str)]) -> Claim {
    Claim {
        text: text.into(),
        citations: cites
            .iter()
            .map(|(c, q)| Citation {
                chunk_id: (*c).into(),
                quote: (*q).into(),
            })
            .collect(),
    }
}

fn contract(answerable: bool, claims: Vec<Claim>) -> Contract {
    verify_with(
        &GroundedAnswer { answerable, claims },
        &corpus(),
        MatchProfile::Default,
        ClaimPolicy::Strict,
        prov(),
    )
}

fn run(case: &str, c: Contract, claims_in: usize, citations_in: usize) -> CaseRun {
    CaseRun {
        case_id: case.into(),
        repeat: 1,
        trace_id: "t".into(),
        retrieved: vec!["a#chunk-1".into(), "b#chunk-1".into()],
        gate_passed: true,
        claims_in,
        citations_in,
        contract: c,
        latency_ms: 100.0,
        generate_ms: Some(80.0),
        error: None,
        stop_reason: None,
        candidates: Vec::new(),
        gate: None,
    }
}

const SUITE: &str = r#"
name = "t"
[corpus]
docs = "d"
[[cases]]
id = "one"
kind = "answerable"
question = "How soon are refunds issued?"
gold_chunks = ["a#chunk-1"]
key_facts = ["5 business days"]
[[cases]]
id = "two"
kind = "multi_chunk"
question = "Refund time and label validity?"
gold_chunks = ["a#chunk-1", "b#chunk-1"]
key_facts = ["5 business days", "14 DAYS"]
[[cases]]
id = "none"
kind = "unanswerable"
question = "Who is the CEO?"
"#;

fn suite() -> Suite {
    Suite::from_toml(SUITE).unwrap()
}

fn value(runs: &[CaseRun], m: Metric) -> Option<f64> {
    score(&suite(), runs, &[]).1.get(m)
}

fn refund_claim() -> Claim {
    claim(
        "Refunds take 5 business days.",
        &[("a#chunk-1", "within 5 business days")],
    )
}

fn label_claim() -> Claim {
    claim(
        "Labels are valid for 14 days.",
        &[("b#chunk-1", "valid for 14 days")],
    )
}

fn refused() -> Contract {
    contract(false, Vec::new())
}

#[test]
fn answerable_rate_counts_only_cases_that_expect_an_answer() {
    let runs = vec![
        run("one", contract(true, vec![refund_claim()]), 1, 1),
        run("two", refused(), 0, 0),
        // An unanswerable case answered wrongly does not raise the rate.
        run("none", contract(true, vec![label_claim()]), 1, 1),
    ];
    assert_eq!(value(&runs, Metric::AnswerableRate), Some(0.5));
    // Nothing that expects an answer: unmeasured, not 0 or 1.
    let only = vec![run("none", refused(), 0, 0)];
    assert_eq!(value(&only, Metric::AnswerableRate), None);
}

#[test]
fn citation_validity_is_verified_over_emitted_with_the_reasons() {
    let c = contract(
        true,
        vec![claim(
            "Refunds take 5 business days.",
            &[
                ("a#chunk-1", "within 5 business days"),
                // Verifies only after normalization (white space).
                ("a#chunk-1", "Refunds  are issued"),
                ("zzz#chunk-9", "within 5 business days"),
                ("b#chunk-1", "valid for 99 days"),
            ],
        )],
    );
    let (_, m) = score(&suite(), &[run("one", c, 1, 4)], &[]);
    assert_eq!(m.citations_emitted, 4);
    assert_eq!(m.citations_verified, 2);
    assert_eq!(m.get(Metric::CitationValidity), Some(0.5));
    assert_eq!(m.citations_by_match.get("exact"), Some(&1));
    assert_eq!(m.citations_by_match.get("normalized"), Some(&1));
    assert_eq!(m.citations_dropped.get("unknown_chunk_id"), Some(&1));
    assert_eq!(m.citations_dropped.get("quote_not_found"), Some(&1));
    // No citation emitted at all: unmeasured.
    assert_eq!(
        value(&[run("none", refused(), 0, 0)], Metric::CitationValidity),
        None
    );
}

#[test]
fn a_run_reporting_fewer_emitted_than_verified_counts_the_verified() {
    let (_, m) = score(
        &suite(),
        &[run("one", contract(true, vec![refund_claim()]), 1, 0)],
        &[],
    );
    assert_eq!(m.get(Metric::CitationValidity), Some(1.0));
}

#[test]
fn citation_recall_is_the_share_of_gold_chunks_cited() {
    let half = run("two", contract(true, vec![refund_claim()]), 1, 1);
    let all = run(
        "two",
        contract(true, vec![refund_claim(), label_claim()]),
        2,
        2,
    );
    // A verified citation of a chunk that is not gold counts for nothing.
    let wrong = run("one", contract(true, vec![label_claim()]), 1, 1);
    assert_eq!(
        value(std::slice::from_ref(&half), Metric::CitationRecall),
        Some(0.5)
    );
    assert_eq!(value(&[all], Metric::CitationRecall), Some(1.0));
    assert_eq!(
        value(std::slice::from_ref(&wrong), Metric::CitationRecall),
        Some(0.0)
    );
    assert_eq!(value(&[half, wrong], Metric::CitationRecall), Some(0.25));
    // Retrieval recall: both gold chunks of "two" were retrieved.
    let r = run("two", refused(), 0, 0);
    assert_eq!(
        value(std::slice::from_ref(&r), Metric::RetrievalRecall),
        Some(1.0)
    );
    let mut missed = r;
    missed.retrieved = vec!["c#chunk-1".into()];
    assert_eq!(value(&[missed], Metric::RetrievalRecall), Some(0.0));
}

#[test]
fn multi_chunk_synthesis_needs_two_distinct_gold_chunks() {
    let both = run(
        "two",
        contract(true, vec![refund_claim(), label_claim()]),
        2,
        2,
    );
    let same_twice = run(
        "two",
        contract(
            true,
            vec![
                refund_claim(),
                claim(
                    "Refunds are issued.",
                    &[("a#chunk-1", "Refunds are issued")],
                ),
            ],
        ),
        2,
        2,
    );
    assert_eq!(
        value(std::slice::from_ref(&both), Metric::MultiChunkSynthesis),
        Some(1.0)
    );
    assert_eq!(value(&[same_twice], Metric::MultiChunkSynthesis), Some(0.0));
    assert_eq!(
        value(&[run("two", refused(), 0, 0)], Metric::MultiChunkSynthesis),
        Some(0.0)
    );
    // Single-chunk cases do not count.
    assert_eq!(
        value(
            &[run("one", contract(true, vec![refund_claim()]), 1, 1)],
            Metric::MultiChunkSynthesis
        ),
        None
    );
    let (cases, _) = score(&suite(), &[both], &[]);
    assert_eq!(cases[1].passed, 1);
}

#[test]
fn unanswerable_precision_wants_no_claims_and_no_citations() {
    let right = run("none", refused(), 0, 0);
    let answered = run("none", contract(true, vec![label_claim()]), 1, 1);
    // answerable false but claims sent: the verifier drops them, so the
    // contract has none and the case passes (the warning says what came).
    let claims_on_unanswerable = run("none", contract(false, vec![label_claim()]), 1, 1);
    assert!(claims_on_unanswerable.contract.claims.is_empty());
    assert_eq!(value(&[right], Metric::UnanswerablePrecision), Some(1.0));
    assert_eq!(value(&[answered], Metric::UnanswerablePrecision), Some(0.0));
    assert_eq!(
        value(&[claims_on_unanswerable], Metric::UnanswerablePrecision),
        Some(1.0)
    );
    // A fabricated answer that verification stripped (R2) is a refusal too.
    let stripped = run(
        "none",
        contract(
            true,
            vec![claim("The CEO is Ann.", &[("a#chunk-1", "Ann")])],
        ),
        1,
        1,
    );
    assert_eq!(
        stripped.contract.refusal.as_ref().map(|r| r.code),
        Some(RefusalCode::R2)
    );
    assert_eq!(value(&[stripped], Metric::UnanswerablePrecision), Some(1.0));
}

#[test]
fn key_facts_match_after_normalization_in_claims_or_quotes() {
    // "14 DAYS" is found case-insensitively in the quote; "5 business days"
    // in the claim text.
    let both = run(
        "two",
        contract(true, vec![refund_claim(), label_claim()]),
        2,
        2,
    );
    assert_eq!(value(&[both], Metric::KeyFactRecall), Some(1.0));
    let one = run("two", contract(true, vec![refund_claim()]), 1, 1);
    assert_eq!(
        value(std::slice::from_ref(&one), Metric::KeyFactRecall),
        Some(0.5)
    );
    // A missing fact fails the case even with the gold chunk cited.
    let (cases, _) = score(&suite(), &[one], &[]);
    assert_eq!(cases[1].passed, 0);
    // Text in a dropped claim does not count.
    let dropped = run(
        "one",
        contract(
            true,
            vec![claim(
                "Refunds take 5 business days.",
                &[("a#chunk-1", "nope")],
            )],
        ),
        1,
        1,
    );
    assert_eq!(value(&[dropped], Metric::KeyFactRecall), Some(0.0));
    assert_eq!(
        value(&[run("none", refused(), 0, 0)], Metric::KeyFactRecall),
        None
    );
}

#[test]
fn the_four_monitored_rates() {
    let ok = run("one", contract(true, vec![refund_claim()]), 1, 1);
    let half_failed = run(
        "two",
        contract(
            true,
            vec![
                refund_claim(),
                claim("Labels last a year.", &[("b#chunk-1", "a year")]),
            ],
        ),
        2,
        2,
    );
    let mut schema_error = run(
        "none",
        Contract::refused(RefusalCode::R3, prov(), MatchProfile::Default, Vec::new()),
        0,
        0,
    );
    schema_error.generate_ms = Some(500.0);
    let mut provider_down = schema_error.clone();
    provider_down.error = Some("connection refused".into());
    provider_down.generate_ms = None;
    let runs = vec![ok, half_failed, schema_error, provider_down];
    let (_, m) = score(&suite(), &runs, &[]);
    assert_eq!(m.claims_in, 3);
    assert_eq!(m.claims_failed, 1);
    assert_eq!(m.get(Metric::ClaimFailureRate), Some(1.0 / 3.0));
    assert_eq!(m.get(Metric::UnanswerableRate), Some(0.5));
    // The provider failure is an error, not a schema error: 1 of 3.
    assert_eq!(m.get(Metric::SchemaErrorRate), Some(1.0 / 3.0));
    assert_eq!(m.get(Metric::ErrorRate), Some(0.25));
    assert_eq!(m.get(Metric::InferenceP95Ms), Some(500.0));
    assert_eq!(m.refusals.get("R3"), Some(&2));
}

#[test]
fn repeats_are_counted_per_run() {
    let mut a = run("one", contract(true, vec![refund_claim()]), 1, 1);
    let mut b = run("one", refused(), 0, 0);
    a.repeat = 1;
    b.repeat = 2;
    let (cases, m) = score(&suite(), &[a, b], &[]);
    assert_eq!(
        (cases[0].runs, cases[0].passed, cases[0].answered),
        (2, 1, 1)
    );
    assert_eq!(m.runs, 2);
    assert_eq!(m.get(Metric::AnswerableRate), Some(0.5));
    assert_eq!(m.by_kind["answerable"].runs, 2);
    // Runs of cases the suite does not have are ignored.
    let (_, m) = score(&suite(), &[run("ghost", refused(), 0, 0)], &[]);
    assert_eq!(m.runs, 0);
}

#[test]
fn hallucination_rejection_is_the_share_of_checks_passed() {
    let check = |passed| HallucinationCheck {
        case_id: "one".into(),
        passed,
        warnings: Vec::new(),
        detail: None,
    };
    let (_, m) = score(&suite(), &[], &[check(true), check(true), check(false)]);
    assert_eq!(m.get(Metric::HallucinationRejection), Some(2.0 / 3.0));
    let (_, m) = score(&suite(), &[], &[]);
    assert_eq!(m.get(Metric::HallucinationRejection), None);
}

#[test]
fn percentiles_are_nearest_rank() {
    let v: Vec<f64> = (1..=100).map(f64::from).collect();
    let p = Percentiles::of(&v);
    assert_eq!(
        (p.p50, p.p95, p.p99, p.max),
        (Some(50.0), Some(95.0), Some(99.0), Some(100.0))
    );
    assert_eq!(p.mean, Some(50.5));
    let one = Percentiles::of(&[7.0]);
    assert_eq!((one.p50, one.p99), (Some(7.0), Some(7.0)));
    let none = Percentiles::of(&[f64::NAN]);
    assert_eq!((none.count, none.p50, none.mean), (0, None, None));
    // Order does not matter.
    assert_eq!(Percentiles::of(&[3.0, 1.0, 2.0]).p50, Some(2.0));
}

#[test]
fn thresholds_are_inclusive_and_unmeasured_fails() {
    let runs = vec![run("one", contract(true, vec![refund_claim()]), 1, 1)];
    let (_, m) = score(&suite(), &runs, &[]);
    let mut t = BTreeMap::new();
    t.insert(
        "answerable_rate".to_string(),
        Bound {
            min: Some(1.0),
            max: None,
        },
    );
    t.insert(
        "claim_failure_rate".to_string(),
        Bound {
            min: None,
            max: Some(0.0),
        },
    );
    t.insert(
        "unanswerable_precision".to_string(),
        Bound {
            min: Some(0.0),
            max: None,
        },
    );
    t.insert(
        "latency_p95_ms".to_string(),
        Bound {
            min: None,
            max: Some(99.0),
        },
    );
    let r = check_thresholds(&t, &m);
    let verdict: BTreeMap<&str, bool> = r.iter().map(|x| (x.metric.as_str(), x.passed)).collect();
    assert!(verdict["answerable_rate"]);
    assert!(verdict["claim_failure_rate"]);
    // No unanswerable case ran: not measured, so the gate fails.
    assert!(!verdict["unanswerable_precision"]);
    assert!(!verdict["latency_p95_ms"]);
}

fn result(runs: Vec<CaseRun>) -> EvalResult {
    let s = suite();
    let (cases, metrics) = score(&s, &runs, &[]);
    EvalResult {
        format: RESULT_FORMAT.into(),
        suite: s.name.clone(),
        suite_path: "t.toml".into(),
        provider: "local".into(),
        model: Some("m".into()),
        started_at: "2026-01-01T00:00:00Z".into(),
        wall_s: 1.0,
        repeat: 1,
        settings: serde_json::json!({}),
        metrics,
        cases,
        runs,
        hallucination: Vec::new(),
        thresholds: Vec::new(),
        passed: true,
    }
}

#[test]
fn comparison_marks_direction_and_changed_cases() {
    let old = result(vec![
        run("one", refused(), 0, 0),
        run("none", refused(), 0, 0),
    ]);
    let new = result(vec![
        run("one", contract(true, vec![refund_claim()]), 1, 1),
        run("none", contract(true, vec![label_claim()]), 1, 1),
    ]);
    let c = compare(&old, &new);
    let get = |name: &str| c.metrics.iter().find(|d| d.metric == name).unwrap();
    assert_eq!(get("answerable_rate").better, Some(true));
    assert_eq!(get("unanswerable_precision").better, Some(false));
    // Neither direction is better for the unanswerable rate.
    assert_eq!(get("unanswerable_rate").better, None);
    assert_eq!(get("latency_p95_ms").better, None);
    let ids: Vec<&str> = c.cases.iter().map(|x| x.case_id.as_str()).collect();
    // "two" ran in neither, so its pass rate did not change.
    assert_eq!(ids, vec!["one", "none"]);
    let text = summary::text(&new, Some(&c));
    assert!(text.contains("WORSE"), "{text}");
    assert!(text.contains("better"), "{text}");
}

#[test]
fn result_files_round_trip() {
    let r = result(vec![run("one", contract(true, vec![refund_claim()]), 1, 1)]);
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(EvalResult::from_json(&text).unwrap(), r);
}

#[test]
fn the_report_escapes_hostile_text() {
    let hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    let s = Suite::from_toml(&SUITE.replace("Who is the CEO?", hostile)).unwrap();
    let mut r = result(vec![run("none", refused(), 0, 0)]);
    r.cases = score(&s, &r.runs, &[]).0;
    r.provider = hostile.into();
    r.runs[0].error = Some(hostile.into());
    let html = report::html(&r, None);
    assert!(!html.contains("<script"), "unescaped script");
    assert!(!html.contains("<img"), "unescaped img");
    assert!(html.contains("&lt;script&gt;"));
    assert!(html.starts_with("<!doctype html>"));
}

#[test]
fn the_sample_suite_matches_its_schema_and_bad_suites_do_not() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("schemas/eval-suite.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let text = std::fs::read_to_string(root.join("eval/sample.toml")).unwrap();
    let sample: serde_json::Value = toml::from_str(&text).unwrap();
    assert!(
        validator.is_valid(&sample),
        "{:?}",
        validator.validate(&sample).err()
    );
    let suite = Suite::from_toml(&text).unwrap();
    let counts = suite.counts();
    assert_eq!(
        (
            counts[&groundcite_eval::CaseKind::Answerable],
            counts[&groundcite_eval::CaseKind::MultiChunk],
            counts[&groundcite_eval::CaseKind::Unanswerable]
        ),
        (10, 5, 5),
        "the seed's 10 / 5 / 5"
    );
    // The same mistakes the reader refuses, the schema refuses.
    for bad in [
        SUITE.replace("[\"a#chunk-1\", \"b#chunk-1\"]", "[\"a#chunk-1\"]"),
        SUITE.replace("kind = \"answerable\"", "kind = \"maybe\""),
        SUITE.replace("id = \"one\"", "id = \"has space\""),
        SUITE.replace("docs = \"d\"", "docs = \"d\"\nchunks = \"c\""),
        SUITE.replace(
            "name = \"t\"",
            "name = \"t\"\n[thresholds]\nspeed = { min = 1 }",
        ),
    ] {
        let v: serde_json::Value = toml::from_str(&bad).unwrap();
        assert!(!validator.is_valid(&v), "schema accepted: {bad}");
        assert!(Suite::from_toml(&bad).is_err(), "reader accepted: {bad}");
    }
}

const EVIDENCE_SUITE: &str = r#"
name = "e"
[corpus]
docs = "d"
[[cases]]
id = "one"
kind = "answerable"
question = "how quick r refunds"
evidence = ["Refunds are issued within 5 business days."]
key_facts = ["5 business days"]
[[cases]]
id = "two"
kind = "multi_chunk"
question = "refund time and how long is the label good for"
evidence = ["Refunds are issued within 5 business days.", "Each return label is valid for 14 days."]
key_facts = ["5 business days", "14 days"]
[[cases]]
id = "none"
kind = "unanswerable"
question = "Who is the CEO?"
"#;

fn evidence_suite() -> Suite {
    let mut s = Suite::from_toml(EVIDENCE_SUITE).unwrap();
    s.resolve_evidence(corpus().chunks()).unwrap();
    s
}

#[test]
fn evidence_sentences_resolve_to_the_chunks_that_hold_them() {
    let s = evidence_suite();
    assert_eq!(s.cases[0].gold_groups, vec![vec!["a#chunk-1".to_string()]]);
    assert_eq!(
        s.cases[1].gold_groups,
        vec![vec!["a#chunk-1".to_string()], vec!["b#chunk-1".to_string()]]
    );
    // Citing the resolved chunk counts for citation recall.
    let ok = run("one", contract(true, vec![refund_claim()]), 1, 1);
    let (_, m) = score(&s, &[ok], &[]);
    assert_eq!(m.get(Metric::CitationRecall), Some(1.0));

    // A sentence the corpus does not hold is an error naming the case.
    let mut bad = Suite::from_toml(&EVIDENCE_SUITE.replace(
        "Each return label is valid for 14 days.",
        "Each return label is valid for 30 days.",
    ))
    .unwrap();
    let e = bad.resolve_evidence(corpus().chunks()).unwrap_err();
    assert!(e.to_string().contains("cases[1].evidence[1]"), "{e}");
    // A multi-chunk case whose evidence lies in one chunk is refused.
    let mut one_chunk = Suite::from_toml(&EVIDENCE_SUITE.replace(
        "\"Each return label is valid for 14 days.\"]",
        "\"Refunds are issued within 5 business days.\"]",
    ))
    .unwrap();
    let e = one_chunk.resolve_evidence(corpus().chunks()).unwrap_err();
    assert!(e.to_string().contains("fewer than two chunks"), "{e}");
}

#[test]
fn full_answer_rate_wants_every_key_fact_in_the_claim_text() {
    let s = evidence_suite();
    let value = |runs: &[CaseRun], m| score(&s, runs, &[]).1.get(m);
    // Both facts in the claims' text.
    let both = run(
        "two",
        contract(true, vec![refund_claim(), label_claim()]),
        2,
        2,
    );
    assert_eq!(
        value(std::slice::from_ref(&both), Metric::FullAnswerRate),
        Some(1.0)
    );
    // One of two facts: key_fact_recall counts it, a full answer does not.
    let half = run("two", contract(true, vec![refund_claim()]), 1, 1);
    assert_eq!(
        value(std::slice::from_ref(&half), Metric::FullAnswerRate),
        Some(0.0)
    );
    assert_eq!(
        value(std::slice::from_ref(&half), Metric::KeyFactRecall),
        Some(0.5)
    );
    // The fact only in the quote: the user does not read it as the answer.
    let quoted_only = run(
        "one",
        contract(
            true,
            vec![claim(
                "Refunds are quick.",
                &[("a#chunk-1", "Refunds are issued within 5 business days.")],
            )],
        ),
        1,
        1,
    );
    assert_eq!(
        value(std::slice::from_ref(&quoted_only), Metric::FullAnswerRate),
        Some(0.0)
    );
    assert_eq!(
        value(std::slice::from_ref(&quoted_only), Metric::KeyFactRecall),
        Some(1.0)
    );
    // Unanswerable runs are not counted.
    assert_eq!(
        value(&[run("none", refused(), 0, 0)], Metric::FullAnswerRate),
        None
    );
    assert_eq!(value(&[both, half], Metric::FullAnswerRate), Some(0.5));
}

#[test]
fn sentences_truncation_gate_and_candidate_recall() {
    let s = evidence_suite();
    let value = |runs: &[CaseRun], m| score(&s, runs, &[]).1.get(m);
    // Sentences per answered run: 1, 2, 2 -> median 2; refusals not counted.
    let one = run("one", contract(true, vec![refund_claim()]), 1, 1);
    let two = run(
        "two",
        contract(true, vec![refund_claim(), label_claim()]),
        2,
        2,
    );
    let runs = [
        one.clone(),
        two.clone(),
        two.clone(),
        run("none", refused(), 0, 0),
    ];
    assert_eq!(value(&runs, Metric::SentencesPerAnswerP50), Some(2.0));
    // Truncation: stop reason `length`, over all runs.
    let mut cut = run("one", refused(), 0, 0);
    cut.stop_reason = Some("length".into());
    let mut stopped = one.clone();
    stopped.stop_reason = Some("stop".into());
    assert_eq!(value(&[cut, stopped], Metric::TruncationRate), Some(0.5));
    // The gate's pass rate counts answerable kinds only.
    let mut blocked = run("one", refused(), 0, 0);
    blocked.gate_passed = false;
    let mut unans_blocked = run("none", refused(), 0, 0);
    unans_blocked.gate_passed = false;
    assert_eq!(
        value(&[blocked, one.clone(), unans_blocked], Metric::GatePassRate),
        Some(0.5)
    );
    // Candidate recall: every evidence sentence among the candidates.
    let mut hit = one.clone();
    hit.candidates = vec!["Refunds are issued within 5 business days.".into()];
    let mut miss = two.clone();
    miss.candidates = vec!["Refunds are issued within 5 business days.".into()];
    assert_eq!(value(&[hit, miss], Metric::CandidateRecall), Some(0.5));
    // Without evidence there is nothing to measure.
    assert_eq!(
        value(&[run("none", refused(), 0, 0)], Metric::CandidateRecall),
        None
    );
}

#[test]
fn padding_counts_answer_sentences_that_neither_answer_nor_are_evidence() {
    let s = evidence_suite();
    let value = |runs: &[CaseRun]| score(&s, runs, &[]).1.get(Metric::PaddingRate);
    let shipping = || {
        claim(
            "Standard shipping takes 3 to 7 business days.",
            &[("c#chunk-1", "Standard shipping takes 3 to 7 business days.")],
        )
    };
    // A key fact in the sentence: not padding.
    let answer = run("one", contract(true, vec![refund_claim()]), 1, 1);
    assert_eq!(value(std::slice::from_ref(&answer)), Some(0.0));
    // A sentence beside the answer that holds neither: one of two.
    let padded = run(
        "one",
        contract(true, vec![refund_claim(), shipping()]),
        2,
        2,
    );
    assert_eq!(value(std::slice::from_ref(&padded)), Some(0.5));
    // An evidence sentence quoted whole is not padding, even where the
    // case's key fact is worded otherwise.
    let mut s2 = Suite::from_toml(&EVIDENCE_SUITE.replace(
        "key_facts = [\"5 business days\"]",
        "key_facts = [\"five business days\"]",
    ))
    .unwrap();
    s2.resolve_evidence(corpus().chunks()).unwrap();
    let verbatim = run(
        "one",
        contract(
            true,
            vec![claim(
                "Refunds are issued within 5 business days.",
                &[("a#chunk-1", "Refunds are issued within 5 business days.")],
            )],
        ),
        1,
        1,
    );
    assert_eq!(
        score(&s2, std::slice::from_ref(&verbatim), &[])
            .1
            .get(Metric::PaddingRate),
        Some(0.0)
    );
    // Padding in a multi-chunk answer counts too; a claim repeated word
    // for word is dropped as a duplicate and not counted: one of three.
    let multi = run(
        "two",
        contract(
            true,
            vec![refund_claim(), shipping(), label_claim(), shipping()],
        ),
        4,
        4,
    );
    assert_eq!(value(std::slice::from_ref(&multi)), Some(1.0 / 3.0));
    // Over several runs the sentences are pooled: 1 + 1 of 2 + 3.
    assert_eq!(value(&[padded, multi]), Some(2.0 / 5.0));
    // Refusals and unanswerable cases are not counted.
    assert_eq!(value(&[run("one", refused(), 0, 0)]), None);
    assert_eq!(value(&[run("none", refused(), 0, 0)]), None);
}
