//! Marker syntax that needs no chunk: inline code, positions, prefixes,
//! quotations, and the byte-mask flags.

use std::ops::Range;

use super::titles::NameRes;
use super::types::MarkerFamily;

/// Flags of a block's byte mask.
pub(super) const CODE: u8 = 1;

pub(super) const MARK: u8 = 2;

pub(super) const QUOTED: u8 = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum MarkerKind {
    /// Inclusive 1-based ranges.
    Positions(Vec<(usize, usize)>),
    Footnote(String),
    ChunkId(usize),
    /// A named reference, already resolved (each part separately).
    Named(Vec<(String, NameRes)>),
}

#[derive(Debug, Clone)]
pub(super) struct Marker {
    /// Byte range in the scanned text.
    pub(super) range: Range<usize>,
    pub(super) kind: MarkerKind,
    pub(super) family: MarkerFamily,
}

#[derive(Debug, Clone)]
pub(super) struct QuoteSpan {
    /// Byte range of the whole quotation, marks included.
    pub(super) outer: Range<usize>,
    /// The quoted text, markers removed.
    pub(super) text: String,
}

pub(super) enum Scan {
    Marker(Marker),
    Skip(usize),
    No,
}

/// Byte ranges of inline code spans in `s` (backtick runs of equal length).
pub(super) fn inline_code(s: &str) -> Vec<Range<usize>> {
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
pub(super) fn parse_positions(s: &str, max: usize) -> Option<Vec<(usize, usize)>> {
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

pub(super) fn parse_num(s: &str, max: usize) -> Option<usize> {
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
pub(super) fn strip_strong_prefix(s: &str) -> Option<&str> {
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

pub(super) fn strip_weak_prefix(s: &str) -> Option<&str> {
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
pub(super) fn clean_name(s: &str) -> &str {
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

pub(super) fn named_family(parts: &[(String, NameRes)]) -> MarkerFamily {
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
pub(super) fn quote_span(s: &str, open: usize, end: usize, markers: &[Marker]) -> QuoteSpan {
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

pub(super) fn shift_marker(m: &Marker, by: usize) -> Marker {
    Marker {
        range: m.range.start + by..m.range.end + by,
        kind: m.kind.clone(),
        family: m.family,
    }
}

/// `[3] Title` → (3, "Title").
pub(super) fn leading_bracket_number(text: &str) -> Option<(usize, &str)> {
    let t = text.trim_start();
    let rest = t.strip_prefix('[')?;
    let close = rest.find(']')?;
    let n: usize = parse_num(&rest[..close], usize::MAX)?;
    let after = rest[close + 1..].trim_start_matches(':').trim();
    Some((n, after))
}

/// "Document 2", "Source #2", "doc 2", "Chunk 2", "Passage 2" → positions.
pub(super) fn numbered_name(name: &str, max: usize) -> Option<Vec<(usize, usize)>> {
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

/// Collapses every run of white space to one space and trims.
pub(super) fn collapse_ws(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for w in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_parse() {
        assert_eq!(parse_positions("1, 3-4", 999), Some(vec![(1, 1), (3, 4)]));
        assert_eq!(parse_positions("2024", 999), None);
        assert_eq!(parse_positions("sic", 999), None);
        assert_eq!(parse_positions("1.5", 999), None);
    }
}
