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

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;

use crate::contract::{Contract, Provenance, RefusalCode, Warning, WarningCode};
use crate::model::ChunkSet;
use crate::normalize::{LazyNormalized, MatchProfile, QuoteVerdict, find_quote_in};
use crate::verify::{CitationRef, ClaimPolicy, Verifier};

/// How many characters of the answer a [`CitationFormatError`] shows.
pub const HEAD_CHARS: usize = 120;

/// Bracketed numbers up to this value (or up to the number of chunks, if
/// larger) are markers; larger ones (`[2024]`) are prose.
pub const MAX_PLAIN_MARKER: usize = 999;

/// Longest text compared as a title, in characters; longer text is not a title.
const MAX_TITLE_CHARS: usize = 200;
/// Longest bracket or parenthesis body considered as a marker, in bytes.
const MAX_MARKER_BYTES: usize = 320;

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

/// The result of [`parse`].
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedProse {
    /// Claims in answer order.
    pub claims: Vec<ProseClaim>,
    /// Citations that resolved to a chunk, before the quote check (the loud
    /// failure fires when this is zero).
    pub resolved: usize,
}

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

// ---------------------------------------------------------------------------
// Titles

/// Normalizes a title for comparison: lower case, every run of characters
/// that are not letters or digits becomes one space, the articles "the",
/// "a" and "an" are dropped, and so is a trailing file extension (`.pdf`,
/// `.docx`, `.md`, …).
pub fn normalize_title(title: &str) -> String {
    let trimmed = title.trim();
    let ext_stripped = match trimmed.rsplit_once('.') {
        Some((stem, ext))
            if !stem.trim().is_empty()
                && matches!(
                    ext.to_ascii_lowercase().as_str(),
                    "pdf"
                        | "doc"
                        | "docx"
                        | "txt"
                        | "md"
                        | "html"
                        | "htm"
                        | "pptx"
                        | "xlsx"
                        | "csv"
                        | "rtf"
                ) =>
        {
            stem
        }
        _ => trimmed,
    };
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in ext_stripped.chars() {
        if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words.retain(|w| !matches!(w.as_str(), "the" | "a" | "an"));
    words.join(" ")
}

/// Typos tolerated between two normalized titles whose longer one has `len`
/// characters: 0 up to 3 characters, 1 up to 8, 2 up to 20, 3 beyond.
pub fn max_title_typos(len: usize) -> usize {
    match len {
        0..=3 => 0,
        4..=8 => 1,
        9..=20 => 2,
        _ => 3,
    }
}

/// Edit distance (insertions, deletions, substitutions and adjacent
/// transpositions, each costing 1) between two normalized titles, or `None`
/// when it exceeds `limit`.
pub fn title_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let (n, m) = (a.len(), b.len());
    let inf = usize::MAX / 2;
    // Three rows of the optimal-string-alignment table.
    let mut prev2 = vec![inf; m + 1];
    let mut prev: Vec<usize> = (0..=m).collect();
    let mut cur = vec![inf; m + 1];
    for i in 1..=n {
        cur.fill(inf);
        cur[0] = i;
        let lo = i.saturating_sub(limit).max(1);
        let hi = (i + limit).min(m);
        let mut row_min = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > limit {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    (d <= limit).then_some(d)
}

/// How a name resolved against the chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NameRes {
    /// One chunk.
    Chunk(usize),
    /// 1-based positions (from "Document 2", "Source 2").
    Positions(Vec<(usize, usize)>),
    /// Several chunks are equally good.
    Ambiguous(Vec<usize>),
    /// Nothing matches.
    NotFound,
}

// ---------------------------------------------------------------------------
// Lines and blocks

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Blank,
    Code,
    Fence,
    Heading,
    ListItem,
    Table,
    Text,
    /// `[^label]: …`
    FootnoteDef,
    /// `[12]: …`
    Legend,
}

#[derive(Debug, Clone)]
struct Line {
    start: usize,
    end: usize,
    kind: LineKind,
    /// Where the content starts (after the bullet, the `#`s, the label).
    content: usize,
    /// Footnote label, legend number or list number.
    label: Option<String>,
}

fn classify_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0;
    while start <= text.len() {
        let nl = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let mut end = nl;
        if end > start && text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        let raw = &text[start..end];
        let indent = raw.len() - raw.trim_start().len();
        let t = raw.trim_start();
        let content = start + indent;
        let mut line = Line {
            start,
            end,
            kind: LineKind::Text,
            content,
            label: None,
        };
        let fence_run = |t: &str| -> Option<(u8, usize)> {
            let b = t.as_bytes().first().copied()?;
            if b != b'`' && b != b'~' {
                return None;
            }
            let n = t.bytes().take_while(|&c| c == b).count();
            (n >= 3).then_some((b, n))
        };
        if let Some((fc, fl)) = fence {
            match fence_run(t) {
                Some((c, n)) if c == fc && n >= fl && t[n..].trim().is_empty() => {
                    line.kind = LineKind::Fence;
                    fence = None;
                }
                _ => line.kind = LineKind::Code,
            }
        } else if let Some((c, n)) = fence_run(t) {
            // A backtick fence's info string cannot contain backticks.
            if c == b'~' || !t[n..].contains('`') {
                line.kind = LineKind::Fence;
                fence = Some((c, n));
            }
        }
        if line.kind == LineKind::Text {
            classify_text_line(t, content, &mut line);
        }
        lines.push(line);
        if nl == text.len() {
            break;
        }
        start = nl + 1;
    }
    lines
}

fn classify_text_line(t: &str, content: usize, line: &mut Line) {
    let b = t.as_bytes();
    if t.trim().is_empty() {
        line.kind = LineKind::Blank;
        return;
    }
    let hashes = b.iter().take_while(|&&c| c == b'#').count();
    if (1..=6).contains(&hashes) && (b.len() == hashes || b[hashes] == b' ' || b[hashes] == b'\t') {
        line.kind = LineKind::Heading;
        line.content = content + hashes + (t[hashes..].len() - t[hashes..].trim_start().len());
        return;
    }
    if b[0] == b'|' {
        line.kind = LineKind::Table;
        return;
    }
    if let Some(rest) = t.strip_prefix("[^")
        && let Some(close) = rest.find("]:")
    {
        let label = &rest[..close];
        if !label.is_empty()
            && label.len() <= 64
            && !label.contains(char::is_whitespace)
            && !label.contains(']')
        {
            line.kind = LineKind::FootnoteDef;
            line.label = Some(label.to_string());
            let after = &rest[close + 2..];
            line.content = content + 2 + close + 2 + (after.len() - after.trim_start().len());
            return;
        }
    }
    if b[0] == b'['
        && let Some(close) = t.find("]:")
    {
        let label = &t[1..close];
        if (1..=3).contains(&label.len()) && label.bytes().all(|c| c.is_ascii_digit()) {
            line.kind = LineKind::Legend;
            line.label = Some(label.to_string());
            let after = &t[close + 2..];
            line.content = content + close + 2 + (after.len() - after.trim_start().len());
            return;
        }
    }
    // Bullets.
    if let Some(rest) = t
        .strip_prefix("- ")
        .or_else(|| t.strip_prefix("* "))
        .or_else(|| t.strip_prefix("+ "))
        .or_else(|| t.strip_prefix("• "))
    {
        line.kind = LineKind::ListItem;
        line.content = content + (t.len() - rest.trim_start().len());
        return;
    }
    // Ordered items: 1. / 1)
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if (1..=3).contains(&digits)
        && b.len() > digits + 1
        && (b[digits] == b'.' || b[digits] == b')')
        && (b[digits + 1] == b' ' || b[digits + 1] == b'\t')
    {
        line.kind = LineKind::ListItem;
        line.label = Some(t[..digits].to_string());
        let rest = &t[digits + 1..];
        line.content = content + digits + 1 + (rest.len() - rest.trim_start().len());
    }
}

