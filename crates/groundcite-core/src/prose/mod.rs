//! The tolerant prose parser: citations written *in* a free-form answer.
//!
//! Not every answer arrives as a [`GroundedAnswer`](crate::GroundedAnswer).
//! [`parse`] reads an answer's text together with the chunks **in the order
//! they were shown to the model** (1-based positions refer to that order,
//! never to storage or rerank order) and extracts claims and citations from
//! one union of marker families; [`verify_prose`] then runs them through the
//! same [`Verifier`] and matching rule as `groundcite verify` and returns
//! renderer contract v1. The full rule book, with examples, is `docs/prose.md`.
//!
//! # Marker families (one union, in one pass)
//! - **Numeric** `[1]`, `[1,3]`, `[1; 3]`, `[1][3]`, ranges `[1-3]` (also
//!   with en/em dashes), `<sup>2</sup>`, and numbers inside a named form:
//!   `(Source 2)`, `(Sources: 1, 3)`.
//! - **Footnote** `[^1]` / `[^label]`, resolved through its `[^1]: …`
//!   definition line when there is one (the definition may hold markers such
//!   as `[2]`, a chunk ID or a title); a numeric label without a usable
//!   definition is a position.
//! - **Azure "On Your Data"** `[doc1]`: position 1.
//! - **Chunk ID** `[refunds#1]`, `(refunds#1)` or `[chunk_id: refunds#1]`:
//!   an exact retrieved ID (numeric text is always a position, even when
//!   chunk IDs are numbers).
//! - **Named** `(Source: title)`, `(Sources: a; b)`, `(Ref: title)`,
//!   `[Source: title]` (strong prefixes: an unresolved title is a warning) and
//!   `(per the title)`, `(according to the title)`, `(see the title)`
//!   (weak prefixes: recognised only when the title resolves, so ordinary
//!   parentheses such as "(per year)" stay prose).
//! - **Reference section**: a trailing "Sources", "References",
//!   "Citations", "Bibliography" or "Works cited" heading (Markdown `#`,
//!   bold, plain, with or without a colon, or the one-line form
//!   `Sources: a; b`) followed by a list. Without inline markers the list
//!   cites the whole answer (one claim). With inline markers it is a legend:
//!   a numbered item `1. Refund policy` / `[1] Refund policy` defines what
//!   marker `[1]` means when its title resolves; if that differs from
//!   position 1 the legend wins and [`WarningCode::MarkerRemapped`] says so.
//!
//! # What is *not* a marker
//! Anything inside fenced code blocks or `inline code`; numbers above
//! `max(999, number of chunks)` such as `[2024]`; `[sic]`,
//! `[citation needed]`, `[a]`, `[1.5]`, task boxes `[x]`; Markdown links
//! `[text](url)` and images; escaped `\[1\]`; definition lines.
//!
//! # Claims
//! Each sentence or list item (also a heading or a table row) carrying at
//! least one marker becomes a claim, indexed 0, 1, … in answer order; the
//! markers are removed from its text. Markers right after a sentence's final
//! punctuation (`… 30 days. [1]`) belong to that sentence, unless the
//! paragraph opens with a marker (`[1] Refunds… [2] Shipping…`): then they
//! open the next one. A line holding only markers belongs to the sentence
//! before it. Sentences without markers
//! are not claims: the contract shows only cited text.
//!
//! # Resolution and warnings
//! - Position 0 and positions beyond the chunk list are rejected with
//!   [`WarningCode::MarkerOutOfRange`]; they never wrap around.
//! - Titles are compared with [`normalize_title`] and [`title_distance`]
//!   (case, punctuation, articles, a file extension, and a few typos: see
//!   [`max_title_typos`]). When two chunks are equally good matches (for
//!   example two chunks of the same document) the reference is
//!   [`WarningCode::AmbiguousReference`] and cites nothing, unless the
//!   sentence quotes text found in exactly one of the candidates.
//! - A strong named reference that matches no chunk is
//!   [`WarningCode::UnresolvedReference`].
//! - When the cited sentence contains quoted text (`"…"` or `“…”`, not in
//!   code, not merely a chunk's title), each citation is checked with the
//!   matching rule ([`find_quote`](crate::find_quote)): the quote nearest the
//!   marker that occurs in the chunk becomes the citation's quote; if none
//!   does, the citation is dropped with [`WarningCode::MisattributedMarker`],
//!   naming the chunks where the quote does occur. A citation with no quote
//!   to check is kept as `match: "reference"` with `quote`, `source_text`
//!   and `span` all `null`.
//!
//! # Loud failure
//! A non-empty answer over one or more chunks from which no citation can be
//! extracted (no marker of any family resolved to a chunk) is a
//! [`CitationFormatError`], never an empty citation list. Its message gives
//! the answer's length in characters, the number of chunks and the first 120
//! characters of the answer, plus the first rejected marker if any.

