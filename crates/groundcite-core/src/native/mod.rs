//! Provider-native citations, verified by the same rule as `groundcite verify`.
//!
//! Managed services return their own citation shapes. The converters here
//! turn them into renderer contract v1 through the same [`Verifier`] and
//! matching rule ([`find_quote`]) as structured answers:
//!
//! - [`anthropic`]: a Messages API response whose text blocks carry
//!   `citations` (`char_location`, `page_location`, `content_block_location`,
//!   `search_result_location`), streamed or not;
//! - [`bedrock`]: Amazon Bedrock RetrieveAndGenerate (`citations[]` with
//!   `generatedResponsePart` and `retrievedReferences`) and Converse
//!   (`citationsContent` blocks with document char/chunk/page locations).
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
//! - When no reading agrees, [`WarningCode::CitationLocationMismatch`] is
//!   raised and the cited text is still checked against the chunk with the
//!   matching rule: if it is there, the citation is kept with the matching
//!   rule's span (the warning stays); if not, the verifier drops it
//!   (`quote_not_found`).
//! - An index naming no supplied chunk is
//!   [`WarningCode::SourceIndexOutOfRange`]; web-search citations are
//!   [`WarningCode::UnsupportedCitation`]; both drop the citation.

use serde_json::Value;

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::error::InputError;
use crate::model::ChunkSet;
use crate::normalize::{MatchProfile, QuoteVerdict, Span, find_quote};
use crate::text::truncate_chars;
use crate::verify::{CitationRef, ClaimOutcome, ClaimPolicy, Verifier};

pub mod anthropic;
pub mod bedrock;

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
}

impl NativeFormat {
    /// The name as written in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            NativeFormat::Anthropic => "anthropic",
            NativeFormat::BedrockRag => "bedrock-rag",
            NativeFormat::BedrockConverse => "bedrock-converse",
        }
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
/// Errors name the input they are about; `request` is refused for
/// `bedrock-rag`, whose references carry their own chunks.
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
        (Some(_), NativeFormat::BedrockRag) => {
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
    }
    .map_err(|e| (NativeInput::Response, e))
}

/// What kind of sent source a provider index counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A document (Anthropic `document`, Converse `document`).
    Document,
    /// A search result (Anthropic `search_result`, Converse `searchResult`).
    SearchResult,
}

/// How a sent source is addressed inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// Plain text: one chunk, addressed by characters.
    Text,
    /// Content blocks: one chunk per block.
    Blocks,
    /// A PDF: one chunk, addressed by pages (checked against `page_number`).
    Pages,
}

/// One source as it was sent to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentSource {
    /// Document or search result.
    pub kind: SourceKind,
    /// How locations inside it are expressed.
    pub unit: UnitKind,
    /// Chunk positions of its units (blocks), in order; one for text and PDFs.
    pub chunks: Vec<usize>,
}

/// Which chunks each source sent to the provider holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLayout {
    documents: Vec<SentSource>,
    search_results: Vec<SentSource>,
}

impl SourceLayout {
    /// Chunk *i* was sent as plain-text document *i* and as one-block search
    /// result *i*.
    pub fn one_per_chunk(chunks: &ChunkSet) -> SourceLayout {
        let one = |kind, unit| {
            (0..chunks.len())
                .map(|i| SentSource {
                    kind,
                    unit,
                    chunks: vec![i],
                })
                .collect()
        };
        SourceLayout {
            documents: one(SourceKind::Document, UnitKind::Text),
            search_results: one(SourceKind::SearchResult, UnitKind::Blocks),
        }
    }

    /// A layout from sources in the order they were sent; their chunk
    /// positions must exist in `chunks`.
    pub fn new(sources: Vec<SentSource>, chunks: &ChunkSet) -> Result<SourceLayout, InputError> {
        for (i, s) in sources.iter().enumerate() {
            if s.chunks.is_empty() {
                return Err(InputError::new(
                    format!("[{i}]"),
                    "a sent source holds no chunk",
                ));
            }
            if let Some(&bad) = s.chunks.iter().find(|&&c| c >= chunks.len()) {
                return Err(InputError::new(
                    format!("[{i}]"),
                    format!(
                        "chunk position {bad} is beyond the {} chunks given",
                        chunks.len()
                    ),
                ));
            }
        }
        let (documents, search_results) = sources
            .into_iter()
            .partition(|s| s.kind == SourceKind::Document);
        Ok(SourceLayout {
            documents,
            search_results,
        })
    }

