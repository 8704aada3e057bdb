//! What sentence ranking reads of a corpus, behind one trait: groundcite's
//! own index (stored term statistics and sentence vectors), or the chunks
//! an external search service returned for this one question (statistics
//! over those chunks, sentences embedded on the fly).

use std::collections::{BTreeMap, BTreeSet};

use groundcite_core::Chunk;
use groundcite_index::{Embed, Index, SentenceHit, embed_text};

use crate::error::AskError;
use crate::rank::fallback_sentences;

/// A corpus as sentence ranking sees it.
pub(crate) trait Pool {
    /// The rarity weight (IDF) of an analyzed word.
    fn idf(&self, word: &str) -> Result<f64, AskError>;
    /// The sentences most similar to `query`, over everything the pool
    /// holds (empty without vectors).
    fn similar_sentences(&self, query: &[f32], limit: usize) -> Vec<SentenceHit>;
    /// `chunk`'s statement sentences, scored against `query` when given.
    fn sentences_of(&self, chunk: &Chunk, query: Option<&[f32]>) -> Vec<SentenceHit>;
    /// A chunk of the pool by ID.
    fn chunk(&self, chunk_id: &str) -> Result<Option<Chunk>, AskError>;
}

impl Pool for Index {
    fn idf(&self, word: &str) -> Result<f64, AskError> {
        Index::idf(self, word).map_err(AskError::Index)
    }

    fn similar_sentences(&self, query: &[f32], limit: usize) -> Vec<SentenceHit> {
        self.sentence_search(query, limit)
    }

    fn sentences_of(&self, chunk: &Chunk, query: Option<&[f32]>) -> Vec<SentenceHit> {
        let stored = Index::sentences_of(self, &chunk.chunk_id, query);
        if stored.is_empty() {
            // An index built before the sentence store: the same rule, no
            // vectors.
            fallback_sentences(chunk)
        } else {
            stored
        }
    }

    fn chunk(&self, chunk_id: &str) -> Result<Option<Chunk>, AskError> {
        self.get(chunk_id).map_err(AskError::Index)
    }
}

/// The chunks an external retriever returned for one question: IDF over
/// those chunks (the service shares no corpus statistics), and each
/// statement sentence embedded with its title as context, as the index
/// embeds its own.
pub(crate) struct RetrievedPool {
    chunks: Vec<Chunk>,
    /// Per chunk: its sentences and (with a model) their unit vectors.
    sentences: Vec<Vec<(SentenceHit, Option<Vec<f32>>)>>,
    df: BTreeMap<String, usize>,
}

impl RetrievedPool {
    pub(crate) fn new(chunks: Vec<Chunk>, embed: Option<&dyn Embed>) -> Result<Self, AskError> {
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        let mut sentences = Vec::with_capacity(chunks.len());
        for chunk in &chunks {
            let mut words: BTreeSet<String> = Index::words(&chunk.content);
            if let Some(t) = &chunk.source_title {
                words.extend(Index::words(t));
            }
            for w in words {
                *df.entry(w).or_default() += 1;
            }
            let hits = fallback_sentences(chunk);
            let vectors: Vec<Option<Vec<f32>>> = match embed {
                Some(e) if !hits.is_empty() => {
                    let texts: Vec<String> = hits
                        .iter()
                        .map(|h| embed_text(&h.context, &chunk.content[h.start..h.end]))
                        .collect();
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    let vs = e
                        .embed(&refs)
                        .map_err(|e| AskError::Embedding(e.to_string()))?;
                    if vs.len() != hits.len() {
                        return Err(AskError::Embedding(
                            "the embedding model returned the wrong number of vectors".into(),
                        ));
                    }
                    vs.into_iter().map(|v| Some(unit(v))).collect()
                }
                _ => vec![None; hits.len()],
            };
            sentences.push(hits.into_iter().zip(vectors).collect());
        }
        Ok(RetrievedPool {
            chunks,
            sentences,
            df,
        })
    }

