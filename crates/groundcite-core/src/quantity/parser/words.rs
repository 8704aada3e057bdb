//! Numbers written with words: cardinals, ordinals, articles ("a week"),
//! halves and quarters.

use crate::quantity::lexer::{K, in_list, lookup, word_may_matter};
use crate::quantity::number::Number;
use crate::quantity::units::{CURRENCY_PREFIXES, Unit};
use crate::quantity::words::{
    ARTICLE_PREPOSITIONS, ID_WORDS, NON_QUANTITY_COMPOUNDS, NUMBER_WORDS, ORDINAL_WORDS,
    SCALE_WORDS, TIME_FOLLOWERS, WHOLE_WORDS,
};

use super::{Numeral, Parser, half};

impl<'t> Parser<'t> {
    pub(super) fn at_word(&mut self, i: usize) -> usize {
        let w = self.s(i);
        if !word_may_matter(w) {
            return i + 1;
        }
        let claim = self.claim();
        // Q1–Q4
        if (w == "Q" || w == "q")
            && self.num_len(i + 1) == 1
            && let Some(v @ 1..=4) = self.int(i + 1)
            && !self.is_word(i + 2)
            && !self.is_num(i + 2)
        {
            self.push(
                Number::integer(v),
                Unit::Quarter,
                "quarter",
                Number::integer(1),
                self.start(i)..self.end(i + 1),
            );
            return i + 2;
        }
        // FY2026, FY26
        if w.eq_ignore_ascii_case("FY")
            && matches!(self.num_len(i + 1), 2 | 4)
            && let Some(v) = self.int(i + 1)
        {
            let y = if v < 100 { 2000 + v } else { v };
            self.push(
                Number::integer(y),
                Unit::Year,
                "year",
                Number::integer(1),
                self.start(i)..self.end(i + 1),
            );
            return i + 2;
        }
        // Identifier words: "version 2.0", "order #12345", "No. 5".
        if in_list(ID_WORDS, w) {
            let mut j = i + 1;
            if self.is_sym(j, '.') {
                j += 1;
            }
            let adjacent = j == i + 1 && self.is_num(j);
            let j = self.sp(j);
            let j = if self.is_sym(j, '#') { j + 1 } else { j };
            if self.is_num(j) && (adjacent || j > i + 1) {
                // "no" only as "No." ; "v" only glued or with a dot.
                let lw = w.to_ascii_lowercase();
                let needs_dot = matches!(lw.as_str(), "no" | "p" | "pp" | "art" | "sec" | "nr");
                let dotted = self.is_sym(i + 1, '.');
                if (!needs_dot || dotted) && (lw != "v" || adjacent || dotted) {
                    return self.skip_chain(j);
                }
            }
        }
        // Months: "November 30, 2026", "Nov 2026", "November".
        if let Some(end) = self.try_month_first(i) {
            return end;
        }
        // Cardinal number words.
        if let Some((value, end, lone)) = self.word_number(i) {
            if let Some(ord) = value.1 {
                return self.after_ordinal(self.start(i), end, ord, false);
            }
            let n = Numeral {
                value: value.0,
                alt: None,
                end,
                plain_int: false,
                digits: 0,
                leading_zero: false,
                words: true,
                lone_one: lone,
            };
            // Compound names: "two-factor", "one-time".
            if (self.is_sym(end, '-') || self.is_sym(end, '‑'))
                && self.is_word(end + 1)
                && in_list(NON_QUANTITY_COMPOUNDS, self.s(end + 1))
            {
                return end + 2;
            }
            return self.finish(i, self.start(i), n);
        }
        // Ordinal words.
        if let Some(v) = self.ordinal_word(i) {
            return self.after_ordinal(self.start(i), i + 1, Number::integer(v.into()), false);
        }
        let lw = w.to_ascii_lowercase();
        // "tenfold", "twofold"
        if let Some(prefix) = lw.strip_suffix("fold")
            && let Some(v) = lookup(NUMBER_WORDS, prefix)
        {
            let span = self.start(i)..self.end(i);
            self.push(
                Number::integer(v.into()),
                Unit::Times,
                "times",
                Number::integer(1),
                span,
            );
            return i + 1;
        }
        match lw.as_str() {
            "half" => return self.at_half(i),
            "quarter" => return self.at_quarter(i),
            "twice" | "thrice" => {
                let v = if lw == "twice" { 2 } else { 3 };
                self.push(
                    Number::integer(v),
                    Unit::Times,
                    "times",
                    Number::integer(1),
                    self.start(i)..self.end(i),
                );
                return i + 1;
            }
            "once" => {
                let k = self.sp(i + 1);
                let freq = k > i + 1
                    && self.is_word(k)
                    && (matches!(
                        self.s(k).to_ascii_lowercase().as_str(),
                        "daily"
                            | "weekly"
                            | "monthly"
                            | "yearly"
                            | "annually"
                            | "hourly"
                            | "per"
                            | "every"
                            | "each"
                    ) || ((self.word_is(k, "a") || self.word_is(k, "an"))
                        && self.time_unit_at(k + 1).is_some()));
                if freq || !claim {
                    self.push(
                        Number::integer(1),
                        Unit::Times,
                        "times",
                        Number::integer(1),
                        self.start(i)..self.end(i),
                    );
                }
                return i + 1;
            }
            "noon" | "midday" | "midnight" => {
                let v = if lw == "midnight" { 0 } else { 720 };
                self.push(
                    Number::integer(v),
                    Unit::TimeOfDay { ambiguous: false },
                    "",
                    Number::integer(1),
                    self.start(i)..self.end(i),
                );
                return i + 1;
            }
            "a" | "an" => return self.at_article(i),
            "per" | "every" | "each" if !claim => {
                // Quotes: "60 requests per minute" carries one minute.
                if let Some((m, end)) = self.time_unit_at(i + 1)
                    && self.is_space(i + 1)
                {
                    let scale = Number::new(m.scale.0.into(), m.scale.1.into())
                        .unwrap_or(Number::integer(1));
                    self.push(
                        Number::integer(1),
                        m.unit,
                        m.name,
                        scale,
                        self.start(i + 2)..self.end_before(end),
                    );
                    return end;
                }
            }
            "free" if !claim => {
                self.push(
                    Number::ZERO,
                    Unit::Count,
                    "",
                    Number::integer(1),
                    self.start(i)..self.end(i),
                );
                return i + 1;
            }
            "daily" | "weekly" | "monthly" | "yearly" | "annually" | "hourly" | "nightly"
                if !claim =>
            {
                self.push(
                    Number::integer(1),
                    Unit::Times,
                    "times",
                    Number::integer(1),
                    self.start(i)..self.end(i),
                );
                return i + 1;
            }
            _ => {}
        }
        i + 1
    }

