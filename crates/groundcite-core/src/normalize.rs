//! The matching rule: one normalization, one substring test, spans mapped back
//! to the original text.
//!
//! Every place in groundcite that decides whether a quote is "in" a chunk goes
//! through [`find_quote`]; the incident re-verifier, the batch verifier, the
//! service and streaming all give the same verdict because they share it.
//!
//! # The rule (profile [`MatchProfile::Default`])
//! Both texts are normalized, then the quote must be a substring of the chunk:
//! 1. full Unicode case folding (as Python's `str.casefold`), so `É` matches `é`
//!    and `ß` matches `SS`; except that the Latin and Armenian ligatures
//!    U+FB00–U+FB06 and U+FB13–U+FB17, which full folding would expand, are
//!    kept as written;
//! 2. curly quotes become straight: U+2018 U+2019 U+201A U+201B U+2032 → `'`,
//!    U+201C U+201D U+201E U+201F U+2033 → `"`;
//! 3. every run of Unicode `White_Space` characters becomes one space, and
//!    leading/trailing white space is ignored.
//!
//! Nothing else is folded: dashes, ellipses and ligatures match as written.
//! [`MatchProfile::Lenient`] additionally applies NFKC, maps U+2010–U+2015 and
//! U+2212 to `-`, U+2026 to `...`, and drops U+00AD, U+200B–U+200D and U+FEFF.
//!
//! # Spans
//! Normalization keeps, for every normalized byte, the *unit* of the original
//! text it came from (a code point; in the lenient profile a starter plus its
//! combining marks, because NFKC composes across code points). A normalized
//! match is accepted only when it starts and ends on unit boundaries, so the
//! original text under the span normalizes to exactly the normalized quote:
//! `normalize(source_text) == normalize(quote)` holds for every match.

use memchr::memmem;
use serde::{Deserialize, Serialize};

/// Which normalization the matching rule applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchProfile {
    /// Case folding, curly quotes, white-space runs. The only default.
    #[default]
    Default,
    /// Default plus NFKC, dash and ellipsis folding and invisible-character
    /// removal. Opt-in; named in the contract when used.
    Lenient,
}

impl MatchProfile {
    /// The name used on the command line and in the contract.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchProfile::Default => "default",
            MatchProfile::Lenient => "lenient",
        }
    }
}

impl std::str::FromStr for MatchProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(MatchProfile::Default),
            "lenient" => Ok(MatchProfile::Lenient),
            other => Err(format!(
                "unknown match profile {other:?} (expected \"default\" or \"lenient\")"
            )),
        }
    }
}

/// A half-open range of Unicode code points into a chunk's original content.
///
/// Invariant: `start <= end`. This is the convention of Python string slices
/// and of Anthropic's `char_location`; UIs working in UTF-16 convert at the
/// edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// First code point of the span.
    pub start: usize,
    /// One past the last code point of the span.
    pub end: usize,
}

impl Span {
    /// Builds a span; `start <= end` is checked here, once, where spans are made.
    pub fn new(start: usize, end: usize) -> Span {
        assert!(start <= end, "span start {start} after end {end}");
        Span { start, end }
    }

    /// The text under this span, or `None` when it lies outside `text`.
    pub fn slice<'t>(&self, text: &'t str) -> Option<&'t str> {
        let start = char_to_byte(text, self.start)?;
        let end = start + char_to_byte(&text[start..], self.end - self.start)?;
        Some(&text[start..end])
    }
}

/// Byte offset of code point `cp` in `text` (`cp == len` maps to `text.len()`).
fn char_to_byte(text: &str, cp: usize) -> Option<usize> {
    if cp == 0 {
        return Some(0);
    }
    let mut seen = 0;
    for (i, _) in text.char_indices() {
        if seen == cp {
            return Some(i);
        }
        seen += 1;
    }
    (seen == cp).then_some(text.len())
}

