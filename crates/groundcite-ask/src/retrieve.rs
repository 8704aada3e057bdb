//! Retrieval (BM25 fused with sentence vectors by score) and the gate over
//! what it found.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use groundcite_core::{Candidate, Chunk, ChunkSet};
use groundcite_index::spelling::{Corrected, Correction};
use groundcite_index::{Embed, Index};
use serde::{Deserialize, Serialize};

use crate::rank::{rank_sentences, require_answering, require_named, require_successor};

use crate::error::AskError;
use crate::pool::{Pool, RetrievedPool};
use crate::retriever::Retriever;
use crate::settings::{AskSettings, GateMode, GateSettings};

/// How far down each list (BM25 and dense) fusion reads. Deep enough that
/// a chunk ranked well by one list and modestly by the other gets both
/// scores; both searches cost a few milliseconds at this depth.
pub(crate) const FUSION_DEPTH: usize = 100;

/// The weight of a chunk's BM25 score, relative to the best of the question,
/// in the fused score (its best sentence's cosine plus this share). Chosen on
/// the dev suites (docs/local.md, "Fusion").
pub(crate) const BM25_WEIGHT: f64 = 0.2;

/// A chunk's fused score: its best sentence's cosine with the question plus
/// [`BM25_WEIGHT`] times its BM25 score as a share of the question's best
/// (kept in 0..=1: a search service's score may be on any scale). The
/// sentence ranker reads the same formula for a sentence's chunk.
pub(crate) fn fused_score(cosine: f64, bm25: f64, best_bm25: f64) -> f64 {
    cosine + BM25_WEIGHT * (bm25 / best_bm25).clamp(0.0, 1.0)
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
    /// The best cosine with the question among the candidates offered to
    /// the model that state the kind of quantity the question asks for
    /// ("how long" and a duration; hybrid only; `None` when the question
    /// asks for no quantity or no candidate states one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed_similarity: Option<f32>,
    /// How many things the question asks ([`question_parts`]).
    #[serde(default)]
    pub parts: usize,
    /// An identifier of the question ("QP-429", "RM-4221"), as typed, that
    /// keys a ranked table row (the documents define it: an error-code or
    /// parameter table); the answer quotes that row
    /// ([`require_named`](crate::rank::require_named)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyed: Option<String>,
    /// A code the question names ("QP-611") that no document names, while
    /// the ranked sentences name others of its family (QP-610, QP-720):
    /// the `evidence` gate refuses on it ([`UnknownCode`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_code: Option<UnknownCode>,
    /// With an external retriever: its kind and how many of its hits
    /// scored at least its floor (the service's scale, not BM25's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<ExternalHits>,
    /// Question words read as corpus words before searching ("intrest" as
    /// "interest": [`groundcite_index::spelling`]); the model still reads
    /// the question as asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrected: Vec<Correction>,
}

/// A code-shaped identifier of the question (two to eight letters, a
/// hyphen, two to eight digits: "QP-611") that no chunk of the corpus
/// names, though the sentences ranked for the question name at least two
/// others of its family: the documents list those codes and not the
/// user's. Only when the question names no code the documents do name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownCode {
    /// The code as the user typed it.
    pub code: String,
    /// Codes of its family that ranked sentences name, sorted; at most
    /// five.
    pub family: Vec<String>,
}