    /// "a month", "an hour", "a dozen", "a hundred", "a quarter of".
    fn at_article(&mut self, i: usize) -> usize {
        let claim = self.claim();
        if let Some((value, end, _)) = self.word_number(i) {
            // "a dozen", "a hundred"
            let n = Numeral {
                value: value.0,
                alt: None,
                end,
                plain_int: false,
                digits: 0,
                leading_zero: false,
                words: true,
                lone_one: false,
            };
            return self.finish(i, self.start(i), n);
        }
        let k = self.sp(i + 1);
        if k == i + 1 {
            return i + 1;
        }
        if self.word_is(k, "quarter") || self.word_is(k, "half") {
            return self.at_fraction_word(i, k);
        }
        // "a full day", "a whole week": the adjective is skipped.
        let mut end = i + 1;
        if in_list(WHOLE_WORDS, self.s(k)) && self.time_unit_at(k + 1).is_some() {
            end = k + 1;
        }
        let Some((m, after)) = self.time_unit_at(end) else {
            return i + 1;
        };
        // "a day pass", "a second reminder": part of a noun, not a duration.
        if (claim || m.name == "second") && self.is_space(after) && self.is_word(after + 1) {
            let next = self.s(after + 1);
            if !in_list(TIME_FOLLOWERS, next) {
                return i + 1;
            }
        }
        if claim && self.article_means_per(i) {
            return i + 1;
        }
        let n = Numeral {
            value: Number::integer(1),
            alt: None,
            end,
            plain_int: false,
            digits: 0,
            leading_zero: false,
            words: true,
            lone_one: false,
        };
        self.finish(i, self.start(i), n)
    }

