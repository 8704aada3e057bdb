//! Candidate sentences ranked for the question (semantic and lexical
//! relevance, answer type, multi-part questions).

use std::collections::{BTreeMap, BTreeSet};

use groundcite_core::sentences::introduced_block;
use groundcite_core::{Candidate, Chunk, Introduced};
use groundcite_index::{Embed, Index};

use crate::error::AskError;
use crate::pool::Pool;
use crate::retrieve::UnknownCode;

/// Sentences of this many of the best fused chunks are ranked, besides the
/// corpus's most similar sentences.
pub(crate) const RANKED_CHUNKS: usize = 8;
/// The corpus's most similar sentences that are ranked too (hybrid), for
/// the whole question and for each of its parts.
pub(crate) const RANKED_SENTENCES: usize = 40;

/// How a candidate's score weighs its parts: the sentence's cosine with the
/// question, its rarity-weighted share of the question's words (title and
/// headings count half), its chunk's relevance (the fused score's formula:
/// the chunk's best sentence cosine plus its share of the best BM25 score),
/// and whether it states the kind of quantity the question asks for. Tuned
/// on the dev suites (docs/local.md).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RankWeights {
    semantic: f64,
    lexical: f64,
    chunk: f64,
    answer_type: f64,
}

pub(crate) const RANK_WEIGHTS: RankWeights = RankWeights {
    semantic: 0.7,
    lexical: 0.3,
    chunk: 0.3,
    answer_type: 0.1,
};

/// What kind of quantity a question asks for, from its wording: "how
/// long", "how soon", "when" → a duration or a date; "how much", "cost",
/// "fee" → money; "how many" → a count; "rate", "interest" → a percentage;
/// "most", "limit", "maximum" → any quantity. A sentence stating a quantity
/// of that kind is likelier to answer (plain English, not tuned to a corpus).
pub(crate) fn answer_kinds(question: &str) -> BTreeSet<&'static str> {
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
pub(crate) fn states_kind(sentence: &str, kinds: &BTreeSet<&'static str>) -> bool {
    !kinds.is_empty()
        && groundcite_core::quantity::extract(sentence)
            .iter()
            .any(|q| kinds.contains(q.unit.kind()))
}

/// Words that open a question (or a clause of one): a question that goes
/// on after "and" with one of these asks two things.
pub(crate) const QUESTION_OPENERS: &[&str] = &[
    "how", "what", "whats", "what's", "when", "where", "which", "who", "why", "whose", "do",
    "does", "did", "is", "are", "can", "could", "should", "will", "would",
];

