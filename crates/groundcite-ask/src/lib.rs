//! The question-answering pipeline over groundcite's own index, shared by
//! `groundcite ask`, `groundcite eval` and the service's `POST /v1/ask`:
//! retrieve (BM25, fused with sentence vectors when an embedding model is
//! configured), rank candidate quotes, apply the gate, generate, verify, and
//! describe the whole run as a trace record.
//!
//! Key types: [`AskSettings`] (top-k, [`GateSettings`], candidates,
//! matching), [`Retrieval`] (chunks, ranked [`Candidate`]s, the [`Signals`]
//! the gate read, its [`Verdict`]), [`Asked`] (contract, the generation
//! behind it, timings) with [`Asked::trace_record`].
//!
//! ## The gate
//! No question is refused for its wording. [`GateMode::Retrieval`] (the
//! default of hosted providers, which decide answerability themselves)
//! refuses only when retrieval found nothing: an empty corpus, or no chunk
//! above the BM25 floor and none above the cosine floor.
//! [`GateMode::Evidence`] (the default of the embedded model) also refuses
//! when the best candidate sentence is not similar enough to the question
//! (a semantic score that survives paraphrase; lexical coverage when no
//! embedding model is configured), and the embedded model answers only
//! when its own probability of `"answerable": true` clears
//! [`GateSettings::min_p_answerable`]. docs/local.md gives the measured
//! precision and recall of the rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use groundcite_core::{
    Candidate, Chunk, ChunkSet, ClaimOutcome, ClaimPolicy, Contract, GroundedAnswer, MatchProfile,
    Provenance, verify_with,
};
use groundcite_index::{Embed, Index, IndexError};
use groundcite_providers::pipeline::{self, AnswerError, AnswerSettings, Answered, Backend};
use groundcite_providers::{GenerationRequest, ProviderError, StopReason};
use groundcite_store::{Timings, TraceBuilder, TraceOptions, TraceRecord};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "embed")]
mod embedder;
#[cfg(feature = "embed")]
pub use embedder::{EmbedModel, load_embedder};

/// Default number of chunks retrieved.
pub const DEFAULT_TOP_K: usize = 3;

/// Most chunks one question may retrieve.
pub const MAX_TOP_K: usize = 50;

/// Default number of candidate sentences the embedded model chooses from.
pub const DEFAULT_CANDIDATES: usize = 4;

/// Most candidate sentences.
pub const MAX_CANDIDATES: usize = 16;

/// Reciprocal rank fusion's constant (the usual 60).
const RRF_K: f64 = 60.0;

/// How the gate decides that the documents cannot answer (see the crate
/// docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum GateMode {
    /// Refuse only when retrieval found nothing; the model decides the rest.
    Retrieval,
    /// Also refuse on weak evidence (sentence similarity, and the embedded
    /// model's own probability of answering).
    Evidence,
    /// Never refuse before the model.
    Off,
}

impl GateMode {
    /// The name used in settings and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            GateMode::Retrieval => "retrieval",
            GateMode::Evidence => "evidence",
            GateMode::Off => "off",
        }
    }
}

impl std::str::FromStr for GateMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "retrieval" => Ok(GateMode::Retrieval),
            "evidence" => Ok(GateMode::Evidence),
            "off" => Ok(GateMode::Off),
            other => Err(format!("{other:?} is not retrieval, evidence or off")),
        }
    }
}

/// The gate's rule and its thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GateSettings {
    /// The rule.
    pub mode: GateMode,
    /// Retrieval found something when a chunk's BM25 score is above this.
    pub bm25_floor: f64,
    /// … or a chunk's best sentence has a cosine above this.
    pub cosine_floor: f32,
    /// Evidence: the best candidate sentence's cosine with the question must
    /// reach this (with an embedding model).
    pub min_similarity: f32,
    /// Evidence without an embedding model: the best candidate sentence
    /// must hold this share of the question's words, weighted by rarity.
    pub min_lexical: f64,
    /// Evidence: the embedded model answers only when its probability of
    /// `"answerable": true` is at least this.
    pub min_p_answerable: f32,
}

impl GateSettings {
    /// The default gate of `mode`, with the measured thresholds
    /// (docs/local.md).
    pub fn new(mode: GateMode) -> GateSettings {
        GateSettings {
            mode,
            bm25_floor: 0.0,
            cosine_floor: 0.2,
            min_similarity: 0.58,
            min_lexical: 0.4,
            min_p_answerable: 0.5,
        }
    }
}

/// How to retrieve, gate and verify.
#[derive(Debug, Clone, Copy)]
pub struct AskSettings {
    /// Chunks to retrieve (1 to [`MAX_TOP_K`]).
    pub top_k: usize,
    /// The gate.
    pub gate: GateSettings,
    /// Candidate sentences ranked for a backend that quotes among them (0
    /// to [`MAX_CANDIDATES`]; 0: the model reads whole chunks).
    pub candidates: usize,
    /// The matching profile.
    pub profile: MatchProfile,
    /// What to do with claims whose quotes do not carry their quantities.
    pub policy: ClaimPolicy,
    /// Stream the generation, verifying each claim as its object closes.
    pub stream: bool,
}

impl AskSettings {
    /// Defaults with the gate of `mode`.
    pub fn with_gate(mode: GateMode) -> AskSettings {
        AskSettings {
            top_k: DEFAULT_TOP_K,
            gate: GateSettings::new(mode),
            candidates: DEFAULT_CANDIDATES,
            profile: MatchProfile::Default,
            policy: ClaimPolicy::Strict,
            stream: false,
        }
    }

