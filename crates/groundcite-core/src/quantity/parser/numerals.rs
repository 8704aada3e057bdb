//! Numbers written with digits and symbols, and the unit and context that
//! [`Parser::finish`] reads after every numeral.

use crate::quantity::lexer::{DASHES, K, in_list, lookup};
use crate::quantity::number::Number;
use crate::quantity::units::{CURRENCY_PREFIXES, Currency, UNITS, Unit};
use crate::quantity::value::Side;
use crate::quantity::words::{NON_QUANTITY_COMPOUNDS, NUMBER_WORDS, SCALE_WORDS};

use super::{Numeral, Parser, half};

impl<'t> Parser<'t> {
    pub(super) fn at_sym(&mut self, i: usize, c: char) -> usize {
        match c {
            '[' => {
                // Footnote markers: [1], [1, 2], [1-3].
                let mut j = i + 1;
                while let Some(t) = self.tok(j) {
                    match t.k {
                        K::Num | K::Space => j += 1,
                        K::Sym(',') => j += 1,
                        K::Sym(d) if DASHES.contains(&d) => j += 1,
                        _ => break,
                    }
                }
                if j > i + 1 && self.is_sym(j, ']') {
                    j + 1
                } else {
                    i + 1
                }
            }
            '+' if self.is_num(i + 1) && self.start_or_space_before(i) => {
                // International phone numbers.
                match self.phone_end(i + 1, true) {
                    Some(end) => end,
                    None => i + 1,
                }
            }
            '#' | '№' | '§' | '^' if self.is_num(self.sp(i + 1)) => {
                self.skip_chain(self.sp(i + 1))
            }
            '-' | '−' if self.is_num(i + 1) && self.sign_position(i) => {
                self.at_number(i + 1, Some(i))
            }
            '.' if self.is_num(i + 1) && self.start_or_space_before(i) => {
                self.at_number(i + 1, Some(i))
            }
            '½' | '¼' | '¾' if i == 0 || !(self.is_num(i - 1) || self.is_word(i - 1)) => {
                let v = fraction_sym(c);
                let n = Numeral {
                    value: v,
                    alt: None,
                    end: i + 1,
                    plain_int: false,
                    digits: 0,
                    leading_zero: false,
                    words: true,
                    lone_one: false,
                };
                self.finish(i, self.start(i), n)
            }
            _ => i + 1,
        }
    }

    fn start_or_space_before(&self, i: usize) -> bool {
        i == 0 || self.is_space(i - 1) || self.is_sym(i - 1, '(')
    }

    /// Whether a dash at `i` (before digits) is a minus sign rather than a range.
    fn sign_position(&self, i: usize) -> bool {
        if i == 0 {
            return true;
        }
        if !(self.is_space(i - 1) || self.is_sym(i - 1, '(')) {
            return false;
        }
        // Not a range: nothing number-like just before.
        let mut j = i - 1;
        if self.is_space(j) {
            let Some(p) = j.checked_sub(1) else {
                return true;
            };
            j = p;
        }
        // Decided on the tokens alone, so that a claim and a quote agree.
        match self.toks[j].k {
            K::Num => false,
            K::Word => {
                let w = self.s(j);
                lookup(NUMBER_WORDS, w).is_none()
                    && lookup(SCALE_WORDS, w).is_none()
                    && !w.eq_ignore_ascii_case("dozen")
                    && !UNITS.iter().any(|u| u.spelling.eq_ignore_ascii_case(w))
            }
            K::Sym(c) => {
                !(c == '%' || c == '°' || CURRENCY_PREFIXES.iter().any(|(p, _)| p.ends_with(c)))
            }
            K::Space => true,
        }
    }

