//! The local model's prompt: the seed's rules, one worked example (a
//! 135M-parameter model copies shapes, not instructions), and the sources
//! capped to what such a model can use.

use groundcite_core::{Candidate, Chunk, ChunkSet, prompt};

/// How much of the retrieved context the local model is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCaps {
    /// Most chunks shown (the first ones, in retrieval order).
    pub max_chunks: usize,
    /// Most characters of each chunk shown (cut at a white-space boundary).
    pub max_chunk_chars: usize,
}

impl Default for PromptCaps {
    fn default() -> Self {
        PromptCaps {
            max_chunks: 3,
            max_chunk_chars: 900,
        }
    }
}

/// The system prompt: the rules and one example in the exact layout the
/// grammar enforces.
pub const LOCAL_SYSTEM_PROMPT: &str = r#"You answer questions using ONLY the sources. Reply with JSON only.
For each fact, copy the sentence that states it word for word from a source as the quote, then give its chunk_id, then the claim text, also copied from that source.
If the sources do not answer the question, reply {"answerable": false, "claims": []}.

Example.
Sources:
[chunk_id: example.md#chunk-0]
# Gift cards
Gift cards never expire. A lost gift card can be replaced if you still have the receipt.

Question: Do gift cards expire?
Answer:
{"answerable": true, "claims": [{"citations": [{"quote": "Gift cards never expire.", "chunk_id": "example.md#chunk-0"}], "text": "Gift cards never expire."}]}"#;

/// The system prompt of extractive answers over candidate sentences: the
/// rules and one example in the exact layout [`crate::grammar::candidate_grammar`]
/// enforces (the claim's text is filled in from its quote).
pub const LOCAL_EXTRACTIVE_PROMPT: &str = r#"You answer questions using ONLY the sources. Reply with JSON only.
Copy, word for word, each source sentence that answers the question as a quote, with its chunk_id: one claim for each thing the question asks. Quote only sentences that answer the question.
If no sentence answers the question, reply {"answerable": false, "claims": []}.

Example.
Sources:
[chunk_id: example.md#chunk-0] Gift cards
Gift cards never expire.
A lost gift card can be replaced if you still have the receipt.
Gift cards are sold in amounts from $10 to $500.

Question: Do gift cards expire, and can I replace one I lost?
Answer:
{"answerable": true, "claims": [{"citations": [{"quote": "Gift cards never expire.", "chunk_id": "example.md#chunk-0"}]}, {"citations": [{"quote": "A lost gift card can be replaced if you still have the receipt.", "chunk_id": "example.md#chunk-0"}]}]}"#;

/// The user message of an extractive answer: the candidate sentences,
/// best first, one per line, each under its chunk's `[chunk_id: …]` header
/// and context (title and headings; a header is not repeated for the next
/// sentence of the same chunk), then the question.
pub fn candidate_message(candidates: &[Candidate], question: &str) -> String {
    let mut out = String::from("Sources:\n");
    let mut current: Option<&str> = None;
    for c in candidates {
        if current != Some(c.chunk_id.as_str()) {
            out.push_str(&format!("[chunk_id: {}]", c.chunk_id));
            if !c.context.is_empty() {
                out.push(' ');
                out.push_str(&one_line(&c.context));
            }
            out.push('\n');
            current = Some(&c.chunk_id);
        }
        out.push_str(&c.claim_text());
        out.push('\n');
    }
    out.push_str(&format!("\nQuestion: {}\nAnswer:", one_line(question)));
    out
}

/// The chunks that hold the candidates, in the candidates' order (what the
/// trace records as shown to the model).
pub fn chunks_of(chunks: &ChunkSet, candidates: &[Candidate]) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    for c in candidates {
        if out.iter().any(|k| k.chunk_id == c.chunk_id) {
            continue;
        }
        if let Some(k) = chunks.chunks().iter().find(|k| k.chunk_id == c.chunk_id) {
            out.push(k.clone());
        }
    }
    out
}

/// `text` on one line: runs of white space become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The chunks the model is shown: at most `max_chunks`, each cut to
/// `max_chunk_chars` at a white-space boundary. A quote of a cut chunk is a
/// quote of the full chunk, so verification runs against the full chunks.
pub fn capped_chunks(chunks: &ChunkSet, caps: &PromptCaps) -> Vec<Chunk> {
    chunks
        .chunks()
        .iter()
        .take(caps.max_chunks)
        .map(|c| {
            let mut c = c.clone();
            c.content = cut(&c.content, caps.max_chunk_chars).to_string();
            c
        })
        .collect()
}

/// The user message for the capped chunks.
pub fn user_message(shown: &[Chunk], question: &str) -> String {
    // ChunkSet validation already passed for the full set; the capped set
    // has the same IDs, so this cannot fail, but fall back to no sources.
    match ChunkSet::new(shown.to_vec()) {
        Ok(set) => format!("{}\nAnswer:", prompt::user_prompt(&set, question)),
        Err(_) => format!("Sources:\n\nQuestion: {question}\nAnswer:"),
    }
}

/// At most `max` characters of `text`, ending at white space when the text
/// is longer (never inside a character).
fn cut(text: &str, max: usize) -> &str {
    let Some((end, _)) = text.char_indices().nth(max) else {
        return text;
    };
    let head = &text[..end];
    match head.rfind(char::is_whitespace) {
        Some(ws) if ws > 0 => head[..ws].trim_end(),
        _ => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_words_and_characters() {
        assert_eq!(cut("abc def ghi", 100), "abc def ghi");
        assert_eq!(cut("abc def ghi", 9), "abc def");
        assert_eq!(cut("日本語テキスト", 3), "日本語");
        assert_eq!(cut("abcdef", 3), "abc");
    }
}