/// What an external retriever found ([`retrieve_external`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExternalHits {
    /// The retriever's kind (`postgres`).
    pub retriever: String,
    /// Hits at or above its floor.
    pub hits: usize,
    /// The best hit's score, on the service's scale.
    pub best_score: Option<f64>,
    /// The floor applied.
    pub floor: f64,
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

    /// Whether the gate refused on weak evidence (the `evidence` rule)
    /// although retrieval found something: a judgement `--gate retrieval`
    /// would hand to the model.
    pub fn refused_on_evidence(&self) -> bool {
        !self.gate_passed()
            && self.gate.mode == GateMode::Evidence
            && !self.chunks.is_empty()
            && found_anything(&self.gate, &self.signals)
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

/// Retrieves `settings.top_k` chunks for `question`, ranks candidate
/// sentences and applies the gate.
///
/// With `embed` (and sentence vectors of the same model in the index),
/// BM25 and dense retrieval are fused by score ([`fuse`]); otherwise BM25
/// alone.
pub fn retrieve(
    index: &Index,
    embed: Option<&dyn Embed>,
    question: &str,
    settings: &AskSettings,
) -> Result<Retrieval, AskError> {
    settings.validate().map_err(AskError::Settings)?;
    let started = Instant::now();
    // Searched, ranked and gated as corrected; the prompt keeps the original.
    let corrected = if settings.spelling {
        index.correct_spelling(question).map_err(AskError::Index)?
    } else {
        Corrected {
            text: question.to_string(),
            corrections: Vec::new(),
        }
    };
    let question = corrected.text.as_str();
    let query = match embed {
        Some(e) if index.vector_model() == Some(e.model_id()) => {
            let mut v = e
                .embed(&[question])
                .map_err(|e| AskError::Embedding(e.to_string()))?;
            v.pop()
        }
        _ => None,
    };
    let pool = (settings.top_k * 4).max(20);
    let depth = if query.is_some() { FUSION_DEPTH } else { pool };
    let lexical = index.search(question, depth).map_err(AskError::Index)?;
    let dense = query
        .as_deref()
        .map(|q| index.dense_search(q, depth))
        .unwrap_or_default();
    let signals = Signals {
        hybrid: query.is_some(),
        bm25_max: lexical.first().and_then(|c| c.score).filter(|s| *s > 0.0),
        cosine_max: dense.first().map(|d| d.1),
        best_similarity: None,
        best_lexical: 0.0,
        typed_similarity: None,
        parts: 1,
        keyed: None,
        unknown_code: None,
        external: None,
        corrected: corrected.corrections.clone(),
    };
    let fused = fuse(index, &lexical, &dense, query.as_deref(), pool)?;
    let mut ranked = rank_sentences(index, embed, &fused, &lexical, query, question)?;
    // The ranked sentences never name the code: neither may any chunk.
    if let Some(u) = &ranked.identifiers.unknown
        && corpus_names_code(index, &u.code)?
    {
        ranked.identifiers.unknown = None;
    }
    finish(index, &fused, ranked, signals, settings, started)
}

/// Candidates from the ranking (the ones the answer must quote marked),
/// the chunks of the answer, and the gate's verdict.
fn finish(
    corpus: &dyn Pool,
    fused: &[Chunk],
    ranked: crate::rank::Ranking,
    mut signals: Signals,
    settings: &AskSettings,
    started: Instant,
) -> Result<Retrieval, AskError> {
    signals.best_similarity = ranked.best_similarity;
    signals.best_lexical = ranked.best_lexical;
    signals.parts = ranked.parts;
    signals.keyed = ranked.identifiers.keyed().map(str::to_string);
    signals.unknown_code = ranked.identifiers.unknown.clone();
    signals.typed_similarity = ranked
        .evidence
        .iter()
        .take(settings.candidates)
        .filter(|(_, typed)| *typed)
        .filter_map(|(sim, _)| *sim)
        .reduce(f32::max);
    let mut order = ranked.order;
    require_answering(&mut order, ranked.parts);
    require_named(&mut order, &ranked.identifiers);
    // The retrieved chunks are those of the candidates as ranked: moving the
    // best sentence's successor up (same chunk) shapes the answer, not what
    // retrieval found.
    let chunks = ChunkSet::new(retrieved_chunks(
        corpus,
        fused,
        &order[..order.len().min(settings.candidates)],
        settings.top_k,
    )?)
    .map_err(|e| AskError::Chunks(e.to_string()))?;
    require_successor(&mut order);
    order.truncate(settings.candidates);
    let candidates = order;
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

/// [`retrieve`] over a search service the team already runs instead of
/// groundcite's index: its hits at or above the retriever's floor, best
/// first; candidate sentences ranked from the question and those chunks
/// alone (word rarity over the hits; with `embed`, every sentence of the
/// hits embedded now, its title as context, as the index embeds its own),
/// and the same gate (retrieval "found something" means a hit at or above
/// the floor, or a sentence above the cosine floor).
pub fn retrieve_external(
    retriever: &dyn Retriever,
    embed: Option<&dyn Embed>,
    question: &str,
    settings: &AskSettings,
) -> Result<Retrieval, AskError> {
    settings.validate().map_err(AskError::Settings)?;
    let started = Instant::now();
    // Every sentence of the hits is embedded per question: a smaller pool
    // than the index's (which has its vectors stored).
    let limit = (settings.top_k * 3).max(10);
    let floor = retriever.score_floor();
    let mut hits = retriever.search(question, limit)?;
    hits.retain(|c| c.score.is_none_or(|s| s >= floor));
    let hits = distinct(hits);
    let query = match embed {
        Some(e) => {
            let mut v = e
                .embed(&[question])
                .map_err(|e| AskError::Embedding(e.to_string()))?;
            v.pop()
        }
        None => None,
    };
    let corpus = RetrievedPool::new(hits.clone(), embed)?;
    let cosine_max = query.as_deref().and_then(|q| {
        corpus
            .similar_sentences(q, 1)
            .first()
            .and_then(|h| h.similarity)
    });
    let signals = Signals {
        hybrid: query.is_some(),
        bm25_max: None,
        cosine_max,
        best_similarity: None,
        best_lexical: 0.0,
        typed_similarity: None,
        parts: 1,
        keyed: None,
        unknown_code: None,
        external: Some(ExternalHits {
            retriever: retriever.name().to_string(),
            hits: hits.len(),
            best_score: hits.first().and_then(|c| c.score),
            floor,
        }),
        corrected: Vec::new(),
    };
    let mut ranked = rank_sentences(&corpus, embed, &hits, &hits, query, question)?;
    // Only the service's hits are known here, not the whole corpus: no code
    // reads as unknown.
    ranked.identifiers.unknown = None;
    finish(&corpus, &hits, ranked, signals, settings, started)
}

/// The first hit of each chunk ID (a service may return a chunk twice; a
/// chunk set holds each ID once).
fn distinct(hits: Vec<Chunk>) -> Vec<Chunk> {
    let mut seen = std::collections::BTreeSet::new();
    hits.into_iter()
        .filter(|c| seen.insert(c.chunk_id.clone()))
        .collect()
}

/// Whether any chunk of the corpus names `code` ("QP-611"), or its number
/// after its prefix and a space or nothing ("QP 611", "QP611"): BM25 on
/// the code, then on its number alone, and the hits' text read.
fn corpus_names_code(index: &Index, code: &str) -> Result<bool, AskError> {
    let Some((prefix, digits)) = code.split_once('-') else {
        return Ok(false);
    };
    let spellings = [
        code.to_string(),
        format!("{prefix} {digits}"),
        format!("{prefix}{digits}"),
    ];
    for query in [code, digits, &spellings[2]] {
        let hits = index
            .search(query, CODE_SEARCH_DEPTH)
            .map_err(AskError::Index)?;
        if hits
            .iter()
            .any(|c| spellings.iter().any(|s| crate::rank::names(&c.content, s)))
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// How many BM25 hits of a code's search are read for it.
const CODE_SEARCH_DEPTH: usize = 50;

/// Whether retrieval found anything above its floors (the `retrieval`
/// rule's test).
fn found_anything(g: &GateSettings, s: &Signals) -> bool {
    s.bm25_max.is_some_and(|b| b > g.bm25_floor)
        || s.external.as_ref().is_some_and(|e| e.hits > 0)
        || s.cosine_max.is_some_and(|c| c > g.cosine_floor)
}

/// The gate's verdict from what retrieval found.
pub fn gate(g: &GateSettings, chunks: &ChunkSet, s: &Signals) -> Verdict {
    if g.mode == GateMode::Off {
        return Verdict::Pass;
    }
    if chunks.is_empty() {
        return Verdict::Refuse("no document matches the question".into());
    }
    if !found_anything(g, s) {
        if let Some(e) = &s.external {
            return Verdict::Refuse(format!(
                "the search service ({}) returned nothing at or above its floor ({}){}",
                e.retriever,
                e.floor,
                if s.hybrid {
                    format!(
                        " and no sentence above the cosine floor ({})",
                        g.cosine_floor
                    )
                } else {
                    String::new()
                }
            ));
        }
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
        // A code nobody paraphrases, absent from documents that list its
        // family: what the user asks about is not documented.
        if let Some(u) = &s.unknown_code {
            return Verdict::Refuse(format!(
                "the question names {}, which no document names (they name {} of its family)",
                u.code,
                u.family.join(", ")
            ));
        }
        match s.best_similarity {
            // A candidate that states the kind of quantity asked for ("how
            // long" and "within 24 hours") is evidence that survives
            // paraphrase: it passes at a lower similarity. So is a table
            // row keyed by a code the user typed: an identifier is the one
            // word nobody paraphrases.
            Some(sim)
                if sim < g.min_similarity
                    && s.typed_similarity
                        .is_none_or(|t| t < g.min_typed_similarity)
                    && s.keyed.is_none() =>
            {
                let typed = s.typed_similarity.map_or(String::new(), |t| {
                    format!(
                        "; a sentence stating the quantity asked for: {t:.2}, its gate is {:.2}",
                        g.min_typed_similarity
                    )
                });
                return Verdict::Refuse(format!(
                    "no sentence of the retrieved chunks is close to the question (best similarity {sim:.2}, the gate is {:.2}{typed})",
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

/// Fusion of the BM25 and dense lists by score: a chunk scores its best
/// sentence's cosine with the question plus [`BM25_WEIGHT`] times its BM25
/// score relative to the question's best. The top `k` chunks, each with
/// `score` set to its fused score.
///
/// Scores, not ranks: reciprocal rank fusion (what this replaced) gives a
/// chunk ranked 90th by BM25 almost nothing, and on long, chatty questions
/// BM25's order is mostly noise, so a chunk the dense list ranks 6th lost to
/// chunks that matched "took", "pic" and "side". A cosine keeps its meaning
/// from question to question; BM25 has no absolute scale, hence relative to
/// the best. A chunk only BM25 found gets its cosine from its stored
/// sentence vectors; one only dense search found gets no BM25 share.
pub(crate) fn fuse(
    index: &Index,
    lexical: &[Chunk],
    dense: &[(String, f32)],
    query: Option<&[f32]>,
    k: usize,
) -> Result<Vec<Chunk>, AskError> {
    let Some(query) = query.filter(|_| !dense.is_empty()) else {
        return Ok(lexical.iter().take(k).cloned().collect());
    };
    let best = lexical
        .first()
        .and_then(|c| c.score)
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let mut scores: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (id, cos) in dense {
        scores.entry(id.as_str()).or_default().0 = f64::from(*cos);
    }
    for c in lexical {
        let bm25 = c.score.unwrap_or(0.0);
        match scores.get_mut(c.chunk_id.as_str()) {
            Some(s) => s.1 = bm25,
            None => {
                let cos = index
                    .sentences_of(&c.chunk_id, Some(query))
                    .iter()
                    .filter_map(|h| h.similarity)
                    .reduce(f32::max)
                    .map_or(0.0, f64::from);
                scores.insert(c.chunk_id.as_str(), (cos, bm25));
            }
        }
    }
    let mut order: Vec<(&str, f64)> = scores
        .into_iter()
        .map(|(id, (cos, bm25))| (id, fused_score(cos, bm25, best)))
        .collect();
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

/// The chunks of the answer: every candidate's chunk (a citation must name
/// a retrieved chunk), then the best fused chunks, at least `top_k` in all.
pub(crate) fn retrieved_chunks(
    corpus: &dyn Pool,
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
            None => corpus.chunk(&c.chunk_id)?,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn one_chunk() -> ChunkSet {
        ChunkSet::new(vec![Chunk {
            chunk_id: "a#1".into(),
            content: "Web sign-in is blocked for 1 hour.".into(),
            source_title: None,
            source_url: None,
            page_number: None,
            score: Some(3.0),
        }])
        .expect("valid chunk")
    }

    fn signals(best: f32, typed: Option<f32>) -> Signals {
        Signals {
            hybrid: true,
            bm25_max: Some(3.0),
            cosine_max: Some(best),
            best_similarity: Some(best),
            best_lexical: 0.1,
            typed_similarity: typed,
            parts: 1,
            keyed: None,
            unknown_code: None,
            external: None,
            corrected: Vec::new(),
        }
    }

    /// A candidate that states the quantity asked for passes at the lower
    /// typed bar; without one, the plain bar holds.
    #[test]
    fn a_sentence_stating_the_quantity_asked_passes_at_the_typed_bar() {
        let g = GateSettings::new(GateMode::Evidence);
        assert!(g.min_typed_similarity < g.min_similarity);
        let chunks = one_chunk();
        let below = g.min_similarity - 0.1;
        assert_eq!(
            gate(&g, &chunks, &signals(below, Some(below))),
            Verdict::Pass
        );
        match gate(&g, &chunks, &signals(below, None)) {
            Verdict::Refuse(why) => assert!(!why.contains("quantity"), "{why}"),
            Verdict::Pass => panic!("passed without a typed sentence"),
        }
        let low = g.min_typed_similarity - 0.01;
        match gate(&g, &chunks, &signals(low, Some(low))) {
            Verdict::Refuse(why) => assert!(why.contains("quantity asked for"), "{why}"),
            Verdict::Pass => panic!("passed below the typed bar"),
        }
        // The retrieval gate ignores both bars.
        let hosted = GateSettings::new(GateMode::Retrieval);
        assert_eq!(gate(&hosted, &chunks, &signals(0.3, None)), Verdict::Pass);
    }

    /// A table row keyed by a code the user typed passes the evidence gate
    /// whatever the cosine; nothing else changes.
    #[test]
    fn a_row_keyed_by_the_code_asked_about_passes_the_evidence_gate() {
        let g = GateSettings::new(GateMode::Evidence);
        let chunks = one_chunk();
        let mut keyed = signals(g.min_typed_similarity - 0.1, None);
        keyed.keyed = Some("RM-4221".into());
        assert_eq!(gate(&g, &chunks, &keyed), Verdict::Pass);
        // Retrieval that found nothing still refuses.
        keyed.bm25_max = None;
        keyed.cosine_max = Some(0.1);
        assert!(matches!(gate(&g, &chunks, &keyed), Verdict::Refuse(_)));
    }

    /// A code no document names, beside codes of its family that they do,
    /// is refused by the evidence gate however close the sentences are;
    /// the hosted providers' gate leaves it to the model.
    #[test]
    fn a_code_the_documents_do_not_list_is_refused_by_the_evidence_gate() {
        let g = GateSettings::new(GateMode::Evidence);
        let chunks = one_chunk();
        let mut s = signals(0.9, None);
        s.unknown_code = Some(UnknownCode {
            code: "QP-611".into(),
            family: vec!["QP-409".into(), "QP-610".into()],
        });
        let Verdict::Refuse(why) = gate(&g, &chunks, &s) else {
            panic!("an unknown code passed the evidence gate");
        };
        assert_eq!(
            why,
            "the question names QP-611, which no document names (they name QP-409, QP-610 of its family)"
        );
        let hosted = GateSettings::new(GateMode::Retrieval);
        assert_eq!(gate(&hosted, &chunks, &s), Verdict::Pass);
        // Stored signals without the field still load.
        let mut json = serde_json::to_value(signals(0.9, None)).unwrap();
        assert!(json.get("unknown_code").is_none());
        json.as_object_mut().unwrap().remove("unknown_code");
        let back: Signals = serde_json::from_value(json).unwrap();
        assert_eq!(back.unknown_code, None);
    }

    fn retrieval(g: GateSettings, s: Signals) -> Retrieval {
        let chunks = one_chunk();
        let verdict = gate(&g, &chunks, &s);
        Retrieval {
            chunks,
            candidates: Vec::new(),
            signals: s,
            gate: g,
            verdict,
            time: Duration::ZERO,
        }
    }

    /// Only a refusal on weak evidence, after retrieval found something, is
    /// one the model could be asked to make instead.
    #[test]
    fn a_refusal_on_weak_evidence_is_told_apart_from_an_empty_retrieval() {
        let evidence = GateSettings::new(GateMode::Evidence);
        let weak = retrieval(evidence, signals(0.3, None));
        assert!(!weak.gate_passed());
        assert!(weak.refused_on_evidence());
        let mut nothing = signals(0.1, None);
        nothing.bm25_max = Some(0.0);
        nothing.cosine_max = Some(0.1);
        let empty = retrieval(evidence, nothing);
        assert!(!empty.gate_passed());
        assert!(!empty.refused_on_evidence());
        let strong = retrieval(evidence, signals(0.9, None));
        assert!(strong.gate_passed() && !strong.refused_on_evidence());
        let hosted = retrieval(GateSettings::new(GateMode::Retrieval), signals(0.3, None));
        assert!(hosted.gate_passed() && !hosted.refused_on_evidence());
    }

    /// Settings stored before the typed bar existed still load, with it.
    #[test]
    fn stored_gate_settings_without_the_typed_bar_load_with_the_default() {
        let mut v = serde_json::to_value(GateSettings::new(GateMode::Evidence)).expect("json");
        v.as_object_mut()
            .expect("object")
            .remove("min_typed_similarity");
        let g: GateSettings = serde_json::from_value(v).expect("loads");
        assert_eq!(g, GateSettings::new(GateMode::Evidence));
    }
}
