//! From provider indices to chunks: [`SourceLayout`], which chunks each
//! source sent to the provider holds, built one per chunk or read from the
//! request that was sent (Anthropic Messages or Bedrock Converse).

use serde_json::Value;

use crate::error::InputError;
use crate::model::ChunkSet;

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
