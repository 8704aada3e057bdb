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

/// A name that is not a [`MatchProfile`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown match profile {given:?} (expected \"default\" or \"lenient\")")]
pub struct ParseMatchProfileError {
    /// The name given.
    pub given: String,
}

impl std::str::FromStr for MatchProfile {
    type Err = ParseMatchProfileError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "default" => Ok(MatchProfile::Default),
            "lenient" => Ok(MatchProfile::Lenient),
            other => Err(ParseMatchProfileError {
                given: other.to_string(),
            }),
        }
    }
}

/// A half-open range of Unicode code points into a chunk's original content.
///
/// Invariant: `start <= end`. This is the convention of Python string slices
/// and of Anthropic's `char_location`; UIs working in UTF-16 convert at the
/// edge.
///
/// The fields are private so that the invariant holds for every value:
/// spans are made by [`Span::new`] / [`Span::try_new`], and deserializing
/// goes through the same check (`{"start": 5, "end": 2}` is an error). The
/// serialized form is `{"start": …, "end": …}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawSpan")]
pub struct Span {
    /// First code point of the span.
    start: usize,
    /// One past the last code point of the span.
    end: usize,
}

/// A span whose start lies after its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("span start {start} after end {end}")]
pub struct SpanError {
    /// The start given.
    pub start: usize,
    /// The end given.
    pub end: usize,
}

/// A span as written in JSON, before the invariant is checked.
#[derive(Deserialize)]
struct RawSpan {
    start: usize,
    end: usize,
}

impl TryFrom<RawSpan> for Span {
    type Error = SpanError;

    fn try_from(raw: RawSpan) -> Result<Span, SpanError> {
        Span::try_new(raw.start, raw.end)
    }
}

impl Span {
    /// Builds a span; `start <= end` is checked here, once, where spans are made.
    ///
    /// # Panics
    /// When `start > end` (a bug of the caller); [`Span::try_new`] for
    /// untrusted bounds.
    pub fn new(start: usize, end: usize) -> Span {
        assert!(start <= end, "span start {start} after end {end}");
        Span { start, end }
    }

    /// Builds a span from bounds that may be wrong.
    pub fn try_new(start: usize, end: usize) -> Result<Span, SpanError> {
        if start <= end {
            Ok(Span { start, end })
        } else {
            Err(SpanError { start, end })
        }
    }

    /// First code point of the span.
    pub fn start(self) -> usize {
        self.start
    }

    /// One past the last code point of the span.
    pub fn end(self) -> usize {
        self.end
    }

