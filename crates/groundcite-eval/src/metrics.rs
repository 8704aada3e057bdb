//! Scoring: what one run of a case produced ([`CaseRun`]), what each case
//! scored ([`CaseScore`]) and the totals ([`Metrics`]).
//!
//! Definitions (each is `None` when nothing was there to measure, and a
//! threshold on an unmeasured metric fails):
//! - `answerable_rate`: runs of answerable and multi-chunk cases whose
//!   contract is answerable.
//! - `citation_validity`: citations that verified / citations the model
//!   emitted, over all runs (a claim repeating a kept one word for word is
//!   dropped unchecked as `duplicate_claim`; neither it nor its citations
//!   count, as in the service's signals); `citations_by_match` splits the verified ones by
//!   match kind and `citations_dropped` the others by warning code.
//! - `citation_recall`: mean, over runs of answerable kinds, of the share of
//!   gold chunks cited by a verified citation. `retrieval_recall` is the same
//!   against the retrieved chunks (tells retrieval misses from generation
//!   misses).
//! - `multi_chunk_synthesis`: multi-chunk runs citing at least two distinct
//!   gold chunks.
//! - `unanswerable_precision`: unanswerable runs answered with
//!   `answerable: false`, zero claims and zero citations.
//! - `key_fact_recall`: key facts found in verified claims or their quotes.
//! - `gate_pass_rate`: runs of answerable kinds whose question the gate let
//!   through to the model (a hosted provider's gate must let every one
//!   through: it refuses only when retrieval found nothing).
//! - `candidate_recall`: runs of answerable kinds with evidence sentences
//!   whose every evidence sentence was among the candidate sentences the
//!   embedded model chose from (tells a ranking miss from a choice miss).
//! - `full_answer_rate`: runs of answerable kinds with key facts whose
//!   every key fact is in the text of a verified claim (what the user
//!   reads; quotes do not count).
//! - `sentences_per_answer_p50`: median number of sentences in the verified
//!   claims of answered runs (a padded answer shows here).
//! - `padding_rate`: over answered runs of answerable kinds with evidence
//!   sentences, the share of their verified claims' sentences that hold no
//!   key fact and overlap no evidence sentence ([`padding_sentences`]).
//! - `truncation_rate`: runs whose generation hit its token limit.
//! - `hallucination_rejection`: injected fabricated answers stripped,
//!   warned and turned unanswerable.
//! - The four monitored signals: `claim_failure_rate` (failed claims /
//!   claims the model produced), `unanswerable_rate` (all runs),
//!   `schema_error_rate` (runs refused R3) and `inference_p95_ms`; plus
//!   `error_rate` (runs whose provider call failed) and latency percentiles.

use std::collections::{BTreeMap, BTreeSet};

use groundcite_core::{Contract, MatchProfile, RefusalCode, normalize};
use serde::{Deserialize, Serialize};

pub use crate::metric::Metric;
use crate::suite::{CaseKind, Suite};

/// What one run of one case produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRun {
    /// The case's ID.
    pub case_id: String,
    /// Which repetition (from 1).
    pub repeat: u32,
    /// The trace ID the contract carries.
    pub trace_id: String,
    /// The retrieved chunk IDs, best first.
    pub retrieved: Vec<String>,
    /// Whether the relevance gate let the question reach the model.
    pub gate_passed: bool,
    /// Claims the model produced (before verification).
    pub claims_in: usize,
    /// Citations the model produced (before verification).
    pub citations_in: usize,
    /// The verified contract.
    pub contract: Contract,
    /// Retrieval through verification, in milliseconds.
    pub latency_ms: f64,
    /// The model's part, when the model was called.
    pub generate_ms: Option<f64>,
    /// The provider's failure, when the call failed.
    pub error: Option<String>,
    /// Why the generation ended (`stop`, `length`, `repeat`, …), when the
    /// model was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The candidate sentences ranked for the question, best first (empty
    /// when none were ranked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// What the gate read and decided (settings, signals, verdict, the
    /// model's probability of answering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<serde_json::Value>,
}

/// The injected-hallucination check of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HallucinationCheck {
    /// The case whose retrieved chunks were used.
    pub case_id: String,
    /// Stripped, warned and unanswerable.
    pub passed: bool,
    /// The warning codes raised.
    pub warnings: Vec<String>,
    /// Why it failed, when it did.
    pub detail: Option<String>,
}

/// Latency percentiles (nearest rank), in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Samples.
    pub count: usize,
    /// Median.
    pub p50: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// 95th percentile.
    pub p95: Option<f64>,
    /// 99th percentile.
    pub p99: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
    /// Mean.
    pub mean: Option<f64>,
}

