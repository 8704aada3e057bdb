//! The eval runner: every case of a suite through the whole pipeline
//! (`groundcite_ask`: retrieve, gate, generate, verify) with the configured
//! backend; `groundcite_eval` scores the runs. The CLI reads the files,
//! shows progress and writes the result and the report.

use std::collections::BTreeSet;
use std::time::Instant;

use groundcite_ask::{AskError, AskSettings, Retrieval};
use groundcite_core::{
    AnswerForm, Candidate, ChunkSet, Contract, Provenance, RefusalCode, WarningCode,
};
use groundcite_eval::{
    CaseRun, EvalResult, HallucinationCheck, RESULT_FORMAT, Suite, check_thresholds,
    hallucination_check, score,
};
use groundcite_index::{Embed, Index, IndexError};
use groundcite_providers::pipeline::{AnswerError, Backend};
use serde_json::json;

use crate::config::FileConfig;
use crate::error::SettingsError;
use crate::flags::RetrievalFlags;
use crate::values::ProviderName;

/// What the cases are answered from.
pub enum Corpus {
    /// A docs folder's index: each case retrieves.
    Index(Box<Index>),
    /// Chunks an upstream retriever returned: every chunk goes to the
    /// model, with no gate.
    Chunks(ChunkSet),
    /// A search service the team runs: each case searches it. It lists no
    /// chunks, so cases name their gold chunks by ID.
    External(Box<dyn groundcite_ask::Retriever>),
}

impl Corpus {
    /// Every chunk of the corpus (evidence sentences name their gold chunks
    /// through it).
    pub fn all_chunks(&self) -> Result<Vec<groundcite_core::Chunk>, IndexError> {
        match self {
            Corpus::Index(index) => index.all_chunks(),
            Corpus::Chunks(set) => Ok(set.chunks().to_vec()),
            Corpus::External(_) => Ok(Vec::new()),
        }
    }
}

/// Why a suite could not be run to the end.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The pipeline failed in a way a case cannot record (the index, the
    /// settings); a provider failure is recorded on its case instead.
    #[error(transparent)]
    Ask(#[from] AskError),
    /// The async runtime could not start.
    #[error("starting the async runtime: {0}")]
    Runtime(#[from] std::io::Error),
}

/// The pipeline settings of a suite: flags > the suite's `[settings]` >
/// `groundcite.toml` > the provider's default.
pub fn suite_settings(
    flags: &RetrievalFlags,
    suite: &Suite,
    suite_name: &str,
    file: &FileConfig,
    provider: ProviderName,
) -> Result<(AskSettings, RetrievalFlags), SettingsError> {
    let mut r = flags.clone();
    r.top_k = r.top_k.or(suite.settings.top_k);
    r.candidates = r.candidates.or(suite.settings.candidates);
    if r.gate.is_none()
        && let Some(g) = &suite.settings.gate
    {
        r.gate = Some(
            g.parse()
                .map_err(|e: groundcite_ask::UnknownGate| SettingsError::invalid(suite_name, e))?,
        );
    }
    let mut settings = crate::ask::ask_settings(&r, file, provider)?;
    settings.profile = suite.settings.profile.unwrap_or_default();
    settings.policy = suite.settings.claims.unwrap_or_default();
    Ok((settings, r))
}

/// One suite run's inputs.
pub struct EvalPlan<'a> {
    /// The suite (evidence already resolved against the corpus).
    pub suite: &'a Suite,
    /// The suite's file, as shown.
    pub suite_path: String,
    /// What the cases are answered from.
    pub corpus: &'a Corpus,
    /// The corpus, as shown in the result.
    pub corpus_label: String,
    /// The embedding model (hybrid retrieval), if any.
    pub embed: Option<&'a dyn Embed>,
    /// The model.
    pub backend: &'a Backend,
    /// Retrieval, gate, matching and claim policy.
    pub settings: &'a AskSettings,
    /// Runs per case.
    pub repeat: u32,
    /// Retrieve and rank only; no model is asked.
    pub retrieval_only: bool,
}

/// One run done, for progress.
pub struct RunDone<'a> {
    /// The case's ID.
    pub case_id: &'a str,
    /// Runs done so far, this one included.
    pub done: usize,
    /// Runs in all.
    pub total: usize,
    /// The run.
    pub run: &'a CaseRun,
}

impl RunDone<'_> {
    /// "answered, 2 claim(s)" or "refused R1".
    pub fn outcome(&self) -> String {
        match &self.run.contract.refusal {
            None => format!("answered, {} claim(s)", self.run.contract.claims.len()),
            Some(r) => format!("refused {:?}", r.code),
        }
    }
}