    pub(super) fn at_number(&mut self, i: usize, sign: Option<usize>) -> usize {
        let decimal_lead = sign.is_some_and(|s| self.is_sym(s, '.'));
        if decimal_lead {
            // ".5"
            let Ok(frac) = self.s(i).parse::<i128>() else {
                return self.skip_chain(i);
            };
            let Some(den) = 10i128.checked_pow(self.num_len(i) as u32) else {
                return self.skip_chain(i);
            };
            let Some(value) = Number::new(frac, den) else {
                return i + 1;
            };
            let n = Numeral {
                value,
                alt: None,
                end: i + 1,
                plain_int: false,
                digits: 0,
                leading_zero: false,
                words: false,
                lone_one: false,
            };
            return self.finish(i, self.start(i - 1), n);
        }
        // Identifier contexts before the digits.
        if let Some(p) = i.checked_sub(1) {
            match self.toks[p].k {
                K::Word if self.currency_before(self.start(i)).is_none() => {
                    return self.skip_chain(i);
                }
                K::Sym(c)
                    if matches!(c, '-' | '_' | '/' | '.' | ',' | ';' | ':' | '‑')
                        && p > 0
                        && self.is_word(p - 1)
                        && self.currency_before(self.start(i)).is_none() =>
                {
                    // COVID-19, HTTP/2, H.264, a footnote glued to a word ("purchase.2").
                    return self.skip_chain(i);
                }
                _ => {}
            }
        }
        if let Some(end) = self.try_iso_date(i) {
            return end;
        }
        if let Some(end) = self.try_numeric_date(i) {
            return end;
        }
        if let Some(end) = self.try_clock(i) {
            return end;
        }
        if let Some(end) = self.phone_end(i, false) {
            return end;
        }
        // Fiscal / tax years: 2025/26, 2025-26.
        if self.num_len(i) == 4
            && (self.is_sym(i + 1, '/') || self.is_sym(i + 1, '-'))
            && self.num_len(i + 2) == 2
            && !self.is_sym(i + 3, '/')
            && !self.is_sym(i + 3, '-')
            && let (Some(y), Some(yy)) = (self.int(i), self.int(i + 2))
            && (y + 1) % 100 == yy
        {
            let span = self.start(i)..self.end(i + 2);
            self.push(
                Number::integer(y),
                Unit::Year,
                "year",
                Number::integer(1),
                span,
            );
            return i + 3;
        }
        // Ratios and fractions "24/7", "1:1", "50/50": not quantities.
        if (self.is_sym(i + 1, '/') || self.is_sym(i + 1, ':')) && self.is_num(i + 2) {
            return self.skip_chain(i);
        }
        // Decades: "1990s".
        if self.num_len(i) == 4 && self.is_word(i + 1) && self.s(i + 1) == "s" {
            return self.skip_chain(i);
        }
        let Some(mut n) = self.numeral(i) else {
            return self.skip_chain(i);
        };
        if n.end == usize::MAX {
            // A version number (1.2.3).
            return self.skip_chain(i);
        }
        if let Some(s) = sign {
            n.value = Number::new(-n.value.numerator(), n.value.denominator()).unwrap_or(n.value);
            return self.finish(i, self.start(s), n);
        }
        if self.claim() && n.leading_zero && n.plain_int && n.digits >= 2 {
            // 007, 0800: identifiers.
            return self.skip_chain(i);
        }
        // List markers at the start of a line: "1. ", "2) ".
        if self.claim()
            && n.plain_int
            && (i == 0 || (self.is_space(i - 1) && self.s(i - 1).contains('\n')))
            && (self.is_sym(i + 1, '.') || self.is_sym(i + 1, ')'))
            && (self.is_space(i + 2) || i + 2 >= self.toks.len())
        {
            return i + 2;
        }
        self.finish(i, self.start(i), n)
    }

