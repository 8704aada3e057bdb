//! Dates, months, clock times and day/month pairs.

use std::ops::Range;

use crate::quantity::lexer::{K, lookup};
use crate::quantity::number::Number;
use crate::quantity::units::{Date, Unit};
use crate::quantity::words::{MONTHS, NUMBER_WORDS};

use super::Parser;

impl<'t> Parser<'t> {
    /// am / pm / a.m. / p.m. at token `j` (after at most one space).
    pub(super) fn meridiem(&self, j: usize) -> Option<(bool, usize)> {
        let k = self.sp(j);
        if !self.is_word(k) {
            return None;
        }
        let w = self.s(k);
        let pm = if w.eq_ignore_ascii_case("am") {
            false
        } else if w.eq_ignore_ascii_case("pm") {
            true
        } else if (w.eq_ignore_ascii_case("a") || w.eq_ignore_ascii_case("p"))
            && self.is_sym(k + 1, '.')
            && self.word_is(k + 2, "m")
        {
            let end = if self.is_sym(k + 3, '.') {
                k + 4
            } else {
                k + 3
            };
            return Some((w.eq_ignore_ascii_case("p"), end));
        } else {
            return None;
        };
        Some((pm, k + 1))
    }

    /// A month name at token `k`; the token after it (and an abbreviation's
    /// dot).
    fn month_at(&self, k: usize) -> Option<(u8, usize)> {
        if !self.is_word(k) {
            return None;
        }
        let w = self.s(k);
        let m = lookup(MONTHS, w)?;
        let capital = w.starts_with(|c: char| c.is_uppercase());
        let full =
            w.len() > 4 || matches!(w.to_ascii_lowercase().as_str(), "may" | "june" | "july");
        if !capital && (self.claim() || !full || m == 5 || m == 3) {
            return None;
        }
        let mut end = k + 1;
        if !full && self.is_sym(end, '.') {
            end += 1;
        }
        Some((m, end))
    }

    fn push_date(&mut self, d: Date, span: Range<usize>) {
        self.push(Number::ZERO, Unit::Date(d), "", Number::integer(1), span);
    }

    /// "30 November 2026", "30th of November", "1 Jan 2026" from the day at
    /// `start`; `j` is the token after the day (and its ordinal suffix).
    pub(super) fn day_month(&mut self, start: usize, j: usize, day: i128) -> Option<usize> {
        let mut k = self.sp(j);
        if k == j {
            return None;
        }
        if self.word_is(k, "of") && self.is_space(k + 1) {
            k += 2;
        }
        let (month, mut end) = self.month_at(k)?;
        let mut year = None;
        let mut y = end;
        if self.is_sym(y, ',') {
            y += 1;
        }
        let y = self.sp(y);
        if y > end && self.num_len(y) == 4 && !self.is_sym(y + 1, ':') {
            year = self.int(y);
            end = y + 1;
        }
        let date = valid_date(year, month.into(), Some(day))?;
        self.push_date(date, start..self.end_before(end));
        Some(end)
    }

    pub(super) fn after_ordinal(
        &mut self,
        start: usize,
        j: usize,
        v: Number,
        digits: bool,
    ) -> usize {
        let claim = self.claim();
        // Dates: "30th November", "the 30th of November 2026".
        if digits
            && let Some(d) = v.is_integer().then(|| v.numerator())
            && (1..=31).contains(&d)
            && let Some(end) = self.day_month(start, j, d)
        {
            return end;
        }
        // Quarters: "third quarter", "3rd quarter".
        let k = if self.is_space(j) || self.is_sym(j, '-') {
            j + 1
        } else {
            j
        };
        if k != j
            && (self.word_is(k, "quarter") || self.word_is(k, "qtr"))
            && v.is_integer()
            && (1..=4).contains(&v.numerator())
        {
            let end = self.end(k);
            self.push(v, Unit::Quarter, "quarter", Number::integer(1), start..end);
            return k + 1;
        }
        if k != j && self.word_is(k, "half") {
            return k + 1; // first half (H1): not handled
        }
        if claim && !digits && !self.period_noun_follows(j) {
            return j;
        }
        let end = self.end_before(j);
        self.push(v, Unit::Ordinal, "ordinal", Number::integer(1), start..end);
        j
    }

