//! The claim/quote quantity parser: a single left-to-right pass over the
//! tokens of [`super::lexer`], then a post-pass.
//!
//! [`Parser`] is split by concern across the submodules, layered so that each
//! only calls methods of the layers below it: this module (token helpers and
//! `push`) <- `units` <- `dates` <- `numerals` <- `words` <- `driver`.

mod dates;
mod driver;
mod numerals;
mod units;
mod words;

use std::ops::Range;

use crate::quantity::lexer::{K, Tok, tokenize};
use crate::quantity::number::Number;
use crate::quantity::units::Unit;
use crate::quantity::value::{Quantity, Side};
use crate::quantity::words::{APPROXIMATE_MARKERS, BOUNDS_AFTER, BOUNDS_BEFORE, Bound};

/// A number read at some tokens, before its unit.
#[derive(Debug, Clone, Copy)]
struct Numeral {
    value: Number,
    /// A second reading (European "1.000" = 1000; "1,5" = 1.5), quotes only.
    alt: Option<Number>,
    /// Token index after the numeral.
    end: usize,
    /// Digits only, no separators or decimals.
    plain_int: bool,
    /// Digits in the first run.
    digits: usize,
    leading_zero: bool,
    /// Written with words.
    words: bool,
    /// The single word "one" (or "a"/"an").
    lone_one: bool,
}

pub(super) struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    side: Side,
    out: Vec<Quantity>,
    /// Second readings of quote numbers, added after the post-pass.
    alts: Vec<Quantity>,
}

impl<'t> Parser<'t> {
    pub(super) fn new(text: &'t str, side: Side) -> Parser<'t> {
        Parser {
            text,
            toks: tokenize(text),
            side,
            out: Vec::new(),
            alts: Vec::new(),
        }
    }

    fn claim(&self) -> bool {
        self.side == Side::Claim
    }

    fn tok(&self, i: usize) -> Option<Tok> {
        self.toks.get(i).copied()
    }

    fn s(&self, i: usize) -> &'t str {
        self.toks.get(i).map_or("", |t| &self.text[t.s..t.e])
    }

    fn is_num(&self, i: usize) -> bool {
        self.tok(i).is_some_and(|t| t.k == K::Num)
    }

    fn is_word(&self, i: usize) -> bool {
        self.tok(i).is_some_and(|t| t.k == K::Word)
    }

    fn is_space(&self, i: usize) -> bool {
        self.tok(i).is_some_and(|t| t.k == K::Space)
    }

    fn is_sym(&self, i: usize, c: char) -> bool {
        self.tok(i).is_some_and(|t| t.k == K::Sym(c))
    }

    fn word_is(&self, i: usize, w: &str) -> bool {
        self.is_word(i) && self.s(i).eq_ignore_ascii_case(w)
    }

    fn num_len(&self, i: usize) -> usize {
        if self.is_num(i) { self.s(i).len() } else { 0 }
    }

    fn int(&self, i: usize) -> Option<i128> {
        if self.is_num(i) {
            self.s(i).parse().ok()
        } else {
            None
        }
    }

    fn start(&self, i: usize) -> usize {
        self.tok(i).map_or(self.text.len(), |t| t.s)
    }

    fn end(&self, i: usize) -> usize {
        self.tok(i).map_or(self.text.len(), |t| t.e)
    }