mod lines;
mod markers;
mod parser;
mod split;
mod titles;
mod types;

pub use titles::{max_title_typos, normalize_title, title_distance};
pub use types::{
    CitationFormatError, HEAD_CHARS, MAX_PLAIN_MARKER, MarkerFamily, ParsedProse, ProseCitation,
    ProseClaim,
};

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::verify::{CitationRef, ClaimPolicy, Verifier};
use parser::Parser;
use types::warning;

/// Parses `answer` against `chunks` (in the order shown to the model).
///
/// Returns [`CitationFormatError`] when the answer is not blank, there is at
/// least one chunk, and no citation resolved to a chunk. A blank answer, or
/// an answer over no chunks, parses to no claims.
pub fn parse(
    answer: &str,
    chunks: &ChunkSet,
    profile: MatchProfile,
) -> Result<ParsedProse, CitationFormatError> {
    let mut p = Parser::new(answer, chunks, profile);
    let parsed = p.run();
    if parsed.resolved == 0 && !answer.trim().is_empty() && !chunks.is_empty() {
        let rejections: Vec<&Warning> = parsed
            .claims
            .iter()
            .flat_map(|c| &c.warnings)
            .filter(|w| {
                matches!(
                    w.code,
                    WarningCode::MarkerOutOfRange
                        | WarningCode::UnresolvedReference
                        | WarningCode::AmbiguousReference
                )
            })
            .collect();
        return Err(CitationFormatError {
            answer_chars: answer.chars().count(),
            chunks: chunks.len(),
            head: answer.chars().take(HEAD_CHARS).collect(),
            rejected: rejections.len(),
            first_rejection: rejections.first().map(|w| w.message.clone()),
        });
    }
    Ok(parsed)
}

/// Parses a prose answer and verifies it: renderer contract v1, under the
/// default (strict) claim policy.
///
/// A blank answer is refused as R3 (generation failed) with an
/// [`WarningCode::EmptyAnswer`] warning; callers that treat it as bad input
/// (the CLI does) check first. Claims whose every marker was rejected are
/// dropped with [`WarningCode::ClaimUnsupported`].
pub fn verify_prose(
    answer: &str,
    chunks: &ChunkSet,
    profile: MatchProfile,
    provenance: Provenance,
) -> Result<Contract, CitationFormatError> {
    verify_prose_with(answer, chunks, profile, ClaimPolicy::Strict, provenance)
}

/// [`verify_prose`] with an explicit claim policy (see [`ClaimPolicy`]).
pub fn verify_prose_with(
    answer: &str,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Result<Contract, CitationFormatError> {
    if answer.trim().is_empty() {
        let w = warning(
            WarningCode::EmptyAnswer,
            None,
            None,
            None,
            "The answer text is empty.".into(),
        );
        return Ok(Contract::refused(
            RefusalCode::R3,
            provenance,
            profile,
            vec![w],
        ));
    }
    let parsed = parse(answer, chunks, profile)?;
    let mut v = Verifier::new(chunks, profile).with_claim_policy(policy);
    for claim in &parsed.claims {
        for w in &claim.warnings {
            v.warn(w.clone());
        }
        if claim.citations.is_empty() {
            v.warn(warning(
                WarningCode::ClaimUnsupported,
                Some(claim.index),
                None,
                None,
                format!(
                    "Claim {} was dropped: none of its {} citation(s) survived parsing.",
                    claim.index, claim.attempted
                ),
            ));
            continue;
        }
        let refs: Vec<CitationRef<'_>> = claim
            .citations
            .iter()
            .map(|c| CitationRef {
                chunk_id: &c.chunk_id,
                quote: c.quote.as_deref(),
            })
            .collect();
        v.claim_parts(claim.index, &claim.text, &refs);
    }
    Ok(v.finish(true, provenance))
}
