//! The question-answering pipeline over groundcite's own index, shared by
//! `groundcite ask`, `groundcite eval` and the service's `POST /v1/ask`:
//! retrieve, apply the relevance gate, generate, verify, and describe the
//! whole run as a trace record.
//!
//! Key types: [`AskSettings`] (top-k, gate, matching), [`Retrieval`]
//! (chunks, coverage, the gate's verdict), [`Asked`] (contract, the
//! generation behind it, timings) with [`Asked::trace_record`].
//!
//! The relevance gate: when the retrieved chunks share too few of the
//! question's words, weighted by rarity (see
//! [`Index::coverage`](groundcite_index::Index::coverage)), or the question
//! uses a word no document uses, the answer is unanswerable (R1) without
//! asking the model. A 135M-parameter model given off-topic chunks still
//! writes claims with real quotes; the gate is what keeps "What is the CEO's
//! birthday?" from being answered with a refund policy.

use std::fmt;
use std::time::{Duration, Instant};

use groundcite_core::{
    ChunkSet, ClaimOutcome, ClaimPolicy, Contract, GroundedAnswer, MatchProfile, Provenance,
    verify_with,
};
use groundcite_index::{Coverage, Index, IndexError};
use groundcite_providers::pipeline::{self, AnswerError, AnswerSettings, Answered, Backend};
use groundcite_providers::{GenerationRequest, ProviderError};
use groundcite_store::{TraceChunks, TraceRecord};
use serde_json::{Value, json};

/// Default number of chunks retrieved.
pub const DEFAULT_TOP_K: usize = 3;

/// Default share of the question's weighted words that the retrieved chunks
/// must contain.
pub const DEFAULT_MIN_COVERAGE: f64 = 0.5;

/// Most chunks one question may retrieve.
pub const MAX_TOP_K: usize = 50;

/// How to retrieve, gate and verify.
#[derive(Debug, Clone, Copy)]
pub struct AskSettings {
    /// Chunks to retrieve (1 to [`MAX_TOP_K`]).
    pub top_k: usize,
    /// Share (0 to 1) of the question's weighted words the chunks must hold
    /// for the question to reach the model; 0 turns the gate off.
    pub min_coverage: f64,
    /// The matching profile.
    pub profile: MatchProfile,
    /// What to do with claims whose quotes do not carry their quantities.
    pub policy: ClaimPolicy,
    /// Stream the generation, verifying each claim as its object closes.
    pub stream: bool,
}

impl Default for AskSettings {
    fn default() -> Self {
        AskSettings {
            top_k: DEFAULT_TOP_K,
            min_coverage: DEFAULT_MIN_COVERAGE,
            profile: MatchProfile::Default,
            policy: ClaimPolicy::Strict,
            stream: false,
        }
    }
}

impl AskSettings {
    /// Checks the ranges; the error names the setting and its range.
    pub fn validate(&self) -> Result<(), String> {
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(format!("top_k must be between 1 and {MAX_TOP_K}"));
        }
        if !(0.0..=1.0).contains(&self.min_coverage) {
            return Err("min_coverage must be between 0 and 1".into());
        }
        Ok(())
    }
}

/// What retrieval found, and whether the question may reach the model.
#[derive(Debug, Clone)]
pub struct Retrieval {
    /// The retrieved chunks, best first.
    pub chunks: ChunkSet,
    /// How much of the question they cover.
    pub coverage: Coverage,
    /// The gate's verdict: `false` answers unanswerable without the model.
    pub gate_passed: bool,
    /// The gate the verdict was made with.
    pub min_coverage: f64,
    /// Time spent searching.
    pub time: Duration,
}

impl Retrieval {
    /// Why the gate stopped the question, in one sentence; `None` when it
    /// passed.
    pub fn gate_note(&self) -> Option<String> {
        if self.gate_passed {
            return None;
        }
        if self.chunks.is_empty() {
            return Some("no document matches the question".into());
        }
        if !self.coverage.unknown.is_empty() {
            let words: Vec<String> = self
                .coverage
                .unknown
                .iter()
                .map(|w| format!("{w:?}"))
                .collect();
            return Some(format!("the documents never use {}", words.join(", ")));
        }
        Some(format!(
            "the retrieved chunks hold {:.0}% of the question's weighted words (the gate is {:.0}%)",
            self.coverage.share * 100.0,
            self.min_coverage * 100.0
        ))
    }
}

