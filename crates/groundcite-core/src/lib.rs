//! # groundcite-core
//!
//! The pure heart of groundcite: it decides, deterministically, which claims
//! of a model's answer may reach a user. No I/O, no async, no network, no
//! clock: the caller supplies trace IDs and timestamps ([`Provenance`]).
//!
//! ## Key types
//! - [`Chunk`] and [`ChunkSet`]: the retrieved chunks of one request, with
//!   unique, header-safe IDs.
//! - [`GroundedAnswer`] ([`Claim`], [`Citation`]): what the model returns.
//! - [`find_quote`] and [`MatchProfile`]: **the** matching rule, used everywhere;
//!   spans are code points into the original chunk ([`Span`]).
//! - [`verify`] / [`Verifier`]: drop every citation whose chunk was not
//!   retrieved or whose quote is not in that chunk, drop claims left without
//!   citations, refuse (R1/R2) when nothing survives.
//! - [`Contract`]: renderer contract v1, the one JSON the UI receives.
//! - [`prompt`]: sources under unforgeable `[chunk_id: …]` headers and the
//!   system prompt.
//! - [`stream::ClaimStream`] / [`stream::StreamVerifier`]: claims extracted
//!   from a streamed JSON answer as each object closes, verified in order.
//! - [`prose::parse`] / [`prose::verify_prose`]: citations written in a
//!   free-form answer (`[1]`, `[^1]`, `[doc1]`, `(Source: title)`, a trailing
//!   "Sources" list), verified the same way; [`prose::CitationFormatError`]
//!   when none can be extracted.
//! - [`sentences`]: the one sentence rule shared by the index, the ranker of
//!   candidate quotes and the embedded model's grammar.
//! - [`Candidate`] and [`AnswerForm`]: the sentences the embedded model may
//!   quote (with the block a lead-in introduces, [`Introduced`]), and how
//!   its extractive claims take their text from their quotes.
//! - [`native`]: provider-native citations (Anthropic, Bedrock
//!   RetrieveAndGenerate and Converse) converted and verified into the contract.
//! - [`json::parse_json`] and [`json::BadInput`]: hostile JSON text to typed
//!   values, with the source, line, column and JSON path of what is wrong;
//!   the one rule of the CLI, the Python package and the batch verifier.
//!
//! ## Example
//! ```
//! use groundcite_core::{Chunk, ChunkSet, GroundedAnswer, MatchProfile, Provenance, verify};
//!
//! let chunks = ChunkSet::new(vec![Chunk {
//!     chunk_id: "refunds#1".into(),
//!     content: "Refunds are available within 30 days of purchase.".into(),
//!     source_title: Some("Refund policy".into()),
//!     source_url: None,
//!     page_number: None,
//!     score: None,
//! }])?;
//! let answer: GroundedAnswer = serde_json::from_str(r#"{
//!   "answerable": true,
//!   "claims": [{"text": "You have 30 days to ask for a refund.",
//!               "citations": [{"chunk_id": "refunds#1",
//!                              "quote": "refunds are available within 30 days"}]}]
//! }"#)?;
//! let contract = verify(&answer, &chunks, MatchProfile::Default, Provenance {
//!     trace_id: "t-1".into(),
//!     created_at: "2026-11-30T00:00:00Z".into(),
//!     question: Some("How long is the refund window?".into()),
//!     model: None,
//! });
//! assert!(contract.answerable);
//! let citation = &contract.claims[0].citations[0];
//! assert_eq!(citation.source_text.as_deref(), Some("Refunds are available within 30 days"));
//! assert_eq!(contract.answer, "You have 30 days to ask for a refund. [1]");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod contract;
mod error;
pub mod json;
mod model;
pub mod native;
mod normalize;
pub mod paths;
pub mod prompt;
pub mod prose;
pub mod quantity;
mod render;
pub mod schema;
pub mod sentences;
pub mod stream;
mod text;
mod verify;

pub use contract::{
    CONTRACT_VERSION, Contract, ContractCitation, ContractClaim, MAX_TRACE_ID_LEN, Provenance,
    QuantityFinding, QuoteLocation, Refusal, RefusalCode, Source, TableHeader, TraceIdError,
    Warning, WarningCode, safe_source_url, validate_trace_id,
};
pub use error::InputError;
pub use model::{
    AnswerForm, Candidate, Chunk, ChunkSet, Citation, Claim, GroundedAnswer, Introduced,
    MAX_CHUNK_ID_LEN, ParseAnswerFormError, extractive_text,
};
pub use normalize::{
    LazyNormalized, MatchKind, MatchProfile, NearMiss, NormalizedText, ParseMatchProfileError,
    QuoteMatch, QuoteVerdict, Span, SpanError, find_quote, find_quote_in, normalize,
};
pub use render::{render_text, source_label, terminal_safe};
pub use text::truncate_chars;
pub use verify::{
    CitationRef, ClaimOutcome, ClaimPolicy, ParseClaimPolicyError, Verifier, VerifyStats, verify,
    verify_with,
};