    /// Checks the ranges; the error names the setting and its range.
    pub fn validate(&self) -> Result<(), String> {
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(format!("top_k must be between 1 and {MAX_TOP_K}"));
        }
        if self.candidates > MAX_CANDIDATES {
            return Err(format!("candidates must be between 0 and {MAX_CANDIDATES}"));
        }
        let g = &self.gate;
        if !(g.bm25_floor.is_finite() && g.bm25_floor >= 0.0) {
            return Err("the BM25 floor must be 0 or more".into());
        }
        for (name, v) in [
            ("the cosine floor", f64::from(g.cosine_floor)),
            ("min_similarity", f64::from(g.min_similarity)),
            ("min_lexical", g.min_lexical),
            ("min_p_answerable", f64::from(g.min_p_answerable)),
        ] {
            if !(-1.0..=1.0).contains(&v) {
                return Err(format!("{name} must be between -1 and 1"));
            }
        }
        Ok(())
    }
}

/// What the gate read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Signals {
    /// Retrieval used sentence vectors (hybrid) or BM25 alone.
    pub hybrid: bool,
    /// The best BM25 score among the chunks (`None`: no chunk matched a
    /// word of the question).
    pub bm25_max: Option<f64>,
    /// The best sentence cosine over the corpus (hybrid only).
    pub cosine_max: Option<f32>,
    /// The best candidate sentence's cosine with the question (hybrid only).
    pub best_similarity: Option<f32>,
    /// The best candidate sentence's share of the question's words,
    /// weighted by rarity (title and headings count half).
    pub best_lexical: f64,
    /// How many things the question asks ([`question_parts`]).
    #[serde(default)]
    pub parts: usize,
}

/// The gate's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
pub enum Verdict {
    /// The question goes to the model.
    Pass,
    /// Unanswerable (R1) without the model; the reason in one sentence.
    Refuse(String),
}

/// What retrieval found, and whether the question may reach the model.
#[derive(Debug, Clone)]
pub struct Retrieval {
    /// The retrieved chunks, best first (`score`: the fused score).
    pub chunks: ChunkSet,
    /// Sentences of those chunks ranked by relevance, best first.
    pub candidates: Vec<Candidate>,
    /// What the gate read.
    pub signals: Signals,
    /// The gate the verdict was made with.
    pub gate: GateSettings,
    /// The verdict.
    pub verdict: Verdict,
    /// Time spent searching and ranking.
    pub time: Duration,
}

impl Retrieval {
    /// Whether the question goes to the model.
    pub fn gate_passed(&self) -> bool {
        self.verdict == Verdict::Pass
    }

    /// Why the gate stopped the question, in one sentence; `None` when it
    /// passed.
    pub fn gate_note(&self) -> Option<String> {
        match &self.verdict {
            Verdict::Pass => None,
            Verdict::Refuse(r) => Some(r.clone()),
        }
    }

    /// A retrieval over chunks given by an upstream retriever: every chunk
    /// goes to the model, nothing is gated.
    pub fn given(chunks: ChunkSet) -> Retrieval {
        Retrieval {
            chunks,
            candidates: Vec::new(),
            signals: Signals::default(),
            gate: GateSettings::new(GateMode::Off),
            verdict: Verdict::Pass,
            time: Duration::ZERO,
        }
    }
}

