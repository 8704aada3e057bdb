//! What stands next to a numeral: units and their spellings, currencies,
//! magnitudes ("million"), ordinal suffixes, phone numbers and period nouns.

use crate::quantity::lexer::{K, first_piece_key, in_list, lookup, unit_index};
use crate::quantity::number::Number;
use crate::quantity::units::{CURRENCY_PREFIXES, Currency, UNITS, Unit, UnitSpelling};
use crate::quantity::words::{
    APPROXIMATE_MARKERS, MONTHS, NUMBER_WORDS, PERIOD_NOUNS, SCALE_WORDS,
};

use super::Parser;

impl<'t> Parser<'t> {
    pub(super) fn currency_before(&self, byte: usize) -> Option<(Currency, usize)> {
        let before = &self.text[..byte];
        let trimmed = before.trim_end_matches([' ', '\u{a0}', '\u{202f}']);
        let spaced = trimmed.len() != before.len();
        // Every prefix ends in a currency symbol, a capital letter, 's' (Rs) or '.'.
        if !trimmed.ends_with(|ch: char| {
            matches!(ch, '$' | '€' | '£' | '¥' | '₹' | '.' | 's') || ch.is_ascii_uppercase()
        }) {
            return None;
        }
        for &(p, c) in CURRENCY_PREFIXES {
            let alpha = p.chars().next().is_some_and(char::is_alphabetic);
            // Symbols glue or take one space; codes need the space unless glued symbol-like (Rs.500).
            if !trimmed.ends_with(p) {
                continue;
            }
            if spaced
                && before.len() - trimmed.len() > 1
                && before[trimmed.len()..].chars().count() > 1
            {
                continue;
            }
            let s = trimmed.len() - p.len();
            let boundary = trimmed[..s]
                .chars()
                .next_back()
                .is_none_or(|ch| !ch.is_alphanumeric());
            if !boundary {
                continue;
            }
            if alpha && !spaced && !p.ends_with('.') && !p.ends_with('$') {
                continue; // USD50 is an identifier-like token.
            }
            return Some((c, s));
        }
        None
    }

    /// A magnitude after a numeral at token `j`: the value factor and next index.
    pub(super) fn magnitude(&self, j: usize, money: bool) -> Option<(i128, usize)> {
        if self.is_word(j) {
            let w = self.s(j);
            let m = match w {
                "k" => Some(1_000),
                "K" if money => Some(1_000),
                "m" | "M" | "mn" | "MM" if money => Some(1_000_000),
                "bn" | "b" | "B" | "BN" if money => Some(1_000_000_000),
                _ => None,
            };
            return m.map(|m| (m, j + 1));
        }
        let k = self.sp(j);
        if k != j && self.is_word(k) {
            let w = self.s(k);
            if let Some(m) = lookup(SCALE_WORDS, w)
                && m >= 1000
            {
                return Some((i128::from(m), k + 1));
            }
        }
        None
    }

    pub(super) fn and_a_half(&self, j: usize) -> Option<usize> {
        let a = self.sp(j);
        if a == j || !self.word_is(a, "and") {
            return None;
        }
        let b = self.sp(a + 1);
        if !(self.word_is(b, "a") || self.word_is(b, "one")) {
            return None;
        }
        let c = self.sp(b + 1);
        self.word_is(c, "half").then_some(c + 1)
    }

    pub(super) fn oclock(&self, j: usize) -> Option<usize> {
        let k = self.sp(j);
        if self.word_is(k, "o")
            && (self.is_sym(k + 1, '\'') || self.is_sym(k + 1, '’'))
            && self.word_is(k + 2, "clock")
        {
            Some(k + 3)
        } else {
            None
        }
    }

    pub(super) fn ordinal_suffix(&self, j: usize, v: Number) -> Option<Number> {
        if !self.is_word(j) {
            return None;
        }
        let w = self.s(j);
        ["st", "nd", "rd", "th"]
            .iter()
            .any(|s| s.eq_ignore_ascii_case(w))
            .then_some(v)
    }