/// Why no contract could be produced.
#[derive(Debug)]
pub enum AskError {
    /// The settings are out of range.
    Settings(String),
    /// The index could not be searched.
    Index(IndexError),
    /// The index returned chunks that are not a valid chunk set.
    Chunks(String),
    /// The gate passed but no generator is configured.
    NoBackend,
    /// Generation failed (or was cancelled); see [`AnswerError`].
    Answer(AnswerError),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::Settings(m) => f.write_str(m),
            AskError::Index(e) => write!(f, "searching the index: {e}"),
            AskError::Chunks(m) => write!(f, "the index returned unusable chunks: {m}"),
            AskError::NoBackend => f.write_str("no model is configured to answer questions"),
            AskError::Answer(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AskError {}

/// Retrieves `settings.top_k` chunks for `question` and applies the gate.
///
/// A word the corpus never uses means the corpus cannot answer a question
/// about it ("Tokyo", "CEO", "cryptocurrency" in a corpus without it), so
/// such a question never passes.
pub fn retrieve(
    index: &Index,
    question: &str,
    settings: &AskSettings,
) -> Result<Retrieval, AskError> {
    settings.validate().map_err(AskError::Settings)?;
    let started = Instant::now();
    let found = index
        .search(question, settings.top_k)
        .map_err(AskError::Index)?;
    let chunks = ChunkSet::new(found).map_err(|e| AskError::Chunks(e.to_string()))?;
    let coverage = index
        .coverage(question, chunks.chunks())
        .map_err(AskError::Index)?;
    let gate_passed = !chunks.is_empty()
        && (settings.min_coverage == 0.0
            || (coverage.share >= settings.min_coverage && coverage.unknown.is_empty()));
    Ok(Retrieval {
        chunks,
        coverage,
        gate_passed,
        min_coverage: settings.min_coverage,
        time: started.elapsed(),
    })
}

/// One answered question: the contract and everything behind it.
#[derive(Debug)]
pub struct Asked {
    /// What retrieval found.
    pub retrieval: Retrieval,
    /// The verified contract.
    pub contract: Contract,
    /// The generation, when the gate let the question through.
    pub answered: Option<Answered>,
    /// The request sent to the model, when one was sent.
    pub request: Option<GenerationRequest>,
    /// The provider's name (`none` when the gate answered).
    pub provider: String,
    /// Time spent generating and verifying.
    pub generate_time: Duration,
}

/// Generates and verifies an answer from `retrieval`; when the gate
/// stopped the question, answers unanswerable (R1) without the model.
///
/// `on_claim` is called as in [`pipeline::answer`] (streaming only).
pub async fn answer(
    retrieval: Retrieval,
    backend: Option<&Backend>,
    question: &str,
    settings: &AskSettings,
    provenance: Provenance,
    on_claim: &mut (dyn FnMut(usize, &ClaimOutcome) -> bool + Send),
) -> Result<Asked, AskError> {
    let started = Instant::now();
    if !retrieval.gate_passed {
        let unanswerable = GroundedAnswer {
            answerable: false,
            claims: Vec::new(),
        };
        let contract = verify_with(
            &unanswerable,
            &retrieval.chunks,
            settings.profile,
            settings.policy,
            provenance,
        );
        return Ok(Asked {
            retrieval,
            contract,
            answered: None,
            request: None,
            provider: "none".into(),
            generate_time: started.elapsed(),
        });
    }
    let backend = backend.ok_or(AskError::NoBackend)?;
    let request = backend.request(&retrieval.chunks, question);
    let answered = pipeline::answer(
        backend.generator(),
        &request,
        &retrieval.chunks,
        AnswerSettings {
            profile: settings.profile,
            policy: settings.policy,
            stream: settings.stream,
        },
        provenance,
        on_claim,
    )
    .await
    .map_err(AskError::Answer)?;
    Ok(Asked {
        contract: answered.contract.clone(),
        provider: backend.generator().provider().to_string(),
        retrieval,
        answered: Some(answered),
        request: Some(request),
        generate_time: started.elapsed(),
    })
}

impl Asked {
    /// The trace of this run under `trace_id`: question, chunks, prompt,
    /// schema hash, raw output, contract, warnings, provider, model, request
    /// id, options (with the gate's inputs and verdict, so the answer can be
    /// re-verified and explained) and timings. `extra_options` are merged
    /// into `options`.
    pub fn trace_record(
        &self,
        trace_id: &str,
        kind: &str,
        question: &str,
        settings: &AskSettings,
        extra_options: Value,
    ) -> TraceRecord {
        let mut record = TraceRecord::new(trace_id, kind);
        record.question = Some(question.to_string());
        record.chunks = TraceChunks::from_chunks(self.retrieval.chunks.chunks());
        if let Some(request) = &self.request {
            record.prompt = Some(json!({"system": request.system, "user": request.user}));
            record.schema_hash = request
                .schema
                .as_ref()
                .map(|s| schema_hash(&s.schema.to_string()));
        }
        record.provider = Some(self.provider.clone());
        let mut timings = json!({
            "retrieve_ms": ms(self.retrieval.time),
            "generate_ms": ms(self.generate_time),
        });
        if let Some(a) = &self.answered {
            record.raw_output.clone_from(&a.raw_output);
            record.model.clone_from(&a.model);
            record.provider_request_id.clone_from(&a.request_id);
            record.error = a.error.as_ref().map(ProviderError::summary);
            if let (Some(t), Some(u)) = (timings.as_object_mut(), &a.usage) {
                t.insert("input_tokens".into(), json!(u.input_tokens));
                t.insert("output_tokens".into(), json!(u.output_tokens));
            }
        }
        record.timings = timings;
        let mut options = json!({
            "match": settings.profile,
            "claims": settings.policy,
            "top_k": settings.top_k,
            "min_coverage": settings.min_coverage,
            "coverage": self.retrieval.coverage.share,
            "unknown_words": self.retrieval.coverage.unknown,
            "gate_passed": self.retrieval.gate_passed,
        });
        if let (Some(o), Value::Object(extra)) = (options.as_object_mut(), extra_options) {
            o.extend(extra);
        }
        record.options = options;
        record.warnings = self
            .contract
            .warnings
            .iter()
            .filter_map(|w| serde_json::to_value(w.code).ok())
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        record.contract = groundcite_store::JsonText::serialize(&self.contract).ok();
        record
    }
}

/// A short stable hash of the schema text, for the trace.
pub fn schema_hash(schema: &str) -> String {
    format!("fnv1a64:{:016x}", fnv1a(schema.as_bytes()))
}

/// 64-bit FNV-1a: stable names and hashes, not a security boundary.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
