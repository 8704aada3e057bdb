//! Mapping a provider's own source records (file-search results, grounding
//! chunks, cited documents) to the caller's chunks: by a chunk ID, by a
//! URL, or by text that must be in the chunk. A source that names no chunk,
//! or several, is reported, never guessed.

use crate::model::ChunkSet;
use crate::normalize::{MatchProfile, QuoteVerdict, find_quote};
use crate::text::truncate_chars;

/// The chunk whose `chunk_id` is `id`.
pub(crate) fn by_id(chunks: &ChunkSet, id: &str) -> Option<usize> {
    chunks.position(id)
}

/// The chunks whose `source_url` (or `chunk_id`) is `uri`, in order.
pub(crate) fn by_uri(chunks: &ChunkSet, uri: &str) -> Vec<usize> {
    chunks
        .chunks()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.source_url.as_deref() == Some(uri) || c.chunk_id == uri)
        .map(|(i, _)| i)
        .collect()
}

/// The one chunk among `within` (all chunks when `None`) that holds `text`:
/// its content equals `text` (surrounding white space ignored), or else
/// `text` is found in it under the matching rule. Otherwise why not, as a
/// phrase ("its text is in none of the 3 chunks").
pub(crate) fn by_text(
    chunks: &ChunkSet,
    text: &str,
    within: Option<&[usize]>,
    profile: MatchProfile,
) -> Result<usize, String> {
    let all: Vec<usize> = (0..chunks.len()).collect();
    let candidates = within.unwrap_or(&all);
    let content = |p: usize| chunks.chunks()[p].content.as_str();
    let one = |hits: Vec<usize>| -> Option<Result<usize, String>> {
        match hits.len() {
            0 => None,
            1 => Some(Ok(hits[0])),
            n => Some(Err(format!(
                "its text is in {n} chunks ({}), so none was picked",
                hits.iter()
                    .map(|&p| format!("{:?}", chunks.chunks()[p].chunk_id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    };
    if text.trim().is_empty() {
        return Err("its text is empty".into());
    }
    let equal: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&p| content(p).trim() == text.trim())
        .collect();
    if let Some(r) = one(equal) {
        return r;
    }
    let holding: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&p| {
            matches!(
                find_quote(content(p), text, profile),
                QuoteVerdict::Found(_)
            )
        })
        .collect();
    one(holding).unwrap_or_else(|| {
        Err(format!(
            "its text {:?} is in none of the {} candidate chunk(s)",
            truncate_chars(text, 80),
            candidates.len()
        ))
    })
}