/// Whether a line is a reference-section heading; returns the text of a
/// one-line section (`Sources: a; b`), empty for a heading alone.
fn section_heading(line: &str) -> Option<&str> {
    let mut t = line.trim();
    t = t.trim_start_matches('#').trim();
    let strip_emph =
        |s: &str| -> String { s.trim_matches(|c| c == '*' || c == '_').trim().to_string() };
    let (head, rest) = match t.find(':') {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, ""),
    };
    let head = strip_emph(head).to_lowercase();
    let keyword = matches!(
        head.as_str(),
        "sources"
            | "source"
            | "references"
            | "reference"
            | "citations"
            | "citation"
            | "bibliography"
            | "works cited"
            | "sources used"
            | "cited sources"
            | "source documents"
    );
    if !keyword {
        return None;
    }
    let rest = rest.trim().trim_matches(|c| c == '*' || c == '_').trim();
    Some(rest)
}

// ---------------------------------------------------------------------------
// Markers

#[derive(Debug, Clone, PartialEq, Eq)]
enum MarkerKind {
    /// Inclusive 1-based ranges.
    Positions(Vec<(usize, usize)>),
    Footnote(String),
    ChunkId(usize),
    /// A named reference, already resolved (each part separately).
    Named(Vec<(String, NameRes)>),
}

#[derive(Debug, Clone)]
struct Marker {
    /// Byte range in the scanned text.
    range: Range<usize>,
    kind: MarkerKind,
    family: MarkerFamily,
}

#[derive(Debug, Clone)]
struct QuoteSpan {
    /// Byte range of the whole quotation, marks included.
    outer: Range<usize>,
    /// The quoted text, markers removed.
    text: String,
}

/// Byte ranges of inline code spans in `s` (backtick runs of equal length).
fn inline_code(s: &str) -> Vec<Range<usize>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|&&c| c == b'`').count();
        let mut j = i + n;
        let mut closed = None;
        while j < b.len() {
            if b[j] == b'`' {
                let m = b[j..].iter().take_while(|&&c| c == b'`').count();
                if m == n {
                    closed = Some(j + m);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match closed {
            Some(end) => {
                out.push(i..end);
                i = end;
            }
            None => i += n,
        }
    }
    out
}

/// Comma/semicolon list of numbers and ranges, each at most `max`.
fn parse_positions(s: &str, max: usize) -> Option<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    for part in s.split([',', ';']) {
        let part = part.trim();
        if part.is_empty() {
            return None;
        }
        let (a, b) = match part.split_once(['-', '–', '—']) {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (part, None),
        };
        let a = parse_num(a, max)?;
        let b = match b {
            Some(b) => parse_num(b, max)?,
            None => a,
        };
        out.push((a.min(b), a.max(b)));
    }
    (!out.is_empty()).then_some(out)
}

fn parse_num(s: &str, max: usize) -> Option<usize> {
    let s = s.strip_prefix('#').unwrap_or(s);
    if s.is_empty() || s.len() > 6 || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let n: usize = s.parse().ok()?;
    (n <= max).then_some(n)
}

/// Splits `s` after a case-insensitive keyword (`Source`, `Sources`, `Ref`,
/// `References`, `Citation`, `Document`, …): the keyword must be followed by
/// a colon (`Source: title`) or by numbers (`Source 2`, `Ref. #2`), so that
/// "(source of truth)" or "[citation needed]" stay prose.
fn strip_strong_prefix(s: &str) -> Option<&str> {
    const KEYS: [&str; 10] = [
        "sources",
        "source",
        "references",
        "reference",
        "refs",
        "ref",
        "citations",
        "citation",
        "documents",
        "document",
    ];
    let lower = s.to_ascii_lowercase();
    for k in KEYS {
        if !lower.starts_with(k) {
            continue;
        }
        let rest = &s[k.len()..];
        match rest.chars().next() {
            None => return None,
            Some(c) if c.is_alphanumeric() && !c.is_ascii_digit() => continue,
            _ => {}
        }
        let after = rest.trim_start_matches(|c: char| c == '.' || c.is_whitespace());
        if let Some(payload) = after.strip_prefix(':') {
            let payload = payload.trim();
            return (!payload.is_empty()).then_some(payload);
        }
        let payload = after.trim();
        return parse_positions(payload, usize::MAX).map(|_| payload);
    }
    None
}

fn strip_weak_prefix(s: &str) -> Option<&str> {
    const KEYS: [&str; 5] = ["according to ", "per ", "see ", "cf. ", "from "];
    let lower = s.to_ascii_lowercase();
    for k in KEYS {
        if lower.starts_with(k) {
            let payload = s[k.len()..].trim();
            return (!payload.is_empty()).then_some(payload);
        }
    }
    None
}

/// Removes surrounding quotes and emphasis and trailing punctuation from a title.
fn clean_name(s: &str) -> &str {
    let mut t = s.trim();
    loop {
        let before = t;
        t = t
            .trim_matches(|c| matches!(c, '"' | '“' | '”' | '\'' | '‘' | '’' | '*' | '_' | '`'))
            .trim();
        t = t.trim_end_matches(['.', ',', ';', ':']).trim();
        if t == before {
            return t;
        }
    }
}

// ---------------------------------------------------------------------------
// The parser

/// Flags of a block's byte mask.
const CODE: u8 = 1;
const MARK: u8 = 2;
const QUOTED: u8 = 4;

struct Parser<'a> {
    answer: &'a str,
    chunks: &'a ChunkSet,
    lazy: Vec<LazyNormalized<'a>>,
    titles: Vec<Option<String>>,
    max_number: usize,
    name_cache: HashMap<String, NameRes>,
}

/// A segment (sentence, item, heading, row) with its markers and quotes;
/// ranges are absolute byte offsets into the answer.
struct Segment {
    range: Range<usize>,
    markers: Vec<Marker>,
    quotes: Vec<QuoteSpan>,
}

/// One citation attempt before the quote check.
struct Attempt {
    chunk: usize,
    family: MarkerFamily,
    marker: String,
    /// Where the marker sits (for quote proximity).
    at: usize,
    /// Citation index within the claim.
    ci: usize,
}

/// The reference section found at the end of the answer.
struct Section<'t> {
    items: Vec<usize>,
    inline: &'t str,
}