impl Percentiles {
    /// Percentiles of `samples` (NaN samples are ignored).
    pub fn of(samples: &[f64]) -> Percentiles {
        let mut s: Vec<f64> = samples.iter().copied().filter(|v| !v.is_nan()).collect();
        s.sort_by(f64::total_cmp);
        let rank = |p: f64| -> Option<f64> {
            if s.is_empty() {
                return None;
            }
            // Nearest rank: the smallest value with at least p% at or below.
            let n = s.len() as f64;
            let i = ((p / 100.0 * n).ceil() as usize).clamp(1, s.len()) - 1;
            s.get(i).copied()
        };
        Percentiles {
            count: s.len(),
            p50: rank(50.0),
            p90: rank(90.0),
            p95: rank(95.0),
            p99: rank(99.0),
            max: s.last().copied(),
            mean: (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64),
        }
    }
}

/// How one case did over its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseScore {
    /// The case's ID.
    pub case_id: String,
    /// The case's kind.
    pub kind: CaseKind,
    /// The question.
    pub question: String,
    /// Runs.
    pub runs: usize,
    /// Runs that met the case's expectation (see [`run_passed`]).
    pub passed: usize,
    /// Runs answered answerable.
    pub answered: usize,
    /// Mean share of gold chunks cited (answerable kinds).
    pub citation_recall: Option<f64>,
    /// Mean share of gold chunks retrieved (answerable kinds).
    pub retrieval_recall: Option<f64>,
    /// Key facts found, over all runs.
    pub key_facts_found: usize,
    /// Key facts looked for, over all runs.
    pub key_facts_total: usize,
    /// Citations verified / emitted, over all runs.
    pub citations_verified: usize,
    /// Citations emitted, over all runs.
    pub citations_emitted: usize,
    /// Mean latency, ms.
    pub mean_latency_ms: f64,
    /// Distinct warning codes raised.
    pub warnings: Vec<String>,
}

/// The totals of one evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Cases.
    pub cases: usize,
    /// Runs (cases × repeat).
    pub runs: usize,
    /// Metric name to value; every metric of [`Metric::ALL`] is present,
    /// `null` when unmeasured.
    pub values: BTreeMap<String, Option<f64>>,
    /// Citations the model emitted.
    pub citations_emitted: usize,
    /// Citations that verified.
    pub citations_verified: usize,
    /// Verified citations by match kind (`exact`, `normalized`, …).
    pub citations_by_match: BTreeMap<String, usize>,
    /// Dropped citations by warning code.
    pub citations_dropped: BTreeMap<String, usize>,
    /// Claims the model produced.
    pub claims_in: usize,
    /// Claims that failed verification.
    pub claims_failed: usize,
    /// Sentences of the verified claims of answered runs of answerable
    /// kinds with evidence (the denominator of `padding_rate`).
    #[serde(default)]
    pub answer_sentences: usize,
    /// Those of them that are padding ([`padding_sentences`]).
    #[serde(default)]
    pub padding_sentences: usize,
    /// Per kind: runs and runs that met the expectation.
    pub by_kind: BTreeMap<String, KindScore>,
    /// Latency of whole runs.
    pub latency_ms: Percentiles,
    /// Latency of the model's part.
    pub inference_ms: Percentiles,
    /// Refusal codes over all runs.
    pub refusals: BTreeMap<String, usize>,
}

impl Metrics {
    /// The value of `m`, when measured.
    pub fn get(&self, m: Metric) -> Option<f64> {
        self.values.get(m.name()).copied().flatten()
    }
}

/// Runs and passes of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct KindScore {
    /// Runs.
    pub runs: usize,
    /// Runs that met the expectation.
    pub passed: usize,
}

/// Whether `name` is the code of a warning that drops one citation.
fn is_citation_drop(w: &groundcite_core::Warning) -> bool {
    w.citation_index.is_some()
}

/// The chunk IDs cited by the contract's verified citations.
pub fn cited_chunks(c: &Contract) -> BTreeSet<&str> {
    c.claims
        .iter()
        .flat_map(|cl| cl.citations.iter())
        .map(|ci| ci.chunk_id.as_str())
        .collect()
}

/// Verified citations in the contract.
pub fn verified_citations(c: &Contract) -> usize {
    c.claims.iter().map(|cl| cl.citations.len()).sum()
}

fn fold(text: &str) -> String {
    normalize(text, MatchProfile::Lenient).to_lowercase()
}

