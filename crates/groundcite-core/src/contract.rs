//! Renderer contract v1: the one JSON document a user interface receives.
//!
//! Every field is always present (except the additive, optional
//! `citations[].location`, omitted when unknown); missing metadata is `null`, never a
//! default. The published JSON Schema is `schemas/contract-v1.schema.json`
//! in the repository, and every payload the tests emit is validated against it.

use serde::{Deserialize, Serialize};

use crate::normalize::{MatchKind, MatchProfile, Span};

/// The value of `contract_version`.
pub const CONTRACT_VERSION: &str = "1";

/// The renderer contract, version 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contract {
    /// Always `"1"`.
    pub contract_version: String,
    /// The request's trace ID (UUIDv7 unless the caller gave one).
    pub trace_id: String,
    /// The user's question, when known.
    pub question: Option<String>,
    /// Whether verified claims are being shown.
    pub answerable: bool,
    /// Verified claims joined with inline markers, or the refusal message.
    pub answer: String,
    /// Why there is no answer; `null` when answerable.
    pub refusal: Option<Refusal>,
    /// The verified claims, each with its verified citations.
    pub claims: Vec<ContractClaim>,
    /// Each cited chunk once, numbered by first citation.
    pub sources: Vec<Source>,
    /// Everything that was dropped or changed, and why.
    pub warnings: Vec<Warning>,
    /// The matching profile that decided the verdicts.
    pub match_profile: MatchProfile,
    /// The model that produced the raw answer, when known.
    pub model: Option<String>,
    /// When the contract was produced (RFC 3339, UTC).
    pub created_at: String,
}

/// Why a contract carries no answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refusal {
    /// Stable code.
    pub code: RefusalCode,
    /// Stable machine-readable reason matching the code.
    pub reason: String,
    /// A sentence the UI may show.
    pub message: String,
}

/// The four refusal codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RefusalCode {
    /// The model said the sources do not contain the answer.
    R1,
    /// The model answered, but no claim survived verification.
    R2,
    /// Generation failed (error, truncation, unparsable output).
    R3,
    /// The model refused to answer.
    R4,
}

impl RefusalCode {
    /// The stable reason string for this code.
    pub fn reason(self) -> &'static str {
        match self {
            RefusalCode::R1 => "no_answer_in_sources",
            RefusalCode::R2 => "citations_unverified",
            RefusalCode::R3 => "generation_failed",
            RefusalCode::R4 => "model_refused",
        }
    }

    /// The default sentence shown to users.
    pub fn message(self) -> &'static str {
        match self {
            RefusalCode::R1 => "I couldn't find the answer to that in the available documents.",
            RefusalCode::R2 => {
                "I couldn't verify an answer against the available documents, so none is shown."
            }
            RefusalCode::R3 => "An answer could not be generated right now. Please try again.",
            RefusalCode::R4 => "The model declined to answer this question.",
        }
    }

    /// The refusal object for this code.
    pub fn refusal(self) -> Refusal {
        Refusal {
            code: self,
            reason: self.reason().to_string(),
            message: self.message().to_string(),
        }
    }
}

/// A verified claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractClaim {
    /// Position of the claim in the model's answer (0-based; warnings use it too).
    pub index: usize,
    /// The claim's text.
    pub text: String,
    /// Its verified citations (never empty).
    pub citations: Vec<ContractCitation>,
    /// The quantities the claim asserts and whether a quote carries each
    /// (empty when it asserts none). Every kept claim was checked.
    pub quantities: Vec<QuantityFinding>,
}

/// One quantity a claim asserts, as found by the quantity check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantityFinding {
    /// The quantity as written in the claim.
    pub text: String,
    /// Its canonical reading ("2 week", "50 EUR", "12%", "2026-11-30").
    pub canonical: String,
    /// Whether one of the claim's verified quotes carries it.
    pub supported: bool,
}

/// A verified citation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContractCitation {
    /// Footnote number: the `ref` of the cited source.
    #[serde(rename = "ref")]
    pub reference: usize,
    /// The cited chunk.
    pub chunk_id: String,
    /// The quote as the model wrote it; `null` for a bare reference.
    pub quote: Option<String>,
    /// The chunk's exact text under `span`.
    pub source_text: Option<String>,
    /// How the quote was found.
    #[serde(rename = "match")]
    pub kind: MatchKind,
    /// Code points of the chunk's original content, end exclusive.
    pub span: Option<Span>,
    /// Where `span` is drawn on its page, for a chunk extracted from a PDF
    /// by the server's own index; absent otherwise (a chunk from another
    /// retriever, a bare reference, a format without pages). Additive to
    /// contract v1: omitted when unknown, so contracts without it are
    /// unchanged, and a renderer that does not know it can ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<QuoteLocation>,
    /// When the quote starts in a body row of a Markdown table, that
    /// table's header row from the same chunk, so a renderer can show the
    /// column names above the quoted row. Found by code in the chunk the
    /// quote was verified in, never written by a model. Additive to contract
    /// v1 like `location`: omitted when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_header: Option<TableHeader>,
}