    /// Number of code points under the span.
    pub fn len(self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no code point.
    pub fn is_empty(self) -> bool {
        self.start == self.end
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
    /// For each byte of `text`, the original byte offset where its unit starts.
    src: Vec<u32>,
    profile: MatchProfile,
}

impl NormalizedText {
    /// Normalizes `original` keeping the span map.
    pub fn new(original: &str, profile: MatchProfile) -> NormalizedText {
        let mut n = Normalizer::new(profile, true);
        n.run(original);
        NormalizedText {
            text: n.text,
            src: n.src,
            profile,
        }
    }

    /// The normalized text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn starts_unit(&self, b: usize) -> bool {
        b == 0 || self.src[b] != self.src[b - 1]
    }

    fn ends_unit(&self, b: usize) -> bool {
        b == self.text.len() || self.src[b] != self.src[b - 1]
    }

    /// Original (code points, bytes) covered by normalized bytes `[s, e)`,
    /// `s < e`; `original` is the text this was built from.
    fn original_range(&self, original: &str, s: usize, e: usize) -> (Span, std::ops::Range<usize>) {
        let start = self.src[s] as usize;
        let last = self.src[e - 1] as usize;
        let end = last + unit_len(&original[last..], self.profile);
        let cp_start = count_chars(&original.as_bytes()[..start]);
        let cp_len = count_chars(&original.as_bytes()[start..end]);
        (Span::new(cp_start, cp_start + cp_len), start..end)
    }

    /// Leftmost unit-aligned occurrence of the already-normalized `needle`.
    fn find_aligned(&self, needle: &str) -> Option<(usize, usize)> {
        let finder = QuoteSearch::new(needle.as_bytes());
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

/// Worst-case work (haystack × needle bytes) up to which [`QuoteSearch`]
/// uses the packed-pair search alone, whose worst case is that product;
/// above it, memmem's two-way search keeps the search linear.
const PAIR_SEARCH_MAX_WORK: usize = 1 << 22;

/// Substring search for one quote in chunk-sized haystacks. Each quote is
/// searched in one chunk, so building memmem's searcher (a two-way
/// factorization, rare-byte ranking) cost more than the search itself; the
/// packed-pair search (the SIMD prefilter memmem runs first, here with
/// candidates verified) needs only a rare byte pair.
struct QuoteSearch<'n> {
    needle: &'n [u8],
    #[cfg(target_arch = "x86_64")]
    pair: Option<memchr::arch::x86_64::avx2::packedpair::Finder>,
    /// Built on first need, for haystacks the pair search does not take.
    memmem: std::cell::OnceCell<memmem::Finder<'n>>,
}

impl<'n> QuoteSearch<'n> {
    fn new(needle: &'n [u8]) -> QuoteSearch<'n> {
        QuoteSearch {
            needle,
            // `None` without AVX2 or for a needle under two bytes.
            #[cfg(target_arch = "x86_64")]
            pair: memchr::arch::x86_64::avx2::packedpair::Finder::new(needle),
            memmem: std::cell::OnceCell::new(),
        }
    }

    /// Leftmost occurrence of the needle in `hay`.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(pair) = &self.pair
            && hay.len() >= pair.min_haystack_len()
            && hay.len().saturating_mul(self.needle.len()) <= PAIR_SEARCH_MAX_WORK
        {
            return pair.find(hay, self.needle);
        }
        self.memmem
            .get_or_init(|| memmem::Finder::new(self.needle))
            .find(hay)
    }
}

/// Code points in UTF-8 bytes: every byte that is not a continuation byte.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// Byte length of the unit that starts `rest` (a code point; in the lenient
/// profile, a starter plus the code points that continue its segment).
fn unit_len(rest: &str, profile: MatchProfile) -> usize {
    let mut chars = rest.char_indices();
    let Some((_, first)) = chars.next() else {
        return 0;
    };
    match profile {
        MatchProfile::Default => first.len_utf8(),
        MatchProfile::Lenient => chars
            .find(|&(_, c)| !continues_segment(c))
            .map_or(rest.len(), |(b, _)| b),
    }
}

/// Streams original text into its normalized form.
struct Normalizer {
    profile: MatchProfile,
    keep_map: bool,
    text: String,
    src: Vec<u32>,
    /// Unit (original byte offset) where the current run of white space began.
    pending_space: Option<u32>,
    scratch: String,
}

impl Normalizer {
    fn new(profile: MatchProfile, keep_map: bool) -> Normalizer {
        Normalizer {
            profile,
            keep_map,
            text: String::new(),
            src: Vec::new(),
            pending_space: None,
            scratch: String::new(),
        }
    }

    fn run(&mut self, original: &str) {
        self.text.reserve(original.len());
        if self.keep_map {
            self.src.reserve(original.len());
        }
        match self.profile {
            MatchProfile::Default => self.run_default(original),
            MatchProfile::Lenient => self.run_lenient(original),
        }
        // Trailing white space is ignored: a pending run is simply not emitted.
    }

    fn run_default(&mut self, original: &str) {
        let bytes = original.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if is_ascii_space(b) {
                self.space(i as u32);
                i += 1;
                continue;
            }
            // Fast path: a stretch of ASCII words separated by single spaces
            // folds byte for byte (each byte its own unit), so it is copied,
            // lowercased and mapped in bulk.
            if b.is_ascii() {
                let start = i;
                i = ascii_run_end(bytes, start);
                self.emit_ascii_run(&original[start..i], start as u32);
                continue;
            }
            // `i` is on a char boundary: ASCII bytes and whole chars advance it.
            let Some(c) = original[i..].chars().next() else {
                break;
            };
            self.fold_char(i as u32, c);
            i += c.len_utf8();
        }
    }

    fn run_lenient(&mut self, original: &str) {
        use unicode_normalization::UnicodeNormalization;
        let mut cps = original.char_indices().peekable();
        let mut seg = String::new();
        while let Some((byte, c)) = cps.next() {
            // A unit is a starter and the code points that may compose with it
            // (the same segmentation as `unit_len`).
            seg.clear();
            seg.push(c);
            while let Some(&(_, next)) = cps.peek() {
                if !continues_segment(next) {
                    break;
                }
                seg.push(next);
                cps.next();
            }
            let unit = byte as u32;
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
                use caseless::Caseless;
                for folded in std::iter::once(c).default_case_fold() {
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

    /// Emits an ASCII run starting at original byte `at`: no white space but
    /// single interior spaces, which map to themselves.
    fn emit_ascii_run(&mut self, run: &str, at: u32) {
        self.flush_space();
        let from = self.text.len();
        self.text.push_str(run);
        self.text[from..].make_ascii_lowercase();
        if self.keep_map {
            self.src.extend(at..at + run.len() as u32);
        }
    }

    fn flush_space(&mut self) {
        if let Some(space_unit) = self.pending_space.take() {
            // Leading white space is ignored: only a run after some text emits.
            if !self.text.is_empty() {
                self.text.push(' ');
                if self.keep_map {
                    self.src.push(space_unit);
                }
            }
        }
    }

    fn emit(&mut self, unit: u32, c: char) {
        self.flush_space();
        self.text.push(c);
        if self.keep_map {
            for _ in 0..c.len_utf8() {
                self.src.push(unit);
            }
        }
    }
}

/// ASCII white space as Rust's `char::is_whitespace` defines it.
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ')
}

/// ASCII and not white space: folds byte for byte.
fn is_plain(b: u8) -> bool {
    b.is_ascii() && !is_ascii_space(b)
}

/// Whether an ASCII run (see [`ascii_run_end`]) stops at `i`: the end, a
/// byte that is not plain, except a single space between plain bytes.
fn ends_ascii_run(bytes: &[u8], i: usize) -> bool {
    match bytes.get(i) {
        None => true,
        Some(&b) if is_plain(b) => false,
        Some(&b' ') => !bytes.get(i + 1).is_some_and(|&n| is_plain(n)),
        Some(_) => true,
    }
}

/// End of the stretch of plain ASCII bytes and single interior spaces that
/// starts at `start` (a plain byte). Scans eight bytes per step (SWAR): this
/// loop is most of the normalizer's time on prose.
fn ascii_run_end(bytes: &[u8], start: usize) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const SPACES: u64 = 0x2020_2020_2020_2020;
    const TO_0X20: u64 = 0x6060_6060_6060_6060;
    // High bit of each byte that is non-ASCII or below 0x20 (control
    // characters, which include the ASCII white space other than ' '). Exact
    // per byte: no carry crosses a byte.
    let odd = |w: u64| (w | !((w & LOW7) + TO_0X20)) & HIGH;
    // High bit of each byte equal to ' ' (exact, as above).
    let space = |w: u64| {
        let x = w ^ SPACES;
        !(((x & LOW7) + LOW7) | x) & HIGH
    };
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let mut i = start;
    // Each step reads bytes i..i+9: a space stops the run when the byte after
    // it is white space or not ASCII. A candidate stop that is not one (a
    // control character that is not white space, a space before one) is
    // checked exactly and skipped.
    while i + 9 <= bytes.len() {
        let (w, next) = (word(i), word(i + 1));
        let stop = odd(w) | (space(w) & (odd(next) | space(next)));
        if stop == 0 {
            i += 8;
            continue;
        }
        let k = i + (stop.trailing_zeros() / 8) as usize;
        if ends_ascii_run(bytes, k) {
            return k;
        }
        i = k + 1;
    }
    while !ends_ascii_run(bytes, i) {
        i += 1;
    }
    i
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
    if let Some(b) = QuoteSearch::new(quote.as_bytes()).find(original.as_bytes()) {
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
        let (span, bytes) = norm.original_range(original, s, e);
        return QuoteVerdict::Found(QuoteMatch {
            span,
            bytes,
            kind: MatchKind::Normalized,
        });
    }
    QuoteVerdict::NotFound(near_miss(norm, original, &q))
}

/// Work bound for the near-miss search, in 64-row blocks × text characters.
const NEAR_MISS_BUDGET: usize = 4_000_000;
/// Below this similarity a near miss is not worth reporting.
const NEAR_MISS_MIN_SIMILARITY: f64 = 0.5;

/// The closest window of the normalized chunk to the normalized quote, by
/// edit distance with a free start (Sellers' approximate substring search).
///
/// Bit-parallel (Myers 1999, blocked as in Hyyrö 2003 / Edlib): a forward pass
/// finds where the best window ends and its distance, in O(n·⌈m/64⌉); a
/// backward pass anchored at that end finds where it starts, over at most
/// m + distance characters.
fn near_miss(norm: &NormalizedText, original: &str, q: &str) -> Option<NearMiss> {
    let pat: Vec<char> = q.chars().collect();
    let text: Vec<(usize, char)> = norm.text.char_indices().collect();
    let (m, n) = (pat.len(), text.len());
    if m == 0 || n == 0 || n.saturating_mul(m.div_ceil(64)) > NEAR_MISS_BUDGET {
        return None;
    }
    // Forward: best end position (leftmost on ties) and its distance.
    let forward = BitPattern::new(pat.iter().copied());
    let (mut d, mut end) = (m, 0);
    forward.scan(text.iter().map(|&(_, c)| c), 0, |j, score| {
        if score < d {
            (d, end) = (score, j + 1);
        }
    });
    if d >= m || 1.0 - (d as f64 / m as f64) < NEAR_MISS_MIN_SIMILARITY {
        return None;
    }
    // Backward, anchored at `end`: the shortest window ending there with distance d.
    let backward = BitPattern::new(pat.iter().rev().copied());
    let lo = end.saturating_sub(m + d);
    let mut len = None;
    backward.scan(
        text[lo..end].iter().rev().map(|&(_, c)| c),
        1,
        |k, score| {
            if score == d && len.is_none() {
                len = Some(k + 1);
            }
        },
    );
    let mut s = end - len?;
    let mut e = end;
    // Trim white space at the window's edges.
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
    let (span, bytes) = norm.original_range(original, sb, eb);
    Some(NearMiss {
        span,
        source_text: original[bytes].to_string(),
        similarity: (similarity * 1000.0).round() / 1000.0,
    })
}

/// A pattern prepared for Myers' bit-parallel edit distance: for each
/// character, the bit mask of the pattern positions holding it, in 64-bit blocks.
struct BitPattern {
    m: usize,
    blocks: usize,
    ascii: Vec<u64>,
    other: Vec<(char, Vec<u64>)>,
    zeros: Vec<u64>,
}

impl BitPattern {
    fn new(pat: impl Iterator<Item = char>) -> BitPattern {
        let pat: Vec<char> = pat.collect();
        let blocks = pat.len().div_ceil(64).max(1);
        let mut ascii = vec![0u64; 128 * blocks];
        let mut other: Vec<(char, Vec<u64>)> = Vec::new();
        for (i, &c) in pat.iter().enumerate() {
            let (b, bit) = (i / 64, 1u64 << (i % 64));
            if c.is_ascii() {
                ascii[c as usize * blocks + b] |= bit;
            } else {
                match other.binary_search_by_key(&c, |(k, _)| *k) {
                    Ok(at) => other[at].1[b] |= bit,
                    Err(at) => {
                        let mut v = vec![0u64; blocks];
                        v[b] |= bit;
                        other.insert(at, (c, v));
                    }
                }
            }
        }
        BitPattern {
            m: pat.len(),
            blocks,
            ascii,
            other,
            zeros: vec![0; blocks],
        }
    }

    fn eq(&self, c: char) -> &[u64] {
        if c.is_ascii() {
            let at = c as usize * self.blocks;
            &self.ascii[at..at + self.blocks]
        } else {
            match self.other.binary_search_by_key(&c, |(k, _)| *k) {
                Ok(at) => &self.other[at].1,
                Err(_) => &self.zeros,
            }
        }
    }

    /// Feeds `text`; after each character j calls `f(j, D[m][j+1])`.
    /// `row0` is the horizontal delta of row 0: 0 for a free start
    /// (approximate substring search), 1 for a start anchored at the text's start.
    fn scan(&self, text: impl Iterator<Item = char>, row0: i32, f: impl FnMut(usize, usize)) {
        // Quotes of up to 256 characters get their state in fixed-size
        // arrays: the block loop unrolls and the state stays in registers
        // (about twice as fast as the general case on typical quotes).
        match self.blocks {
            1 => self.scan_blocks(&mut [!0; 1], &mut [0; 1], text, row0, f),
            2 => self.scan_blocks(&mut [!0; 2], &mut [0; 2], text, row0, f),
            3 => self.scan_blocks(&mut [!0; 3], &mut [0; 3], text, row0, f),
            4 => self.scan_blocks(&mut [!0; 4], &mut [0; 4], text, row0, f),
            n => self.scan_blocks(&mut vec![!0; n], &mut vec![0; n], text, row0, f),
        }
    }

    /// [`BitPattern::scan`] with the vertical deltas `pv` (all ones) and `mv`
    /// (all zeros) given, one word per block.
    #[inline(always)]
    fn scan_blocks(
        &self,
        pv: &mut [u64],
        mv: &mut [u64],
        text: impl Iterator<Item = char>,
        row0: i32,
        mut f: impl FnMut(usize, usize),
    ) {
        let blocks = pv.len();
        let mv = &mut mv[..blocks];
        let last_high = 1u64 << ((self.m - 1) % 64);
        let mut score = self.m as isize;
        for (j, c) in text.enumerate() {
            let eq = &self.eq(c)[..blocks];
            let mut h = row0;
            for b in 0..blocks {
                let high = if b + 1 == blocks { last_high } else { 1 << 63 };
                h = advance_block(&mut pv[b], &mut mv[b], eq[b], h, high);
            }
            score += h as isize;
            // The score is a distance: never negative.
            f(j, score.max(0) as usize);
        }
    }
}

/// One column step of one 64-row block; `hin`/returned value are the
/// horizontal deltas (−1, 0, +1) entering the block's top and leaving its `high` row.
fn advance_block(pv: &mut u64, mv: &mut u64, eq: u64, hin: i32, high: u64) -> i32 {
    let hin_neg = u64::from(hin < 0);
    let xv = eq | *mv;
    let eq = eq | hin_neg;
    let xh = (((eq & *pv).wrapping_add(*pv)) ^ *pv) | eq;
    let mut ph = *mv | !(xh | *pv);
    let mut mh = *pv & xh;
    let hout = i32::from(ph & high != 0) - i32::from(mh & high != 0);
    ph <<= 1;
    mh <<= 1;
    mh |= hin_neg;
    ph |= u64::from(hin > 0);
    *pv = mh | !(xv | ph);
    *mv = ph & xv;
    hout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn span_serde_keeps_the_invariant() {
        let span = Span::new(2, 5);
        let json = serde_json::to_string(&span).expect("serializes");
        assert_eq!(json, r#"{"start":2,"end":5}"#);
        assert_eq!(serde_json::from_str::<Span>(&json).ok(), Some(span));
        assert_eq!(
            serde_json::from_str::<Span>(r#"{"start":3,"end":3}"#).ok(),
            Some(Span::new(3, 3))
        );
        let err = serde_json::from_str::<Span>(r#"{"start":5,"end":2}"#)
            .expect_err("start after end is refused");
        assert!(
            err.to_string().contains("span start 5 after end 2"),
            "{err}"
        );
        assert_eq!(Span::try_new(5, 2), Err(SpanError { start: 5, end: 2 }));
        assert_eq!((span.start(), span.end(), span.len()), (2, 5, 3));
        assert!(!span.is_empty() && Span::new(4, 4).is_empty());
    }

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

    /// The eight-byte scan stops where a byte-by-byte scan does.
    #[test]
    fn ascii_run_end_matches_bytewise_scan() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        let pieces: [&[u8]; 10] = [
            b"a",
            b"Z",
            b" ",
            b"  ",
            b"\n",
            b"\t",
            b"\x01",
            b"\x1f",
            "é".as_bytes(),
            b"\x7f",
        ];
        for _ in 0..5000 {
            let mut bytes = Vec::new();
            for _ in 0..rnd(40) {
                // Mostly letters and spaces; now and then anything.
                let k = if rnd(4) == 0 { 10 } else { 3 };
                let p = pieces[rnd(k) as usize];
                bytes.extend_from_slice(p);
            }
            for start in 0..bytes.len() {
                if !is_plain(bytes[start]) {
                    continue;
                }
                let mut want = start;
                while !ends_ascii_run(&bytes, want) {
                    want += 1;
                }
                assert_eq!(ascii_run_end(&bytes, start), want, "{bytes:?} from {start}");
            }
        }
    }

    /// The quote search finds what `str::find` finds, leftmost, for short
    /// and long haystacks (both search paths) and repeated needles.
    #[test]
    fn quote_search_is_leftmost_find() {
        let hay = "abcab abcabc, the cat sat on the mat. ".repeat(40);
        for needle in [
            "abc",
            "cat sat",
            "the mat. abc",
            "xyz",
            "mat. abcab abcabc, the",
            "c",
        ] {
            let search = QuoteSearch::new(needle.as_bytes());
            for from in [0, 1, 7, hay.len() - 20, hay.len() - 3] {
                let h = &hay[from..];
                assert_eq!(
                    search.find(h.as_bytes()),
                    h.find(needle),
                    "{needle:?} from {from}"
                );
            }
        }
    }

    /// The bit-parallel distances equal a plain dynamic program's, for both
    /// row-0 modes and patterns spanning several 64-bit blocks.
    #[test]
    fn bit_parallel_matches_plain_dp() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut rnd = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        let alphabet: Vec<char> = "abcé ß".chars().collect();
        for _ in 0..300 {
            let m = 1 + rnd(150) as usize;
            let n = rnd(200) as usize;
            let pat: Vec<char> = (0..m).map(|_| alphabet[rnd(6) as usize]).collect();
            let text: Vec<char> = (0..n).map(|_| alphabet[rnd(6) as usize]).collect();
            for row0 in [0usize, 1] {
                let mut col: Vec<usize> = (0..=m).collect();
                let mut want = Vec::new();
                for (j, &t) in text.iter().enumerate() {
                    let mut prev = col[0];
                    col[0] = row0 * (j + 1);
                    for i in 1..=m {
                        let cur = col[i];
                        col[i] = (prev + usize::from(pat[i - 1] != t))
                            .min(cur + 1)
                            .min(col[i - 1] + 1);
                        prev = cur;
                    }
                    want.push(col[m]);
                }
                let mut got = Vec::new();
                BitPattern::new(pat.iter().copied()).scan(
                    text.iter().copied(),
                    row0 as i32,
                    |_, s| got.push(s),
                );
                assert_eq!(got, want, "m={m} n={n} row0={row0}");
            }
        }
    }
}