    /// Reads digits with thousands separators and decimals from token `i`.
    /// `end == usize::MAX` marks a version number.
    fn numeral(&self, i: usize) -> Option<Numeral> {
        let first = self.s(i);
        let digits = first.len();
        let leading_zero = digits >= 2 && first.starts_with('0');
        let mut int: i128 = first.parse().ok()?;
        let mut j = i + 1;
        let mut plain = true;
        let mut alt = None;
        // European 1.234.567,89 (unambiguous only with ≥2 dot groups or a comma decimal).
        if digits <= 3 && self.is_sym(j, '.') && self.num_len(j + 1) == 3 {
            let mut k = j;
            let mut v = int;
            let mut groups = 0;
            while self.is_sym(k, '.') && self.num_len(k + 1) == 3 {
                v = v.checked_mul(1000)?.checked_add(self.int(k + 1)?)?;
                k += 2;
                groups += 1;
            }
            let comma_dec = self.is_sym(k, ',') && matches!(self.num_len(k + 1), 1 | 2);
            if comma_dec || (groups >= 2 && !(self.is_sym(k, '.') && self.is_num(k + 1))) {
                let mut value = Number::integer(v);
                if comma_dec {
                    let frac = self.int(k + 1)?;
                    let den = 10i128.checked_pow(self.num_len(k + 1) as u32)?;
                    value = value.checked_add(Number::new(frac, den)?)?;
                    k += 2;
                }
                return Some(Numeral {
                    value,
                    alt: None,
                    end: k,
                    plain_int: false,
                    digits,
                    leading_zero,
                    words: false,
                    lone_one: false,
                });
            }
        }
        // Comma thousands: 1,000 / 12,500,000.
        if digits <= 3 {
            while self.is_sym(j, ',') && self.num_len(j + 1) == 3 {
                int = int.checked_mul(1000)?.checked_add(self.int(j + 1)?)?;
                j += 2;
                plain = false;
            }
        }
        // Space thousands: with NBSP / thin spaces, or three groups or more.
        if plain && digits <= 3 {
            let thin = |k: usize| {
                self.is_space(k) && matches!(self.s(k), "\u{a0}" | "\u{202f}" | "\u{2009}")
            };
            let mut k = j;
            let mut groups = 0;
            let mut all_thin = true;
            while self.is_space(k) && self.s(k).chars().count() == 1 && self.num_len(k + 1) == 3 {
                all_thin &= thin(k);
                groups += 1;
                k += 2;
            }
            if groups > 0 && (all_thin || groups >= 2) {
                let mut v = int;
                let mut kk = j;
                while kk < k {
                    v = v.checked_mul(1000)?.checked_add(self.int(kk + 1)?)?;
                    kk += 2;
                }
                int = v;
                j = k;
                plain = false;
            }
        }
        let mut value = Number::integer(int);
        // Decimal part.
        if self.is_sym(j, '.') && self.is_num(j + 1) {
            if self.is_sym(j + 2, '.') && self.is_num(j + 3) {
                return Some(Numeral {
                    value,
                    alt: None,
                    end: usize::MAX,
                    plain_int: false,
                    digits,
                    leading_zero,
                    words: false,
                    lone_one: false,
                });
            }
            let frac_digits = self.num_len(j + 1);
            let frac = self.int(j + 1)?;
            let den = 10i128.checked_pow(frac_digits as u32)?;
            if plain && frac_digits == 3 && digits <= 3 {
                alt = Some(Number::integer(int.checked_mul(1000)?.checked_add(frac)?));
            }
            value = value.checked_add(Number::new(frac, den)?)?;
            j += 2;
            plain = false;
        } else if plain
            && self.is_sym(j, ',')
            && self.is_num(j + 1)
            && self.num_len(j + 1) != 3
            && !self.is_space(j + 1)
        {
            // "1,5": a list in English, a decimal in much of Europe (quotes only).
            let frac_digits = self.num_len(j + 1);
            let den = 10i128.checked_pow(frac_digits as u32)?;
            alt = Number::new(self.int(j + 1)?, den).and_then(|f| value.checked_add(f));
        }
        // Vulgar fraction glued on: 1½.
        if let Some(t) = self.tok(j)
            && let K::Sym(c @ ('½' | '¼' | '¾')) = t.k
        {
            value = value.checked_add(fraction_sym(c))?;
            j += 1;
            plain = false;
        }
        Some(Numeral {
            value,
            alt,
            end: j,
            plain_int: plain,
            digits,
            leading_zero,
            words: false,
            lone_one: false,
        })
    }