/// The header row of the table a quoted row belongs to
/// ([`crate::sentences::table_header`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableHeader {
    /// The chunk's exact text of the header row, white space trimmed.
    pub source_text: String,
    /// Its code points in the chunk's original content, end exclusive.
    pub span: Span,
}

/// A quote's place on a PDF page, as the server's extraction drew it.
///
/// Rectangles are `[x0, y0, x1, y1]` (`x0 <= x1`, `y0 <= y1`) in PDF points
/// in the page's user space: the unrotated page (its `/Rotate` not
/// applied), origin at the bottom left, the coordinates the page's
/// `/MediaBox` is given in. One rectangle per line of text the quote spans,
/// in reading order. A PDF viewer maps them to the screen like any
/// annotation rectangle (pdf.js: `viewport.convertToViewportRectangle`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuoteLocation {
    /// 1-based page number, the same as the source's `page_number`.
    pub page_number: u32,
    /// One rectangle per line, never empty.
    pub rects: Vec<[f64; 4]>,
}

/// A cited source, listed once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Footnote number, 1-based, in order of first citation.
    #[serde(rename = "ref")]
    pub reference: usize,
    /// The chunk.
    pub chunk_id: String,
    /// Title, or `null` when unknown.
    pub source_title: Option<String>,
    /// http(s) link, or `null`: never a default link.
    pub source_url: Option<String>,
    /// Page, or `null`.
    pub page_number: Option<u32>,
    /// Retriever score, or `null`.
    pub score: Option<f64>,
}

/// Something dropped or changed during verification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    /// Stable code.
    pub code: WarningCode,
    /// The claim concerned (its `index`), if any.
    pub claim_index: Option<usize>,
    /// The citation concerned (position within the model's claim), if any.
    pub citation_index: Option<usize>,
    /// The chunk concerned, if any.
    pub chunk_id: Option<String>,
    /// What happened, as a sentence.
    pub message: String,
}

/// A warning about `claim_index` / `citation_index` / `chunk_id` (each when
/// known): the one constructor the verifier's modules share.
pub(crate) fn warning(
    code: WarningCode,
    claim_index: Option<usize>,
    citation_index: Option<usize>,
    chunk_id: Option<&str>,
    message: String,
) -> Warning {
    Warning {
        code,
        claim_index,
        citation_index,
        chunk_id: chunk_id.map(str::to_string),
        message,
    }
}

/// Stable warning codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningCode {
    /// A citation named a chunk that was not retrieved.
    UnknownChunkId,
    /// A citation named several chunk IDs joined in one string.
    MergedChunkIds,
    /// A citation's quote was empty, white space or punctuation only.
    EmptyQuote,
    /// A citation's quote is not in its chunk.
    QuoteNotFound,
    /// A citation repeated an earlier citation of the same claim.
    DuplicateCitation,
    /// A claim had no text.
    EmptyClaimText,
    /// A claim's text repeats a claim kept earlier in the same answer (the
    /// same text under the matching rule's normalization); the repeat was
    /// dropped unchecked. Not a verification failure.
    DuplicateClaim,
    /// A claim came with no citation at all.
    ClaimWithoutCitations,
    /// Every citation of a claim was dropped.
    ClaimUnsupported,
    /// The model said `answerable: false` and still sent claims.
    ClaimsOnUnanswerable,
    /// A source URL was not a plain http(s) link and was replaced by `null`.
    UnsafeSourceUrl,
    /// Prose: a numeric marker names position 0 or a position beyond the
    /// chunks shown to the model; it was ignored (positions never wrap).
    MarkerOutOfRange,
    /// Prose: the sentence quotes text that is not in the chunk its marker
    /// points to; the citation was dropped (the message names the chunks
    /// where the quote does occur, if any).
    MisattributedMarker,
    /// Prose: a named reference matches several chunks equally well (for
    /// example two chunks with the same title); none was picked.
    AmbiguousReference,
    /// Prose: a named reference, footnote or reference-section item matches
    /// no chunk ID, position or chunk title.
    UnresolvedReference,
    /// Prose: the answer's own numbered source list maps a marker to a chunk
    /// other than the one at that position; the source list was followed.
    MarkerRemapped,
    /// The answer text was empty.
    EmptyAnswer,
    /// Provider-native citation: the location (character, block or page
    /// indices) does not land on the cited text under either end-index
    /// reading; the cited text was checked against the chunk instead.
    CitationLocationMismatch,
    /// Provider-native citation: a document, search-result, block or page
    /// index names no supplied chunk; the citation was dropped.
    SourceIndexOutOfRange,
    /// Bedrock RetrieveAndGenerate: a retrieved reference matches no supplied
    /// chunk (by `x-amz-bedrock-kb-chunk-id` or exact content); dropped.
    UnmatchedReference,
    /// Bedrock RetrieveAndGenerate: a cited span lies outside the answer text
    /// or does not cover the cited part's text.
    SpanOutOfRange,
    /// Provider-native citation of a kind that cannot be checked against the
    /// supplied chunks (for example a web search result); dropped.
    UnsupportedCitation,
    /// A provider response has answer text but carries no citation at all.
    UncitedAnswer,
    /// A claim asserts a quantity (amount, duration, date, percentage, count)
    /// that none of its verified quotes carries.
    UnsupportedQuantity,
}