/// Why no contract could be produced.
#[derive(Debug)]
pub enum AskError {
    /// The settings are out of range.
    Settings(String),
    /// The index could not be searched.
    Index(IndexError),
    /// The question could not be embedded.
    Embedding(String),
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
            AskError::Embedding(m) => write!(f, "embedding the question: {m}"),
            AskError::Chunks(m) => write!(f, "the index returned unusable chunks: {m}"),
            AskError::NoBackend => f.write_str("no model is configured to answer questions"),
            AskError::Answer(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for AskError {}

/// Retrieves `settings.top_k` chunks for `question`, ranks candidate
/// sentences and applies the gate.
///
/// With `embed` (and sentence vectors of the same model in the index),
/// BM25 and dense retrieval are fused by reciprocal rank; otherwise BM25
/// alone.
pub fn retrieve(
    index: &Index,
    embed: Option<&dyn Embed>,
    question: &str,
    settings: &AskSettings,
) -> Result<Retrieval, AskError> {
    settings.validate().map_err(AskError::Settings)?;
    let started = Instant::now();
    let query = match embed {
        Some(e) if index.vector_model() == Some(e.model_id()) => {
            let mut v = e.embed(&[question]).map_err(AskError::Embedding)?;
            v.pop()
        }
        _ => None,
    };
    let pool = (settings.top_k * 4).max(20);
    let lexical = index.search(question, pool).map_err(AskError::Index)?;
    let dense = query
        .as_deref()
        .map(|q| index.dense_search(q, pool))
        .unwrap_or_default();
    let mut signals = Signals {
        hybrid: query.is_some(),
        bm25_max: lexical.first().and_then(|c| c.score).filter(|s| *s > 0.0),
        cosine_max: dense.first().map(|d| d.1),
        best_similarity: None,
        best_lexical: 0.0,
        parts: 1,
    };
    let fused = fuse(index, &lexical, &dense, pool)?;
    let ranked = rank_sentences(index, embed, &fused, &lexical, query, question)?;
    signals.best_similarity = ranked.best_similarity;
    signals.best_lexical = ranked.best_lexical;
    signals.parts = ranked.parts;
    let mut candidates: Vec<Candidate> =
        ranked.order.into_iter().take(settings.candidates).collect();
    require_answering(&mut candidates, ranked.parts);
    let chunks = ChunkSet::new(retrieved_chunks(
        index,
        &fused,
        &candidates,
        settings.top_k,
    )?)
    .map_err(|e| AskError::Chunks(e.to_string()))?;
    let verdict = gate(&settings.gate, &chunks, &signals);
    Ok(Retrieval {
        chunks,
        candidates,
        signals,
        gate: settings.gate,
        verdict,
        time: started.elapsed(),
    })
}

/// The gate's verdict from what retrieval found.
pub fn gate(g: &GateSettings, chunks: &ChunkSet, s: &Signals) -> Verdict {
    if g.mode == GateMode::Off {
        return Verdict::Pass;
    }
    if chunks.is_empty() {
        return Verdict::Refuse("no document matches the question".into());
    }
    let lexical_hit = s.bm25_max.is_some_and(|b| b > g.bm25_floor);
    let dense_hit = s.cosine_max.is_some_and(|c| c > g.cosine_floor);
    if !lexical_hit && !dense_hit {
        return Verdict::Refuse(format!(
            "retrieval found nothing: no chunk above the BM25 floor ({}){}",
            g.bm25_floor,
            if s.hybrid {
                format!(" or the cosine floor ({})", g.cosine_floor)
            } else {
                String::new()
            }
        ));
    }
    if g.mode == GateMode::Evidence {
        match s.best_similarity {
            Some(sim) if sim < g.min_similarity => {
                return Verdict::Refuse(format!(
                    "no sentence of the retrieved chunks is close to the question (best similarity {sim:.2}, the gate is {:.2})",
                    g.min_similarity
                ));
            }
            None if s.best_lexical < g.min_lexical => {
                return Verdict::Refuse(format!(
                    "no sentence of the retrieved chunks holds enough of the question's words ({:.0}%, the gate is {:.0}%)",
                    s.best_lexical * 100.0,
                    g.min_lexical * 100.0
                ));
            }
            _ => {}
        }
    }
    Verdict::Pass
}

/// Reciprocal rank fusion of the BM25 and dense lists; the top `k` chunks,
/// each with `score` set to its fused score.
fn fuse(
    index: &Index,
    lexical: &[Chunk],
    dense: &[(String, f32)],
    k: usize,
) -> Result<Vec<Chunk>, AskError> {
    if dense.is_empty() {
        return Ok(lexical.iter().take(k).cloned().collect());
    }
    let mut scores: BTreeMap<&str, f64> = BTreeMap::new();
    for (rank, c) in lexical.iter().enumerate() {
        *scores.entry(c.chunk_id.as_str()).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
    }
    for (rank, (id, _)) in dense.iter().enumerate() {
        *scores.entry(id.as_str()).or_default() += 1.0 / (RRF_K + rank as f64 + 1.0);
    }
    let mut order: Vec<(&str, f64)> = scores.into_iter().collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let mut out = Vec::with_capacity(k);
    for (id, score) in order.into_iter().take(k) {
        let chunk = match lexical.iter().find(|c| c.chunk_id == id) {
            Some(c) => Some(c.clone()),
            None => index.get(id).map_err(AskError::Index)?,
        };
        if let Some(mut c) = chunk {
            c.score = Some(score);
            out.push(c);
        }
    }
    Ok(out)
}

/// The question's analyzed words with their rarity weights.
fn question_weights(index: &Index, question: &str) -> Result<Vec<(String, f64)>, AskError> {
    Index::words(question)
        .into_iter()
        .map(|w| {
            let idf = index.idf(&w).map_err(AskError::Index)?;
            Ok((w, idf))
        })
        .collect()
}

/// Sentences of this many of the best fused chunks are ranked, besides the
/// corpus's most similar sentences.
const RANKED_CHUNKS: usize = 8;
/// The corpus's most similar sentences that are ranked too (hybrid), for
/// the whole question and for each of its parts.
const RANKED_SENTENCES: usize = 40;

/// How a candidate's score weighs its parts: the sentence's cosine with the
/// question, its rarity-weighted share of the question's words (title and
/// headings count half), its chunk's BM25 score relative to the best, and
/// whether it states the kind of quantity the question asks for. Tuned on
/// the dev suites (docs/local.md).
#[derive(Debug, Clone, Copy)]
struct RankWeights {
    semantic: f64,
    lexical: f64,
    bm25: f64,
    answer_type: f64,
}

const RANK_WEIGHTS: RankWeights = RankWeights {
    semantic: 0.7,
    lexical: 0.3,
    bm25: 0.0,
    answer_type: 0.1,
};

/// What kind of quantity a question asks for, from its wording: "how
/// long", "how soon", "when" → a duration or a date; "how much", "cost",
/// "fee" → money; "how many" → a count; "rate", "interest" → a percentage;
/// "most", "limit", "maximum" → any quantity. A sentence stating a quantity
/// of that kind is likelier to answer (plain English, not tuned to a corpus).
fn answer_kinds(question: &str) -> BTreeSet<&'static str> {
    let q = format!(
        " {} ",
        question
            .to_lowercase()
            .replace(['?', ',', '.', '!', ';', ':'], " ")
    );
    let has = |words: &[&str]| words.iter().any(|w| q.contains(&format!(" {w} ")));
    let phrase = |p: &[&str]| p.iter().any(|w| q.contains(w));
    let mut k = BTreeSet::new();
    if phrase(&[
        "how long",
        "how soon",
        "how quick",
        "how fast",
        "how many days",
        "how many weeks",
        "how many months",
        "how many hours",
        "how many years",
        "how many minutes",
        "by when",
        "how late",
        "how early",
    ]) || has(&["when", "deadline", "until"])
    {
        k.extend(["duration", "date", "time_of_day"]);
    }
    if phrase(&["how much"])
        || has(&[
            "cost",
            "costs",
            "fee",
            "fees",
            "price",
            "charge",
            "charged",
            "pay",
            "paid",
            "allowance",
            "budget",
            "spend",
        ])
    {
        k.extend(["money", "percent"]);
    }
    if phrase(&["how many", "how big", "how large", "how small"]) {
        k.extend(["count", "data_size"]);
    }
    if has(&["rate", "interest", "percent", "percentage", "apr", "aer"]) {
        k.insert("percent");
    }
    if has(&[
        "most", "max", "maximum", "minimum", "min", "limit", "limits", "biggest", "largest",
        "smallest", "least",
    ]) {
        k.extend(["count", "money", "percent", "data_size", "duration"]);
    }
    k
}

/// Whether `sentence` states a quantity of one of `kinds`.
fn states_kind(sentence: &str, kinds: &BTreeSet<&'static str>) -> bool {
    !kinds.is_empty()
        && groundcite_core::quantity::extract(sentence)
            .iter()
            .any(|q| kinds.contains(q.unit.kind()))
}

/// Words that open a question (or a clause of one): a question that goes
/// on after "and" with one of these asks two things.
const QUESTION_OPENERS: &[&str] = &[
    "how", "what", "whats", "what's", "when", "where", "which", "who", "why", "whose", "do",
    "does", "did", "is", "are", "can", "could", "should", "will", "would",
];

fn bare(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_lowercase()
}

/// The parts of a question that asks several things ("how much is X and
/// how long does it take?"): clauses split at sentence ends, and at "and" /
/// "also" / "," when a question word follows. Clauses that ask nothing
/// ("I'm going to London for 3 nights") are context, prefixed to every
/// part. One part when the question asks one thing.
pub fn question_parts(question: &str) -> Vec<String> {
    // Clauses: split at ? ; and at ". " (not inside "v1.2" or ".sql").
    let mut clauses: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let words: Vec<&str> = question.split_whitespace().collect();
    for (i, &w) in words.iter().enumerate() {
        let next = words.get(i + 1).map(|n| bare(n)).unwrap_or_default();
        let joins = matches!(bare(w).as_str(), "and" | "also" | "plus");
        if joins && QUESTION_OPENERS.contains(&next.as_str()) && current.len() >= 2 {
            clauses.push(current.join(" "));
            current.clear();
            continue;
        }
        current.push(w);
        let ends = w.ends_with(['?', ';', '.']) && w.len() > 1 && !w.starts_with('.');
        let comma = (w.ends_with(',') || w == "-") && QUESTION_OPENERS.contains(&next.as_str());
        if ends || comma {
            clauses.push(current.join(" "));
            current.clear();
        }
    }
    if !current.is_empty() {
        clauses.push(current.join(" "));
    }
    let clean = |c: &str| {
        c.trim()
            .trim_end_matches([',', '-', '.', ';', '?'])
            .trim()
            .to_string()
    };
    let mut context: Vec<String> = Vec::new();
    let mut asks: Vec<String> = Vec::new();
    for c in &clauses {
        let first = c.split_whitespace().next().map(bare).unwrap_or_default();
        if QUESTION_OPENERS.contains(&first.as_str()) || c.trim_end().ends_with('?') {
            asks.push(clean(c));
        } else if !clean(c).is_empty() {
            context.push(clean(c));
        }
    }
    asks.retain(|p| Index::words(p).len() >= 2);
    if asks.len() < 2 {
        return vec![question.to_string()];
    }
    let prefix = context.join(" ");
    asks.into_iter()
        .map(|a| {
            if prefix.is_empty() {
                a
            } else {
                format!("{prefix} {a}")
            }
        })
        .collect()
}

/// One question (or one part of it), ready to score sentences.
struct Query {
    vector: Option<Vec<f32>>,
    weights: Vec<(String, f64)>,
    total: f64,
    kinds: BTreeSet<&'static str>,
}

impl Query {
    fn new(index: &Index, text: &str, vector: Option<Vec<f32>>) -> Result<Query, AskError> {
        let weights = question_weights(index, text)?;
        let total = weights.iter().map(|(_, w)| w).sum();
        Ok(Query {
            vector,
            weights,
            total,
            kinds: answer_kinds(text),
        })
    }