/// How a quote was found in its chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchKind {
    /// The quote occurs in the chunk byte for byte.
    Exact,
    /// The quote occurs only after normalization.
    Normalized,
    /// Nothing to check against (a bare marker from prose); never produced by
    /// [`find_quote`].
    Reference,
}

impl MatchKind {
    /// The name used in the contract.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Normalized => "normalized",
            MatchKind::Reference => "reference",
        }
    }
}

/// Where a quote sits in the original chunk text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteMatch {
    /// Code-point span in the chunk's original content.
    pub span: Span,
    /// Byte range of the same span (internal use; the contract carries code points).
    pub bytes: std::ops::Range<usize>,
    /// Exact or normalized.
    pub kind: MatchKind,
}

/// The closest place a quote that did not match comes to matching.
#[derive(Debug, Clone, PartialEq)]
pub struct NearMiss {
    /// Code-point span in the chunk's original content.
    pub span: Span,
    /// The chunk's text under the span.
    pub source_text: String,
    /// 1 − edit distance / length, over normalized text; 1.0 would be a match.
    pub similarity: f64,
}

/// Outcome of matching a quote against a chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum QuoteVerdict {
    /// The quote is in the chunk.
    Found(QuoteMatch),
    /// The quote normalizes to nothing, or has no letter or digit.
    Empty,
    /// The quote is not in the chunk; the closest near miss when one is close enough.
    NotFound(Option<NearMiss>),
}

/// Normalizes `text` under `profile` (no span map).
pub fn normalize(text: &str, profile: MatchProfile) -> String {
    let mut out = Normalizer::new(profile, false);
    out.run(text);
    out.text
}

/// A normalized text together with the map back to its original.
#[derive(Debug, Clone)]
pub struct NormalizedText {
    text: String,
    /// For each byte of `text`, the index into `units` it came from.
    unit_of_byte: Vec<u32>,
    units: Vec<Unit>,
}

#[derive(Debug, Clone, Copy)]
struct Unit {
    start_cp: u32,
    end_cp: u32,
    start_byte: u32,
    end_byte: u32,
}

impl NormalizedText {
    /// Normalizes `original` keeping the span map.
    pub fn new(original: &str, profile: MatchProfile) -> NormalizedText {
        let mut n = Normalizer::new(profile, true);
        n.run(original);
        NormalizedText {
            text: n.text,
            unit_of_byte: n.unit_of_byte,
            units: n.units,
        }
    }

    /// The normalized text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn starts_unit(&self, b: usize) -> bool {
        b == 0 || self.unit_of_byte[b] != self.unit_of_byte[b - 1]
    }

    fn ends_unit(&self, b: usize) -> bool {
        b == self.text.len() || self.unit_of_byte[b] != self.unit_of_byte[b - 1]
    }

    /// Original (code points, bytes) covered by normalized bytes `[s, e)`, `s < e`.
    fn original_range(&self, s: usize, e: usize) -> (Span, std::ops::Range<usize>) {
        let first = self.units[self.unit_of_byte[s] as usize];
        let last = self.units[self.unit_of_byte[e - 1] as usize];
        (
            Span::new(first.start_cp as usize, last.end_cp as usize),
            first.start_byte as usize..last.end_byte as usize,
        )
    }

    /// Leftmost unit-aligned occurrence of the already-normalized `needle`.
    fn find_aligned(&self, needle: &str) -> Option<(usize, usize)> {
        let finder = memmem::Finder::new(needle.as_bytes());
        let hay = self.text.as_bytes();
        let mut from = 0;
        while let Some(rel) = finder.find(&hay[from..]) {
            let s = from + rel;
            let e = s + needle.len();
            if self.starts_unit(s) && self.ends_unit(e) {
                return Some((s, e));
            }
            from = s + 1;
        }
        None
    }
}

/// Streams original text into its normalized form.
struct Normalizer {
    profile: MatchProfile,
    keep_map: bool,
    text: String,
    unit_of_byte: Vec<u32>,
    units: Vec<Unit>,
    /// Unit index where the current run of white space began, if in one.
    pending_space: Option<u32>,
    scratch: String,
}

