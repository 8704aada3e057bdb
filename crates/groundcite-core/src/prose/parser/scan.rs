//! Markers and quotations in one block.

use crate::prose::markers::{
    CODE, MARK, Marker, MarkerKind, QUOTED, QuoteSpan, Scan, clean_name, named_family, parse_num,
    parse_positions, quote_span, strip_strong_prefix, strip_weak_prefix,
};
use crate::prose::titles::NameRes;
use crate::prose::types::{MAX_MARKER_BYTES, MarkerFamily};

use super::Parser;

impl<'a> Parser<'a> {
    // -- scanning ------------------------------------------------------

    /// Finds the markers of `s` (a block or an item), skipping bytes whose
    /// `mask` has [`CODE`].
    pub(super) fn scan_markers(&mut self, s: &str, mask: &[u8]) -> Vec<Marker> {
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
    pub(super) fn quotes(&self, s: &str, mask: &mut [u8], markers: &[Marker]) -> Vec<QuoteSpan> {
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
}
