//! Provider-native citations, verified by the same rule as `groundcite verify`.
//!
//! Managed services return their own citation shapes. The converters here
//! turn them into renderer contract v1 through the same
//! [`Verifier`](crate::Verifier) and matching rule
//! ([`find_quote`](crate::find_quote)) as structured answers:
//!
//! - [`anthropic`]: a Messages API response whose text blocks carry
//!   `citations` (`char_location`, `page_location`, `content_block_location`,
//!   `search_result_location`), streamed or not;
//! - [`bedrock`]: Amazon Bedrock RetrieveAndGenerate (`citations[]` with
//!   `generatedResponsePart` and `retrievedReferences`) and Converse
//!   (`citationsContent` blocks with document char/chunk/page locations);
//! - [`gemini`]: a Gemini `generateContent` response grounded by retrieval
//!   (`groundingMetadata`: `groundingSupports` with segment offsets in UTF-8
//!   bytes of the output, `groundingChunks` mapped to chunks by URI or text);
//! - [`cohere`]: a Cohere Chat v2 response (`message.citations[]` with
//!   `start`/`end` in code points of the output and cited document IDs);
//! - [`openai_responses`]: an OpenAI Responses API response whose
//!   `output_text` carries `file_citation` annotations, mapped to chunks
//!   through the `file_search_call` results the request asked to include.
//!
//! The converters are pure: JSON values in, a [`Contract`]
//! out; the caller reads files. Each cited text block (or cited response
//! part) is one claim; uncited text between them is not shown, as for every
//! other answer source. The full rules are in `docs/native.md`.
//!
//! # From provider indices to chunks: [`SourceLayout`]
//! Providers cite by the position of a document (or search result) in the
//! request, and within it by character, block or page. The chunk list is the
//! order in which the sources were sent; a [`SourceLayout`] says which
//! chunks each sent source holds:
//! - [`SourceLayout::one_per_chunk`]: chunk *i* was sent as document *i*
//!   (plain text) and as search result *i* (one block). The default.
//! - [`SourceLayout::from_anthropic_request`] /
//!   [`SourceLayout::from_converse_request`]: read from the request that was
//!   sent. A plain-text document is one chunk; a custom-content document
//!   (`source.type: "content"`) or a search result with *k* text blocks is
//!   *k* consecutive chunks, block *j* being chunk *first + j*; a PDF is one
//!   chunk (its page numbers are checked against the chunk's `page_number`).
//!
//! # Checking locations
//! - Character locations (Anthropic `char_location`, Converse
//!   `documentChar`) are code points into the document. The location agrees
//!   when the chunk's text under `[start, end)` — or, for end-inclusive
//!   producers, `[start, end]` — matches the cited text under the matching
//!   rule (surrounding white space ignored).
//! - Block and page ranges are read end-exclusive (`[start, end)`, the
//!   documented convention) and, when that does not hold the cited text,
//!   end-inclusive (`[start, end]`, which some SDKs and examples emit; a
//!   range with `start == end` can only be inclusive). The cited text must
//!   lie within the blocks' texts; each block it touches becomes a citation
//!   of that block's chunk, quoting the part of the cited text inside it.
//! - When no reading agrees,
//!   [`WarningCode::CitationLocationMismatch`](crate::WarningCode::CitationLocationMismatch)
//!   is raised and the cited text is still checked against the chunk with the
//!   matching rule: if it is there, the citation is kept with the matching
//!   rule's span (the warning stays); if not, the verifier drops it
//!   (`quote_not_found`).
//! - An index naming no supplied chunk is
//!   [`WarningCode::SourceIndexOutOfRange`](crate::WarningCode::SourceIndexOutOfRange);
//!   web-search citations are
//!   [`WarningCode::UnsupportedCitation`](crate::WarningCode::UnsupportedCitation);
//!   both drop the citation.

use serde_json::Value;

use crate::contract::{Contract, Provenance};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::MatchProfile;
use crate::verify::ClaimPolicy;

// Layered, each importing only those listed before it: json, warnings,
// layout, builder, output_span (claims from output offsets), chunk_match
// (provider source records to chunks) — the shared pieces — then one module
// per provider (anthropic; bedrock with its RetrieveAndGenerate and
// Converse converters; gemini; cohere; openai_responses); this module dispatches to them and none of
// them imports it.
mod builder;
mod chunk_match;
mod json;
mod layout;
mod output_span;
mod warnings;