impl Normalizer {
    fn new(profile: MatchProfile, keep_map: bool) -> Normalizer {
        Normalizer {
            profile,
            keep_map,
            text: String::new(),
            unit_of_byte: Vec::new(),
            units: Vec::new(),
            pending_space: None,
            scratch: String::new(),
        }
    }

    fn run(&mut self, original: &str) {
        self.text.reserve(original.len());
        if self.keep_map {
            self.unit_of_byte.reserve(original.len());
        }
        match self.profile {
            MatchProfile::Default => self.run_default(original),
            MatchProfile::Lenient => self.run_lenient(original),
        }
        // Trailing white space is ignored: a pending run is simply not emitted.
    }

    fn run_default(&mut self, original: &str) {
        for (cp, (byte, c)) in original.char_indices().enumerate() {
            let unit = self.push_unit(cp, byte, 1, c.len_utf8());
            if c.is_ascii() {
                // Fast path: ASCII folds to ASCII, one byte each.
                if c.is_whitespace() {
                    self.space(unit);
                } else {
                    self.emit(unit, c.to_ascii_lowercase());
                }
                continue;
            }
            self.fold_char(unit, c);
        }
    }

    fn run_lenient(&mut self, original: &str) {
        use unicode_normalization::UnicodeNormalization;
        let mut cps = original.char_indices().enumerate().peekable();
        let mut seg = String::new();
        while let Some((cp, (byte, c))) = cps.next() {
            // A unit is a starter and the code points that may compose with it.
            seg.clear();
            seg.push(c);
            let mut n_cp = 1;
            while let Some(&(_, (_, next))) = cps.peek() {
                if !continues_segment(next) {
                    break;
                }
                seg.push(next);
                n_cp += 1;
                cps.next();
            }
            let unit = self.push_unit(cp, byte, n_cp, seg.len());
            let kept: String = seg.chars().filter(|&ch| !is_dropped(ch)).collect();
            let mut mapped = std::mem::take(&mut self.scratch);
            mapped.clear();
            for ch in kept.nfkc() {
                match ch {
                    '\u{2010}'..='\u{2015}' | '\u{2212}' => mapped.push('-'),
                    '\u{2026}' => mapped.push_str("..."),
                    _ => mapped.push(ch),
                }
            }
            for ch in mapped.chars() {
                self.fold_char(unit, ch);
            }
            self.scratch = mapped;
        }
    }

    fn push_unit(&mut self, cp: usize, byte: usize, n_cp: usize, n_bytes: usize) -> u32 {
        if !self.keep_map {
            return 0;
        }
        let idx = self.units.len() as u32;
        self.units.push(Unit {
            start_cp: cp as u32,
            end_cp: (cp + n_cp) as u32,
            start_byte: byte as u32,
            end_byte: (byte + n_bytes) as u32,
        });
        idx
    }

    /// Curly quotes, white space and case folding for one (non-dropped) character.
    fn fold_char(&mut self, unit: u32, c: char) {
        if c.is_whitespace() {
            self.space(unit);
            return;
        }
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => self.emit(unit, '\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => self.emit(unit, '"'),
            _ if c.is_ascii() => self.emit(unit, c.to_ascii_lowercase()),
            // Full case folding would expand these ligatures (U+FB01 → "fi");
            // the rule says ligatures match as written, so they are kept.
            '\u{FB00}'..='\u{FB06}' | '\u{FB13}'..='\u{FB17}' => self.emit(unit, c),
            _ => {
                let mut buf = [0u8; 4];
                let single: &str = c.encode_utf8(&mut buf);
                for folded in caseless::default_case_fold_str(single).chars() {
                    if folded.is_whitespace() {
                        self.space(unit);
                    } else {
                        self.emit(unit, folded);
                    }
                }
            }
        }
    }