    /// Whether "a"/"an" at `i` means "per" ("twice a day", "$10 a month",
    /// "24 hours a day"): it does unless a preposition introduces it
    /// ("within a month") or no number, frequency word or currency comes in
    /// the six words before it.
    fn article_means_per(&self, i: usize) -> bool {
        if self
            .prev_word(i)
            .is_some_and(|p| in_list(ARTICLE_PREPOSITIONS, self.s(p)))
        {
            return false;
        }
        let mut words = 0;
        let mut j = i;
        while let Some(p) = j.checked_sub(1) {
            j = p;
            match self.toks[p].k {
                K::Num => return true,
                K::Word => {
                    let w = self.s(p);
                    if lookup(NUMBER_WORDS, w).is_some()
                        || in_list(&["once", "twice", "thrice", "times", "per", "dozen"], w)
                        || lookup(SCALE_WORDS, w).is_some()
                    {
                        return true;
                    }
                    words += 1;
                    if words >= 6 {
                        return false;
                    }
                }
                K::Sym('.' | '!' | '?' | ';' | ':') => return false,
                K::Sym(c) if CURRENCY_PREFIXES.iter().any(|(p, _)| p.ends_with(c)) || c == '%' => {
                    return true;
                }
                _ => {}
            }
        }
        false
    }

    /// "half": "half an hour", "half a day", "half-hour", "half of", "half price".
    fn at_half(&mut self, i: usize) -> usize {
        self.at_fraction_word(i, i)
    }

    fn at_quarter(&mut self, i: usize) -> usize {
        self.at_fraction_word(i, i)
    }

    /// A fraction word at `k` ("half"/"quarter"), possibly after an article at `i`.
    fn at_fraction_word(&mut self, i: usize, k: usize) -> usize {
        let claim = self.claim();
        let is_half = self.word_is(k, "half");
        if let Some(end) = self.clock_phrase(i, k, is_half) {
            return end;
        }
        let value = if is_half {
            half()
        } else {
            Number::new(1, 4).unwrap_or(Number::ZERO)
        };
        // Preceded by an ordinal or "other"/"the": a period ("first half"), not a number.
        if let Some(p) = self.prev_word(i)
            && (self.ordinal_word(p).is_some()
                || matches!(
                    self.s(p).to_ascii_lowercase().as_str(),
                    "other" | "the" | "and"
                ))
        {
            return k + 1;
        }
        // "half a dozen"
        let a = self.sp(k + 1);
        if is_half && self.word_is(a, "a") && self.word_is(self.sp(a + 1), "dozen") {
            let end = self.sp(a + 1) + 1;
            let n = Numeral {
                value: Number::integer(6),
                alt: None,
                end,
                plain_int: false,
                digits: 0,
                leading_zero: false,
                words: true,
                lone_one: false,
            };
            return self.finish(i, self.start(i), n);
        }
        // "half an hour", "quarter of an hour", "half a day"
        let mut u = a;
        if !is_half && self.word_is(u, "of") {
            u = self.sp(u + 1);
        }
        if (self.word_is(u, "a") || self.word_is(u, "an"))
            && u > k
            && let Some((m, end)) = self.time_unit_at(u + 1)
        {
            let scale =
                Number::new(m.scale.0.into(), m.scale.1.into()).unwrap_or(Number::integer(1));
            self.push(
                value,
                m.unit,
                m.name,
                scale,
                self.start(i)..self.end_before(end),
            );
            return end;
        }
        // "half-hour", "half day", "quarter-hour"
        if let Some((m, end)) = self.time_unit_at(k + 1) {
            let scale =
                Number::new(m.scale.0.into(), m.scale.1.into()).unwrap_or(Number::integer(1));
            self.push(
                value,
                m.unit,
                m.name,
                scale,
                self.start(i)..self.end_before(end),
            );
            return end;
        }
        // "half of", "half the", "half price", "a quarter of"
        let next = self.sp(k + 1);
        let follows = |w: &str| self.word_is(next, w);
        let after_by = self
            .prev_word(i)
            .is_some_and(|p| self.word_is(p, "by") || self.word_is(p, "in"));
        let as_number = if is_half {
            after_by
                || follows("of")
                || follows("the")
                || follows("price")
                || follows("its")
                || follows("their")
                || follows("your")
                || ((self.is_sym(k + 1, '-')) && self.word_is(k + 2, "price"))
        } else {
            i != k && follows("of")
        };
        if as_number || (!claim && (is_half || i != k)) {
            self.push(
                value,
                Unit::Count,
                "",
                Number::integer(1),
                self.start(i)..self.end(k),
            );
        }
        k + 1
    }

    fn ordinal_word(&self, i: usize) -> Option<u32> {
        if !self.is_word(i) {
            return None;
        }
        lookup(ORDINAL_WORDS, self.s(i))
    }