    /// 2026-11-30 (optionally followed by a time).
    pub(super) fn try_iso_date(&mut self, i: usize) -> Option<usize> {
        if self.num_len(i) != 4
            || !self.is_sym(i + 1, '-')
            || !matches!(self.num_len(i + 2), 1 | 2)
            || !self.is_sym(i + 3, '-')
            || !matches!(self.num_len(i + 4), 1 | 2)
        {
            return None;
        }
        let (y, m, d) = (self.int(i)?, self.int(i + 2)?, self.int(i + 4)?);
        let date = valid_date(Some(y), m, Some(d))?;
        self.push_date(date, self.start(i)..self.end(i + 4));
        Some(i + 5)
    }

    /// 30/11/2026, 11/30/2026, 2026/11/30, 30.11.2026, 30-11-2026.
    pub(super) fn try_numeric_date(&mut self, i: usize) -> Option<usize> {
        let sep = match self.tok(i + 1)?.k {
            K::Sym(c @ ('/' | '.' | '-')) => c,
            _ => return None,
        };
        if !self.is_num(i + 2) || !self.is_sym(i + 3, sep) || !self.is_num(i + 4) {
            return None;
        }
        if self.is_sym(i + 5, sep) && self.is_num(i + 6) {
            return None;
        }
        let (a, b, c) = (self.int(i)?, self.int(i + 2)?, self.int(i + 4)?);
        let (la, lb, lc) = (self.num_len(i), self.num_len(i + 2), self.num_len(i + 4));
        let date = if la == 4 && sep == '/' && lb <= 2 && lc <= 2 {
            valid_date(Some(a), b, Some(c))?
        } else if la <= 2 && lb <= 2 && (lc == 4 || (lc == 2 && sep == '/')) {
            let y = if lc == 2 { 2000 + c } else { c };
            if sep == '.' || a > 12 {
                valid_date(Some(y), b, Some(a))?
            } else if b > 12 {
                valid_date(Some(y), a, Some(b))?
            } else {
                let mut d = valid_date(Some(y), b, Some(a))?;
                d.ambiguous = a != b;
                d
            }
        } else {
            return None;
        };
        self.push_date(date, self.start(i)..self.end(i + 4));
        Some(i + 5)
    }

    /// 9:30, 17:00, 9:30 pm, 09:00:00, 9.30am.
    pub(super) fn try_clock(&mut self, i: usize) -> Option<usize> {
        let sep_colon = self.is_sym(i + 1, ':');
        let sep_dot = self.is_sym(i + 1, '.');
        if !(sep_colon || sep_dot) || !matches!(self.num_len(i), 1 | 2) || self.num_len(i + 2) != 2
        {
            return None;
        }
        let (h, m) = (self.int(i)?, self.int(i + 2)?);
        if h > 24 || m > 59 {
            return None;
        }
        let mut j = i + 3;
        if sep_colon && self.is_sym(j, ':') && self.num_len(j + 1) == 2 {
            j += 2;
        }
        let meridiem = self.meridiem(j);
        if sep_dot && meridiem.is_none() {
            return None;
        }
        let (minutes, ambiguous, end) = match meridiem {
            Some((pm, end)) if (1..=12).contains(&h) => {
                let h24 = (h % 12) + if pm { 12 } else { 0 };
                (h24 * 60 + m, false, end)
            }
            Some(_) => return None,
            None => ((h % 24) * 60 + m, (1..=12).contains(&h), j),
        };
        let start = self.start(i);
        let span_end = self.end_before(end);
        self.push(
            Number::integer(minutes),
            Unit::TimeOfDay { ambiguous },
            "",
            Number::integer(1),
            start..span_end,
        );
        Some(end)
    }

