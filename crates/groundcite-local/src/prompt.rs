//! The local model's prompt: the seed's rules, one worked example (a
//! 135M-parameter model copies shapes, not instructions), and the sources
//! capped to what such a model can use.

use groundcite_core::{Chunk, ChunkSet, prompt};

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