    fn space(&mut self, unit: u32) {
        if self.pending_space.is_none() {
            self.pending_space = Some(unit);
        }
    }

    fn emit(&mut self, unit: u32, c: char) {
        if let Some(space_unit) = self.pending_space.take() {
            // Leading white space is ignored: only a run after some text emits.
            if !self.text.is_empty() {
                self.text.push(' ');
                if self.keep_map {
                    self.unit_of_byte.push(space_unit);
                }
            }
        }
        self.text.push(c);
        if self.keep_map {
            for _ in 0..c.len_utf8() {
                self.unit_of_byte.push(unit);
            }
        }
    }
}

/// Characters the lenient profile removes before anything else.
fn is_dropped(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{200B}'..='\u{200D}' | '\u{FEFF}')
}

/// Whether `c` belongs to the unit of the code point before it (lenient
/// profile): combining marks, and Hangul vowel/trailing jamo that compose
/// with a leading consonant.
fn continues_segment(c: char) -> bool {
    unicode_normalization::char::canonical_combining_class(c) != 0
        || matches!(c, '\u{1161}'..='\u{1175}' | '\u{11A8}'..='\u{11C2}')
        || is_dropped(c)
}

/// Whether a normalized quote has nothing worth matching (no letter or digit).
fn is_empty_quote(normalized: &str) -> bool {
    !normalized.chars().any(char::is_alphanumeric)
}

/// Finds `quote` in `chunk` under `profile`: the matching rule.
///
/// Order of preference: the leftmost byte-for-byte occurrence
/// ([`MatchKind::Exact`]); otherwise the leftmost occurrence after
/// normalization ([`MatchKind::Normalized`]).
pub fn find_quote(chunk: &str, quote: &str, profile: MatchProfile) -> QuoteVerdict {
    find_quote_in(&LazyNormalized::new(chunk, profile), quote)
}

/// A chunk whose normalized form is computed on first use, so that a chunk
/// cited several times is normalized once and an exact hit costs nothing.
#[derive(Debug)]
pub struct LazyNormalized<'a> {
    original: &'a str,
    profile: MatchProfile,
    normalized: std::cell::OnceCell<NormalizedText>,
}

impl<'a> LazyNormalized<'a> {
    /// Wraps a chunk's original text.
    pub fn new(original: &'a str, profile: MatchProfile) -> LazyNormalized<'a> {
        LazyNormalized {
            original,
            profile,
            normalized: std::cell::OnceCell::new(),
        }
    }

    /// The original text.
    pub fn original(&self) -> &'a str {
        self.original
    }

    fn get(&self) -> &NormalizedText {
        self.normalized
            .get_or_init(|| NormalizedText::new(self.original, self.profile))
    }
}

/// [`find_quote`] over a chunk that may already be normalized.
pub fn find_quote_in(chunk: &LazyNormalized<'_>, quote: &str) -> QuoteVerdict {
    let q = normalize(quote, chunk.profile);
    if is_empty_quote(&q) {
        return QuoteVerdict::Empty;
    }
    let original = chunk.original;
    if let Some(b) = memmem::find(original.as_bytes(), quote.as_bytes()) {
        let start = original[..b].chars().count();
        let span = Span::new(start, start + quote.chars().count());
        return QuoteVerdict::Found(QuoteMatch {
            span,
            bytes: b..b + quote.len(),
            kind: MatchKind::Exact,
        });
    }
    let norm = chunk.get();
    if let Some((s, e)) = norm.find_aligned(&q) {
        let (span, bytes) = norm.original_range(s, e);
        return QuoteVerdict::Found(QuoteMatch {
            span,
            bytes,
            kind: MatchKind::Normalized,
        });
    }
    QuoteVerdict::NotFound(near_miss(norm, original, &q))
}

/// Work bound for the near-miss search (pattern × text characters).
const NEAR_MISS_BUDGET: usize = 8_000_000;
/// Below this similarity a near miss is not worth reporting.
const NEAR_MISS_MIN_SIMILARITY: f64 = 0.5;