    /// Reads the layout from an Anthropic Messages request: every `document`
    /// and `search_result` block of `messages[].content[]` (also inside
    /// `tool_result` content), in order; their units must add up to the
    /// number of chunks.
    pub fn from_anthropic_request(
        request: &Value,
        chunks: &ChunkSet,
    ) -> Result<SourceLayout, InputError> {
        SourceLayout::from_messages(request, chunks, anthropic_blocks)
    }

    /// Reads the layout from a Bedrock Converse request: every `document`
    /// and `searchResult` block of `messages[].content[]` (also inside
    /// `toolResult` content), in order.
    pub fn from_converse_request(
        request: &Value,
        chunks: &ChunkSet,
    ) -> Result<SourceLayout, InputError> {
        SourceLayout::from_messages(request, chunks, converse_blocks)
    }

    /// The blocks of `messages[].content[]`, read in order by `read_blocks`
    /// (one request format's block reader); their units must add up to the
    /// number of chunks.
    fn from_messages(
        request: &Value,
        chunks: &ChunkSet,
        read_blocks: BlockReader,
    ) -> Result<SourceLayout, InputError> {
        let mut sources = Vec::new();
        let mut next = 0;
        let messages = request
            .get("messages")
            .and_then(Value::as_array)
            .ok_or_else(|| InputError::new(".messages", "expected an array of messages"))?;
        for (mi, m) in messages.iter().enumerate() {
            let Some(content) = m.get("content").and_then(Value::as_array) else {
                continue;
            };
            read_blocks(
                content,
                &format!(".messages[{mi}].content"),
                &mut sources,
                &mut next,
            )?;
        }
        check_units(next, chunks, "the request")?;
        SourceLayout::new(sources, chunks)
    }

    /// The sources of one kind, in the order sent.
    pub fn sources(&self, kind: SourceKind) -> &[SentSource] {
        match kind {
            SourceKind::Document => &self.documents,
            SourceKind::SearchResult => &self.search_results,
        }
    }
}

fn check_units(units: usize, chunks: &ChunkSet, what: &str) -> Result<(), InputError> {
    if units != chunks.len() {
        return Err(InputError::new(
            "",
            format!(
                "{what} sent {units} source unit(s) (text documents, PDF documents, content blocks, search-result blocks) but {} chunk(s) were given; the chunks must be the sent sources in order",
                chunks.len()
            ),
        ));
    }
    Ok(())
}

fn take(next: &mut usize, n: usize) -> Vec<usize> {
    let v: Vec<usize> = (*next..*next + n).collect();
    *next += n;
    v
}

/// Reads one message's content blocks into `sources`, numbering units from `next`.
type BlockReader = fn(&[Value], &str, &mut Vec<SentSource>, &mut usize) -> Result<(), InputError>;