    /// Rarity-weighted share of this query's words in the sentence (its
    /// context's words count half).
    fn lexical(&self, words: &BTreeSet<String>, context: &BTreeSet<String>) -> f64 {
        if self.total <= 0.0 {
            return 0.0;
        }
        self.weights
            .iter()
            .map(|(w, idf)| {
                if words.contains(w) {
                    *idf
                } else if context.contains(w) {
                    idf * 0.5
                } else {
                    0.0
                }
            })
            .sum::<f64>()
            / self.total
    }
}

/// One sentence of the pool.
struct Pooled {
    chunk_id: String,
    text: String,
    start: usize,
    context: String,
    words: BTreeSet<String>,
    context_words: BTreeSet<String>,
    bm25: f64,
}

/// The ranked candidates and what the gate reads of them.
struct Ranking {
    /// How many parts the question was ranked by.
    parts: usize,
    /// Candidates in the order the model is offered them.
    order: Vec<Candidate>,
    best_similarity: Option<f32>,
    best_lexical: f64,
}

/// Ranks sentences by relevance to the question: those of the best fused
/// chunks and (hybrid) the corpus's most similar ones. A question that asks
/// several things is ranked part by part and the candidates take the best
/// sentence of each part first, then the rest by the whole question.
/// Sentences repeated in overlapping chunks are kept once.
fn rank_sentences(
    index: &Index,
    embed: Option<&dyn Embed>,
    fused: &[Chunk],
    lexical: &[Chunk],
    whole_vector: Option<Vec<f32>>,
    question: &str,
) -> Result<Ranking, AskError> {
    let w = RANK_WEIGHTS;
    let hybrid = whole_vector.is_some();
    let whole = Query::new(index, question, whole_vector)?;
    let part_texts = question_parts(question);
    let mut parts: Vec<Query> = Vec::new();
    if part_texts.len() > 1 {
        let vectors: Vec<Option<Vec<f32>>> = match embed.filter(|_| hybrid) {
            Some(e) => {
                let refs: Vec<&str> = part_texts.iter().map(String::as_str).collect();
                e.embed(&refs)
                    .map_err(AskError::Embedding)?
                    .into_iter()
                    .map(Some)
                    .collect()
            }
            None => vec![None; part_texts.len()],
        };
        for (t, v) in part_texts.iter().zip(vectors) {
            parts.push(Query::new(index, t, v)?);
        }
    }
    let bm25_max = lexical
        .first()
        .and_then(|c| c.score)
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let bm25_of = |id: &str| {
        lexical
            .iter()
            .find(|c| c.chunk_id == id)
            .and_then(|c| c.score)
            .map_or(0.0, |s| s / bm25_max)
    };

    // The chunks whose sentences are ranked.
    let mut chunks: Vec<Chunk> = fused.iter().take(RANKED_CHUNKS).cloned().collect();
    for q in std::iter::once(&whole).chain(&parts) {
        let Some(v) = &q.vector else { continue };
        for h in index.sentence_search(v, RANKED_SENTENCES) {
            if !chunks.iter().any(|c| c.chunk_id == h.chunk_id)
                && let Some(c) = index.get(&h.chunk_id).map_err(AskError::Index)?
            {
                chunks.push(c);
            }
        }
    }
    // Their sentences, and each query's cosine with each sentence.
    let queries: Vec<&Query> = std::iter::once(&whole).chain(&parts).collect();
    let mut pool: Vec<Pooled> = Vec::new();
    let mut sims: Vec<Vec<Option<f32>>> = vec![Vec::new(); queries.len()];
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for chunk in &chunks {
        let base = index.sentences_of(&chunk.chunk_id, None);
        let base = if base.is_empty() {
            fallback_sentences(chunk)
        } else {
            base
        };
        let scored: Vec<Vec<groundcite_index::SentenceHit>> = queries
            .iter()
            .map(|q| match &q.vector {
                Some(v) => index.sentences_of(&chunk.chunk_id, Some(v)),
                None => Vec::new(),
            })
            .collect();
        let context_words = base
            .first()
            .map(|h| Index::words(&h.context))
            .unwrap_or_default();
        for (i, h) in base.iter().enumerate() {
            let Some(text) = chunk.content.get(h.start..h.end) else {
                continue;
            };
            if !seen.insert(text.to_string()) {
                continue;
            }
            for (qi, s) in scored.iter().enumerate() {
                sims[qi].push(s.get(i).and_then(|x| x.similarity));
            }
            pool.push(Pooled {
                chunk_id: chunk.chunk_id.clone(),
                text: text.to_string(),
                start: h.start,
                context: h.context.clone(),
                words: Index::words(text),
                context_words: context_words.clone(),
                bm25: bm25_of(&chunk.chunk_id),
            });
        }
    }
    let score = |qi: usize, q: &Query, i: usize| -> (f64, f64) {
        let p = &pool[i];
        let lex = q.lexical(&p.words, &p.context_words);
        let sem = sims[qi][i].map_or(0.0, f64::from);
        let typed = if states_kind(&p.text, &q.kinds) {
            1.0
        } else {
            0.0
        };
        (
            w.semantic * sem + w.lexical * lex + w.bm25 * p.bm25 + w.answer_type * typed,
            lex,
        )
    };
    let rank_by = |qi: usize, q: &Query| -> Vec<(usize, f64)> {
        let mut r: Vec<(usize, f64)> = (0..pool.len()).map(|i| (i, score(qi, q, i).0)).collect();
        r.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| pool[a.0].chunk_id.cmp(&pool[b.0].chunk_id))
                .then_with(|| pool[a.0].start.cmp(&pool[b.0].start))
        });
        r
    };
    let whole_rank = rank_by(0, &whole);
    let whole_score: BTreeMap<usize, f64> = whole_rank.iter().copied().collect();
    // The best sentence of each part first, then the whole question's order.
    let mut picked: Vec<usize> = Vec::new();
    let part_ranks: Vec<Vec<(usize, f64)>> = parts
        .iter()
        .enumerate()
        .map(|(pi, q)| rank_by(pi + 1, q))
        .collect();
    for r in &part_ranks {
        if let Some(&(i, _)) = r.iter().find(|(i, _)| !picked.contains(i)) {
            picked.push(i);
        }
    }
    for &(i, _) in &whole_rank {
        if !picked.contains(&i) {
            picked.push(i);
        }
    }
    let best_similarity = sims[0].iter().flatten().copied().reduce(f32::max);
    let best_lexical = (0..pool.len())
        .map(|i| score(0, &whole, i).1)
        .fold(0.0, f64::max);
    let order = picked
        .into_iter()
        .map(|i| {
            let p = &pool[i];
            Candidate {
                chunk_id: p.chunk_id.clone(),
                text: p.text.clone(),
                start: p.start,
                context: p.context.clone(),
                score: whole_score.get(&i).copied().unwrap_or(0.0) as f32,
                required: false,
            }
        })
        .collect();
    Ok(Ranking {
        parts: parts.len().max(1),
        order,
        best_similarity,
        best_lexical,
    })
}