    /// Cardinal words from token `i`: ((value, ordinal value if it ends in an
    /// ordinal), end token, lone "one").
    #[allow(clippy::type_complexity)]
    fn word_number(&self, i: usize) -> Option<((Number, Option<Number>), usize, bool)> {
        #[derive(PartialEq, Clone, Copy)]
        enum Last {
            Start,
            Unit,
            Teen,
            Tens,
            Hundred,
            Scale(u64),
            And,
        }
        let mut total: i128 = 0;
        let mut current: i128 = 0;
        let mut last = Last::Start;
        let mut min_scale = u64::MAX;
        let mut j = i;
        let mut end = i;
        let mut words = 0;
        let mut ordinal = None;
        let mut lone_one = false;
        loop {
            if !self.is_word(j) {
                break;
            }
            let w = self.s(j);
            let lw_a = w.eq_ignore_ascii_case("a") || w.eq_ignore_ascii_case("an");
            if lw_a && last == Last::Start {
                // "a hundred", "a dozen", "a thousand"
                let k = self.sp(j + 1);
                if k > j + 1
                    && self.is_word(k)
                    && (self.s(k).eq_ignore_ascii_case("dozen")
                        || lookup(SCALE_WORDS, self.s(k)).is_some())
                {
                    current = 1;
                    last = Last::Unit;
                    j = k;
                    continue;
                }
                break;
            }
            if let Some(v) = lookup(NUMBER_WORDS, w) {
                let v = i128::from(v);
                let class = if v < 10 {
                    Last::Unit
                } else if v < 20 {
                    Last::Teen
                } else {
                    Last::Tens
                };
                let ok = match class {
                    Last::Unit => {
                        matches!(
                            last,
                            Last::Start | Last::Tens | Last::Hundred | Last::Scale(_) | Last::And
                        ) && !(last == Last::Tens && v == 0)
                    }
                    _ => matches!(
                        last,
                        Last::Start | Last::Hundred | Last::Scale(_) | Last::And
                    ),
                };
                if !ok {
                    break;
                }
                // "twenty one" / "twenty-one": unit after tens must be joined.
                current += v;
                last = class;
                words += 1;
                lone_one = words == 1 && v == 1;
                end = j + 1;
            } else if w.eq_ignore_ascii_case("dozen")
                && matches!(last, Last::Unit | Last::Teen | Last::Tens)
            {
                current *= 12;
                last = Last::Hundred;
                words += 1;
                lone_one = false;
                end = j + 1;
            } else if let Some(s) = lookup(SCALE_WORDS, w) {
                if !matches!(last, Last::Unit | Last::Teen | Last::Tens | Last::Hundred)
                    || current == 0
                {
                    break;
                }
                if s == 100 {
                    if last == Last::Hundred {
                        break;
                    }
                    current *= 100;
                    last = Last::Hundred;
                } else {
                    if s >= min_scale {
                        break;
                    }
                    min_scale = s;
                    total = total.checked_add(current.checked_mul(i128::from(s))?)?;
                    current = 0;
                    last = Last::Scale(s);
                }
                words += 1;
                lone_one = false;
                end = j + 1;
            } else if w.eq_ignore_ascii_case("and")
                && matches!(last, Last::Hundred | Last::Scale(_))
            {
                // "one hundred and five" — only if a number word follows.
                let k = self.sp(j + 1);
                if k > j + 1 && self.is_word(k) && lookup(NUMBER_WORDS, self.s(k)).is_some() {
                    last = Last::And;
                    j = k;
                    continue;
                }
                break;
            } else if let Some(v) = lookup(ORDINAL_WORDS, w) {
                let v = i128::from(v);
                let ok = match last {
                    Last::Start => false, // a plain ordinal word: caller handles
                    Last::Tens => v < 10,
                    Last::Hundred | Last::Scale(_) | Last::And => true,
                    _ => false,
                };
                if !ok {
                    break;
                }
                if v >= 100 {
                    current = current.max(1) * v;
                } else {
                    current += v;
                }
                ordinal = Some(());
                end = j + 1;
                words += 1;
                break;
            } else {
                break;
            }
            // Separator to the next word: a space or a hyphen.
            let next = j + 1;
            let joined = (self.is_space(next) && !self.s(next).contains('\n'))
                || self.is_sym(next, '-')
                || self.is_sym(next, '‑');
            if joined && self.is_word(next + 1) {
                j = next + 1;
            } else {
                break;
            }
        }
        if words == 0 {
            return None;
        }
        let value = Number::integer(total.checked_add(current)?);
        let ord = ordinal.map(|_| value);
        Some(((value, ord), end, lone_one))
    }
}