fn anthropic_blocks(
    content: &[Value],
    path: &str,
    sources: &mut Vec<SentSource>,
    next: &mut usize,
) -> Result<(), InputError> {
    for (bi, b) in content.iter().enumerate() {
        let at = format!("{path}[{bi}]");
        match b.get("type").and_then(Value::as_str) {
            Some("document") => {
                let source = b
                    .get("source")
                    .ok_or_else(|| InputError::new(&at, "document without source"))?;
                let (unit, n) = match source.get("type").and_then(Value::as_str) {
                    Some("text") => (UnitKind::Text, 1),
                    Some("content") => match source.get("content") {
                        Some(Value::Array(blocks)) => (UnitKind::Blocks, blocks.len()),
                        Some(Value::String(_)) => (UnitKind::Blocks, 1),
                        _ => {
                            return Err(InputError::new(
                                format!("{at}.source.content"),
                                "expected an array of content blocks or a string",
                            ));
                        }
                    },
                    _ => (UnitKind::Pages, 1),
                };
                if n == 0 {
                    return Err(InputError::new(
                        format!("{at}.source.content"),
                        "a content document with no block",
                    ));
                }
                sources.push(SentSource {
                    kind: SourceKind::Document,
                    unit,
                    chunks: take(next, n),
                });
            }
            Some("search_result") => {
                let n = b
                    .get("content")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                if n == 0 {
                    return Err(InputError::new(
                        format!("{at}.content"),
                        "a search result with no text block",
                    ));
                }
                sources.push(SentSource {
                    kind: SourceKind::SearchResult,
                    unit: UnitKind::Blocks,
                    chunks: take(next, n),
                });
            }
            Some("tool_result") => {
                if let Some(inner) = b.get("content").and_then(Value::as_array) {
                    anthropic_blocks(inner, &format!("{at}.content"), sources, next)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn converse_blocks(
    content: &[Value],
    path: &str,
    sources: &mut Vec<SentSource>,
    next: &mut usize,
) -> Result<(), InputError> {
    for (bi, b) in content.iter().enumerate() {
        let at = format!("{path}[{bi}]");
        if let Some(doc) = b.get("document") {
            let source = doc.get("source").ok_or_else(|| {
                InputError::new(format!("{at}.document"), "document without source")
            })?;
            let (unit, n) = if source.get("text").is_some() {
                (UnitKind::Text, 1)
            } else if let Some(blocks) = source.get("content") {
                let n = blocks.as_array().map_or(0, Vec::len);
                if n == 0 {
                    return Err(InputError::new(
                        format!("{at}.document.source.content"),
                        "expected a non-empty array of content blocks",
                    ));
                }
                (UnitKind::Blocks, n)
            } else {
                (UnitKind::Pages, 1)
            };
            sources.push(SentSource {
                kind: SourceKind::Document,
                unit,
                chunks: take(next, n),
            });
        } else if let Some(sr) = b.get("searchResult") {
            let n = sr
                .get("content")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            if n == 0 {
                return Err(InputError::new(
                    format!("{at}.searchResult.content"),
                    "a search result with no text block",
                ));
            }
            sources.push(SentSource {
                kind: SourceKind::SearchResult,
                unit: UnitKind::Blocks,
                chunks: take(next, n),
            });
        } else if let Some(inner) = b
            .get("toolResult")
            .and_then(|t| t.get("content"))
            .and_then(Value::as_array)
        {
            converse_blocks(inner, &format!("{at}.toolResult.content"), sources, next)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Shared conversion machinery

/// Where a provider says the cited text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    /// Code points into a plain-text document.
    Chars { start: usize, end: usize },
    /// Content blocks (0-based).
    Blocks { start: usize, end: usize },
    /// Pages (1-based).
    Pages { start: usize, end: usize },
}

/// A provider citation, parsed.
#[derive(Debug, Clone)]
pub(crate) struct NativeCitation {
    pub kind: SourceKind,
    pub index: usize,
    pub location: Location,
    pub cited_text: Option<String>,
    /// How the provider called it, for messages ("char_location", …).
    pub label: &'static str,
}

/// One claim on its way into the verifier.
pub(crate) struct Pending {
    pub text: String,
    /// Citations, or the warning of one dropped while parsing (unsupported).
    pub citations: Vec<Result<NativeCitation, Warning>>,
}

/// Builds a contract from pending claims.
pub(crate) struct Builder<'a> {
    v: Verifier<'a>,
    chunks: &'a ChunkSet,
    layout: &'a SourceLayout,
    profile: MatchProfile,
    claims: usize,
}

/// A citation's block or page range, over `units` = (unit number, chunk).
struct UnitRange<'u> {
    units: &'u [(usize, usize)],
    start: usize,
    end: usize,
    /// "block" or "page", for messages.
    unit_name: &'static str,
}

impl<'a> Builder<'a> {
    pub fn new(
        chunks: &'a ChunkSet,
        layout: &'a SourceLayout,
        profile: MatchProfile,
        policy: ClaimPolicy,
    ) -> Builder<'a> {
        Builder {
            v: Verifier::new(chunks, profile).with_claim_policy(policy),
            chunks,
            layout,
            profile,
            claims: 0,
        }
    }

    pub fn warn(&mut self, w: Warning) {
        self.v.warn(w);
    }

    /// Verifies one claim from provider citations.
    pub fn claim(&mut self, pending: Pending) {
        let index = self.claims;
        self.claims += 1;
        let mut refs: Vec<(String, Option<String>)> = Vec::new();
        let attempted = pending.citations.len();
        for (ci, c) in pending.citations.into_iter().enumerate() {
            match c {
                Err(mut w) => {
                    w.claim_index = Some(index);
                    w.citation_index = Some(ci);
                    self.v.warn(w);
                }
                Ok(c) => {
                    for (chunk, quote) in self.resolve(&c, index, ci) {
                        refs.push((self.chunks.chunks()[chunk].chunk_id.clone(), quote));
                    }
                }
            }
        }
        self.submit(index, &pending.text, &refs, attempted);
    }

    /// Feeds citations already resolved to chunk IDs.
    pub fn submit(
        &mut self,
        index: usize,
        text: &str,
        refs: &[(String, Option<String>)],
        attempted: usize,
    ) {
        if refs.is_empty() {
            self.v.warn(warning(
                WarningCode::ClaimUnsupported,
                Some(index),
                None,
                None,
                format!("Claim {index} was dropped: none of its {attempted} citation(s) could be matched to a supplied chunk."),
            ));
            return;
        }
        let citations: Vec<CitationRef<'_>> = refs
            .iter()
            .map(|(id, q)| CitationRef {
                chunk_id: id,
                quote: q.as_deref(),
            })
            .collect();
        let _: ClaimOutcome = self.v.claim_parts(index, text, &citations);
    }

    /// Allocates a claim index for a caller that resolves its own references.
    pub fn next_index(&mut self) -> usize {
        self.claims += 1;
        self.claims - 1
    }

    pub fn finish(self, provenance: Provenance) -> Contract {
        self.v.finish(true, provenance)
    }

    /// Finishes a response that had `text_chars` characters of answer text:
    /// when none of it carried a citation, says so (`uncited_answer`,
    /// ending with `hint`) rather than returning a silent empty list.
    pub fn finish_text(
        mut self,
        text_chars: usize,
        hint: &str,
        provenance: Provenance,
    ) -> Contract {
        if self.claims == 0 && text_chars > 0 {
            self.warn(warning(
                WarningCode::UncitedAnswer,
                None,
                None,
                None,
                format!("The response has {text_chars} characters of text and {hint}"),
            ));
        }
        self.finish(provenance)
    }

    /// Resolves a citation to (chunk, quote) pairs, warning on the way.
    fn resolve(
        &mut self,
        c: &NativeCitation,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let kind_name = match c.kind {
            SourceKind::Document => "document",
            SourceKind::SearchResult => "search result",
        };
        let Some(source) = self.layout.sources(c.kind).get(c.index) else {
            self.v.warn(warning(
                WarningCode::SourceIndexOutOfRange,
                Some(claim),
                Some(ci),
                None,
                format!(
                    "Citation {ci} of claim {claim} ({}) names {kind_name} {} but only {} {kind_name}(s) were sent; it was dropped.",
                    c.label,
                    c.index,
                    self.layout.sources(c.kind).len()
                ),
            ));
            return Vec::new();
        };
        match c.location {
            Location::Chars { start, end } => self.resolve_chars(c, source, start, end, claim, ci),
            Location::Blocks { start, end } => {
                let units: Vec<(usize, usize)> =
                    source.chunks.iter().copied().enumerate().collect();
                self.resolve_units(
                    c,
                    UnitRange {
                        units: &units,
                        start,
                        end,
                        unit_name: "block",
                    },
                    claim,
                    ci,
                )
            }
            Location::Pages { start, end } => {
                let paged: Vec<(usize, usize)> = source
                    .chunks
                    .iter()
                    .filter_map(|&p| self.chunks.chunks()[p].page_number.map(|n| (n as usize, p)))
                    .collect();
                if paged.is_empty() && source.chunks.len() == 1 {
                    // One chunk for the whole PDF without a page number: pages cannot be checked.
                    let chunk = source.chunks[0];
                    return vec![(chunk, c.cited_text.clone())];
                }
                self.resolve_units(
                    c,
                    UnitRange {
                        units: &paged,
                        start,
                        end,
                        unit_name: "page",
                    },
                    claim,
                    ci,
                )
            }
        }
    }

    fn resolve_chars(
        &mut self,
        c: &NativeCitation,
        source: &SentSource,
        start: usize,
        end: usize,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let chunk = source.chunks[0];
        let content = &self.chunks.chunks()[chunk].content;
        let exclusive = (start <= end)
            .then(|| Span::new(start, end).slice(content))
            .flatten();
        let inclusive = (start <= end)
            .then(|| Span::new(start, end.saturating_add(1)).slice(content))
            .flatten();
        let Some(cited) = c.cited_text.as_deref() else {
            // No cited text (Converse without sourceContent): the location is the quote.
            return match exclusive.filter(|s| s.chars().any(char::is_alphanumeric)) {
                Some(s) => vec![(chunk, Some(s.to_string()))],
                None => {
                    self.mismatch(
                        c,
                        claim,
                        ci,
                        chunk,
                        format!("characters {start}..{end} are not a non-empty part of the chunk"),
                    );
                    Vec::new()
                }
            };
        };
        let agrees = |s: Option<&str>| s.is_some_and(|s| covers(s, cited, self.profile));
        if !(agrees(exclusive) || agrees(inclusive)) {
            let shown = exclusive.map_or_else(
                || "outside the chunk".to_string(),
                |s| format!("{:?}", truncate_chars(s, 120)),
            );
            self.mismatch(
                c,
                claim,
                ci,
                chunk,
                format!("characters {start}..{end} (end exclusive, or inclusive) hold {shown}, not the cited text {:?}", truncate_chars(cited, 120)),
            );
        }
        vec![(chunk, Some(cited.to_string()))]
    }

    /// Resolves a block or page range.
    fn resolve_units(
        &mut self,
        c: &NativeCitation,
        range: UnitRange<'_>,
        claim: usize,
        ci: usize,
    ) -> Vec<(usize, Option<String>)> {
        let UnitRange {
            units,
            start,
            end,
            unit_name,
        } = range;
        let pick = |lo: usize, hi_excl: usize| -> Vec<usize> {
            units
                .iter()
                .filter(|(n, _)| *n >= lo && *n < hi_excl)
                .map(|&(_, p)| p)
                .collect()
        };
        let mut readings: Vec<Vec<usize>> = Vec::new();
        if end > start {
            readings.push(pick(start, end));
        }
        if end >= start {
            readings.push(pick(start, end.saturating_add(1)));
        }
        readings.retain(|r| !r.is_empty());
        if readings.is_empty() {
            self.v.warn(warning(
                WarningCode::SourceIndexOutOfRange,
                Some(claim),
                Some(ci),
                None,
                format!(
                    "Citation {ci} of claim {claim} ({}) names {unit_name}s {start}..{end}, which hold no supplied chunk; it was dropped.",
                    c.label
                ),
            ));
            return Vec::new();
        }
        let Some(cited) = c.cited_text.as_deref() else {
            return readings[0].iter().map(|&p| (p, None)).collect();
        };
        for r in &readings {
            if let Some(parts) = self.split_over(r, cited) {
                return parts;
            }
        }
        // No reading holds the cited text: warn, then check it chunk by chunk.
        let mut all: Vec<usize> = readings.concat();
        all.sort_unstable();
        all.dedup();
        let first = all[0];
        self.mismatch(
            c,
            claim,
            ci,
            first,
            format!("{unit_name}s {start}..{end} (end exclusive, or inclusive) do not hold the cited text {:?}", truncate_chars(cited, 120)),
        );
        let holding: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&p| {
                matches!(
                    find_quote(&self.chunks.chunks()[p].content, cited, self.profile),
                    QuoteVerdict::Found(_)
                )
            })
            .collect();
        match holding.first() {
            Some(&p) => vec![(p, Some(cited.to_string()))],
            None => vec![(first, Some(cited.to_string()))],
        }
    }

    /// Finds `cited` in the units' texts joined (with a newline, or with
    /// nothing); returns each touched unit with the part of the cited text
    /// inside it.
    fn split_over(&self, units: &[usize], cited: &str) -> Option<Vec<(usize, Option<String>)>> {
        for sep in ["\n", ""] {
            let mut joined = String::new();
            let mut bounds = Vec::new(); // (chunk, start cp, end cp)
            let mut cp = 0;
            for (k, &p) in units.iter().enumerate() {
                if k > 0 {
                    joined.push_str(sep);
                    cp += sep.chars().count();
                }
                let text = &self.chunks.chunks()[p].content;
                let n = text.chars().count();
                joined.push_str(text);
                bounds.push((p, cp, cp + n));
                cp += n;
            }
            let QuoteVerdict::Found(m) = find_quote(&joined, cited, self.profile) else {
                continue;
            };
            let mut out = Vec::new();
            for (p, s, e) in bounds {
                let lo = m.span.start().max(s);
                let hi = m.span.end().min(e);
                if lo >= hi {
                    continue;
                }
                let Some(part) = Span::new(lo, hi).slice(&joined) else {
                    continue;
                };
                if part.chars().any(char::is_alphanumeric) {
                    out.push((p, Some(part.to_string())));
                }
            }
            if !out.is_empty() {
                return Some(out);
            }
        }
        None
    }

    fn mismatch(
        &mut self,
        c: &NativeCitation,
        claim: usize,
        ci: usize,
        chunk: usize,
        what: String,
    ) {
        let id = self.chunks.chunks()[chunk].chunk_id.clone();
        self.v.warn(warning(
            WarningCode::CitationLocationMismatch,
            Some(claim),
            Some(ci),
            Some(&id),
            format!(
                "Citation {ci} of claim {claim} ({}): {what}; the cited text was checked against chunk {id:?} with the matching rule instead.",
                c.label
            ),
        ));
    }
}

/// Whether `slice` is the cited text under the matching rule: the cited text
/// is found in it and only white space is left around the match.
pub(crate) fn covers(slice: &str, cited: &str, profile: MatchProfile) -> bool {
    match find_quote(slice, cited, profile) {
        QuoteVerdict::Found(m) => {
            slice[..m.bytes.start].trim().is_empty() && slice[m.bytes.end..].trim().is_empty()
        }
        _ => false,
    }
}

/// The refusal contract for provider-side refusals and errors.
pub(crate) fn refused(
    code: RefusalCode,
    provenance: Provenance,
    profile: MatchProfile,
) -> Contract {
    Contract::refused(code, provenance, profile, Vec::new())
}

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

// -- JSON access with paths ------------------------------------------------

pub(crate) fn get<'v>(v: &'v Value, key: &str, path: &str) -> Result<&'v Value, InputError> {
    v.get(key)
        .filter(|x| !x.is_null())
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "missing"))
}

pub(crate) fn get_str<'v>(v: &'v Value, key: &str, path: &str) -> Result<&'v str, InputError> {
    get(v, key, path)?
        .as_str()
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected a string"))
}

pub(crate) fn get_index(v: &Value, key: &str, path: &str) -> Result<usize, InputError> {
    get(v, key, path)?
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected a non-negative integer"))
}

pub(crate) fn get_array<'v>(
    v: &'v Value,
    key: &str,
    path: &str,
) -> Result<&'v [Value], InputError> {
    get(v, key, path)?
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| InputError::new(format!("{path}.{key}"), "expected an array"))
}

/// An optional array: missing or `null` is empty.
pub(crate) fn opt_array<'v>(
    v: &'v Value,
    key: &str,
    path: &str,
) -> Result<&'v [Value], InputError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(InputError::new(
            format!("{path}.{key}"),
            "expected an array",
        )),
    }
}