/// Which of `facts` the contract states: each is looked for, after the
/// lenient normalization and case folding, in the verified claims' text and
/// their citations' quotes and source text.
pub fn facts_found(c: &Contract, facts: &[String]) -> Vec<bool> {
    let haystacks: Vec<String> = c
        .claims
        .iter()
        .flat_map(|cl| {
            std::iter::once(fold(&cl.text)).chain(cl.citations.iter().flat_map(|ci| {
                [ci.quote.as_deref(), ci.source_text.as_deref()]
                    .into_iter()
                    .flatten()
                    .map(fold)
            }))
        })
        .collect();
    facts
        .iter()
        .map(|f| {
            let f = fold(f);
            haystacks.iter().any(|h| h.contains(&f))
        })
        .collect()
}

/// Whether one run met its case's expectation:
/// - answerable: answerable, a gold chunk cited, every key fact stated;
/// - multi-chunk: answerable, at least two distinct gold chunks cited,
///   every key fact stated;
/// - unanswerable: `answerable: false`, no claims, no citations.
pub fn run_passed(kind: CaseKind, gold: &[Vec<String>], facts: &[String], run: &CaseRun) -> bool {
    let c = &run.contract;
    match kind {
        CaseKind::Unanswerable => {
            !c.answerable && c.claims.is_empty() && verified_citations(c) == 0
        }
        CaseKind::Answerable | CaseKind::MultiChunk => {
            let cited = cited_chunks(c);
            let gold_cited = groups_hit(gold, |id| cited.contains(id));
            let need = if kind == CaseKind::MultiChunk { 2 } else { 1 };
            c.answerable && gold_cited >= need && facts_found(c, facts).iter().all(|f| *f)
        }
    }
}

/// How many gold groups have a member for which `hit` holds (a group is
/// the chunks that hold one evidence sentence, or one named gold chunk).
pub fn groups_hit(groups: &[Vec<String>], hit: impl Fn(&str) -> bool) -> usize {
    groups
        .iter()
        .filter(|g| g.iter().any(|id| hit(id.as_str())))
        .count()
}

/// Whether every one of `facts` is stated in the text of a verified claim
/// (quotes do not count: this is what the user reads).
pub fn facts_in_claims(c: &Contract, facts: &[String]) -> bool {
    let texts: Vec<String> = c.claims.iter().map(|cl| fold(&cl.text)).collect();
    facts.iter().all(|f| {
        let f = fold(f);
        texts.iter().any(|t| t.contains(&f))
    })
}

/// The sentences of the answer's verified claims (the core's sentence
/// rule, statements only).
pub fn answer_sentences(c: &Contract) -> usize {
    c.claims
        .iter()
        .map(|cl| {
            groundcite_core::sentences::sentences(&cl.text)
                .into_iter()
                .filter(|s| !s.trim().is_empty())
                .count()
                .max(1)
        })
        .sum()
}

/// How many of the sentences of the answer's verified claims
/// ([`answer_sentences`]) are padding, and how many there are: a sentence
/// is padding when it holds none of `facts` and neither contains an
/// evidence sentence nor lies inside one (lenient normalization, case
/// folded), so a sentence that answers is never padding, however it is
/// split.
pub fn padding_sentences(c: &Contract, evidence: &[String], facts: &[String]) -> (usize, usize) {
    let evidence: Vec<String> = evidence.iter().map(|e| fold(e)).collect();
    let facts: Vec<String> = facts.iter().map(|f| fold(f)).collect();
    let mut padding = 0;
    let mut all = 0;
    for cl in &c.claims {
        let mut pieces: Vec<String> = groundcite_core::sentences::sentences(&cl.text)
            .into_iter()
            .filter(|s| !s.trim().is_empty())
            .map(fold)
            .collect();
        if pieces.is_empty() {
            pieces.push(fold(&cl.text));
        }
        for s in pieces {
            all += 1;
            let answers = facts.iter().any(|f| s.contains(f.as_str()))
                || evidence
                    .iter()
                    .any(|e| !s.is_empty() && (s.contains(e.as_str()) || e.contains(s.as_str())));
            padding += usize::from(!answers);
        }
    }
    (padding, all)
}