    fn scored(&self, i: usize, query: Option<&[f32]>) -> Vec<SentenceHit> {
        self.sentences[i]
            .iter()
            .map(|(h, v)| SentenceHit {
                similarity: query.zip(v.as_deref()).map(|(q, v)| cosine(q, v)),
                ..h.clone()
            })
            .collect()
    }
}

impl Pool for RetrievedPool {
    fn idf(&self, word: &str) -> Result<f64, AskError> {
        // BM25's IDF over the retrieved chunks.
        let n = self.chunks.len() as f64;
        let df = self.df.get(word).copied().unwrap_or(0) as f64;
        Ok((1.0 + (n - df + 0.5) / (df + 0.5)).ln())
    }

    fn similar_sentences(&self, query: &[f32], limit: usize) -> Vec<SentenceHit> {
        let mut all: Vec<SentenceHit> = (0..self.chunks.len())
            .flat_map(|i| self.scored(i, Some(query)))
            .filter(|h| h.similarity.is_some())
            .collect();
        all.sort_by(|a, b| {
            b.similarity
                .unwrap_or(0.0)
                .total_cmp(&a.similarity.unwrap_or(0.0))
        });
        all.truncate(limit);
        all
    }

    fn sentences_of(&self, chunk: &Chunk, query: Option<&[f32]>) -> Vec<SentenceHit> {
        match self
            .chunks
            .iter()
            .position(|c| c.chunk_id == chunk.chunk_id)
        {
            Some(i) => self.scored(i, query),
            None => fallback_sentences(chunk),
        }
    }

    fn chunk(&self, chunk_id: &str) -> Result<Option<Chunk>, AskError> {
        Ok(self.chunks.iter().find(|c| c.chunk_id == chunk_id).cloned())
    }
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

/// Cosine of two vectors, the query normalised here (stored ones are unit).
fn cosine(query: &[f32], unit_v: &[f32]) -> f32 {
    let norm = query.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm == 0.0 || query.len() != unit_v.len() {
        return 0.0;
    }
    query.iter().zip(unit_v).map(|(a, b)| a * b).sum::<f32>() / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, title: &str, content: &str) -> Chunk {
        Chunk {
            chunk_id: id.into(),
            content: content.into(),
            source_title: Some(title.into()),
            source_url: None,
            page_number: None,
            score: Some(1.0),
        }
    }

    #[test]
    fn idf_and_sentences_come_from_the_retrieved_chunks_alone() {
        let pool = RetrievedPool::new(
            vec![
                chunk(
                    "a",
                    "Refunds",
                    "Refunds take five days. Contact us for help.",
                ),
                chunk(
                    "b",
                    "Shipping",
                    "Shipping takes three days. Contact us for help.",
                ),
            ],
            None,
        )
        .expect("pool");
        let rare = pool.idf("refund").expect("idf");
        let common = pool.idf("contact").expect("idf");
        let absent = pool.idf("antarctica").expect("idf");
        assert!(absent > rare && rare > common, "{absent} {rare} {common}");
        let hits = pool.sentences_of(&pool.chunks[0].clone(), None);
        let texts: Vec<&str> = hits
            .iter()
            .map(|h| &pool.chunks[0].content[h.start..h.end])
            .collect();
        assert_eq!(texts, ["Refunds take five days.", "Contact us for help."]);
        assert!(hits.iter().all(|h| h.similarity.is_none()));
        assert!(pool.similar_sentences(&[1.0, 0.0], 5).is_empty());
        assert_eq!(
            pool.chunk("b").expect("get").map(|c| c.chunk_id),
            Some("b".into())
        );
        assert_eq!(pool.chunk("zz").expect("get"), None);
    }

    #[test]
    fn cosine_is_scale_free_and_safe_on_bad_vectors() {
        let v = unit(vec![3.0, 4.0]);
        assert!((cosine(&[6.0, 8.0], &v) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &v), 0.0);
        assert_eq!(cosine(&[1.0], &v), 0.0);
    }
}
