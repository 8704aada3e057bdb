//! The prompt: sources under unforgeable `[chunk_id: …]` headers, and the
//! seed's attribution and no-answer rules.

use crate::model::ChunkSet;

/// The system prompt carrying the seed's rules, plus "exactly one chunk_id
/// per citation object" (models otherwise merge IDs into one string).
pub const SYSTEM_PROMPT: &str = "You are an accurate enterprise assistant.
Answer the user's question using ONLY the provided sources.
For every factual claim you make, include one or more citations specifying:
- chunk_id: the exact chunk ID from which the claim is derived, copied from a [chunk_id: ...] header.
- quote: an exact, verbatim text snippet from that chunk supporting the claim.
Rules:
1. Do not use any external knowledge.
2. If the provided sources do not contain enough information to answer the question, set answerable to false and leave claims as an empty list.
3. Every claim must have at least one citation.
4. Quote exact text; do not paraphrase or summarize inside quotes.
5. Each citation object holds exactly one chunk_id; never join several IDs in one string. To cite two chunks, write two citation objects.";

/// Formats the chunks, in order, each under a `[chunk_id: ID]` header line.
///
/// Chunk IDs are validated by [`ChunkSet`] (no control characters), so a
/// header always ends at its line's end. Text inside a chunk that looks like
/// a header is neutralized (see [`neutralize_headers`]) so that a document
/// cannot forge a boundary and pass its text off as another chunk.
pub fn format_sources(chunks: &ChunkSet) -> String {
    let mut out = String::new();
    for (i, c) in chunks.chunks().iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push_str("[chunk_id: ");
        out.push_str(&c.chunk_id);
        out.push_str("]\n");
        out.push_str(&neutralize_headers(&c.content));
    }
    out
}

/// The user message: sources, then the question.
pub fn user_prompt(chunks: &ChunkSet, question: &str) -> String {
    format!(
        "Sources:\n{}\n\nQuestion: {}",
        format_sources(chunks),
        neutralize_headers(question)
    )
}

/// Rewrites every `[chunk_id` (any case, any white space or invisible
/// characters between the bracket and the word, ASCII or full-width bracket)
/// to `(chunk_id`, so no header can be forged from inside a text. Text that
/// contains no such pattern is returned unchanged.
///
/// A quote copied across a neutralized header will not verify against the
/// original chunk; that is intended.
pub fn neutralize_headers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(['[', '［']) {
        let bracket = rest[pos..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..pos]);
        let after = &rest[pos + bracket..];
        let trimmed = after.trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, '\u{200B}'..='\u{200D}' | '\u{FEFF}' | '\u{00AD}')
        });
        let word: String = trimmed.chars().take(8).collect();
        let looks_like_header = word.len() == 8 && {
            let w = word.to_ascii_lowercase();
            w == "chunk_id" || w == "chunk id" || w == "chunk-id"
        };
        if looks_like_header {
            out.push('(');
        } else {
            out.push_str(&rest[pos..pos + bracket]);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}