/// The answer quotes at most this many sentences chosen by the ranker.
const MAX_REQUIRED: usize = 3;
/// A candidate after the first is required while its score is at least
/// this share of the first one's (tuned on the dev suites: docs/local.md).
const REQUIRED_RATIO: f32 = 0.85;

/// Marks the candidates the answer must quote: the best sentence of each
/// part of the question, then those scoring close to the best, at most
/// [`MAX_REQUIRED`], a prefix of the ranked list. The small model's own
/// choice among candidates was measured as no better than chance, and it
/// ends its answer after one claim whatever it is asked (docs/local.md):
/// what it decides is whether the question is answerable.
fn require_answering(candidates: &mut [Candidate], parts: usize) {
    let top = candidates.first().map_or(0.0, |c| c.score);
    for (i, c) in candidates.iter_mut().enumerate().take(MAX_REQUIRED) {
        if i == 0 || i < parts || (top > 0.0 && c.score >= REQUIRED_RATIO * top) {
            c.required = true;
        } else {
            break;
        }
    }
}

/// The chunks of the answer: every candidate's chunk (a citation must name
/// a retrieved chunk), then the best fused chunks, at least `top_k` in all.
fn retrieved_chunks(
    index: &Index,
    fused: &[Chunk],
    candidates: &[Candidate],
    top_k: usize,
) -> Result<Vec<Chunk>, AskError> {
    let mut out: Vec<Chunk> = Vec::new();
    for c in candidates {
        if out.iter().any(|k| k.chunk_id == c.chunk_id) {
            continue;
        }
        let chunk = match fused.iter().find(|k| k.chunk_id == c.chunk_id) {
            Some(k) => Some(k.clone()),
            None => index.get(&c.chunk_id).map_err(AskError::Index)?,
        };
        out.extend(chunk);
    }
    for k in fused {
        if out.len() >= top_k {
            break;
        }
        if !out.iter().any(|o| o.chunk_id == k.chunk_id) {
            out.push(k.clone());
        }
    }
    Ok(out)
}