impl<'a> Parser<'a> {
    fn new(answer: &'a str, chunks: &'a ChunkSet, profile: MatchProfile) -> Parser<'a> {
        Parser {
            answer,
            chunks,
            lazy: chunks
                .chunks()
                .iter()
                .map(|c| LazyNormalized::new(&c.content, profile))
                .collect(),
            titles: chunks
                .chunks()
                .iter()
                .map(|c| {
                    c.source_title
                        .as_deref()
                        .map(normalize_title)
                        .filter(|t| !t.is_empty())
                })
                .collect(),
            max_number: MAX_PLAIN_MARKER.max(chunks.len()),
            name_cache: HashMap::new(),
        }
    }

    fn chunk_id(&self, pos: usize) -> &'a str {
        &self.chunks.chunks()[pos].chunk_id
    }

    fn found(&self, chunk: usize, quote: &str) -> bool {
        matches!(
            find_quote_in(&self.lazy[chunk], quote),
            QuoteVerdict::Found(_)
        )
    }

    // -- names ---------------------------------------------------------

    /// Resolves a name: exact chunk ID, "Document 2", or a title.
    fn resolve_name(&mut self, raw: &str) -> NameRes {
        let name = clean_name(raw);
        if name.is_empty() {
            return NameRes::NotFound;
        }
        if let Some(p) = self.chunks.position(name) {
            return NameRes::Chunk(p);
        }
        if let Some(id) = name.strip_prefix("chunk_id:").map(str::trim)
            && let Some(p) = self.chunks.position(id)
        {
            return NameRes::Chunk(p);
        }
        if let Some(n) = numbered_name(name, self.max_number) {
            return NameRes::Positions(n);
        }
        if name.chars().count() > MAX_TITLE_CHARS {
            return NameRes::NotFound;
        }
        let norm = normalize_title(name);
        if norm.is_empty() {
            return NameRes::NotFound;
        }
        if let Some(r) = self.name_cache.get(&norm) {
            return r.clone();
        }
        let r = self.resolve_title(&norm);
        self.name_cache.insert(norm, r.clone());
        r
    }

    /// The chunks whose normalized title is closest to `norm`, within the
    /// typo allowance; several at the same distance are ambiguous.
    fn resolve_title(&self, norm: &str) -> NameRes {
        let mut best: Option<usize> = None;
        let mut hits: Vec<usize> = Vec::new();
        let qlen = norm.chars().count();
        for (i, t) in self.titles.iter().enumerate() {
            let Some(t) = t else { continue };
            let limit = max_title_typos(qlen.max(t.chars().count()));
            let limit = best.map_or(limit, |b| b.min(limit));
            let Some(d) = title_distance(norm, t, limit) else {
                continue;
            };
            match best {
                Some(b) if d > b => {}
                Some(b) if d == b => hits.push(i),
                _ => {
                    best = Some(d);
                    hits.clear();
                    hits.push(i);
                }
            }
        }
        match hits.len() {
            0 => NameRes::NotFound,
            1 => NameRes::Chunk(hits[0]),
            _ => NameRes::Ambiguous(hits),
        }
    }

    /// Resolves a name, else its part before a separator (" — ", ": ", ", "
    /// …), else (for "Source 1: Refund policy") its part after ": ".
    fn resolve_name_loose(&mut self, raw: &str) -> NameRes {
        let whole = self.resolve_name(raw);
        if whole != NameRes::NotFound {
            return whole;
        }
        let name = clean_name(raw);
        for sep in [" — ", " – ", " - ", ": ", " | ", ", ", " ("] {
            if let Some((head, tail)) = name.split_once(sep) {
                let r = self.resolve_name(head);
                if r != NameRes::NotFound {
                    return r;
                }
                if sep == ": " {
                    let r = self.resolve_name(tail);
                    if r != NameRes::NotFound {
                        return r;
                    }
                }
            }
        }
        NameRes::NotFound
    }

    /// Resolves a named marker's payload into parts: `a; b` are two parts;
    /// `a, b and c` are several only when every part resolves; otherwise the
    /// payload is resolved loosely (a title with a descriptive suffix).
    fn resolve_payload(&mut self, payload: &str) -> Vec<(String, NameRes)> {
        let p = clean_name(payload);
        if let Some(pos) = parse_positions(p, self.max_number) {
            return vec![(p.to_string(), NameRes::Positions(pos))];
        }
        let whole = self.resolve_name(p);
        if whole != NameRes::NotFound {
            return vec![(p.to_string(), whole)];
        }
        if p.contains(';') {
            return p
                .split(';')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_string(), self.resolve_name_loose(s)))
                .collect();
        }
        let parts: Vec<&str> = p
            .split([',', '&'])
            .flat_map(|s| s.split(" and "))
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.len() >= 2 {
            let res: Vec<(String, NameRes)> = parts
                .iter()
                .map(|s| (s.to_string(), self.resolve_name(s)))
                .collect();
            if res.iter().all(|(_, r)| *r != NameRes::NotFound) {
                return res;
            }
        }
        vec![(p.to_string(), self.resolve_name_loose(p))]
    }

    // -- scanning ------------------------------------------------------

    /// Finds the markers of `s` (a block or an item), skipping bytes whose
    /// `mask` has [`CODE`].
    fn scan_markers(&mut self, s: &str, mask: &[u8]) -> Vec<Marker> {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if mask[i] & CODE != 0 {
                i += 1;
                continue;
            }
            match b[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'[' => match self.bracket(s, i) {
                    Scan::Marker(m) => {
                        i = m.range.end;
                        out.push(m);
                        continue;
                    }
                    Scan::Skip(to) => {
                        i = to;
                        continue;
                    }
                    Scan::No => {}
                },
                b'(' => {
                    if let Some(m) = self.paren(s, i) {
                        i = m.range.end;
                        out.push(m);
                        continue;
                    }
                }
                b'<' => {
                    if let Some(m) = self.sup(s, i) {
                        i = m.range.end;
                        out.push(m);
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        // A marker must not reach into code.
        out.retain(|m| mask[m.range.clone()].iter().all(|f| f & CODE == 0));
        out
    }

    fn bracket(&mut self, s: &str, i: usize) -> Scan {
        let b = s.as_bytes();
        let Some(rel) = b[i + 1..]
            .iter()
            .take(MAX_MARKER_BYTES)
            .position(|&c| c == b']' || c == b'[' || c == b'\n')
        else {
            return Scan::No;
        };
        let j = i + 1 + rel;
        if b[j] != b']' {
            return Scan::No;
        }
        let content = &s[i + 1..j];
        // Markdown link or image: skip it whole.
        if j + 1 < b.len() && b[j + 1] == b'(' {
            let end = b[j + 1..]
                .iter()
                .take(4096)
                .position(|&c| c == b')' || c == b'\n')
                .map_or(j + 1, |p| j + 1 + p + 1);
            return Scan::Skip(end);
        }
        if i > 0 && b[i - 1] == b'!' {
            return Scan::No;
        }
        let end = j + 1;
        let mk = |kind, family| {
            Scan::Marker(Marker {
                range: i..end,
                kind,
                family,
            })
        };
        if let Some(label) = content.strip_prefix('^') {
            if !label.is_empty() && label.len() <= 64 && !label.contains(char::is_whitespace) {
                return mk(
                    MarkerKind::Footnote(label.to_string()),
                    MarkerFamily::Footnote,
                );
            }
            return Scan::No;
        }
        let t = content.trim();
        if t.is_empty() {
            return Scan::No;
        }
        if let Some(p) = parse_positions(t, self.max_number) {
            return mk(MarkerKind::Positions(p), MarkerFamily::Numeric);
        }
        if t.len() > 3
            && t.is_char_boundary(3)
            && t[..3].eq_ignore_ascii_case("doc")
            && let Some(n) = parse_num(&t[3..], self.max_number)
        {
            return mk(MarkerKind::Positions(vec![(n, n)]), MarkerFamily::AzureDoc);
        }
        if let Some(p) = self.chunks.position(t) {
            return mk(MarkerKind::ChunkId(p), MarkerFamily::ChunkId);
        }
        if let Some(id) = t.strip_prefix("chunk_id:").map(str::trim) {
            if let Some(p) = self.chunks.position(id) {
                return mk(MarkerKind::ChunkId(p), MarkerFamily::ChunkId);
            }
            return mk(
                MarkerKind::Named(vec![(id.to_string(), NameRes::NotFound)]),
                MarkerFamily::ChunkId,
            );
        }
        if let Some(payload) = strip_strong_prefix(t) {
            let parts = self.resolve_payload(payload);
            return mk(MarkerKind::Named(parts.clone()), named_family(&parts));
        }
        Scan::No
    }

    fn paren(&mut self, s: &str, i: usize) -> Option<Marker> {
        let b = s.as_bytes();
        let mut depth = 0usize;
        let mut j = None;
        for (k, &c) in b[i..].iter().enumerate().take(MAX_MARKER_BYTES) {
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        j = Some(i + k);
                        break;
                    }
                }
                b'\n' => return None,
                _ => {}
            }
        }
        let j = j?;
        let t = s[i + 1..j].trim();
        if t.is_empty() {
            return None;
        }
        let range = i..j + 1;
        let chunk_marker = |p| Marker {
            range: range.clone(),
            kind: MarkerKind::ChunkId(p),
            family: MarkerFamily::ChunkId,
        };
        if let Some(p) = self.chunks.position(t) {
            return Some(chunk_marker(p));
        }
        if let Some(id) = t.strip_prefix("chunk_id:").map(str::trim)
            && let Some(p) = self.chunks.position(id)
        {
            return Some(chunk_marker(p));
        }
        if let Some(payload) = strip_strong_prefix(t) {
            let parts = self.resolve_payload(payload);
            return Some(Marker {
                range,
                family: named_family(&parts),
                kind: MarkerKind::Named(parts),
            });
        }
        if let Some(payload) = strip_weak_prefix(t) {
            let r = self.resolve_name(payload);
            if matches!(r, NameRes::Chunk(_) | NameRes::Ambiguous(_)) {
                return Some(Marker {
                    range,
                    kind: MarkerKind::Named(vec![(clean_name(payload).to_string(), r)]),
                    family: MarkerFamily::Named,
                });
            }
        }
        None
    }

    /// `<sup>2</sup>` or `<sup>[2]</sup>`.
    fn sup(&self, s: &str, i: usize) -> Option<Marker> {
        let b = &s.as_bytes()[i..];
        if b.len() < 11 || !b[..5].eq_ignore_ascii_case(b"<sup>") {
            return None;
        }
        let window = &b[..b.len().min(80)];
        let close = window
            .windows(6)
            .position(|w| w.eq_ignore_ascii_case(b"</sup>"))?;
        let inner = s.get(i + 5..i + close)?.trim();
        let inner = inner
            .strip_prefix('[')
            .and_then(|x| x.strip_suffix(']'))
            .unwrap_or(inner);
        let p = parse_positions(inner, self.max_number)?;
        Some(Marker {
            range: i..i + close + 6,
            kind: MarkerKind::Positions(p),
            family: MarkerFamily::Numeric,
        })
    }

    /// Quotations in `s` (outside code and markers); marks quoted bytes in
    /// `mask` with [`QUOTED`].
    fn quotes(&self, s: &str, mask: &mut [u8], markers: &[Marker]) -> Vec<QuoteSpan> {
        let mut spans: Vec<(usize, usize)> = Vec::new();
        let mut straight: Option<usize> = None;
        let mut curly: Option<usize> = None;
        let mut prev: Option<char> = None;
        let mut it = s.char_indices().peekable();
        while let Some((pos, c)) = it.next() {
            let next = it.peek().map(|x| x.1);
            if mask[pos] & (CODE | MARK) != 0 {
                prev = Some(c);
                continue;
            }
            match c {
                '"' => match straight {
                    None if prev.is_none_or(|p| !p.is_alphanumeric()) => straight = Some(pos),
                    Some(open) if next.is_none_or(|n| !n.is_alphanumeric()) => {
                        spans.push((open, pos + 1));
                        straight = None;
                    }
                    _ => {}
                },
                '“' => curly = Some(pos),
                '”' => {
                    if let Some(open) = curly.take() {
                        spans.push((open, pos + c.len_utf8()));
                    }
                }
                _ => {}
            }
            prev = Some(c);
        }
        spans.sort_unstable();
        let mut out = Vec::new();
        for (open, end) in spans {
            let q = quote_span(s, open, end, markers);
            if q.text.chars().any(char::is_alphanumeric) && !self.is_title(&q.text) {
                let open_len = s[open..].chars().next().map_or(1, char::len_utf8);
                let close_len = s[..end].chars().next_back().map_or(1, char::len_utf8);
                for f in &mut mask[open + open_len..end - close_len] {
                    *f |= QUOTED;
                }
                out.push(q);
            }
        }
        out
    }

    /// Whether quoted text merely names a chunk's title ("the “Refund policy”").
    fn is_title(&self, text: &str) -> bool {
        if text.chars().count() > MAX_TITLE_CHARS {
            return false;
        }
        let n = normalize_title(text);
        !n.is_empty() && self.titles.iter().flatten().any(|t| *t == n)
    }

    // -- the whole run -------------------------------------------------

    fn run(&mut self) -> ParsedProse {
        let answer = self.answer;
        let lines = classify_lines(answer);
        let mut excluded = vec![false; lines.len()];
        let section = find_section(answer, &lines, &mut excluded);

        // Footnote definitions and legend lines, anywhere outside code.
        let mut footnotes: HashMap<String, &str> = HashMap::new();
        let mut legend_lines: Vec<(usize, &str)> = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            match l.kind {
                LineKind::FootnoteDef => {
                    if let Some(label) = &l.label {
                        footnotes
                            .entry(label.clone())
                            .or_insert(&answer[l.content..l.end]);
                    }
                    excluded[i] = true;
                }
                LineKind::Legend => {
                    if let Some(n) = l.label.as_deref().and_then(|x| x.parse().ok()) {
                        legend_lines.push((n, &answer[l.content..l.end]));
                    }
                    excluded[i] = true;
                }
                _ => {}
            }
        }

        let segments = self.segments(&lines, &excluded);

        let mut claims = Vec::new();
        let mut resolved = 0;
        if segments.is_empty() {
            if let Some(sec) = section {
                let body = body_text(answer, &lines, &excluded);
                claims.push(self.section_claim(0, body, &lines, &sec, &mut resolved));
            }
            return ParsedProse { claims, resolved };
        }
        // With inline markers, numbered section items and `[n]: …` lines are a legend.
        let mut legend: HashMap<usize, (String, usize)> = HashMap::new();
        let mut entries = legend_lines;
        if let Some(sec) = &section {
            for &j in &sec.items {
                let l = &lines[j];
                let text = &answer[l.content..l.end];
                if let Some((n, rest)) = leading_bracket_number(text) {
                    entries.push((n, rest));
                } else if l.kind == LineKind::ListItem
                    && let Some(n) = l.label.as_deref().and_then(|x| x.parse().ok())
                {
                    entries.push((n, text));
                }
            }
        }
        for (num, text) in entries {
            if let NameRes::Chunk(p) = self.resolve_item_name(text) {
                legend.entry(num).or_insert((text.trim().to_string(), p));
            }
        }
        for (index, seg) in segments.iter().enumerate() {
            claims.push(self.segment_claim(index, seg, &footnotes, &legend, &mut resolved));
        }
        ParsedProse { claims, resolved }
    }

    /// The body's sentences and items that carry markers.
    fn segments(&mut self, lines: &[Line], excluded: &[bool]) -> Vec<Segment> {
        let answer = self.answer;
        let mut blocks: Vec<(Range<usize>, LineKind)> = Vec::new();
        let mut cur: Option<(usize, usize, LineKind)> = None;
        for (i, l) in lines.iter().enumerate() {
            let breaks = excluded[i]
                || matches!(
                    l.kind,
                    LineKind::Blank
                        | LineKind::Code
                        | LineKind::Fence
                        | LineKind::Heading
                        | LineKind::Table
                        | LineKind::ListItem
                )
                || cur.is_some_and(|(_, _, k)| matches!(k, LineKind::Heading | LineKind::Table));
            if breaks && let Some((s, e, k)) = cur.take() {
                blocks.push((s..e, k));
            }
            if excluded[i] {
                continue;
            }
            match l.kind {
                LineKind::Blank | LineKind::Code | LineKind::Fence => {}
                LineKind::Heading | LineKind::Table | LineKind::ListItem => {
                    cur = Some((l.content, l.end, l.kind));
                }
                _ => match cur.as_mut() {
                    Some(c) => c.1 = l.end,
                    None => cur = Some((l.content, l.end, l.kind)),
                },
            }
        }
        if let Some((s, e, k)) = cur.take() {
            blocks.push((s..e, k));
        }

        let mut segments: Vec<Segment> = Vec::new();
        // The last sentence seen, with its quotes, for markers on a line of their own.
        let mut previous: Option<(Range<usize>, Vec<QuoteSpan>)> = None;
        for (range, kind) in &blocks {
            let s = &answer[range.clone()];
            let mut mask = vec![0u8; s.len()];
            for r in inline_code(s) {
                for f in &mut mask[r] {
                    *f |= CODE;
                }
            }
            let markers = self.scan_markers(s, &mask);
            if markers.is_empty() {
                previous = Some((last_sentence(s, range.start), Vec::new()));
                continue;
            }
            for m in &markers {
                for f in &mut mask[m.range.clone()] {
                    *f |= MARK;
                }
            }
            let quotes = self.quotes(s, &mut mask, &markers);
            let sents: Vec<Range<usize>> = if *kind == LineKind::Table {
                std::iter::once(0..s.len()).collect()
            } else {
                sentences(s, &mask, &quotes, &markers)
            };
            let (mut mi, mut qi) = (0, 0);
            for sr in sents {
                let mut ms = Vec::new();
                while mi < markers.len() && markers[mi].range.start < sr.end {
                    if markers[mi].range.start >= sr.start {
                        ms.push(shift_marker(&markers[mi], range.start));
                    }
                    mi += 1;
                }
                let mut qs = Vec::new();
                while qi < quotes.len() && quotes[qi].outer.start < sr.end {
                    if quotes[qi].outer.start >= sr.start {
                        let q = &quotes[qi];
                        qs.push(QuoteSpan {
                            outer: q.outer.start + range.start..q.outer.end + range.start,
                            text: q.text.clone(),
                        });
                    }
                    qi += 1;
                }
                let abs = sr.start + range.start..sr.end + range.start;
                if ms.is_empty() {
                    previous = Some((abs, qs));
                    continue;
                }
                let only_markers = !strip_markers(&answer[abs.clone()], abs.start, &ms)
                    .chars()
                    .any(char::is_alphanumeric);
                match (only_markers, segments.last_mut(), previous.take()) {
                    // Markers alone on a line cite the sentence before them.
                    (true, Some(last), Some((prev, _))) if last.range == prev => {
                        last.markers.extend(ms);
                        last.quotes.extend(qs);
                        previous = Some((prev, Vec::new()));
                    }
                    (true, _, Some((prev, mut prev_quotes))) => {
                        prev_quotes.extend(qs);
                        segments.push(Segment {
                            range: prev.clone(),
                            markers: ms,
                            quotes: prev_quotes,
                        });
                        previous = Some((prev, Vec::new()));
                    }
                    _ => {
                        segments.push(Segment {
                            range: abs.clone(),
                            markers: ms,
                            quotes: qs,
                        });
                        previous = Some((abs, Vec::new()));
                    }
                }
            }
        }
        segments
    }

    /// Resolves a reference-section item or a definition's text to one name:
    /// the cleaned text (links, URLs, emphasis removed) loosely, the same
    /// without a leading "see"/"per"/"Source:", a trailing parenthesis, then
    /// a URL equal to a chunk's `source_url`.
    fn resolve_item_name(&mut self, text: &str) -> NameRes {
        let (cleaned, urls) = clean_item(text);
        let r = self.resolve_name_loose(&cleaned);
        if r != NameRes::NotFound {
            return r;
        }
        // "See the Shipping FAQ.", "Source: Shipping FAQ"
        if let Some(rest) = strip_weak_prefix(&cleaned).or_else(|| strip_strong_prefix(&cleaned)) {
            let r = self.resolve_name_loose(rest);
            if r != NameRes::NotFound {
                return r;
            }
        }
        if let Some(open) = cleaned.rfind('(')
            && let Some(close) = cleaned[open..].find(')')
        {
            let r = self.resolve_name(&cleaned[open + 1..open + close]);
            if r != NameRes::NotFound {
                return r;
            }
        }
        for u in urls {
            let hits: Vec<usize> = self
                .chunks
                .chunks()
                .iter()
                .enumerate()
                .filter(|(_, c)| c.source_url.as_deref() == Some(u.as_str()))
                .map(|(i, _)| i)
                .collect();
            match hits.len() {
                0 => {}
                1 => return NameRes::Chunk(hits[0]),
                _ => return NameRes::Ambiguous(hits),
            }
        }
        NameRes::NotFound
    }

    /// The whole-answer claim of a reference section without inline markers.
    fn section_claim(
        &mut self,
        index: usize,
        body: String,
        lines: &[Line],
        sec: &Section<'_>,
        resolved: &mut usize,
    ) -> ProseClaim {
        let mut item_texts: Vec<&str> = sec
            .items
            .iter()
            .map(|&j| &self.answer[lines[j].content..lines[j].end])
            .collect();
        if !sec.inline.is_empty() {
            item_texts.push(sec.inline);
        }
        let mut claim = ProseClaim {
            index,
            text: body,
            citations: Vec::new(),
            attempted: 0,
            warnings: Vec::new(),
        };
        for item in item_texts {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let label = leading_bracket_number(item);
            let name_text = label.map_or(item, |(_, rest)| rest);
            let mut mask = vec![0u8; name_text.len()];
            for r in inline_code(name_text) {
                for f in &mut mask[r] {
                    *f |= CODE;
                }
            }
            let inner = self.scan_markers(name_text, &mask);
            let quotes = self.quotes(name_text, &mut mask, &inner);
            let quote_texts: Vec<&str> = quotes.iter().map(|q| q.text.as_str()).collect();
            let mut attempts = Vec::new();
            if inner.is_empty() {
                let mut parts = vec![(
                    name_text.to_string(),
                    self.resolve_item_name(&strip_quoted(name_text, &quotes)),
                )];
                if parts[0].1 == NameRes::NotFound {
                    let split = self.resolve_payload(&strip_quoted(name_text, &quotes));
                    if split.iter().any(|(_, r)| *r != NameRes::NotFound) {
                        parts = split;
                    } else if let Some((n, _)) = label {
                        parts = vec![(item.to_string(), NameRes::Positions(vec![(n, n)]))];
                    }
                }
                for (name, res) in parts {
                    if res == NameRes::NotFound {
                        self.unresolved(&mut claim, item, &name);
                        continue;
                    }
                    self.expand(
                        &res,
                        item,
                        MarkerFamily::ReferenceSection,
                        0,
                        &quote_texts,
                        &mut claim,
                        &mut attempts,
                    );
                }
            } else {
                for m in &inner {
                    self.expand_marker(
                        m,
                        item,
                        &HashMap::new(),
                        &HashMap::new(),
                        &quote_texts,
                        &mut claim,
                        &mut attempts,
                    );
                }
                for a in &mut attempts {
                    a.family = MarkerFamily::ReferenceSection;
                }
            }
            *resolved += attempts.len();
            let qs: Vec<(usize, String)> = quotes
                .iter()
                .map(|q| (q.outer.start, q.text.clone()))
                .collect();
            self.check_quotes(&mut claim, attempts, &qs);
        }
        claim
    }

    fn segment_claim(
        &mut self,
        index: usize,
        seg: &Segment,
        footnotes: &HashMap<String, &str>,
        legend: &HashMap<usize, (String, usize)>,
        resolved: &mut usize,
    ) -> ProseClaim {
        let text = clean_claim_text(&strip_markers(
            &self.answer[seg.range.clone()],
            seg.range.start,
            &seg.markers,
        ));
        let mut claim = ProseClaim {
            index,
            text,
            citations: Vec::new(),
            attempted: 0,
            warnings: Vec::new(),
        };
        let quote_texts: Vec<&str> = seg.quotes.iter().map(|q| q.text.as_str()).collect();
        let mut attempts = Vec::new();
        for m in &seg.markers {
            let marker_text = &self.answer[m.range.clone()];
            self.expand_marker(
                m,
                marker_text,
                footnotes,
                legend,
                &quote_texts,
                &mut claim,
                &mut attempts,
            );
        }
        *resolved += attempts.len();
        let qs: Vec<(usize, String)> = seg
            .quotes
            .iter()
            .map(|q| (q.outer.start, q.text.clone()))
            .collect();
        self.check_quotes(&mut claim, attempts, &qs);
        claim
    }

    fn unresolved(&self, claim: &mut ProseClaim, marker_text: &str, name: &str) {
        let ci = claim.attempted;
        claim.attempted += 1;
        claim.warnings.push(warning(
            WarningCode::UnresolvedReference,
            Some(claim.index),
            Some(ci),
            None,
            format!(
                "Marker {} of claim {}: {:?} matches no chunk ID, position or chunk title.",
                truncate(marker_text, 120),
                claim.index,
                truncate(name, 120)
            ),
        ));
    }

    /// Turns one marker into citation attempts (or warnings).
    #[allow(clippy::too_many_arguments)]
    fn expand_marker(
        &mut self,
        m: &Marker,
        marker_text: &str,
        footnotes: &HashMap<String, &str>,
        legend: &HashMap<usize, (String, usize)>,
        quotes: &[&str],
        claim: &mut ProseClaim,
        attempts: &mut Vec<Attempt>,
    ) {
        let at = m.range.start;
        match &m.kind {
            MarkerKind::Positions(ranges) => {
                for &(a, b) in ranges {
                    let mut rest: Vec<(usize, usize)> = Vec::new();
                    for n in a..=b {
                        if let Some((item, p)) = legend.get(&n) {
                            if *p + 1 != n {
                                claim.warnings.push(warning(
                                    WarningCode::MarkerRemapped,
                                    Some(claim.index),
                                    Some(claim.attempted),
                                    Some(self.chunk_id(*p)),
                                    format!(
                                        "Marker {marker_text} of claim {}: the answer's own source list defines [{n}] as {:?}, which is chunk {:?} at position {}, not position {n}; the source list was followed.",
                                        claim.index,
                                        truncate(item, 120),
                                        self.chunk_id(*p),
                                        p + 1
                                    ),
                                ));
                            }
                            self.expand(
                                &NameRes::Chunk(*p),
                                marker_text,
                                m.family,
                                at,
                                quotes,
                                claim,
                                attempts,
                            );
                        } else {
                            match rest.last_mut() {
                                Some(r) if r.1 + 1 == n => r.1 = n,
                                _ => rest.push((n, n)),
                            }
                        }
                    }
                    if !rest.is_empty() {
                        self.expand(
                            &NameRes::Positions(rest),
                            marker_text,
                            m.family,
                            at,
                            quotes,
                            claim,
                            attempts,
                        );
                    }
                }
            }
            MarkerKind::ChunkId(p) => {
                self.expand(
                    &NameRes::Chunk(*p),
                    marker_text,
                    m.family,
                    at,
                    quotes,
                    claim,
                    attempts,
                );
            }
            MarkerKind::Named(parts) => {
                for (name, res) in parts {
                    if *res == NameRes::NotFound {
                        self.unresolved(claim, marker_text, name);
                        continue;
                    }
                    self.expand(res, marker_text, m.family, at, quotes, claim, attempts);
                }
            }
            MarkerKind::Footnote(label) => {
                let numeric = label
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n <= self.max_number);
                let def = footnotes.get(label).copied();
                let res = match def {
                    Some(def) => self.resolve_definition(def),
                    None => NameRes::NotFound,
                };
                let res = match (res, numeric) {
                    (NameRes::NotFound, Some(n)) => NameRes::Positions(vec![(n, n)]),
                    (r, _) => r,
                };
                if res == NameRes::NotFound {
                    let why = match def {
                        Some(d) => format!("its definition {:?}", truncate(d.trim(), 120)),
                        None => format!("[^{label}] (no definition, label not a number)"),
                    };
                    self.unresolved(claim, marker_text, &why);
                    return;
                }
                self.expand(&res, marker_text, m.family, at, quotes, claim, attempts);
            }
        }
    }

    /// A footnote definition: markers inside it, else a name.
    fn resolve_definition(&mut self, def: &str) -> NameRes {
        let mut mask = vec![0u8; def.len()];
        for r in inline_code(def) {
            for f in &mut mask[r] {
                *f |= CODE;
            }
        }
        let inner = self.scan_markers(def, &mask);
        let mut positions: Vec<(usize, usize)> = Vec::new();
        for m in &inner {
            match &m.kind {
                MarkerKind::Positions(p) => positions.extend(p.iter().copied()),
                MarkerKind::ChunkId(p) => return NameRes::Chunk(*p),
                MarkerKind::Named(parts) => {
                    for (_, r) in parts {
                        match r {
                            NameRes::Chunk(_) | NameRes::Ambiguous(_) => return r.clone(),
                            NameRes::Positions(p) => positions.extend(p.iter().copied()),
                            NameRes::NotFound => {}
                        }
                    }
                }
                MarkerKind::Footnote(_) => {}
            }
        }
        if !positions.is_empty() {
            return NameRes::Positions(positions);
        }
        self.resolve_item_name(def)
    }

    /// Expands a resolution into attempts; positions out of range and
    /// ambiguous names become warnings.
    #[allow(clippy::too_many_arguments)]
    fn expand(
        &mut self,
        res: &NameRes,
        marker_text: &str,
        family: MarkerFamily,
        at: usize,
        quotes: &[&str],
        claim: &mut ProseClaim,
        attempts: &mut Vec<Attempt>,
    ) {
        let len = self.chunks.len();
        let mut push = |claim: &mut ProseClaim, chunk: usize| {
            attempts.push(Attempt {
                chunk,
                family,
                marker: marker_text.to_string(),
                at,
                ci: claim.attempted,
            });
            claim.attempted += 1;
        };
        match res {
            NameRes::Chunk(p) => push(claim, *p),
            NameRes::Positions(ranges) => {
                for &(a, b) in ranges {
                    for n in a.max(1)..=b.min(len) {
                        push(claim, n - 1);
                    }
                    let mut bad = Vec::new();
                    if a == 0 {
                        bad.push("0".to_string());
                    }
                    if b > len {
                        let from = a.max(len + 1);
                        bad.push(if from == b {
                            format!("{b}")
                        } else {
                            format!("{from}–{b}")
                        });
                    }
                    if !bad.is_empty() {
                        let ci = claim.attempted;
                        claim.attempted += 1;
                        claim.warnings.push(warning(
                            WarningCode::MarkerOutOfRange,
                            Some(claim.index),
                            Some(ci),
                            None,
                            format!(
                                "Marker {} of claim {} refers to position {} but the answer was given {len} chunk(s), numbered from 1; it was ignored (positions never wrap around).",
                                truncate(marker_text, 120),
                                claim.index,
                                bad.join(" and ")
                            ),
                        ));
                    }
                }
            }
            NameRes::Ambiguous(cands) => {
                // A quote found in exactly one candidate settles it.
                let hits: Vec<usize> = cands
                    .iter()
                    .copied()
                    .filter(|&c| quotes.iter().any(|q| self.found(c, q)))
                    .collect();
                if hits.len() == 1 {
                    push(claim, hits[0]);
                    return;
                }
                let ci = claim.attempted;
                claim.attempted += 1;
                let ids: Vec<String> = cands
                    .iter()
                    .map(|&c| format!("{:?}", self.chunk_id(c)))
                    .collect();
                claim.warnings.push(warning(
                    WarningCode::AmbiguousReference,
                    Some(claim.index),
                    Some(ci),
                    None,
                    format!(
                        "Marker {} of claim {} matches {} chunks equally well ({}); none was picked.",
                        truncate(marker_text, 120),
                        claim.index,
                        cands.len(),
                        ids.join(", ")
                    ),
                ));
            }
            NameRes::NotFound => {}
        }
    }

    /// Checks each attempt against the sentence's quotes and records the
    /// survivors (deduplicated) on the claim.
    fn check_quotes(
        &self,
        claim: &mut ProseClaim,
        attempts: Vec<Attempt>,
        quotes: &[(usize, String)],
    ) {
        for a in attempts {
            let quote = if quotes.is_empty() {
                None
            } else {
                // Nearest quote before the marker first, then after it.
                let mut order: Vec<&(usize, String)> = quotes.iter().collect();
                order.sort_by_key(|(pos, _)| {
                    if *pos <= a.at {
                        (0, a.at - pos)
                    } else {
                        (1, pos - a.at)
                    }
                });
                match order.iter().find(|(_, q)| self.found(a.chunk, q)) {
                    Some((_, q)) => Some(q.clone()),
                    None => {
                        let nearest = &order[0].1;
                        let elsewhere: Vec<String> = (0..self.chunks.len())
                            .filter(|&c| c != a.chunk && self.found(c, nearest))
                            .map(|c| format!("{:?} (position {})", self.chunk_id(c), c + 1))
                            .collect();
                        let where_ = if elsewhere.is_empty() {
                            "it occurs in no retrieved chunk".to_string()
                        } else {
                            format!("it occurs in {}", elsewhere.join(", "))
                        };
                        claim.warnings.push(warning(
                            WarningCode::MisattributedMarker,
                            Some(claim.index),
                            Some(a.ci),
                            Some(self.chunk_id(a.chunk)),
                            format!(
                                "Marker {} of claim {} points to chunk {:?} (position {}), but the quoted text {:?} is not in it under the matching rule; {where_}. The citation was dropped.",
                                truncate(&a.marker, 120),
                                claim.index,
                                self.chunk_id(a.chunk),
                                a.chunk + 1,
                                truncate(nearest, 200)
                            ),
                        ));
                        continue;
                    }
                }
            };
            if claim
                .citations
                .iter()
                .any(|c| c.chunk_position == a.chunk && c.quote == quote)
            {
                claim.warnings.push(warning(
                    WarningCode::DuplicateCitation,
                    Some(claim.index),
                    Some(a.ci),
                    Some(self.chunk_id(a.chunk)),
                    format!(
                        "Marker {} of claim {} repeats an earlier citation of chunk {:?} and was merged into it.",
                        truncate(&a.marker, 120),
                        claim.index,
                        self.chunk_id(a.chunk)
                    ),
                ));
                continue;
            }
            claim.citations.push(ProseCitation {
                chunk_position: a.chunk,
                chunk_id: self.chunk_id(a.chunk).to_string(),
                family: a.family,
                marker: a.marker,
                quote,
            });
        }
    }
}