    /// Matches the longest unit spelling at token `j` (after a space or hyphen).
    pub(super) fn match_unit(&self, j: usize) -> Option<(&'static UnitSpelling, usize)> {
        let (k, spaced, hyphen) = if self.is_space(j) {
            if self.s(j).contains('\n') {
                return None;
            }
            (j + 1, true, false)
        } else if (self.is_sym(j, '-') || self.is_sym(j, '‑')) && self.is_word(j + 1) {
            (j + 1, false, true)
        } else {
            (j, false, false)
        };
        let t = self.tok(k)?;
        if t.k == K::Space || t.k == K::Num {
            return None;
        }
        let mut best: Option<(&'static UnitSpelling, usize, usize)> = None;
        let piece = &self.text[t.s..t.e];
        let mut buf = [0u8; 24];
        let candidates = if t.k == K::Word && piece.is_ascii() && piece.len() <= buf.len() {
            // Fast path: an ASCII word, lower-cased on the stack.
            for (b, c) in buf.iter_mut().zip(piece.bytes()) {
                *b = c.to_ascii_lowercase();
            }
            let key = std::str::from_utf8(&buf[..piece.len()]).unwrap_or("");
            unit_index().get(key)?
        } else {
            unit_index().get(first_piece_key(piece).as_str())?
        };
        for spec in candidates.iter().map(|&u| &UNITS[u]) {
            if spec.adjacent_only && (spaced || hyphen) {
                continue;
            }
            let alpha = spec.spelling.starts_with(|c: char| c.is_alphabetic());
            if hyphen && !alpha {
                continue;
            }
            if let Some(end_tok) = self.match_spelling(k, spec.spelling, spec.case_sensitive) {
                let len = spec.spelling.len();
                if best.is_none_or(|(_, _, l)| len > l) {
                    best = Some((spec, end_tok, len));
                }
            }
        }
        best.map(|(s, e, _)| (s, e))
    }

    /// Whether `spelling` matches the text from token `k`; the token after.
    fn match_spelling(&self, k: usize, spelling: &str, case_sensitive: bool) -> Option<usize> {
        let mut tok = k;
        for (wi, word) in spelling.split(' ').enumerate() {
            if wi > 0 {
                if !self.is_space(tok) || self.s(tok).contains('\n') {
                    return None;
                }
                tok += 1;
            }
            let pos = self.tok(tok)?.s;
            let end = pos + word.len();
            let hay = self.text.get(pos..end)?;
            let eq = if case_sensitive {
                hay == word
            } else {
                hay.eq_ignore_ascii_case(word)
            };
            if !eq {
                return None;
            }
            // `end` must be a token boundary.
            while self.tok(tok).is_some_and(|t| t.e < end) {
                tok += 1;
            }
            if self.tok(tok).is_none_or(|t| t.e != end) {
                return None;
            }
            tok += 1;
        }
        // A unit made of letters must not run into digits ("s3").
        if spelling.ends_with(|c: char| c.is_alphabetic()) && self.is_num(tok) {
            return None;
        }
        Some(tok)
    }

    /// A time unit right after token `j` (one space allowed).
    pub(super) fn time_unit_at(&self, j: usize) -> Option<(&'static UnitSpelling, usize)> {
        self.match_unit(j).filter(|(m, _)| {
            matches!(
                m.unit,
                Unit::Duration | Unit::CalendarDuration | Unit::BusinessDays
            ) && m.spelling.len() > 1
        })
    }

    /// A bare number right after a capitalised name that is not at the start
    /// of a sentence: "Windows 11", "Pixel 8", "TLS 1.3".
    pub(super) fn named_number(&self, first: usize) -> bool {
        let Some(p) = self.prev_word(first) else {
            return false;
        };
        if p + 2 != first && p + 1 != first {
            return false;
        }
        let w = self.s(p);
        let has_upper = w.chars().any(char::is_uppercase);
        if !has_upper
            || lookup(MONTHS, w).is_some()
            || lookup(NUMBER_WORDS, w).is_some()
            || in_list(APPROXIMATE_MARKERS, w)
            || w == "I"
        {
            return false;
        }
        let acronym = w.chars().count() >= 2 && w.chars().all(|c| !c.is_lowercase());
        acronym || !self.sentence_initial(p)
    }

    /// Phone numbers: `+44 20 7946 0958`, `1-800-555-0100`, `800 555 0100`,
    /// `555-0100`, `0800 123 4567`. Returns the token index after.
    pub(super) fn phone_end(&self, i: usize, plus: bool) -> Option<usize> {
        let mut j = i;
        let mut groups: Vec<usize> = Vec::new();
        let mut seps: Vec<char> = Vec::new();
        loop {
            if !self.is_num(j) {
                break;
            }
            groups.push(self.num_len(j));
            let next = j + 1;
            let sep = match self.tok(next).map(|t| t.k) {
                Some(K::Sym(c)) if matches!(c, '-' | '.' | '‑') && self.is_num(next + 1) => {
                    Some((c, next + 1))
                }
                Some(K::Space) if self.s(next) == " " && self.is_num(next + 1) => {
                    Some((' ', next + 1))
                }
                Some(K::Sym(')')) if self.is_space(next + 1) && self.is_num(next + 2) => {
                    Some((')', next + 2))
                }
                _ => None,
            };
            match sep {
                Some((c, nj)) if groups.len() < 6 => {
                    seps.push(c);
                    j = nj;
                }
                _ => {
                    j += 1;
                    break;
                }
            }
        }
        let total: usize = groups.iter().sum();
        let n = groups.len();
        if !(7..=15).contains(&total) || n < 2 {
            return None;
        }
        let leading_zero = self.s(i).starts_with('0') && self.num_len(i) >= 2;
        let thousands =
            groups[0] <= 3 && groups[1..].iter().all(|&g| g == 3) && seps.iter().all(|&c| c == ' ');
        let dotted_thousands =
            groups[0] <= 3 && groups[1..].iter().all(|&g| g == 3) && seps.iter().all(|&c| c == '.');
        let paren = i > 0 && self.is_sym(i - 1, '(');
        let phone = plus
            || paren
            || leading_zero
            || (n >= 3 && !thousands && !dotted_thousands)
            || (n == 2 && groups == [3, 4]);
        phone.then_some(j)
    }

    pub(super) fn period_noun_follows(&self, j: usize) -> bool {
        let k = if self.is_space(j) || self.is_sym(j, '-') {
            j + 1
        } else {
            return false;
        };
        if !self.is_word(k) {
            return false;
        }
        if in_list(PERIOD_NOUNS, self.s(k)) {
            return true;
        }
        let w = self.s(k);
        if w.chars().all(char::is_lowercase) && self.is_space(k + 1) && self.is_word(k + 2) {
            let w2 = self.s(k + 2);
            return in_list(PERIOD_NOUNS, w2) || w2.eq_ignore_ascii_case("quarter");
        }
        false
    }
}