fn share(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Scores every case of `suite` from `runs` (runs of unknown cases are
/// ignored) and computes the totals.
pub fn score(
    suite: &Suite,
    runs: &[CaseRun],
    hallucination: &[HallucinationCheck],
) -> (Vec<CaseScore>, Metrics) {
    let mut cases = Vec::with_capacity(suite.cases.len());
    let mut by_kind: BTreeMap<String, KindScore> = BTreeMap::new();
    let mut answerable_runs = (0, 0);
    let mut unanswerable_ok = (0, 0);
    let mut multi_ok = (0, 0);
    let mut recalls = Vec::new();
    let mut retrieval_recalls = Vec::new();
    let mut facts = (0, 0);
    let mut scored_runs = 0;
    let mut m = Metrics {
        cases: suite.cases.len(),
        runs: 0,
        values: BTreeMap::new(),
        citations_emitted: 0,
        citations_verified: 0,
        citations_by_match: BTreeMap::new(),
        citations_dropped: BTreeMap::new(),
        claims_in: 0,
        claims_failed: 0,
        answer_sentences: 0,
        padding_sentences: 0,
        by_kind: BTreeMap::new(),
        latency_ms: Percentiles::default(),
        inference_ms: Percentiles::default(),
        refusals: BTreeMap::new(),
    };
    let (mut latencies, mut inference) = (Vec::new(), Vec::new());
    let (mut unanswerable_all, mut schema_errors, mut errors) = (0, 0, 0);
    let mut full = (0, 0);
    let mut cand = (0, 0);
    let mut gate_ok = (0, 0);
    let mut sentence_counts = Vec::new();
    let mut truncated = 0;

    for case in &suite.cases {
        let gold = case.gold();
        let mine: Vec<&CaseRun> = runs.iter().filter(|r| r.case_id == case.id).collect();
        let mut cs = CaseScore {
            case_id: case.id.clone(),
            kind: case.kind,
            question: case.question.clone(),
            runs: mine.len(),
            passed: 0,
            answered: 0,
            citation_recall: None,
            retrieval_recall: None,
            key_facts_found: 0,
            key_facts_total: 0,
            citations_verified: 0,
            citations_emitted: 0,
            mean_latency_ms: 0.0,
            warnings: Vec::new(),
        };
        let (mut case_recalls, mut case_retrieval) = (Vec::new(), Vec::new());
        let mut warnings = BTreeSet::new();
        let mut latency_sum = 0.0;
        for run in &mine {
            scored_runs += 1;
            let c = &run.contract;
            let passed = run_passed(case.kind, &gold, &case.key_facts, run);
            cs.passed += usize::from(passed);
            cs.answered += usize::from(c.answerable);
            let k = by_kind.entry(case.kind.as_str().to_string()).or_default();
            k.runs += 1;
            k.passed += usize::from(passed);

            let verified = verified_citations(c);
            // The verifier never keeps more citations than it was given; a
            // run that claims otherwise is counted as given.
            let emitted = run.citations_in.max(verified);
            cs.citations_verified += verified;
            cs.citations_emitted += emitted;
            m.citations_verified += verified;
            m.citations_emitted += emitted;
            for ci in c.claims.iter().flat_map(|cl| cl.citations.iter()) {
                *m.citations_by_match
                    .entry(ci.kind.as_str().to_string())
                    .or_insert(0) += 1;
            }
            for w in c.warnings.iter() {
                let code = warning_code(w.code);
                if is_citation_drop(w) {
                    *m.citations_dropped.entry(code.clone()).or_insert(0) += 1;
                }
                warnings.insert(code);
            }
            let failed = c
                .warnings
                .iter()
                .filter(|w| w.code.is_verification_failure())
                .count()
                .min(run.claims_in);
            m.claims_in += run.claims_in;
            m.claims_failed += failed;

            if case.kind.expects_answer() {
                gate_ok.1 += 1;
                gate_ok.0 += usize::from(run.gate_passed);
                answerable_runs.1 += 1;
                answerable_runs.0 += usize::from(c.answerable);
                let cited = cited_chunks(c);
                let n = gold.len().max(1) as f64;
                let r = groups_hit(&gold, |id| cited.contains(id)) as f64 / n;
                let rr = groups_hit(&gold, |id| run.retrieved.iter().any(|x| x == id)) as f64 / n;
                case_recalls.push(r);
                case_retrieval.push(rr);
                recalls.push(r);
                retrieval_recalls.push(rr);
                if !case.evidence.is_empty() {
                    let cands: Vec<String> = run.candidates.iter().map(|c| fold(c)).collect();
                    let all = case.evidence.iter().all(|e| {
                        let e = fold(e);
                        cands
                            .iter()
                            .any(|c| c.contains(&e) || e.contains(c.as_str()))
                    });
                    cand.1 += 1;
                    cand.0 += usize::from(all);
                    if c.answerable {
                        let (p, n) = padding_sentences(c, &case.evidence, &case.key_facts);
                        m.padding_sentences += p;
                        m.answer_sentences += n;
                    }
                }
                if !case.key_facts.is_empty() {
                    full.1 += 1;
                    full.0 += usize::from(c.answerable && facts_in_claims(c, &case.key_facts));
                }
                let found = facts_found(c, &case.key_facts);
                let hit = found.iter().filter(|f| **f).count();
                cs.key_facts_found += hit;
                cs.key_facts_total += found.len();
                facts.0 += hit;
                facts.1 += found.len();
            }
            if case.kind == CaseKind::MultiChunk {
                multi_ok.1 += 1;
                let cited = cited_chunks(c);
                let distinct = groups_hit(&gold, |id| cited.contains(id));
                multi_ok.0 += usize::from(c.answerable && distinct >= 2);
            }
            if case.kind == CaseKind::Unanswerable {
                unanswerable_ok.1 += 1;
                unanswerable_ok.0 += usize::from(passed);
            }
            unanswerable_all += usize::from(!c.answerable);
            if c.answerable {
                sentence_counts.push(answer_sentences(c) as f64);
            }
            truncated += usize::from(run.stop_reason.as_deref() == Some("length"));
            if let Some(r) = &c.refusal {
                *m.refusals.entry(format!("{:?}", r.code)).or_insert(0) += 1;
                schema_errors += usize::from(r.code == RefusalCode::R3 && run.error.is_none());
            }
            errors += usize::from(run.error.is_some());
            latencies.push(run.latency_ms);
            latency_sum += run.latency_ms;
            if let Some(g) = run.generate_ms {
                inference.push(g);
            }
        }
        cs.citation_recall = mean(&case_recalls);
        cs.retrieval_recall = mean(&case_retrieval);
        if !mine.is_empty() {
            cs.mean_latency_ms = latency_sum / mine.len() as f64;
        }
        cs.warnings = warnings.into_iter().collect();
        cases.push(cs);
    }

    m.runs = scored_runs;
    m.by_kind = by_kind;
    m.latency_ms = Percentiles::of(&latencies);
    m.inference_ms = Percentiles::of(&inference);
    let hallucination_ok = hallucination.iter().filter(|h| h.passed).count();
    let values = [
        (
            Metric::AnswerableRate,
            share(answerable_runs.0, answerable_runs.1),
        ),
        (
            Metric::CitationValidity,
            share(m.citations_verified, m.citations_emitted),
        ),
        (Metric::CitationRecall, mean(&recalls)),
        (Metric::RetrievalRecall, mean(&retrieval_recalls)),
        (Metric::MultiChunkSynthesis, share(multi_ok.0, multi_ok.1)),
        (
            Metric::UnanswerablePrecision,
            share(unanswerable_ok.0, unanswerable_ok.1),
        ),
        (Metric::KeyFactRecall, share(facts.0, facts.1)),
        (Metric::GatePassRate, share(gate_ok.0, gate_ok.1)),
        (Metric::CandidateRecall, share(cand.0, cand.1)),
        (Metric::FullAnswerRate, share(full.0, full.1)),
        (
            Metric::SentencesPerAnswerP50,
            Percentiles::of(&sentence_counts).p50,
        ),
        (
            Metric::PaddingRate,
            share(m.padding_sentences, m.answer_sentences),
        ),
        (Metric::TruncationRate, share(truncated, scored_runs)),
        (
            Metric::HallucinationRejection,
            share(hallucination_ok, hallucination.len()),
        ),
        (
            Metric::ClaimFailureRate,
            share(m.claims_failed, m.claims_in),
        ),
        (
            Metric::UnanswerableRate,
            share(unanswerable_all, scored_runs),
        ),
        // Runs whose provider call failed are errors, not schema errors.
        (
            Metric::SchemaErrorRate,
            share(schema_errors, scored_runs - errors),
        ),
        (Metric::ErrorRate, share(errors, scored_runs)),
        (Metric::LatencyP50Ms, m.latency_ms.p50),
        (Metric::LatencyP95Ms, m.latency_ms.p95),
        (Metric::LatencyP99Ms, m.latency_ms.p99),
        (Metric::InferenceP95Ms, m.inference_ms.p95),
    ];
    m.values = values
        .into_iter()
        .map(|(k, v)| (k.name().to_string(), v))
        .collect();
    (cases, m)
}

/// The snake_case name of a warning code, as in the contract.
pub fn warning_code(code: groundcite_core::WarningCode) -> String {
    serde_json::to_value(code)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{code:?}"))
}