/// Runs every case `plan.repeat` times and scores the runs; `before` is
/// called with each case's ID before its run, `after` with each run done.
pub fn run_suite(
    plan: &EvalPlan<'_>,
    before: &mut dyn FnMut(&str),
    after: &mut dyn FnMut(&RunDone<'_>),
) -> Result<EvalResult, EvalError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let started_at = groundcite_store::now_rfc3339();
    let wall = Instant::now();
    let total = plan.suite.cases.len() * plan.repeat as usize;
    let mut runs = Vec::new();
    let mut hallucination: Vec<HallucinationCheck> = Vec::new();
    let mut model = None;
    for case in &plan.suite.cases {
        for repeat in 1..=plan.repeat {
            before(&case.id);
            let (run, chunks) = run_case(&runtime, plan, &case.question, (&case.id, repeat))?;
            if repeat == 1 {
                hallucination.push(hallucination_check(
                    &case.id,
                    &chunks,
                    plan.settings.profile,
                    plan.settings.policy,
                    provenance(&case.question),
                ));
            }
            if model.is_none() {
                model.clone_from(&run.contract.model);
            }
            after(&RunDone {
                case_id: &case.id,
                done: runs.len() + 1,
                total,
                run: &run,
            });
            runs.push(run);
        }
    }
    let (cases, metrics) = score(plan.suite, &runs, &hallucination);
    let thresholds = check_thresholds(&plan.suite.thresholds, &metrics);
    let passed = thresholds.iter().all(|t| t.passed);
    let settings = plan.settings;
    Ok(EvalResult {
        format: RESULT_FORMAT.to_string(),
        suite: plan.suite.name.clone(),
        suite_path: plan.suite_path.clone(),
        provider: plan.backend.generator().provider().to_string(),
        model,
        started_at,
        wall_s: wall.elapsed().as_secs_f64(),
        repeat: plan.repeat,
        settings: json!({
            "corpus": plan.corpus_label,
            "top_k": settings.top_k,
            "retrieval": if plan.embed.is_some() { "hybrid" } else { "bm25" },
            "gate": settings.gate,
            "candidates": settings.candidates,
            "spelling": settings.spelling,
            "match": settings.profile,
            "claims": settings.policy,
        }),
        metrics,
        cases,
        runs,
        hallucination,
        thresholds,
        passed,
    })
}

fn provenance(question: &str) -> Provenance {
    Provenance {
        trace_id: groundcite_store::new_trace_id(),
        created_at: groundcite_store::now_rfc3339(),
        question: Some(question.to_string()),
        model: None,
    }
}

/// One run of one case: the pipeline, timed, and the chunks it retrieved
/// (for the hallucination check).
fn run_case(
    runtime: &tokio::runtime::Runtime,
    plan: &EvalPlan<'_>,
    question: &str,
    (case_id, repeat): (&str, u32),
) -> Result<(CaseRun, ChunkSet), AskError> {
    let settings = plan.settings;
    let started = Instant::now();
    let retrieval = match plan.corpus {
        Corpus::Index(index) => groundcite_ask::retrieve(index, plan.embed, question, settings)?,
        Corpus::Chunks(chunks) => Retrieval::given(chunks.clone()),
        Corpus::External(r) => {
            groundcite_ask::retrieve_external(r.as_ref(), plan.embed, question, settings)?
        }
    };
    let chunks = retrieval.chunks.clone();
    let retrieved: Vec<String> = chunks.chunks().iter().map(|c| c.chunk_id.clone()).collect();
    let gate_passed = retrieval.gate_passed();
    let mut gate = serde_json::to_value(groundcite_ask::gate_options(&retrieval, settings))
        .unwrap_or_else(|_| json!({}));
    // The ranked candidates with their scores, for the report and tuning.
    if let Some(o) = gate.as_object_mut() {
        o.insert("candidates".into(), json!(retrieval.candidates));
    }
    let candidates: Vec<String> = retrieval
        .candidates
        .iter()
        .map(Candidate::claim_text)
        .collect();
    let mut retrieval = retrieval;
    if plan.retrieval_only {
        retrieval.verdict = groundcite_ask::Verdict::Refuse("retrieval only".into());
    }
    let prov = provenance(question);
    let trace_id = prov.trace_id.clone();
    let asked = runtime.block_on(groundcite_ask::answer(
        retrieval,
        Some(plan.backend),
        question,
        settings,
        prov.clone(),
        &mut |_, _| true,
    ));
    let run = match asked {
        Ok(asked) => {
            let answered = asked.answered.as_ref();
            let raw = answered.and_then(|a| a.raw_output.as_deref());
            let form = answered.map_or(AnswerForm::Grounded, |a| a.form);
            let (claims_in, citations_in) = produced(raw, form, &asked.contract);
            if let (Some(o), Some(p)) =
                (gate.as_object_mut(), answered.and_then(|a| a.p_answerable))
            {
                o.insert("p_answerable".into(), json!(p));
            }
            CaseRun {
                case_id: case_id.to_string(),
                repeat,
                trace_id,
                retrieved,
                gate_passed,
                claims_in,
                citations_in,
                latency_ms: ms(started),
                generate_ms: answered.map(|a| a.generate_time.as_secs_f64() * 1000.0),
                error: None,
                stop_reason: answered.map(|a| a.stop_reason.as_str().to_string()),
                candidates,
                gate: Some(gate),
                contract: asked.contract,
            }
        }
        // A provider failure on one case is recorded (R3 with the error)
        // rather than ending a long run; it counts in error_rate.
        Err(AskError::Answer(AnswerError::Provider { error, .. })) => CaseRun {
            case_id: case_id.to_string(),
            repeat,
            trace_id,
            retrieved,
            gate_passed,
            claims_in: 0,
            citations_in: 0,
            latency_ms: ms(started),
            generate_ms: None,
            stop_reason: Some(
                groundcite_providers::StopReason::of_error(&error)
                    .as_str()
                    .to_string(),
            ),
            error: Some(error.to_string()),
            candidates,
            gate: Some(gate),
            contract: Contract::refused(RefusalCode::R3, prov, settings.profile, Vec::new()),
        },
        Err(e) => return Err(e),
    };
    Ok((run, chunks))
}