    /// "November 30, 2026", "Nov. 30", "November 2026", "November".
    pub(super) fn try_month_first(&mut self, i: usize) -> Option<usize> {
        let (month, after) = self.month_at(i)?;
        let w = self.s(i);
        let full =
            w.len() > 4 || matches!(w.to_ascii_lowercase().as_str(), "may" | "june" | "july");
        let start = self.start(i);
        let k = self.sp(after);
        if k > after && matches!(self.num_len(k), 1 | 2) && !self.is_sym(k + 1, ':') {
            let day = self.int(k)?;
            let mut end = k + 1;
            if self.ordinal_suffix(end, Number::integer(day)).is_some() {
                end += 1;
            }
            // "May 5 days" is not a date.
            if (1..=31).contains(&day) && self.match_unit(end).is_none() {
                let mut y = end;
                if self.is_sym(y, ',') {
                    y += 1;
                }
                let y2 = self.sp(y);
                let mut year = None;
                if y2 > y && self.num_len(y2) == 4 {
                    year = self.int(y2);
                    end = y2 + 1;
                } else if y2 == y && self.num_len(y2) == 4 {
                    // "Nov 30,2026"
                    year = self.int(y2);
                    end = y2 + 1;
                }
                let date = valid_date(year, month.into(), Some(day))?;
                self.push_date(date, start..self.end_before(end));
                return Some(end);
            }
        }
        if k > after && self.num_len(k) == 4 && !self.is_sym(k + 1, ':') {
            let y = self.int(k)?;
            let date = valid_date(Some(y), month.into(), None)?;
            self.push_date(date, start..self.end(k));
            return Some(k + 1);
        }
        if full && month != 5 {
            let end = self.end_before(after);
            self.push_date(
                Date {
                    year: None,
                    month: Some(month),
                    day: None,
                    ambiguous: false,
                },
                start..end,
            );
            return Some(after);
        }
        None
    }

    /// "half past five", "quarter past three", "quarter to six": a time of
    /// day (am or pm).
    pub(super) fn clock_phrase(&mut self, i: usize, k: usize, is_half: bool) -> Option<usize> {
        let rel = self.sp(k + 1);
        if rel == k + 1 {
            return None;
        }
        let past = self.word_is(rel, "past");
        let to = self.word_is(rel, "to") && !is_half;
        if !(past || to) {
            return None;
        }
        let h = self.sp(rel + 1);
        if h == rel + 1 {
            return None;
        }
        let hour = if self.is_num(h) && self.num_len(h) <= 2 && !self.is_sym(h + 1, ':') {
            self.int(h)?
        } else if self.is_word(h) {
            i128::from(lookup(NUMBER_WORDS, self.s(h))?)
        } else {
            return None;
        };
        if !(1..=12).contains(&hour) {
            return None;
        }
        let minutes = match (is_half, past) {
            (true, _) => hour * 60 + 30,
            (false, true) => hour * 60 + 15,
            (false, false) => hour * 60 - 15,
        };
        self.push(
            Number::integer(minutes),
            Unit::TimeOfDay { ambiguous: true },
            "",
            Number::integer(1),
            self.start(i)..self.end(h),
        );
        Some(h + 1)
    }
}

fn valid_date(year: Option<i128>, month: i128, day: Option<i128>) -> Option<Date> {
    if !(1..=12).contains(&month) {
        return None;
    }
    let max = match month {
        2 => 29,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if let Some(d) = day
        && !(1..=max).contains(&d)
    {
        return None;
    }
    if let Some(y) = year
        && !(1000..=2999).contains(&y)
    {
        return None;
    }
    Some(Date {
        year: year.and_then(|y| i32::try_from(y).ok()),
        month: u8::try_from(month).ok(),
        day: day.and_then(|d| u8::try_from(d).ok()),
        ambiguous: false,
    })
}