pub(crate) fn bare(word: &str) -> String {
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

/// The identifiers a question names, as typed: error codes, versions,
/// option and function names ("QP-429", "fts5", "eth0", "journal_mode=wal",
/// "json_patch", "/v3/messages", "message.delivered"). A word is one when
/// it mixes letters and digits, or joins alphanumeric runs with `_`, `=`,
/// `/` or `.`; a number with a short suffix ("55k", "1st") is not. Everyday
/// words never are, so a question without such a word is ranked as before.
/// At most three, in question order.
pub(crate) fn identifiers(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in question.split_whitespace() {
        let w = raw
            .trim_start_matches(|c: char| !c.is_alphanumeric() && c != '/')
            .trim_end_matches(|c: char| !c.is_alphanumeric());
        if w.len() < 2 || w.len() > 64 {
            continue;
        }
        let letters = w.chars().any(|c| c.is_ascii_alphabetic());
        let digits = w.chars().any(|c| c.is_ascii_digit());
        let joined = w.char_indices().any(|(i, c)| {
            matches!(c, '_' | '=' | '/' | '.')
                && w[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
                && w[i + c.len_utf8()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        }) && w
            .split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
            .all(|p| p.chars().count() >= 2);
        // A number with a short suffix is a quantity or an ordinal ("55k",
        // "5x", "10am", "2gb", "1st"), not a name.
        let digits_end = w.find(|c: char| !c.is_ascii_digit()).unwrap_or(w.len());
        let suffix = &w[digits_end..];
        let quantity = digits_end > 0
            && (1..=3).contains(&suffix.len())
            && suffix.chars().all(|c| c.is_ascii_alphabetic());
        if ((letters && digits && !quantity) || joined)
            && !out.iter().any(|o| o.eq_ignore_ascii_case(w))
        {
            out.push(w.to_string());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Whether `text` names `identifier` as a whole word (ASCII case aside):
/// "QP-429" in "| QP-429 | Too many requests |", not in "QP-4290".
pub(crate) fn names(text: &str, identifier: &str) -> bool {
    let hay = text.to_ascii_lowercase();
    let needle = identifier.to_ascii_lowercase();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    hay.match_indices(&needle).any(|(i, m)| {
        !word(hay[..i].chars().next_back()) && !word(hay[i + m.len()..].chars().next())
    })
}

/// An identifier of the question is read only when at most this many
/// pooled sentences name it: a code's row, its FAQ entry, a changelog line.
pub(crate) const MAX_NAMING: usize = 8;

/// The prefix of a code-shaped identifier: two to eight ASCII letters, a
/// hyphen, two to eight digits ("QP-611" → "QP"), the way products number
/// their error codes. Nothing else is read as a code.
pub(crate) fn code_prefix(id: &str) -> Option<&str> {
    let (prefix, digits) = id.split_once('-')?;
    let letters =
        (2..=8).contains(&prefix.len()) && prefix.bytes().all(|b| b.is_ascii_alphabetic());
    let number = (2..=8).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    (letters && number).then_some(prefix)
}

/// The codes of `prefix`'s family that `text` names, upper-cased
/// ("| QP-610 | … |" and prefix "qp" → "QP-610").
fn family_codes<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = String> + 'a {
    let needle = format!("{}-", prefix.to_ascii_lowercase());
    let hay = text.to_ascii_lowercase();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(i) = hay.get(from..).and_then(|h| h.find(&needle)) {
        let at = from + i;
        from = at + needle.len();
        let before = hay[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let code = &text[at..];
        let end = code
            .char_indices()
            .skip(needle.len())
            .find(|(_, c)| !c.is_ascii_digit())
            .map_or(code.len(), |(j, _)| j);
        let candidate = &code[..end];
        let after = code[end..].chars().next();
        if code_prefix(candidate).is_some()
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            found.push(candidate.to_ascii_uppercase());
        }
    }
    found.into_iter()
}

/// At least this many other codes of its family must be named by the
/// ranked sentences for a code they never name to read as unknown: the
/// documents then list that family, and the user's code is not in it.
pub(crate) const MIN_FAMILY: usize = 2;

/// One question (or one part of it), ready to score sentences.
pub(crate) struct Query {
    vector: Option<Vec<f32>>,
    weights: Vec<(String, f64)>,
    total: f64,
    kinds: BTreeSet<&'static str>,
}

impl Query {
    fn new(pool: &dyn Pool, text: &str, vector: Option<Vec<f32>>) -> Result<Query, AskError> {
        let weights = question_weights(pool, text)?;
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
pub(crate) struct Pooled {
    chunk_id: String,
    text: String,
    start: usize,
    context: String,
    words: BTreeSet<String>,
    context_words: BTreeSet<String>,
    introduces: Option<Introduced>,
    /// What a claim quoting it states: the sentence and its block (built
    /// once; every query's score reads it).
    claim: String,
}

/// One offered unit of a chunk: a sentence, with the block it introduces.
struct Unit {
    /// The block's byte range in the chunk.
    range: Option<std::ops::Range<usize>>,
    /// The stored sentences the unit holds (indices into the chunk's), its
    /// own first.
    members: Vec<usize>,
}

/// Per stored sentence of `chunk`: `None` when it lies inside a block that
/// an earlier sentence introduces ([`introduced_block`]), else its unit.
/// A block never cuts a stored sentence: it ends before the first one it
/// would cut, so every sentence is offered exactly once.
fn introduced_blocks(chunk: &Chunk, base: &[groundcite_index::SentenceHit]) -> Vec<Option<Unit>> {
    let markup = groundcite_index::chunk_markup(&chunk.chunk_id);
    let mut out: Vec<Option<Unit>> = Vec::with_capacity(base.len());
    let mut covered_until = 0;
    for (i, h) in base.iter().enumerate() {
        if h.start < covered_until {
            out.push(None);
            continue;
        }
        let mut range = introduced_block(&chunk.content, h.end, markup);
        let mut members = vec![i];
        if let Some(b) = range.clone() {
            let mut end = b.end;
            for (j, o) in base.iter().enumerate().skip(i + 1) {
                if o.start >= end {
                    break;
                }
                if o.end <= end {
                    members.push(j);
                } else {
                    // Cut: the block stops before this sentence.
                    end = chunk.content[..o.start.max(b.start)].trim_end().len();
                    break;
                }
            }
            range = (end > b.start)
                .then_some(b.start..end)
                .filter(|r| chunk.content[r.clone()].chars().any(char::is_alphanumeric));
            if range.is_none() {
                members.truncate(1);
            }
        }
        covered_until = range.as_ref().map_or(0, |r| r.end);
        out.push(Some(Unit { range, members }));
    }
    out
}

/// The ranked candidates and what the gate reads of them.
pub(crate) struct Ranking {
    /// How many parts the question was ranked by.
    pub(crate) parts: usize,
    /// The question's identifiers ([`require_named`]).
    pub(crate) identifiers: Identifiers,
    /// Candidates in the order the model is offered them.
    pub(crate) order: Vec<Candidate>,
    /// The best candidate's cosine with the question (hybrid).
    pub(crate) best_similarity: Option<f32>,
    /// The best candidate's lexical score.
    pub(crate) best_lexical: f64,
    /// Per candidate of `order`, for the first [`MAX_CANDIDATES`]: its cosine
    /// with the question (hybrid), and whether it states the kind of
    /// quantity the question asks for.
    ///
    /// [`MAX_CANDIDATES`]: crate::settings::MAX_CANDIDATES
    pub(crate) evidence: Vec<(Option<f32>, bool)>,
}

/// Ranks sentences by relevance to the question: those of the best fused
/// chunks and (hybrid) the corpus's most similar ones. A question that asks
/// several things is ranked part by part and the candidates take the best
/// sentence of each part first, then the rest by the whole question.
/// Sentences repeated in overlapping chunks are kept once. Sentences about
/// other codes of a code the question names go last ([`other_codes_last`]).
pub(crate) fn rank_sentences(
    corpus: &dyn Pool,
    embed: Option<&dyn Embed>,
    fused: &[Chunk],
    lexical: &[Chunk],
    whole_vector: Option<Vec<f32>>,
    question: &str,
) -> Result<Ranking, AskError> {
    let w = RANK_WEIGHTS;
    let hybrid = whole_vector.is_some();
    let whole = Query::new(corpus, question, whole_vector)?;
    let part_texts = question_parts(question);
    let mut parts: Vec<Query> = Vec::new();
    if part_texts.len() > 1 {
        let vectors: Vec<Option<Vec<f32>>> = match embed.filter(|_| hybrid) {
            Some(e) => {
                let refs: Vec<&str> = part_texts.iter().map(String::as_str).collect();
                e.embed(&refs)
                    .map_err(|e| AskError::Embedding(e.to_string()))?
                    .into_iter()
                    .map(Some)
                    .collect()
            }
            None => vec![None; part_texts.len()],
        };
        for (t, v) in part_texts.iter().zip(vectors) {
            parts.push(Query::new(corpus, t, v)?);
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
            .unwrap_or(0.0)
    };

    // The chunks whose sentences are ranked.
    let mut chunks: Vec<Chunk> = fused.iter().take(RANKED_CHUNKS).cloned().collect();
    for q in std::iter::once(&whole).chain(&parts) {
        let Some(v) = &q.vector else { continue };
        for h in corpus.similar_sentences(v, RANKED_SENTENCES) {
            if !chunks.iter().any(|c| c.chunk_id == h.chunk_id)
                && let Some(c) = corpus.chunk(&h.chunk_id)?
            {
                chunks.push(c);
            }
        }
    }
    // Their sentences, and each query's cosine with each sentence.
    let queries: Vec<&Query> = std::iter::once(&whole).chain(&parts).collect();
    let mut pool: Vec<Pooled> = Vec::new();
    let mut sims: Vec<Vec<Option<f32>>> = vec![Vec::new(); queries.len()];
    // Per query and pooled sentence: its chunk's relevance (the fused
    // score's formula: the chunk's best sentence cosine plus the BM25 share).
    let mut chunk_prior: Vec<Vec<f64>> = vec![Vec::new(); queries.len()];
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for chunk in &chunks {
        let base = corpus.sentences_of(chunk, None);
        let scored: Vec<Vec<groundcite_index::SentenceHit>> = queries
            .iter()
            .map(|q| match &q.vector {
                Some(v) => corpus.sentences_of(chunk, Some(v)),
                None => Vec::new(),
            })
            .collect();
        let context_words = base
            .first()
            .map(|h| Index::words(&h.context))
            .unwrap_or_default();
        let blocks = introduced_blocks(chunk, &base);
        let bm25 = bm25_of(&chunk.chunk_id);
        let priors: Vec<f64> = scored
            .iter()
            .map(|s| {
                let cos = s
                    .iter()
                    .filter_map(|h| h.similarity)
                    .reduce(f32::max)
                    .map_or(0.0, f64::from);
                crate::retrieve::fused_score(cos, bm25, bm25_max)
            })
            .collect();
        for (i, h) in base.iter().enumerate() {
            let Some(text) = chunk.content.get(h.start..h.end) else {
                continue;
            };
            // A sentence inside a block that a lead-in introduces is
            // offered with its lead-in, not on its own.
            let Some(block) = &blocks[i] else { continue };
            // A sentence repeated in overlapping chunks is offered once:
            // where it comes with its block, if anywhere.
            let replaces = match seen.get(text) {
                Some(&k) if pool[k].introduces.is_none() && block.range.is_some() => Some(k),
                Some(_) => continue,
                None => None,
            };
            let block_text = block.range.clone().map(|b| &chunk.content[b]);
            let mut words = Index::words(text);
            let mut claim = text.to_string();
            if let Some(b) = block_text {
                words.extend(Index::words(b));
                claim = format!("{text} {b}");
            }
            let unit_sims = scored.iter().map(|s| {
                // The unit is as close to the question as its closest
                // sentence.
                block
                    .members
                    .iter()
                    .filter_map(|&j| s.get(j).and_then(|x| x.similarity))
                    .reduce(f32::max)
            });
            let pooled = Pooled {
                chunk_id: chunk.chunk_id.clone(),
                text: text.to_string(),
                start: h.start,
                context: h.context.clone(),
                words,
                context_words: context_words.clone(),
                introduces: block.range.clone().map(|b| Introduced {
                    start: b.start,
                    text: chunk.content[b].to_string(),
                }),
                claim,
            };
            let at = match replaces {
                Some(k) => {
                    for (qi, sim) in unit_sims.enumerate() {
                        sims[qi][k] = sim;
                        chunk_prior[qi][k] = priors[qi];
                    }
                    pool[k] = pooled;
                    k
                }
                None => {
                    for (qi, sim) in unit_sims.enumerate() {
                        sims[qi].push(sim);
                        chunk_prior[qi].push(priors[qi]);
                    }
                    pool.push(pooled);
                    pool.len() - 1
                }
            };
            for &j in &block.members {
                if let Some(t) = chunk.content.get(base[j].start..base[j].end) {
                    seen.entry(t.to_string()).or_insert(at);
                }
            }
        }
    }
    let score = |qi: usize, q: &Query, i: usize| -> (f64, f64) {
        let p = &pool[i];
        let lex = q.lexical(&p.words, &p.context_words);
        let sem = sims[qi][i].map_or(0.0, f64::from);
        let typed = if states_kind(&p.claim, &q.kinds) {
            1.0
        } else {
            0.0
        };
        (
            w.semantic * sem
                + w.lexical * lex
                + w.chunk * chunk_prior[qi][i]
                + w.answer_type * typed,
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
    let mut identifiers = Identifiers::of(question, |id| {
        pool.iter().filter(|p| names(&p.claim, id)).count()
    });
    identifiers.keyed = identifiers
        .selective
        .iter()
        .find(|id| pool.iter().any(|p| keyed_by(&p.text, id)))
        .cloned();
    identifiers.find_unknown(pool.iter().map(|p| p.claim.as_str()));
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
    other_codes_last(&mut picked, |i| pool[i].claim.as_str(), &identifiers.all);
    let best_similarity = sims[0].iter().flatten().copied().reduce(f32::max);
    let best_lexical = (0..pool.len())
        .map(|i| score(0, &whole, i).1)
        .fold(0.0, f64::max);
    // Only candidates that can be offered to the model are read by the gate.
    let evidence = picked
        .iter()
        .take(crate::settings::MAX_CANDIDATES)
        .map(|&i| (sims[0][i], states_kind(&pool[i].claim, &whole.kinds)))
        .collect();
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
                introduces: p.introduces.clone(),
            }
        })
        .collect();
    Ok(Ranking {
        parts: parts.len().max(1),
        identifiers,
        order,
        best_similarity,
        best_lexical,
        evidence,
    })
}

/// The answer quotes at most this many sentences chosen by the ranker.
pub(crate) const MAX_REQUIRED: usize = 3;
/// A candidate after the first is required while its score is at least
/// this share of the first one's (tuned on the dev suites: docs/local.md).
pub(crate) const REQUIRED_RATIO: f32 = 0.85;

/// Marks the candidates the answer must quote: the best sentence of each
/// part of the question, then those scoring close to the best, at most
/// [`MAX_REQUIRED`], a prefix of the ranked list. The small model's own
/// choice among candidates was measured as no better than chance, and it
/// ends its answer after one claim whatever it is asked (docs/local.md):
/// what it decides is whether the question is answerable.
pub(crate) fn require_answering(candidates: &mut [Candidate], parts: usize) {
    let top = candidates.first().map_or(0.0, |c| c.score);
    for (i, c) in candidates.iter_mut().enumerate().take(MAX_REQUIRED) {
        if i == 0 || i < parts || (top > 0.0 && c.score >= REQUIRED_RATIO * top) {
            c.required = true;
        } else {
            break;
        }
    }
}

/// The identifiers a question names ([`identifiers`]), and those of them
/// that few pooled sentences name.
#[derive(Debug, Default)]
pub(crate) struct Identifiers {
    all: Vec<String>,
    /// Named by 1 to [`MAX_NAMING`] pooled sentences: one that many name is
    /// the corpus's own vocabulary ("sqlite3" in SQLite's manual), not what
    /// the question singles out.
    selective: Vec<String>,
    /// A selective identifier that keys a ranked table row ([`keyed_by`]):
    /// the documents define it.
    keyed: Option<String>,
    /// A code of the question ([`code_prefix`]) that no pooled sentence
    /// names while they name at least [`MIN_FAMILY`] others of its family,
    /// when no code of the question is named at all; retrieval confirms it
    /// against the whole corpus before the gate reads it.
    pub(crate) unknown: Option<UnknownCode>,
}

impl Identifiers {
    fn of(question: &str, naming: impl Fn(&str) -> usize) -> Identifiers {
        let all = identifiers(question);
        let selective = all
            .iter()
            .filter(|id| (1..=MAX_NAMING).contains(&naming(id)))
            .cloned()
            .collect();
        Identifiers {
            all,
            selective,
            keyed: None,
            unknown: None,
        }
    }

    /// Sets [`Identifiers::unknown`] from the pooled sentences' texts.
    fn find_unknown<'a>(&mut self, pooled: impl Iterator<Item = &'a str> + Clone) {
        let codes: Vec<&String> = self
            .all
            .iter()
            .filter(|id| code_prefix(id).is_some())
            .collect();
        let named = |id: &str| pooled.clone().any(|t| names(t, id));
        if codes.iter().any(|id| named(id)) {
            return;
        }
        self.unknown = codes.into_iter().find_map(|id| {
            let prefix = code_prefix(id)?;
            let mut family: Vec<String> = pooled
                .clone()
                .flat_map(|t| family_codes(t, prefix))
                .filter(|c| !c.eq_ignore_ascii_case(id))
                .collect();
            family.sort();
            family.dedup();
            (family.len() >= MIN_FAMILY).then(|| {
                family.truncate(5);
                UnknownCode {
                    code: id.clone(),
                    family,
                }
            })
        });
    }
}

impl Identifiers {
    /// An identifier of the question that a ranked table row is keyed by.
    pub(crate) fn keyed(&self) -> Option<&str> {
        self.keyed.as_deref()
    }
}

/// Whether the candidate's sentence or the block it introduces names one
/// of `ids`.
fn names_any(c: &Candidate, ids: &[String]) -> bool {
    ids.iter()
        .any(|id| names(&c.text, id) || c.introduces.as_ref().is_some_and(|b| names(&b.text, id)))
}

/// Whether `text` is a table row keyed by `identifier`: its first cell is
/// the identifier (code marks and emphasis aside), as an error-code,
/// parameter or event table defines its entries.
pub(crate) fn keyed_by(text: &str, identifier: &str) -> bool {
    let Some(row) = text.trim().strip_prefix('|') else {
        return false;
    };
    let Some((first, _)) = row.split_once('|') else {
        return false;
    };
    first
        .trim()
        .trim_matches(|c| matches!(c, '`' | '*' | '_'))
        .eq_ignore_ascii_case(identifier)
}

/// When the question names a code that some ranked sentence names, the
/// sentences naming another code of its family and no identifier of the
/// question go after all the others, in their order: they are about the
/// code's neighbours ("What does RM-4032 mean?" beside RM-4033's row).
fn other_codes_last<'a>(picked: &mut Vec<usize>, text: impl Fn(usize) -> &'a str, ids: &[String]) {
    let codes: Vec<&String> = ids.iter().filter(|id| code_prefix(id).is_some()).collect();
    if !codes
        .iter()
        .any(|id| picked.iter().any(|&i| names(text(i), id)))
    {
        return;
    }
    let other = |i: usize| {
        let t = text(i);
        !ids.iter().any(|id| names(t, id))
            && codes.iter().any(|id| {
                code_prefix(id)
                    .is_some_and(|p| family_codes(t, p).any(|c| !c.eq_ignore_ascii_case(id)))
            })
    };
    let (others, rest): (Vec<usize>, Vec<usize>) = picked.iter().partition(|&&i| other(i));
    *picked = rest.into_iter().chain(others).collect();
}

/// The sentence that answers for an identifier the question names
/// ([`identifiers`]: "QP-429", "sqlite3_exec()") is required too, after
/// the others or in the last required place when [`MAX_REQUIRED`] are: a
/// user who types a code asks about it, however much the rest of the
/// question shares with other sentences. Only when no required sentence
/// names any identifier of the question: one that does answers for it, or
/// the identifier is context ("/var/mail" in a locking question,
/// "message.delivered" in a question about duplicates) and the sentence
/// holding the answer must keep its place. Then the best-ranked table row
/// keyed by a selective identifier ([`Identifiers`]: the code's row in an
/// error table, the parameter's row) is required; failing one, the
/// best-ranked sentence naming a selective identifier.
pub(crate) fn require_named(order: &mut Vec<Candidate>, ids: &Identifiers) {
    let required = order.iter().take_while(|c| c.required).count();
    if ids.selective.is_empty() || required == 0 {
        return;
    }
    // A required sentence that names an identifier of the question already
    // answers for it (or the identifier is context): nothing is moved.
    if order[..required].iter().any(|c| names_any(c, &ids.all)) {
        return;
    }
    let keyed = order
        .iter()
        .position(|c| ids.selective.iter().any(|id| keyed_by(&c.text, id)));
    let Some(i) = keyed.or_else(|| order.iter().position(|c| names_any(c, &ids.selective))) else {
        return;
    };
    let mut c = order.remove(i);
    c.required = true;
    let at = if required >= MAX_REQUIRED {
        order[required - 1].required = false;
        required - 1
    } else {
        required
    };
    order.insert(at, c);
}

/// When the answer quotes fewer than [`MAX_REQUIRED`] sentences, the
/// sentence that follows the best one in its section is required too,
/// right after them: an answer's second half is often the next sentence
/// ("Your PIN is blocked. You can unblock it in the app under …"), which
/// shares few words with the question. It is moved up from wherever the
/// ranker put it, so a later candidate may drop out of the offered ones.
/// Nothing changes when that sentence is already required, or when the
/// best one ends its section.
pub(crate) fn require_successor(order: &mut Vec<Candidate>) {
    let required = order.iter().take_while(|c| c.required).count();
    let Some(best) = order.first().filter(|_| required < MAX_REQUIRED) else {
        return;
    };
    let next = order
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.chunk_id == best.chunk_id && c.context == best.context && c.start > best.start
        })
        .min_by_key(|(_, c)| c.start)
        .map(|(i, _)| i);
    if let Some(i) = next.filter(|&i| i >= required) {
        let mut c = order.remove(i);
        c.required = true;
        order.insert(required, c);
    }
}

/// The question's analyzed words with their rarity weights.
pub(crate) fn question_weights(
    pool: &dyn Pool,
    question: &str,
) -> Result<Vec<(String, f64)>, AskError> {
    Index::words(question)
        .into_iter()
        .map(|w| {
            let idf = pool.idf(&w)?;
            Ok((w, idf))
        })
        .collect()
}

/// Sentences of a chunk no stored entry holds (an index built before the
/// sentence store, a chunk from an external retriever): split with the
/// same rule, no vectors, the title as context.
pub(crate) fn fallback_sentences(chunk: &Chunk) -> Vec<groundcite_index::SentenceHit> {
    groundcite_core::sentences::statement_spans_in(
        &chunk.content,
        groundcite_index::chunk_markup(&chunk.chunk_id),
    )
    .into_iter()
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(chunk: &str, context: &str, start: usize, score: f32) -> Candidate {
        Candidate {
            chunk_id: chunk.into(),
            text: format!("{chunk}@{start}"),
            start,
            context: context.into(),
            score,
            required: false,
            introduces: None,
        }
    }

    fn texts(order: &[Candidate]) -> Vec<(String, bool)> {
        order.iter().map(|c| (c.text.clone(), c.required)).collect()
    }

    #[test]
    fn a_lead_in_is_ranked_and_offered_with_the_block_it_introduces() {
        let chunk = |id: &str, content: &str| Chunk {
            chunk_id: id.into(),
            content: content.into(),
            source_title: Some("Printing".into()),
            source_url: None,
            page_number: None,
            score: Some(1.0),
        };
        let chunks = vec![
            // The lead-in repeated at the end of an earlier chunk, cut off
            // from its block: offered where the block follows it.
            chunk(
                "jobs.html#chunk-00",
                "Printing jobs wait in a queue.\n\nMove job 123 to another printer:",
            ),
            chunk(
                "help.md#chunk-0",
                "To see which printers are available, run:\n\n```sh\nlpstat -p -d\n```\n\n\
                 Printers can be shared over the network.",
            ),
            // Extracted HTML: a <pre> is a paragraph; the block stops at
            // the blank line, before the next paragraph.
            chunk(
                "jobs.html#chunk-0",
                "Move job 123 to another printer:\n\nlpmove 123 newprinter\n\n\
                 Jobs stay in the queue until they print.",
            ),
        ];
        let pool = crate::pool::RetrievedPool::new(chunks.clone(), None).unwrap();
        let ranked = rank_sentences(
            &pool,
            None,
            &chunks,
            &chunks,
            None,
            "which printers are available to me?",
        )
        .unwrap();
        let mut texts: Vec<String> = ranked.order.iter().map(Candidate::claim_text).collect();
        assert_eq!(
            texts[0],
            "To see which printers are available, run: lpstat -p -d"
        );
        texts.sort();
        assert_eq!(
            texts,
            [
                "Jobs stay in the queue until they print.",
                "Move job 123 to another printer: lpmove 123 newprinter",
                "Printers can be shared over the network.",
                "Printing jobs wait in a queue.",
                "To see which printers are available, run: lpstat -p -d",
            ]
        );
        // Each block is an exact span of its chunk, and no sentence of a
        // block is offered twice.
        for c in &ranked.order {
            if let Some(b) = &c.introduces {
                let content = &chunks
                    .iter()
                    .find(|k| k.chunk_id == c.chunk_id)
                    .unwrap()
                    .content;
                assert_eq!(&content[b.start..b.start + b.text.len()], b.text);
            }
        }
        assert!(!ranked.order.iter().any(|c| c.text.starts_with("lpstat")));
    }

    #[test]
    fn the_sentence_after_the_best_one_is_required_next() {
        let mut order = vec![
            cand("a", "A > PIN", 50, 1.0),
            cand("b", "B", 0, 0.7),
            cand("a", "A > PIN", 10, 0.6),
            // The next sentence of the best one's section, ranked low.
            cand("a", "A > PIN", 90, 0.3),
            cand("a", "A > PIN", 120, 0.2),
        ];
        require_answering(&mut order, 1);
        require_successor(&mut order);
        assert_eq!(
            texts(&order),
            [
                ("a@50".to_string(), true),
                ("a@90".to_string(), true),
                ("b@0".to_string(), false),
                ("a@10".to_string(), false),
                ("a@120".to_string(), false),
            ]
        );
    }

    #[test]
    fn nothing_moves_when_the_answer_is_full_or_the_section_ends() {
        // Three required already.
        let mut full = vec![
            cand("a", "A", 0, 1.0),
            cand("b", "B", 0, 0.95),
            cand("c", "C", 0, 0.9),
            cand("a", "A", 40, 0.1),
        ];
        require_answering(&mut full, 1);
        let before = texts(&full);
        require_successor(&mut full);
        assert_eq!(texts(&full), before);
        // The best sentence ends its section: the next one in the chunk
        // sits under another heading.
        let mut last = vec![cand("a", "A > One", 30, 1.0), cand("a", "A > Two", 60, 0.2)];
        require_answering(&mut last, 1);
        require_successor(&mut last);
        assert_eq!(
            texts(&last),
            [("a@30".to_string(), true), ("a@60".to_string(), false)]
        );
        // Already required: kept where it is.
        let mut kept = vec![cand("a", "A", 0, 1.0), cand("a", "A", 20, 0.9)];
        require_answering(&mut kept, 1);
        require_successor(&mut kept);
        assert_eq!(
            texts(&kept),
            [("a@0".to_string(), true), ("a@20".to_string(), true)]
        );
        let mut empty: Vec<Candidate> = Vec::new();
        require_successor(&mut empty);
        assert!(empty.is_empty());
    }

    #[test]
    fn identifiers_are_codes_and_names_not_words_or_quantities() {
        assert_eq!(
            identifiers("keep getting QP-429 when i'm moving notes, what do i do?"),
            ["QP-429"]
        );
        assert_eq!(
            identifiers("do i have to run `journal_mode=wal` again (every time)?"),
            ["journal_mode=wal"]
        );
        assert_eq!(
            identifiers("what's in /etc/network/interfaces for eth0 and ETH0?"),
            ["/etc/network/interfaces", "eth0"]
        );
        assert_eq!(
            identifiers("does POST /v3/messages take html?"),
            ["/v3/messages"]
        );
        assert_eq!(
            identifiers("is message.delivered sent twice"),
            ["message.delivered"]
        );
        // Everyday words, quantities, ordinals and abbreviations are not.
        assert!(identifiers("How long does a refund take, e.g. for a car?").is_empty());
        assert!(identifiers("selling my car for £55k on the 1st, 5x faster at 10am").is_empty());
        assert!(identifiers("").is_empty());
        // At most three.
        assert_eq!(identifiers("a1 b2 c3 d4 e5").len(), 3);
    }

    #[test]
    fn a_sentence_names_an_identifier_as_a_whole_word() {
        assert!(names("| QP-429 | Too many requests |", "qp-429"));
        assert!(names(
            "Run PRAGMA journal_mode=WAL; once.",
            "journal_mode=wal"
        ));
        assert!(!names("| QP-4290 | Unknown |", "QP-429"));
        assert!(!names("XQP-429 is not it", "QP-429"));
        assert!(!names("the journal_mode=wal_x option", "journal_mode=wal"));
        // Non-ASCII text around it is read, never cut.
        assert!(names("Code « QP-429 » means wait", "QP-429"));
        assert!(!names("é", "QP-429"));
    }

    #[test]
    fn a_row_keyed_by_an_identifier_is_its_first_cell() {
        assert!(keyed_by(
            "| RM-4221 | 422 | Recipient is suppressed |",
            "rm-4221"
        ));
        assert!(keyed_by(
            "| `Idempotency-Key` | string | No |",
            "Idempotency-Key"
        ));
        assert!(keyed_by("  | **QP-429** | Too many requests |", "QP-429"));
        assert!(!keyed_by(
            "| 422 | RM-4221 | Recipient is suppressed |",
            "RM-4221"
        ));
        assert!(!keyed_by(
            "RM-4221 is returned when every recipient is suppressed.",
            "RM-4221"
        ));
        assert!(!keyed_by("| RM-4221", "RM-4221"));
        assert!(!keyed_by("", "RM-4221"));
    }

    fn row(text: &str, required: bool) -> Candidate {
        let mut c = cand("a", "A", text.len(), 1.0);
        c.text = text.to_string();
        c.required = required;
        c
    }

    fn ids(question: &str, selective: bool) -> Identifiers {
        Identifiers::of(question, |_| if selective { 1 } else { MAX_NAMING + 1 })
    }

    fn order_of(order: &[Candidate]) -> Vec<(&str, bool)> {
        order
            .iter()
            .map(|c| (c.text.as_str(), c.required))
            .collect()
    }

    #[test]
    fn codes_are_letters_a_hyphen_and_digits() {
        assert_eq!(code_prefix("QP-611"), Some("QP"));
        assert_eq!(code_prefix("rm-4221"), Some("rm"));
        for not in [
            "SHA-1",
            "Q-611",
            "QP611",
            "QP-61a",
            "TOOLONGPREFIX-12",
            "QP-123456789",
            "journal_mode=wal",
            "-12",
            "QP-",
        ] {
            assert_eq!(code_prefix(not), None, "{not}");
        }
        let row = "| QP-409 | Sync conflict | See QP-4090, qp-610 or (QP-720). xQP-999 |";
        assert_eq!(
            family_codes(row, "qp").collect::<Vec<_>>(),
            ["QP-409", "QP-4090", "QP-610", "QP-720"]
        );
        assert_eq!(
            family_codes("é QP-12 ü", "QP").collect::<Vec<_>>(),
            ["QP-12"]
        );
        assert_eq!(family_codes("QP-", "QP").count(), 0);
    }

    #[test]
    fn a_code_no_ranked_sentence_names_beside_its_family_is_unknown() {
        let pool = [
            "| QP-409 | Sync conflict | Look for the copy. |",
            "| QP-610 | Device limit reached | Sign out another device. |",
            "Sync runs every few minutes.",
        ];
        let find = |q: &str, pool: &[&str]| {
            let mut ids = Identifiers::of(q, |_| 1);
            ids.find_unknown(pool.iter().copied());
            ids.unknown
        };
        assert_eq!(
            find("my ipad says qp-611 when i sign in", &pool),
            Some(UnknownCode {
                code: "qp-611".into(),
                family: vec!["QP-409".into(), "QP-610".into()],
            })
        );
        // A code the sentences name is known, and then so is the question.
        assert_eq!(find("QP-611 and QP-610 both show", &pool), None);
        assert_eq!(find("what does QP-409 mean", &pool), None);
        // One code of the family is not a listed family; no code, no reading.
        assert_eq!(find("what is QP-611", &pool[1..]), None);
        assert_eq!(find("what is a device limit", &pool), None);
        assert_eq!(find("is SHA-512 used", &pool), None);
    }

    #[test]
    fn sentences_about_other_codes_of_the_family_go_last() {
        let texts = [
            "| QP-409 | Sync conflict | Look for the copy. |",
            "Sync runs every few minutes.",
            "| QP-429 | Too many requests | Wait 60 seconds. |",
            "QP-409 and QP-429 are both shown at the top.",
            "| QP-610 | Device limit reached | Sign out another device. |",
        ];
        let order = |q: &str, texts: &[&'static str]| {
            let mut picked: Vec<usize> = (0..texts.len()).collect();
            other_codes_last(&mut picked, |i| texts[i], &identifiers(q));
            picked
        };
        // QP-409's and QP-610's rows go last, in their order; a sentence
        // that names the question's code too keeps its place.
        assert_eq!(order("what does QP-429 mean", &texts), [1, 2, 3, 0, 4]);
        // No ranked sentence names the code (it may be unknown): no move.
        assert_eq!(order("what does QP-430 mean", &texts), [0, 1, 2, 3, 4]);
        // Identifiers that are not codes, or no identifier: no move.
        assert_eq!(order("is fts5 faster", &texts), [0, 1, 2, 3, 4]);
        assert_eq!(order("how often does sync run", &texts), [0, 1, 2, 3, 4]);
        // Another family's codes are not the question's neighbours.
        let mixed = ["| AB-12 | Other |", "| QP-429 | Too many requests |"];
        assert_eq!(order("QP-429 again", &mixed), [0, 1]);
    }

    #[test]
    fn the_row_defining_a_typed_code_is_required() {
        let q = "keep getting QP-429 when moving notes, what do i do";
        // Three required sentences that share words with the question: the
        // code's row takes the third place.
        let mut order = vec![
            row("Moving notes between notebooks keeps their tags.", true),
            row("Notes stay available offline while moving.", true),
            row("| QP-409 | Sync conflict | Look for the copy. |", true),
            row("Other text about notes.", false),
            row("| QP-429 | Too many requests | Wait 60 seconds. |", false),
        ];
        require_named(&mut order, &ids(q, true));
        assert_eq!(
            order_of(&order),
            [
                ("Moving notes between notebooks keeps their tags.", true),
                ("Notes stay available offline while moving.", true),
                ("| QP-429 | Too many requests | Wait 60 seconds. |", true),
                ("| QP-409 | Sync conflict | Look for the copy. |", false),
                ("Other text about notes.", false),
            ]
        );
        // Fewer required: it comes after them.
        let mut short = vec![
            row("Moving notes keeps their tags.", true),
            row("| QP-429 | Too many requests | Wait 60 seconds. |", false),
        ];
        require_named(&mut short, &ids(q, true));
        assert_eq!(
            order_of(&short),
            [
                ("Moving notes keeps their tags.", true),
                ("| QP-429 | Too many requests | Wait 60 seconds. |", true),
            ]
        );
        // A required sentence names the code already: the row keyed by it
        // takes no place from the sentences that answer.
        let e = "got the exact same message.delivered event twice, why?";
        let mut context = vec![
            row("A message.delivered event can arrive more than once.", true),
            row("Deduplicate events by their id.", true),
            row(
                "| `message.delivered` | The recipient's server accepted it. |",
                false,
            ),
        ];
        require_named(&mut context, &ids(e, true));
        assert_eq!(
            order_of(&context),
            [
                ("A message.delivered event can arrive more than once.", true),
                ("Deduplicate events by their id.", true),
                (
                    "| `message.delivered` | The recipient's server accepted it. |",
                    false
                ),
            ]
        );
        // Already required, or the identifier is the corpus's vocabulary:
        // nothing moves.
        let before = order_of(&order)
            .iter()
            .map(|(t, r)| (t.to_string(), *r))
            .collect::<Vec<_>>();
        require_named(&mut order, &ids(q, true));
        let mut common = vec![
            row("Moving notes keeps tags.", true),
            row("| QP-429 | Too many requests | Wait 60 seconds. |", false),
        ];
        require_named(&mut common, &ids(q, false));
        assert_eq!(
            order_of(&common)[1],
            ("| QP-429 | Too many requests | Wait 60 seconds. |", false)
        );
        assert_eq!(
            order_of(&order)
                .iter()
                .map(|(t, r)| (t.to_string(), *r))
                .collect::<Vec<_>>(),
            before
        );
    }

    #[test]
    fn a_sentence_naming_the_identifier_is_required_when_none_is() {
        let q = "these won't work through sqlite3_exec in my app?";
        let mut order = vec![
            row("In the CLI you can end a command with GO.", true),
            row("The CLI reads one command per line.", false),
            row(
                "These won't work in sqlite3_exec(), because the CLI translates them.",
                false,
            ),
        ];
        require_named(&mut order, &ids(q, true));
        assert_eq!(
            order_of(&order)[1],
            (
                "These won't work in sqlite3_exec(), because the CLI translates them.",
                true
            )
        );
        // A required sentence names an identifier of the question already:
        // the answer is about what the user typed.
        let mut named = vec![
            row("sqlite3_exec runs several statements.", true),
            row("These won't work in sqlite3_exec() either.", false),
        ];
        require_named(&mut named, &ids(q, true));
        assert!(!named[1].required);
    }

    proptest::proptest! {
        /// Whatever a user types: no panic, each identifier is a piece of
        /// the question, and a text names every identifier it holds.
        #[test]
        fn identifiers_are_pieces_of_any_question(
            q in "[a-zA-Z0-9_=./:|`*é€ -]{0,80}",
            t in ".{0,40}",
        ) {
            let ids = identifiers(&q);
            proptest::prop_assert!(ids.len() <= 3);
            for id in &ids {
                proptest::prop_assert!(q.contains(id.as_str()));
                let around = format!("see {id} here");
                proptest::prop_assert!(names(&around, id));
                let _ = names(&t, id);
                let _ = keyed_by(&t, id);
            }
        }
    }
}
