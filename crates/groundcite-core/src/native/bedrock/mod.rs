//! Amazon Bedrock: RetrieveAndGenerate (Knowledge Bases) and Converse.
//!
//! # RetrieveAndGenerate
//! `output.text` is the answer; each `citations[]` entry pairs a
//! `generatedResponsePart.textResponsePart {text, span {start, end}}` with
//! `retrievedReferences[] {content.text, location, metadata}`. Each part
//! with at least one reference is a claim (its `text`). References map to
//! chunks by the `x-amz-bedrock-kb-chunk-id` metadata when present, else by
//! exact equality of `content.text` with a chunk's content (surrounding white
//! space ignored). The reference's `content.text` is then the quote checked
//! against the chunk with the matching rule, so a chunk re-indexed since
//! retrieval fails loudly. References that match no supplied chunk are
//! [`WarningCode::UnmatchedReference`](crate::WarningCode::UnmatchedReference).
//! The `span` is checked against the answer (end exclusive, or inclusive): a
//! span outside the answer, or not covering the part's text, is
//! [`WarningCode::SpanOutOfRange`](crate::WarningCode::SpanOutOfRange); the
//! claim is kept only if its text occurs in the answer. `guardrailAction:
//! "INTERVENED"` is refused as R4.
//!
//! # Converse
//! `output.message.content[]` holds `text` blocks and `citationsContent`
//! blocks (`content[{text}]`, `citations[{title, sourceContent[{text}],
//! location}]`). Each `citationsContent` block is a claim; `sourceContent`
//! joined is the cited text, and `location` is one of `documentChar`
//! (characters), `documentChunk` (content blocks), `documentPage` (pages),
//! `searchResultLocation` (search-result blocks), checked exactly as for
//! Anthropic (both end-index readings). `web` locations are unsupported.
//! `stopReason` `guardrail_intervened` or `content_filtered` is refused as R4.

// One module per converter; neither imports the other.
mod converse;
mod rag;

pub use converse::convert_converse;
pub use rag::{KB_CHUNK_ID, convert_retrieve_and_generate};
