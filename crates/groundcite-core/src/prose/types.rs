//! What the parser returns: its public result and error types, and the
//! limits it works under.

use std::fmt;

use crate::contract::Warning;

/// How many characters of the answer a [`CitationFormatError`] shows.
pub const HEAD_CHARS: usize = 120;

/// Bracketed numbers up to this value (or up to the number of chunks, if
/// larger) are markers; larger ones (`[2024]`) are prose.
pub const MAX_PLAIN_MARKER: usize = 999;

/// Longest text compared as a title, in characters; longer text is not a title.
pub(super) const MAX_TITLE_CHARS: usize = 200;

/// Longest bracket or parenthesis body considered as a marker, in bytes.
pub(super) const MAX_MARKER_BYTES: usize = 320;

/// A non-empty answer over one or more chunks yielded no citation at all.
///
/// The display text is the log line: it names the answer's length, the
/// number of chunks and the answer's first [`HEAD_CHARS`] characters, so that
/// a new citation format shows up in the log the first time it is seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitationFormatError {
    /// Length of the answer in characters (Unicode scalar values).
    pub answer_chars: usize,
    /// Number of chunks the answer was parsed against.
    pub chunks: usize,
    /// The first [`HEAD_CHARS`] characters of the answer.
    pub head: String,
    /// Markers that were recognised but rejected (out of range, unresolved,
    /// ambiguous).
    pub rejected: usize,
    /// The message of the first rejection, when there was one.
    pub first_rejection: Option<String>,
}

impl fmt::Display for CitationFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no citation could be extracted from a {}-character answer over {} chunk(s); head={:?}",
            self.answer_chars, self.chunks, self.head
        )?;
        if self.rejected > 0 {
            write!(
                f,
                "; {} marker(s) were recognised but rejected",
                self.rejected
            )?;
            if let Some(m) = &self.first_rejection {
                write!(f, ", the first: {m}")?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for CitationFormatError {}

/// Which family of marker produced a citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MarkerFamily {
    /// `[1]`, `[1,3]`, `[1-3]`, `<sup>1</sup>`, `(Source 2)`.
    Numeric,
    /// `[^1]`, resolved through its definition when present.
    Footnote,
    /// `[doc1]` (Azure OpenAI "On Your Data").
    AzureDoc,
    /// An exact chunk ID in brackets or parentheses.
    ChunkId,
    /// `(Source: title)`, `(Ref: title)`, `(per the title)`.
    Named,
    /// An item of a trailing "Sources" list.
    ReferenceSection,
}

impl MarkerFamily {
    /// A short stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerFamily::Numeric => "numeric",
            MarkerFamily::Footnote => "footnote",
            MarkerFamily::AzureDoc => "azure_doc",
            MarkerFamily::ChunkId => "chunk_id",
            MarkerFamily::Named => "named",
            MarkerFamily::ReferenceSection => "reference_section",
        }
    }
}

/// One citation extracted from prose, already resolved to a chunk and, when
/// the sentence quotes text, already checked against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProseCitation {
    /// 0-based position of the cited chunk in the order shown to the model.
    pub chunk_position: usize,
    /// The cited chunk's ID.
    pub chunk_id: String,
    /// The marker family.
    pub family: MarkerFamily,
    /// The marker as written (for a reference section: the list item).
    pub marker: String,
    /// The quote found in the chunk, or `None` for a bare reference.
    pub quote: Option<String>,
}

/// A sentence or list item that carried markers.
#[derive(Debug, Clone, PartialEq)]
pub struct ProseClaim {
    /// 0-based claim index (warnings and the contract use it).
    pub index: usize,
    /// The text with its markers removed.
    pub text: String,
    /// The surviving citations (may be empty: every marker was rejected).
    pub citations: Vec<ProseCitation>,
    /// Citations attempted, counting rejected ones.
    pub attempted: usize,
    /// What was rejected or changed, in order.
    pub warnings: Vec<Warning>,
}

/// The result of [`parse`](super::parse).
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedProse {
    /// Claims in answer order.
    pub claims: Vec<ProseClaim>,
    /// Citations that resolved to a chunk, before the quote check (the loud
    /// failure fires when this is zero).
    pub resolved: usize,
}

pub(super) use crate::contract::warning;