/// Sentences of a chunk the index holds no entry for (an index built
/// before the sentence store): split with the same rule, no vectors.
fn fallback_sentences(chunk: &Chunk) -> Vec<groundcite_index::SentenceHit> {
    groundcite_core::sentences::sentence_spans(&chunk.content)
        .into_iter()
        .filter(|r| groundcite_core::sentences::is_statement(&chunk.content[r.clone()]))
        .map(|r| {
            let s = &chunk.content[r.clone()];
            let lead = s.len() - s.trim_start().len();
            let trail = s.len() - s.trim_end().len();
            groundcite_index::SentenceHit {
                chunk_id: chunk.chunk_id.clone(),
                start: r.start + lead,
                end: r.end - trail,
                similarity: None,
                context: chunk.source_title.clone().unwrap_or_default(),
            }
        })
        .filter(|h| h.start < h.end)
        .collect()
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
/// A backend that quotes among candidate sentences
/// ([`Backend::wants_candidates`]) gets `retrieval.candidates` (unless
/// `settings.candidates` is 0). `on_claim` is called as in
/// [`pipeline::answer`] (streaming only).
pub async fn answer(
    retrieval: Retrieval,
    backend: Option<&Backend>,
    question: &str,
    settings: &AskSettings,
    provenance: Provenance,
    on_claim: &mut (dyn FnMut(usize, &ClaimOutcome) -> bool + Send),
) -> Result<Asked, AskError> {
    let started = Instant::now();
    if !retrieval.gate_passed() {
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
    let candidates: &[Candidate] = if backend.wants_candidates() && settings.candidates > 0 {
        &retrieval.candidates
    } else {
        &[]
    };
    let mut request = backend.request_with(&retrieval.chunks, question, candidates);
    if settings.gate.mode == GateMode::Evidence {
        request.min_p_answerable = Some(settings.gate.min_p_answerable);
    }
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

/// The trace's record of the gate: its settings, what it read and its
/// verdict, with the match profile and claim policy.
pub fn gate_options(retrieval: &Retrieval, settings: &AskSettings) -> TraceOptions {
    TraceOptions {
        profile: Some(settings.profile),
        policy: Some(settings.policy),
        top_k: Some(settings.top_k),
        candidates: Some(settings.candidates),
        gate: Some(to_value(&retrieval.gate)),
        signals: Some(to_value(&retrieval.signals)),
        gate_verdict: Some(to_value(&retrieval.verdict)),
        ..TraceOptions::default()
    }
}

/// Plain data with string keys as JSON (serializing it cannot fail).
fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

impl Asked {
    /// The trace of this run under `trace_id`: question, chunks, prompt,
    /// schema hash, raw output, stop reason and token counts, contract,
    /// warnings, provider, model, request id, options (the gate's inputs
    /// and verdict, so the answer can be re-verified and explained) and
    /// timings (`retrieve_ms`, `generate_ms`; the caller adds `total_ms`).
    /// `extra_options` are merged into `options` (theirs win).
    pub fn trace_record(
        &self,
        trace_id: &str,
        kind: &str,
        question: &str,
        settings: &AskSettings,
        extra_options: TraceOptions,
    ) -> TraceRecord {
        let mut b = TraceBuilder::new(trace_id, kind)
            .question(Some(question.to_string()))
            .chunks(self.retrieval.chunks.chunks());
        if let Some(request) = &self.request {
            b = b
                .prompt(
                    &request.system,
                    &request.user,
                    request.schema.as_ref().map(|s| &s.schema),
                )
                .answer_form(Some(request.form.as_str().to_string()));
        }
        b = b.provider(self.provider.clone());
        let mut timings = Timings {
            retrieve_ms: Some(Timings::millis(self.retrieval.time)),
            generate_ms: Some(Timings::millis(self.generate_time)),
            ..Timings::default()
        };
        let mut options = gate_options(&self.retrieval, settings);
        if let Some(a) = &self.answered {
            b = record_outcome(b, a);
            options.p_answerable = a.p_answerable;
            if let Some(u) = &a.usage {
                timings.input_tokens = u.input_tokens;
                timings.output_tokens = u.output_tokens;
            }
        }
        options.merge(extra_options);
        b.options(options)
            .timings(timings)
            .warnings(
                self.contract
                    .warnings
                    .iter()
                    .map(|w| w.code.as_str().to_string())
                    .collect(),
            )
            .contract(groundcite_store::JsonText::serialize(&self.contract).ok())
            .build()
    }
}

/// A generation that failed outright (network, credentials, retries
/// exhausted), for [`Retrieval::failed_trace_record`].
#[derive(Debug)]
pub struct Failure<'a> {
    /// The provider's name.
    pub provider: &'a str,
    /// The error.
    pub error: &'a ProviderError,
    /// Output received before the failure.
    pub raw_output: Option<String>,
}

impl Retrieval {
    /// The trace of a generation that failed outright: the question, the
    /// chunks, what arrived before the failure, the stop reason, the token
    /// counts, the error, the gate's options (with `extra_options` merged,
    /// theirs win) and `retrieve_ms` (the caller adds `total_ms`).
    pub fn failed_trace_record(
        &self,
        trace_id: &str,
        kind: &str,
        question: &str,
        settings: &AskSettings,
        failure: Failure<'_>,
        extra_options: TraceOptions,
    ) -> TraceRecord {
        let mut options = gate_options(self, settings);
        options.merge(extra_options);
        let b = TraceBuilder::new(trace_id, kind)
            .question(Some(question.to_string()))
            .chunks(self.chunks.chunks())
            .provider(failure.provider);
        record_failure(b, failure.error, failure.raw_output)
            .options(options)
            .timings(Timings {
                retrieve_ms: Some(Timings::millis(self.time)),
                ..Timings::default()
            })
            .build()
    }
}

/// Writes a generation's outcome into its trace: the raw output, model,
/// request ID, error, and as typed fields the stop reason, the token counts
/// and how the raw output is read back (`answer_form`). The one place the
/// ask pipeline and the service's `/v1/answer` do it.
pub fn record_outcome(b: TraceBuilder, a: &Answered) -> TraceBuilder {
    let usage = a.usage.unwrap_or_default();
    b.raw_output(a.raw_output.clone())
        .model(a.model.clone())
        .provider_request_id(a.request_id.clone())
        .error(a.error.as_ref().map(ProviderError::summary))
        .stop_reason(Some(a.stop_reason.as_str().to_string()))
        .answer_form(Some(a.output_form().to_string()))
        .tokens(usage.input_tokens, usage.output_tokens)
}

/// Writes a generation that failed outright into its trace: what arrived
/// before the failure (`raw_output`, else the error's partial output), the
/// stop reason, the token counts and the error.
pub fn record_failure(
    b: TraceBuilder,
    error: &ProviderError,
    raw_output: Option<String>,
) -> TraceBuilder {
    b.raw_output(raw_output.or_else(|| error.partial_output().map(str::to_string)))
        .model(error.model().map(str::to_string))
        .provider_request_id(error.request_id().map(str::to_string))
        .error(Some(error.summary()))
        .stop_reason(Some(StopReason::of_error(error).as_str().to_string()))
        .tokens(error.usage().input_tokens, error.usage().output_tokens)
}

/// 64-bit FNV-1a: stable names and hashes, not a security boundary.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A shared embedding model, as the CLI and the service hold it.
pub type SharedEmbed = Arc<dyn Embed>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_that_ask_several_things_are_split_into_parts() {
        assert_eq!(
            question_parts("how much is express shipping and how long does it take?"),
            vec!["how much is express shipping", "how long does it take"]
        );
        assert_eq!(
            question_parts(
                "going to London for 3 nights, how much can I spend on the hotel and what daily allowance do I get for food?"
            ),
            vec![
                "going to London for 3 nights how much can I spend on the hotel",
                "going to London for 3 nights what daily allowance do I get for food"
            ]
        );
        assert_eq!(
            question_parts(
                "lost my card. will my subscription keep working and how soon does it get here?"
            ),
            vec![
                "lost my card will my subscription keep working",
                "lost my card how soon does it get here"
            ]
        );
        // One question, however long, stays whole.
        for q in [
            "How long does standard shipping take?",
            "if I work on a bank holiday do I get extra pay or a day off instead?",
            "open a db read-only in the cli, and also run a sketchy .sql script",
            "I want to leave but I'm overdrawn and have savings in a pot",
            "",
        ] {
            assert_eq!(question_parts(q), vec![q.to_string()], "{q}");
        }
    }

    fn chunks() -> ChunkSet {
        ChunkSet::new(vec![Chunk {
            chunk_id: "refunds#1".into(),
            content: "Refunds are available within 30 days of purchase.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: None,
        }])
        .expect("chunks")
    }

    fn provenance() -> Provenance {
        Provenance {
            trace_id: "t-1".into(),
            created_at: "2026-12-02T00:00:00Z".into(),
            question: Some("How long do refunds take?".into()),
            model: None,
        }
    }

    fn retrieval() -> Retrieval {
        let mut r = Retrieval::given(chunks());
        r.time = Duration::from_micros(12_500);
        r
    }

    /// The extra options a caller adds (the service's ask route, the CLI).
    fn extra() -> TraceOptions {
        TraceOptions {
            stream: Some(true),
            docs: Some("docs".into()),
            ..TraceOptions::default()
        }
    }

    #[test]
    fn an_answered_ask_is_traced_with_typed_options_and_float_timings() {
        let settings = AskSettings::with_gate(GateMode::Off);
        let raw = r#"{"answerable": true, "claims": [{"text": "Refunds take up to 30 days.", "citations": [{"chunk_id": "refunds#1", "quote": "Refunds are available within 30 days of purchase."}]}]}"#;
        let answer: GroundedAnswer = serde_json::from_str(raw).expect("answer");
        let contract = verify_with(
            &answer,
            &chunks(),
            settings.profile,
            settings.policy,
            provenance(),
        );
        let asked = Asked {
            retrieval: retrieval(),
            contract: contract.clone(),
            answered: Some(Answered {
                contract,
                raw_output: Some(raw.into()),
                model: Some("m-1".into()),
                usage: Some(groundcite_providers::Usage {
                    input_tokens: Some(100),
                    output_tokens: Some(20),
                }),
                stop_reason: StopReason::Stop,
                p_answerable: Some(0.9),
                form: groundcite_core::AnswerForm::Grounded,
                native: None,
                request_id: Some("req-1".into()),
                generate_time: Duration::from_millis(840),
                error: None,
                note: None,
            }),
            request: Some(GenerationRequest {
                system: "sys".into(),
                user: "user".into(),
                schema: None,
                chunks: Vec::new(),
                native_sources: Default::default(),
                max_tokens: 512,
                temperature: None,
                candidates: Vec::new(),
                form: groundcite_core::AnswerForm::Grounded,
                min_p_answerable: None,
            }),
            provider: "openai".into(),
            generate_time: Duration::from_micros(840_250),
        };
        let r = asked.trace_record(
            "t-1",
            "ask",
            "How long do refunds take?",
            &settings,
            extra(),
        );
        assert_eq!(r.options.profile, Some(MatchProfile::Default));
        assert_eq!(r.options.policy, Some(ClaimPolicy::Strict));
        assert_eq!(r.options.top_k, Some(settings.top_k));
        assert_eq!(r.options.candidates, Some(settings.candidates));
        assert_eq!(r.options.p_answerable, Some(0.9));
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "pass"}))
        );
        assert!(r.options.gate.is_some() && r.options.signals.is_some());
        assert_eq!(r.options.stream, Some(true));
        assert_eq!(r.options.docs.as_deref(), Some("docs"));
        assert!(r.options.extra.is_empty(), "{}", r.options);
        // Fractions of a millisecond are kept: one unit, float ms.
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, Some(840.25));
        assert_eq!(r.timings.total_ms, None, "the caller adds total_ms");
        assert_eq!(
            (r.timings.input_tokens, r.timings.output_tokens),
            (Some(100), Some(20))
        );
        assert_eq!((r.input_tokens, r.output_tokens), (Some(100), Some(20)));
        assert_eq!(r.stop_reason.as_deref(), Some("stop"));
        assert_eq!(r.answer_form.as_deref(), Some("grounded"));
        assert_eq!(r.provider.as_deref(), Some("openai"));
        assert_eq!(r.model.as_deref(), Some("m-1"));
        assert_eq!(r.provider_request_id.as_deref(), Some("req-1"));
        assert_eq!(
            r.prompt,
            Some(serde_json::json!({"system": "sys", "user": "user"}))
        );
        assert_eq!(r.answerable(), Some(true));
        assert_eq!(r.chunks.len(), 1);
    }

    #[test]
    fn a_refused_and_a_failed_ask_are_traced_with_the_gate_options() {
        let settings = AskSettings::with_gate(GateMode::Off);
        let mut refused_retrieval = retrieval();
        refused_retrieval.verdict = Verdict::Refuse("off topic".into());
        let asked = Asked {
            retrieval: refused_retrieval,
            contract: Contract::refused(
                groundcite_core::RefusalCode::R1,
                provenance(),
                settings.profile,
                Vec::new(),
            ),
            answered: None,
            request: None,
            provider: "none".into(),
            generate_time: Duration::from_micros(250),
        };
        let r = asked.trace_record("t-2", "ask", "q", &settings, TraceOptions::default());
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "refuse", "reason": "off topic"}))
        );
        assert_eq!(r.options.p_answerable, None);
        assert_eq!(r.options.stream, None);
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, Some(0.25));
        assert_eq!(r.timings.input_tokens, None);
        assert_eq!(
            (r.raw_output.as_deref(), r.stop_reason.as_deref()),
            (None, None)
        );
        assert_eq!(r.provider.as_deref(), Some("none"));
        assert_eq!(r.answerable(), Some(false));

        let error = ProviderError::new(
            groundcite_providers::ErrorKind::Connection,
            "openai",
            "connection reset",
        );
        let r = retrieval().failed_trace_record(
            "t-3",
            "ask",
            "q",
            &settings,
            Failure {
                provider: "openai",
                error: &error,
                raw_output: Some("{\"answerable\"".into()),
            },
            extra(),
        );
        assert_eq!(r.options.profile, Some(MatchProfile::Default));
        assert_eq!(
            r.options.gate_verdict,
            Some(serde_json::json!({"verdict": "pass"}))
        );
        assert_eq!(r.options.stream, Some(true));
        assert_eq!(r.options.docs.as_deref(), Some("docs"));
        assert_eq!(r.timings.retrieve_ms, Some(12.5));
        assert_eq!(r.timings.generate_ms, None);
        assert_eq!(r.raw_output.as_deref(), Some("{\"answerable\""));
        assert_eq!(r.stop_reason.as_deref(), Some("error"));
        assert!(r.error.is_some());
        assert_eq!(r.contract, None);
    }

    #[test]
    fn answer_kinds_follow_the_question_words() {
        assert!(answer_kinds("How long does a refund take?").contains("duration"));
        assert!(answer_kinds("how much is express shipping").contains("money"));
        assert!(answer_kinds("how many failed attempts lock me out").contains("count"));
        assert!(answer_kinds("What is the interest rate?").contains("percent"));
        assert!(answer_kinds("Can I return opened software?").is_empty());
        assert!(states_kind(
            "Refunds take 5 business days.",
            &answer_kinds("how soon do i get my money")
        ));
    }
}