    /// Byte end of the token before index `i` (exclusive end of a run).
    fn end_before(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.end(i - 1) }
    }

    /// Index of the next token after a single optional space.
    fn sp(&self, i: usize) -> usize {
        if self.is_space(i) { i + 1 } else { i }
    }

    /// The word before token `i`, skipping one space token.
    fn prev_word(&self, i: usize) -> Option<usize> {
        let mut j = i.checked_sub(1)?;
        if self.is_space(j) {
            j = j.checked_sub(1)?;
        }
        self.is_word(j).then_some(j)
    }

    /// Whether token `i` starts a sentence (nothing but opening punctuation
    /// or a sentence end before it).
    fn sentence_initial(&self, i: usize) -> bool {
        let mut j = i;
        loop {
            let Some(p) = j.checked_sub(1) else {
                return true;
            };
            match self.toks[p].k {
                K::Space => {
                    if self.s(p).contains('\n') {
                        return true;
                    }
                    j = p;
                }
                K::Sym(c) => {
                    return matches!(
                        c,
                        '.' | '!'
                            | '?'
                            | ':'
                            | ';'
                            | '"'
                            | '“'
                            | '('
                            | '['
                            | '•'
                            | '*'
                            | '-'
                            | '–'
                            | '—'
                            | '\''
                            | '‘'
                    );
                }
                _ => return false,
            }
        }
    }

    /// Skips an identifier-like chain: alphanumerics joined by `-._/:#+`.
    fn skip_chain(&self, i: usize) -> usize {
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t.k {
                K::Num | K::Word => j += 1,
                K::Sym(c)
                    if matches!(c, '-' | '.' | '_' | '/' | ':' | '#' | '+' | '‑')
                        && (self.is_num(j + 1) || self.is_word(j + 1)) =>
                {
                    j += 1
                }
                K::Sym('(') if self.is_num(j + 1) || self.is_word(j + 1) => {
                    // Section 5(2), 401(k)
                    if self.is_sym(j + 2, ')') {
                        j += 3;
                    } else {
                        break;
                    }
                }
                _ => break,
            }
        }
        j
    }

    fn push(
        &mut self,
        value: Number,
        unit: Unit,
        name: &'static str,
        scale: Number,
        span: Range<usize>,
    ) {
        // Only a claim's precision matters.
        let approximate = self.claim() && self.approximate_before(span.start);
        let bound = self.bound_around(&span);
        self.out.push(Quantity {
            value,
            unit,
            unit_name: name,
            scale,
            approximate,
            bound,
            span,
            text: String::new(),
        });
    }

    fn bound_around(&self, span: &Range<usize>) -> Bound {
        if self.text[..span.end].ends_with('+') {
            return Bound::AtLeast;
        }
        let before = self.text[..span.start].trim_end();
        if before.ends_with(|c: char| c.is_ascii_alphabetic()) {
            for &(w, b) in BOUNDS_BEFORE {
                if ends_with_word(before, w) {
                    return b;
                }
            }
        }
        let after = self.text[span.end..].trim_start();
        if !after.starts_with(['a', 'o', 'A', 'O', '+']) {
            return Bound::Exact;
        }
        for &(w, b) in BOUNDS_AFTER {
            if after.len() >= w.len()
                && after.is_char_boundary(w.len())
                && after[..w.len()].eq_ignore_ascii_case(w)
                && after[w.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
            {
                return b;
            }
        }
        Bound::Exact
    }

    fn approximate_before(&self, byte: usize) -> bool {
        let before = self.text[..byte].trim_end();
        let before = before.strip_suffix('.').unwrap_or(before);
        APPROXIMATE_MARKERS.iter().any(|m| {
            before.len() >= m.len()
                && before.is_char_boundary(before.len() - m.len())
                && before[before.len() - m.len()..].eq_ignore_ascii_case(m)
                && (m.chars().all(|c| !c.is_alphanumeric())
                    || before[..before.len() - m.len()]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !c.is_alphanumeric()))
        })
    }
}

/// Whether `text` ends with the word(s) `w`, case-insensitively, at a word boundary.
fn ends_with_word(text: &str, w: &str) -> bool {
    text.len() >= w.len()
        && text.is_char_boundary(text.len() - w.len())
        && text[text.len() - w.len()..].eq_ignore_ascii_case(w)
        && text[..text.len() - w.len()]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
}

pub(super) fn half() -> Number {
    Number { num: 1, den: 2 }
}