fn named_family(parts: &[(String, NameRes)]) -> MarkerFamily {
    if parts
        .iter()
        .all(|(_, r)| matches!(r, NameRes::Positions(_)))
    {
        MarkerFamily::Numeric
    } else {
        MarkerFamily::Named
    }
}

/// The quotation `s[open..end]` with marker bytes removed and white space collapsed.
fn quote_span(s: &str, open: usize, end: usize, markers: &[Marker]) -> QuoteSpan {
    let open_len = s[open..].chars().next().map_or(1, char::len_utf8);
    let close_len = s[..end].chars().next_back().map_or(1, char::len_utf8);
    let inner = open + open_len..end - close_len;
    let mut text = String::new();
    let mut at = inner.start;
    for m in markers
        .iter()
        .filter(|m| m.range.start >= inner.start && m.range.end <= inner.end)
    {
        if m.range.start >= at {
            text.push_str(&s[at..m.range.start]);
            at = m.range.end;
        }
    }
    text.push_str(&s[at..inner.end]);
    QuoteSpan {
        outer: open..end,
        text: collapse_ws(&text),
    }
}

/// The absolute range of the last sentence of a block without markers.
fn last_sentence(s: &str, base: usize) -> Range<usize> {
    let mask = vec![0u8; s.len()];
    let sents = sentences(s, &mask, &[], &[]);
    sents
        .last()
        .map_or(base..base + s.len(), |r| r.start + base..r.end + base)
}