/// Approximate substring search (Sellers): the window of the normalized chunk
/// with the smallest edit distance to the normalized quote.
fn near_miss(norm: &NormalizedText, original: &str, q: &str) -> Option<NearMiss> {
    let pat: Vec<char> = q.chars().collect();
    let text: Vec<(usize, char)> = norm.text.char_indices().collect();
    let (m, n) = (pat.len(), text.len());
    if m == 0 || n == 0 || m.saturating_mul(n) > NEAR_MISS_BUDGET {
        return None;
    }
    // dist[i]: edit distance of pat[..i] to the best text window ending here;
    // from[i]: where that window starts (char index into `text`).
    let mut dist: Vec<usize> = (0..=m).collect();
    let mut from: Vec<usize> = vec![0; m + 1];
    let mut best = (dist[m], 0usize, 0usize); // (distance, start, end)
    for (j, &(_, tc)) in text.iter().enumerate() {
        let (mut diag_d, mut diag_f) = (dist[0], from[0]);
        dist[0] = 0;
        from[0] = j + 1;
        for i in 1..=m {
            let (up_d, up_f) = (dist[i], from[i]);
            let sub = diag_d + usize::from(pat[i - 1] != tc);
            let (mut d, mut f) = (sub, diag_f);
            if up_d + 1 < d {
                (d, f) = (up_d + 1, up_f);
            }
            if dist[i - 1] + 1 < d {
                (d, f) = (dist[i - 1] + 1, from[i - 1]);
            }
            diag_d = up_d;
            diag_f = up_f;
            dist[i] = d;
            from[i] = f;
        }
        if dist[m] < best.0 {
            best = (dist[m], from[m], j + 1);
        }
    }
    let (d, s, e) = best;
    // Trim white space at the window's edges.
    let (mut s, mut e) = (s, e);
    while s < e && text[s].1 == ' ' {
        s += 1;
    }
    while e > s && text[e - 1].1 == ' ' {
        e -= 1;
    }
    if s >= e {
        return None;
    }
    let similarity = 1.0 - d as f64 / m.max(e - s) as f64;
    if similarity < NEAR_MISS_MIN_SIMILARITY {
        return None;
    }
    let sb = text[s].0;
    let eb = text.get(e).map_or(norm.text.len(), |&(b, _)| b);
    let (span, bytes) = norm.original_range(sb, eb);
    Some(NearMiss {
        span,
        source_text: original[bytes].to_string(),
        similarity: (similarity * 1000.0).round() / 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(chunk: &str, quote: &str) -> QuoteMatch {
        match find_quote(chunk, quote, MatchProfile::Default) {
            QuoteVerdict::Found(m) => m,
            other => panic!("expected a match, got {other:?}"),
        }
    }

    #[test]
    fn exact_match_reports_code_points() {
        let m = found("héllo wörld", "wörld");
        assert_eq!(m.kind, MatchKind::Exact);
        assert_eq!(m.span, Span::new(6, 11));
    }

    #[test]
    fn normalized_match_maps_back() {
        let chunk = "Refunds are\r\n  available within “30 days”.";
        let m = found(chunk, "refunds ARE available within \"30 days\"");
        assert_eq!(m.kind, MatchKind::Normalized);
        assert_eq!(
            m.span.slice(chunk),
            Some("Refunds are\r\n  available within “30 days”")
        );
    }

    #[test]
    fn near_miss_points_at_the_reworded_sentence() {
        let chunk = "Shipping is free. Refunds are available within 30 days of purchase. Call us.";
        match find_quote(
            chunk,
            "Refunds are available within 14 days of purchase",
            MatchProfile::Default,
        ) {
            QuoteVerdict::NotFound(Some(nm)) => {
                assert!(
                    nm.source_text
                        .starts_with("Refunds are available within 30 days"),
                    "{nm:?}"
                );
                assert!(nm.similarity > 0.9);
            }
            other => panic!("{other:?}"),
        }
    }
}