    /// Attaches a unit (or a special suffix) to numeral `n` read from token
    /// `first` and pushes the quantity. Returns the next token index.
    pub(super) fn finish(&mut self, first: usize, start_byte: usize, mut n: Numeral) -> usize {
        let claim = self.claim();
        let mut j = n.end;
        let mut start = start_byte;
        // Currency before the number.
        let currency = if n.words {
            None
        } else {
            self.currency_before(start)
        };
        if let Some((_, s)) = currency {
            start = s;
        }
        // Magnitudes: 1.5 million, $5k, £2.5bn.
        if let Some((m, nj)) = self.magnitude(j, currency.is_some()) {
            n.value = match n.value.checked_mul(Number::integer(m)) {
                Some(v) => v,
                None => return nj,
            };
            n.plain_int = false;
            j = nj;
        }
        // "two and a half hours", "2 and a half"
        if let Some(nj) = self.and_a_half(j) {
            n.value = n.value.checked_add(half()).unwrap_or(n.value);
            n.plain_int = false;
            j = nj;
        }
        // "thirty (30) days": the digits repeat the words.
        if n.words
            && self.is_space(j)
            && self.is_sym(j + 1, '(')
            && self.is_num(j + 2)
            && self.is_sym(j + 3, ')')
            && self.int(j + 2).map(Number::integer) == Some(n.value)
        {
            j += 4;
            n.lone_one = false;
        }
        if currency.is_none() && n.plain_int {
            // Ordinals: 1st, 22nd, 30th.
            if let Some(v) = self.ordinal_suffix(j, n.value) {
                return self.after_ordinal(start, j + 1, v, true);
            }
            let v = n.value.numerator();
            // Times of day: 9am, 5 p.m., 6 o'clock.
            if (1..=12).contains(&v)
                && let Some((pm, end)) = self.meridiem(j)
            {
                let h24 = (v % 12) + if pm { 12 } else { 0 };
                let span_end = self.end_before(end);
                self.push(
                    Number::integer(h24 * 60),
                    Unit::TimeOfDay { ambiguous: false },
                    "",
                    Number::integer(1),
                    start..span_end,
                );
                return end;
            }
            if (1..=12).contains(&v)
                && let Some(end) = self.oclock(j)
            {
                let span_end = self.end_before(end);
                self.push(
                    Number::integer(v * 60),
                    Unit::TimeOfDay { ambiguous: true },
                    "",
                    Number::integer(1),
                    start..span_end,
                );
                return end;
            }
            // Day-first dates: 30 November 2026, 30 Nov.
            if (1..=31).contains(&v)
                && let Some(end) = self.day_month(start, j, v)
            {
                return end;
            }
        }
        // Units.
        let mut unit = Unit::Count;
        let mut name = "";
        let mut scale = Number::integer(1);
        if let Some((m, nj)) = self.match_unit(j) {
            let take = matches!(
                (currency, m.unit),
                (None, _) | (Some(_), Unit::Money(_) | Unit::Pounds)
            );
            if take {
                unit = m.unit;
                name = m.name;
                scale = Number::new(m.scale.0.into(), m.scale.1.into()).unwrap_or(scale);
                j = nj;
                if let (Some((c, _)), Unit::Money(Currency::Dollar | Currency::Any)) =
                    (currency, m.unit)
                {
                    unit = Unit::Money(c);
                } else if let (Some((c, _)), Unit::Money(s)) = (currency, m.unit)
                    && c != Currency::Dollar
                    && !c.compatible(s)
                {
                    unit = Unit::Money(c);
                }
                // "an hour and a half"
                if let Some(nj) = self.and_a_half(j) {
                    n.value = n.value.checked_add(half()).unwrap_or(n.value);
                    j = nj;
                }
            }
        }
        if unit == Unit::Count
            && let Some((c, _)) = currency
        {
            unit = Unit::Money(c);
            name = c.code();
        }
        if unit == Unit::Count {
            // What follows decides whether a bare number is a quantity.
            if self.is_word(j) && j == n.end && !n.words {
                // "7h 45m": minutes after an hour count.
                if self.s(j) == "m"
                    && !self.is_word(j + 1)
                    && self.out.last().is_some_and(|q| {
                        q.unit == Unit::Duration
                            && q.unit_name == "hour"
                            && self
                                .text
                                .get(q.span.end..start)
                                .is_some_and(|l| l.trim().is_empty())
                    })
                {
                    let span_end = self.end(j);
                    self.push(
                        n.value,
                        Unit::Duration,
                        "minute",
                        Number::integer(60),
                        start..span_end,
                    );
                    return j + 1;
                }
                // Glued to an unknown word: 5G, 3D, 2FA, 1080p, 25m. A quote
                // keeps the number (its unit is unknown, so it cannot contradict).
                if !claim {
                    let span_end = self.end_before(j);
                    self.push(
                        n.value,
                        Unit::Count,
                        "",
                        Number::integer(1),
                        start..span_end,
                    );
                    // "4.2m viewers", "3bn": also the magnitude reading.
                    let m: i128 = match self.s(j) {
                        "k" | "K" => 1_000,
                        "m" | "M" | "mn" => 1_000_000,
                        "bn" | "b" | "B" => 1_000_000_000,
                        _ => 1,
                    };
                    if m > 1
                        && let Some(v) = n.value.checked_mul(Number::integer(m))
                    {
                        self.push(v, Unit::Count, "", Number::integer(1), start..span_end);
                    }
                }
                return self.skip_chain(first);
            }
            if self.is_sym(j, '+') && !self.is_num(j + 1) {
                j += 1; // 18+
            }
            if (self.is_sym(j, '-') || self.is_sym(j, '‑')) && self.is_word(j + 1) {
                let w = self.s(j + 1);
                if in_list(NON_QUANTITY_COMPOUNDS, w) {
                    return j + 2;
                }
                if w.len() >= 2 && w.chars().all(|c| c.is_uppercase()) {
                    return self.skip_chain(first);
                }
            }
            if n.lone_one && (claim || self.word_is(self.sp(j), "of")) {
                return j;
            }
            if claim {
                // (3): a list marker or clause number, not a quantity.
                if first > 0 && self.is_sym(first - 1, '(') && self.is_sym(j, ')') && !n.words {
                    return j + 1;
                }
                if self.named_number(first) {
                    return j;
                }
            }
            let hyphen_word = (self.is_sym(j, '-') || self.is_sym(j, '‑')) && self.is_word(j + 1);
            if n.plain_int
                && n.digits == 4
                && (1900..=2100).contains(&n.value.numerator())
                && !n.leading_zero
                && !hyphen_word
            {
                unit = Unit::Year;
                name = "year";
            }
        }
        let span_end = self.end_before(j);
        self.push(n.value, unit, name, scale, start..span_end);
        if self.side == Side::Quote
            && let Some(alt) = n.alt
        {
            // Kept aside so that ranges and lists see the same sequence as in a claim.
            let mut q = self.out[self.out.len() - 1].clone();
            q.value = if n.value.numerator() < 0 {
                Number::new(-alt.numerator(), alt.denominator()).unwrap_or(alt)
            } else {
                alt
            };
            self.alts.push(q);
        }
        j
    }
}

fn fraction_sym(c: char) -> Number {
    match c {
        '½' => Number { num: 1, den: 2 },
        '¼' => Number { num: 1, den: 4 },
        _ => Number { num: 3, den: 4 },
    }
}