/// Finds the trailing reference section and marks its lines excluded.
fn find_section<'t>(answer: &'t str, lines: &[Line], excluded: &mut [bool]) -> Option<Section<'t>> {
    for idx in (0..lines.len()).rev() {
        let l = &lines[idx];
        if !matches!(l.kind, LineKind::Text | LineKind::Heading) {
            continue;
        }
        let Some(inline) = section_heading(&answer[l.start..l.end]) else {
            continue;
        };
        let mut items = Vec::new();
        let mut end = idx + 1;
        let mut blank_after_item = false;
        for (j, lj) in lines.iter().enumerate().skip(idx + 1) {
            match lj.kind {
                LineKind::Blank => {
                    if !items.is_empty() {
                        blank_after_item = true;
                    }
                    continue;
                }
                LineKind::ListItem | LineKind::FootnoteDef | LineKind::Legend => items.push(j),
                LineKind::Text if !blank_after_item => items.push(j),
                _ => break,
            }
            end = j + 1;
        }
        if items.is_empty() && inline.is_empty() {
            // A lone heading ("Sources") with nothing under it is prose.
            continue;
        }
        for e in excluded.iter_mut().take(end).skip(idx) {
            *e = true;
        }
        return Some(Section { items, inline });
    }
    None
}

/// Splits a block into sentences (ranges relative to `s`).
fn sentences(s: &str, mask: &[u8], quotes: &[QuoteSpan], markers: &[Marker]) -> Vec<Range<usize>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut seg_start = 0;
    let skip_ws = |mut k: usize| {
        while k < b.len() && b[k].is_ascii_whitespace() {
            k += 1;
        }
        k
    };
    let marker_at = |k: usize| {
        markers
            .binary_search_by_key(&k, |m| m.range.start)
            .ok()
            .map(|i| &markers[i])
    };
    // Leading style ("[1] Refunds… [2] Shipping…"): markers after a full
    // stop open the next sentence instead of closing this one.
    let leading = marker_at(skip_ws(0)).is_some();
    let mut pos = 0;
    while pos < b.len() {
        let Some(c) = s[pos..].chars().next() else {
            break;
        };
        let here = pos;
        pos += c.len_utf8();
        if mask[here] & (CODE | MARK) != 0 {
            continue;
        }
        let closes_quote = matches!(c, '"' | '”')
            && quotes.binary_search_by_key(&pos, |q| q.outer.end).is_ok()
            && s[..here].chars().next_back().is_some_and(is_terminator);
        let term = closes_quote || (is_terminator(c) && mask[here] & QUOTED == 0);
        if !term {
            continue;
        }
        if c == '.' && !closes_quote && is_abbreviation(&s[seg_start..here]) {
            continue;
        }
        let mut j = pos;
        // Runs of terminators ("?!", "...") and closing marks.
        while let Some(n) = s[j..].chars().next() {
            if is_terminator(n) || matches!(n, '"' | '”' | '’' | ')' | '*' | '_') {
                j += n.len_utf8();
            } else {
                break;
            }
        }
        let mut k = j;
        let mut absorbed = false;
        while let Some(m) = marker_at(skip_ws(k)).filter(|_| !leading) {
            k = m.range.end;
            absorbed = true;
        }
        if absorbed {
            while k < b.len() && matches!(b[k], b'.' | b',' | b';') {
                k += 1;
            }
            j = k;
        }
        pos = j;
        let next = skip_ws(j);
        if next >= b.len() {
            break;
        }
        let next_char = s[next..].chars().next().unwrap_or(' ');
        // CJK full stops end a sentence without a following space.
        let cjk = matches!(c, '。' | '！' | '？');
        let opens = leading && marker_at(next).is_some();
        if absorbed || cjk || opens || (next > j && !next_char.is_lowercase()) {
            out.push(seg_start..j);
            seg_start = next;
            pos = next;
        }
    }
    if seg_start < b.len() {
        out.push(seg_start..b.len());
    }
    out
}