impl WarningCode {
    /// The code as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::UnknownChunkId => "unknown_chunk_id",
            WarningCode::MergedChunkIds => "merged_chunk_ids",
            WarningCode::EmptyQuote => "empty_quote",
            WarningCode::QuoteNotFound => "quote_not_found",
            WarningCode::DuplicateCitation => "duplicate_citation",
            WarningCode::EmptyClaimText => "empty_claim_text",
            WarningCode::DuplicateClaim => "duplicate_claim",
            WarningCode::ClaimWithoutCitations => "claim_without_citations",
            WarningCode::ClaimUnsupported => "claim_unsupported",
            WarningCode::ClaimsOnUnanswerable => "claims_on_unanswerable",
            WarningCode::UnsafeSourceUrl => "unsafe_source_url",
            WarningCode::MarkerOutOfRange => "marker_out_of_range",
            WarningCode::MisattributedMarker => "misattributed_marker",
            WarningCode::AmbiguousReference => "ambiguous_reference",
            WarningCode::UnresolvedReference => "unresolved_reference",
            WarningCode::MarkerRemapped => "marker_remapped",
            WarningCode::EmptyAnswer => "empty_answer",
            WarningCode::CitationLocationMismatch => "citation_location_mismatch",
            WarningCode::SourceIndexOutOfRange => "source_index_out_of_range",
            WarningCode::UnmatchedReference => "unmatched_reference",
            WarningCode::SpanOutOfRange => "span_out_of_range",
            WarningCode::UnsupportedCitation => "unsupported_citation",
            WarningCode::UncitedAnswer => "uncited_answer",
            WarningCode::UnsupportedQuantity => "unsupported_quantity",
        }
    }

    /// Whether this warning means a citation or claim failed verification
    /// (the numerator of `CitationVerificationFailureRate`).
    pub fn is_verification_failure(self) -> bool {
        matches!(
            self,
            WarningCode::ClaimUnsupported
                | WarningCode::ClaimWithoutCitations
                | WarningCode::UnsupportedQuantity
        )
    }
}

/// Facts about a request that the pure core does not invent: the caller
/// supplies the trace ID and the clock reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// Trace ID to stamp on the contract.
    pub trace_id: String,
    /// RFC 3339 UTC time.
    pub created_at: String,
    /// The question, if known.
    pub question: Option<String>,
    /// The model, if known.
    pub model: Option<String>,
}

impl Contract {
    /// A contract that carries only a refusal (used for R3/R4, where there is
    /// no answer to verify).
    pub fn refused(
        code: RefusalCode,
        provenance: Provenance,
        profile: MatchProfile,
        warnings: Vec<Warning>,
    ) -> Contract {
        let refusal = code.refusal();
        Contract {
            contract_version: CONTRACT_VERSION.to_string(),
            trace_id: provenance.trace_id,
            question: provenance.question,
            answerable: false,
            answer: refusal.message.clone(),
            refusal: Some(refusal),
            claims: Vec::new(),
            sources: Vec::new(),
            warnings,
            match_profile: profile,
            model: provenance.model,
            created_at: provenance.created_at,
        }
    }
}

/// Whether `url` may be shown as a link: plain http(s) with a host, no
/// credentials, no white space or control characters. Anything else is
/// `null` in the contract, because the renderer must never invent or
/// sanitize a link.
pub fn safe_source_url(url: &str) -> Result<(), &'static str> {
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("contains white space or control characters");
    }
    let lower = url.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("https://") {
        r
    } else if let Some(r) = lower.strip_prefix("http://") {
        r
    } else {
        return Err("is not an http(s) URL");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.is_empty() {
        return Err("has no host");
    }
    if authority.contains('@') {
        return Err("carries credentials");
    }
    Ok(())
}

/// Longest trace ID accepted from a caller.
pub const MAX_TRACE_ID_LEN: usize = 128;

/// Why a trace ID was refused by [`validate_trace_id`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceIdError {
    /// Empty, or longer than [`MAX_TRACE_ID_LEN`].
    #[error("trace ID must be 1 to {MAX_TRACE_ID_LEN} characters long")]
    Length,
    /// A character outside ASCII letters, digits and `. _ : -`.
    #[error(
        "trace ID {id:?} contains {found:?}; only ASCII letters, digits and . _ : - are allowed"
    )]
    Character {
        /// The refused ID.
        id: String,
        /// Its first character that is not allowed.
        found: char,
    },
}

/// Checks a caller-supplied trace ID: 1–128 characters of ASCII letters,
/// digits and `. _ : -`, so it is safe in logs, URLs and file names. The
/// one rule: the trace store checks with it too.
pub fn validate_trace_id(id: &str) -> Result<(), TraceIdError> {
    if id.is_empty() || id.len() > MAX_TRACE_ID_LEN {
        return Err(TraceIdError::Length);
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')))
    {
        return Err(TraceIdError::Character {
            id: id.to_string(),
            found: c,
        });
    }
    Ok(())
}