pub mod anthropic;
pub mod bedrock;
pub mod cohere;
pub mod gemini;
pub mod openai_responses;

pub use layout::{SentSource, SourceKind, SourceLayout, UnitKind};

/// Which provider-native response shape a conversion reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NativeFormat {
    /// An Anthropic Messages response with citations.
    Anthropic,
    /// An Amazon Bedrock Knowledge Bases RetrieveAndGenerate response.
    BedrockRag,
    /// An Amazon Bedrock Converse response with `citationsContent` blocks.
    BedrockConverse,
    /// A Google Gemini `generateContent` response with `groundingMetadata`.
    Gemini,
    /// A Cohere Chat API v2 response with `message.citations`.
    Cohere,
    /// An OpenAI Responses API response with `file_citation` annotations
    /// and `file_search_call` results.
    OpenaiResponses,
}

impl NativeFormat {
    /// The name as written in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            NativeFormat::Anthropic => "anthropic",
            NativeFormat::BedrockRag => "bedrock-rag",
            NativeFormat::BedrockConverse => "bedrock-converse",
            NativeFormat::Gemini => "gemini",
            NativeFormat::Cohere => "cohere",
            NativeFormat::OpenaiResponses => "openai-responses",
        }
    }

    /// Whether `--request` (the request sent) lays out the sources: only
    /// formats that cite by the position of a sent document do.
    pub fn takes_request(self) -> bool {
        matches!(
            self,
            NativeFormat::Anthropic | NativeFormat::BedrockConverse
        )
    }
}

/// Which input of [`convert`] an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeInput {
    /// The request that was sent to the provider.
    Request,
    /// The provider's response.
    Response,
}

/// Converts a provider-native response of `format` into contract v1: the
/// sources are laid out from `request` (the request sent to the provider;
/// without it, chunk i is document i and search result i), then the
/// format's converter verifies every citation. The one dispatch behind
/// `groundcite convert` and the service's `POST /v1/convert`.
///
/// Errors name the input they are about; `request` is refused for the
/// formats whose citations carry their own sources (`bedrock-rag`,
/// `gemini`, `cohere`, `openai-responses`): see [`NativeFormat::takes_request`].
pub fn convert(
    format: NativeFormat,
    response: &Value,
    request: Option<&Value>,
    chunks: &ChunkSet,
    profile: MatchProfile,
    policy: ClaimPolicy,
    provenance: Provenance,
) -> Result<Contract, (NativeInput, InputError)> {
    let layout = match (request, format) {
        (None, _) => SourceLayout::one_per_chunk(chunks),
        (Some(_), f) if !f.takes_request() => {
            return Err((
                NativeInput::Request,
                InputError::new(
                    "",
                    "applies to anthropic and bedrock-converse responses only",
                ),
            ));
        }
        (Some(r), NativeFormat::BedrockConverse) => {
            SourceLayout::from_converse_request(r, chunks).map_err(|e| (NativeInput::Request, e))?
        }
        (Some(r), NativeFormat::Anthropic) => SourceLayout::from_anthropic_request(r, chunks)
            .map_err(|e| (NativeInput::Request, e))?,
        (Some(_), _) => SourceLayout::one_per_chunk(chunks),
    };
    match format {
        NativeFormat::Anthropic => {
            anthropic::convert(response, chunks, &layout, profile, policy, provenance)
        }
        NativeFormat::BedrockRag => {
            bedrock::convert_retrieve_and_generate(response, chunks, profile, policy, provenance)
        }
        NativeFormat::BedrockConverse => {
            bedrock::convert_converse(response, chunks, &layout, profile, policy, provenance)
        }
        NativeFormat::Gemini => gemini::convert(response, chunks, profile, policy, provenance),
        NativeFormat::Cohere => cohere::convert(response, chunks, profile, policy, provenance),
        NativeFormat::OpenaiResponses => {
            openai_responses::convert(response, chunks, profile, policy, provenance)
        }
    }
    .map_err(|e| (NativeInput::Response, e))
}