enum Scan {
    Marker(Marker),
    Skip(usize),
    No,
}

fn shift_marker(m: &Marker, by: usize) -> Marker {
    Marker {
        range: m.range.start + by..m.range.end + by,
        kind: m.kind.clone(),
        family: m.family,
    }
}

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '。' | '！' | '？' | '…')
}

/// Whether the text before a period ends with a common abbreviation or an initial.
fn is_abbreviation(before: &str) -> bool {
    let word: String = before
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '.')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    if word.chars().count() == 1 && word.chars().all(char::is_uppercase) {
        return true;
    }
    matches!(
        word.to_lowercase().as_str(),
        "e.g"
            | "i.e"
            | "etc"
            | "vs"
            | "mr"
            | "mrs"
            | "ms"
            | "dr"
            | "prof"
            | "no"
            | "fig"
            | "p"
            | "pp"
            | "approx"
            | "inc"
            | "ltd"
            | "co"
            | "st"
            | "cf"
            | "u.s"
            | "sec"
            | "art"
            | "vol"
            | "ch"
    )
}

/// `[3] Title` → (3, "Title").
fn leading_bracket_number(text: &str) -> Option<(usize, &str)> {
    let t = text.trim_start();
    let rest = t.strip_prefix('[')?;
    let close = rest.find(']')?;
    let n: usize = parse_num(&rest[..close], usize::MAX)?;
    let after = rest[close + 1..].trim_start_matches(':').trim();
    Some((n, after))
}