/// Claims and citations the model produced: counted in its raw output when
/// that is a GroundedAnswer, else (native citations, prose) rebuilt from
/// the contract: kept ones plus those its warnings say were dropped.
fn produced(raw: Option<&str>, form: AnswerForm, c: &Contract) -> (usize, usize) {
    // Repeats of a kept claim are dropped unchecked (`duplicate_claim`):
    // the metrics are over the distinct claims, as the service's signals.
    let repeats: BTreeSet<usize> = c
        .warnings
        .iter()
        .filter(|w| w.code == WarningCode::DuplicateClaim)
        .filter_map(|w| w.claim_index)
        .collect();
    if let Some(a) = raw.and_then(|r| form.parse_answer(r.as_bytes()).ok()) {
        let distinct = a
            .claims
            .iter()
            .enumerate()
            .filter(|(i, _)| !repeats.contains(i));
        let (claims, citations) =
            distinct.fold((0, 0), |(n, c), (_, cl)| (n + 1, c + cl.citations.len()));
        // Claims sent with `answerable: false` are dropped unread.
        return (claims, citations);
    }
    let kept_citations: usize = c.claims.iter().map(|cl| cl.citations.len()).sum();
    let dropped_citations = c
        .warnings
        .iter()
        .filter(|w| w.citation_index.is_some())
        .count();
    let failed_claims = c
        .warnings
        .iter()
        .filter(|w| w.code.is_verification_failure())
        .count();
    (
        c.claims.len() + failed_claims,
        kept_citations + dropped_citations,
    )
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use groundcite_core::{Chunk, GroundedAnswer, MatchProfile, verify};

    use super::*;

    #[test]
    fn repeated_claims_are_not_counted_as_produced() {
        let chunks: Vec<Chunk> = serde_json::from_str(
            r#"[{"chunk_id": "c1", "content": "Refunds are available within 30 days."}]"#,
        )
        .expect("chunks");
        let chunks = ChunkSet::new(chunks).expect("chunks");
        let claim = r#"{"text": "Refunds take 30 days.", "citations": [{"chunk_id": "c1", "quote": "within 30 days"}, {"chunk_id": "c1", "quote": "Refunds are available"}]}"#;
        let raw = format!(r#"{{"answerable": true, "claims": [{claim}, {claim}, {claim}]}}"#);
        let answer: GroundedAnswer = serde_json::from_str(&raw).expect("answer");
        let c = verify(
            &answer,
            &chunks,
            MatchProfile::default(),
            Provenance {
                trace_id: "t".into(),
                created_at: "2026-12-01T00:00:00Z".into(),
                question: None,
                model: None,
            },
        );
        assert_eq!(c.claims.len(), 1);
        // One distinct claim and its two citations, both verified.
        assert_eq!(produced(Some(&raw), AnswerForm::Grounded, &c), (1, 2));
    }
}