/// "Document 2", "Source #2", "doc 2", "Chunk 2", "Passage 2" → positions.
fn numbered_name(name: &str, max: usize) -> Option<Vec<(usize, usize)>> {
    let lower = name.to_ascii_lowercase();
    for k in [
        "document", "doc", "source", "chunk", "passage", "context", "excerpt",
    ] {
        if let Some(rest) = lower.strip_prefix(k) {
            let rest = rest.trim_start_matches(|c: char| c == '#' || c == ':' || c.is_whitespace());
            if rest.is_empty() {
                return None;
            }
            return parse_positions(rest, max);
        }
    }
    None
}

/// Removes Markdown link syntax, URLs and emphasis from an item; returns the
/// text and the URLs it held.
fn clean_item(text: &str) -> (String, Vec<String>) {
    let mut urls = Vec::new();
    let mut out = String::new();
    let mut rest = text.trim();
    // Markdown links: keep the text, collect the URL.
    while let Some(open) = rest.find('[') {
        let Some(close_rel) = rest[open..].find("](") else {
            break;
        };
        let close = open + close_rel;
        let Some(end_rel) = rest[close + 2..].find(')') else {
            break;
        };
        let end = close + 2 + end_rel;
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        urls.push(rest[close + 2..end].trim().to_string());
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    let mut words = Vec::new();
    for w in out.split_whitespace() {
        let bare = w.trim_matches(|c| matches!(c, '<' | '>' | '(' | ')' | ',' | ';'));
        if bare.starts_with("http://") || bare.starts_with("https://") {
            urls.push(bare.to_string());
        } else {
            words.push(w);
        }
    }
    let joined = words.join(" ");
    let cleaned = joined
        .trim_matches(|c| matches!(c, '*' | '_' | '-' | '–' | '—' | ':' | ' '))
        .replace("**", "")
        .replace("()", "")
        .replace("<>", "");
    (cleaned.trim().to_string(), urls)
}

/// `text` with its quotations removed.
fn strip_quoted(text: &str, quotes: &[QuoteSpan]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for q in quotes {
        if q.outer.start >= at {
            out.push_str(&text[at..q.outer.start]);
            at = q.outer.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// The segment text with the markers cut out (`base` is the segment's offset).
fn strip_markers(text: &str, base: usize, markers: &[Marker]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut ranges: Vec<Range<usize>> = markers
        .iter()
        .filter(|m| m.range.start >= base && m.range.end <= base + text.len())
        .map(|m| m.range.start - base..m.range.end - base)
        .collect();
    ranges.sort_by_key(|r| r.start);
    for r in ranges {
        if r.start >= at {
            out.push_str(&text[at..r.start]);
            at = r.end;
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Collapses white space and removes the space left before punctuation.
fn clean_claim_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space && !matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')') {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// Collapses every run of white space to one space and trims.
fn collapse_ws(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for w in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

/// The answer without the excluded lines (reference section, definitions),
/// runs of blank lines collapsed to one.
fn body_text(answer: &str, lines: &[Line], excluded: &[bool]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for (l, &ex) in lines.iter().zip(excluded) {
        if ex {
            continue;
        }
        let text = &answer[l.start..l.end];
        if text.trim().is_empty() {
            blank = true;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(text.trim_end());
    }
    out
}

fn warning(
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

fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((b, _)) => format!("{}…", &s[..b]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_normalize() {
        assert_eq!(
            normalize_title("The Q3 Revenue Memo.pdf"),
            "q3 revenue memo"
        );
        assert_eq!(normalize_title("  Refund—policy!! "), "refund policy");
        assert_eq!(normalize_title("A"), "");
    }

    #[test]
    fn distance_is_bounded() {
        assert_eq!(title_distance("refund policy", "refund polciy", 2), Some(1));
        assert_eq!(title_distance("refund policy", "shipping faq", 3), None);
        assert_eq!(title_distance("abc", "abc", 0), Some(0));
        assert_eq!(title_distance("", "ab", 2), Some(2));
    }

    #[test]
    fn positions_parse() {
        assert_eq!(parse_positions("1, 3-4", 999), Some(vec![(1, 1), (3, 4)]));
        assert_eq!(parse_positions("2024", 999), None);
        assert_eq!(parse_positions("sic", 999), None);
        assert_eq!(parse_positions("1.5", 999), None);
    }
}
