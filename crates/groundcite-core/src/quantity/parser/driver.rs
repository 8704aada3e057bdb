//! The token loop, its dispatch and the post-pass over everything found
//! (ranges, shared units, second readings).

use crate::quantity::lexer::{DASHES, K};
use crate::quantity::number::Number;
use crate::quantity::units::{DAY, Unit};
use crate::quantity::value::Quantity;
use crate::quantity::words::Bound;

use super::Parser;

impl<'t> Parser<'t> {
    pub(in crate::quantity) fn run(mut self) -> Vec<Quantity> {
        let mut i = 0;
        while i < self.toks.len() {
            let next = self.step(i);
            i = next.max(i + 1);
        }
        self.post();
        self.out.append(&mut self.alts);
        self.out
    }

    /// Quote side: also every digit run as a written number.
    pub(in crate::quantity) fn run_keep_raw(&mut self, written: &mut Vec<Number>) -> Vec<Quantity> {
        for t in &self.toks {
            if t.k == K::Num
                && let Ok(n) = self.text[t.s..t.e].parse::<i128>()
            {
                written.push(Number::integer(n));
            }
        }
        let p = Parser {
            text: self.text,
            toks: std::mem::take(&mut self.toks),
            side: self.side,
            out: Vec::new(),
            alts: Vec::new(),
        };
        p.run()
    }

    fn step(&mut self, i: usize) -> usize {
        let Some(t) = self.tok(i) else {
            return i + 1;
        };
        match t.k {
            K::Num => self.at_number(i, None),
            K::Word => self.at_word(i),
            K::Sym(c) => self.at_sym(i, c),
            K::Space => i + 1,
        }
    }

    fn post(&mut self) {
        let claim = self.claim();
        // Adjacent "a-b" with a ≥ b is a score or an identifier, not a range.
        if claim {
            let mut drop = vec![false; self.out.len()];
            for k in 1..self.out.len() {
                let (a, b) = (&self.out[k - 1], &self.out[k]);
                let link = self.text.get(a.span.end..b.span.start).unwrap_or("");
                if link.chars().count() == 1
                    && link.chars().all(|c| DASHES.contains(&c))
                    && a.unit == Unit::Count
                    && b.unit == Unit::Count
                    && b.value.le(a.value)
                {
                    drop[k - 1] = true;
                    drop[k] = true;
                }
            }
            let mut it = drop.iter();
            self.out.retain(|_| !it.next().copied().unwrap_or(false));
        }
        // Ranges and lists lend their unit backwards: "20-30 days", "30, 60 or 90 days".
        for k in (1..self.out.len()).rev() {
            let link = self.link(k);
            if !is_link(link) {
                continue;
            }
            let b = self.out[k].clone();
            let a = &mut self.out[k - 1];
            if a.unit == Unit::Count && b.unit.propagates() {
                a.unit = b.unit;
                a.unit_name = b.unit_name;
                a.scale = b.scale;
            } else if a.unit == Unit::Count
                && matches!(b.unit, Unit::TimeOfDay { .. })
                && a.value.is_integer()
                && (1..=12).contains(&a.value.numerator())
                && link != "and"
                && link != "or"
            {
                a.unit = Unit::TimeOfDay { ambiguous: true };
                a.value = Number::integer(a.value.numerator() * 60);
            }
        }
        // A range's endpoints bound it: "aged 5–11" is "11 and under".
        for k in 1..self.out.len() {
            let link = self.link(k);
            let dash = link.chars().count() == 1 && link.chars().all(|c| DASHES.contains(&c));
            if dash
                || matches!(
                    link.to_ascii_lowercase().as_str(),
                    "to" | "through" | "thru"
                )
            {
                if self.out[k - 1].bound == Bound::Exact {
                    self.out[k - 1].bound = Bound::AtLeast;
                }
                if self.out[k].bound == Bound::Exact {
                    self.out[k].bound = Bound::AtMost;
                }
            }
        }
        // …and a currency forwards: "$20-30", "€10 to 15".
        for k in 1..self.out.len() {
            let link = self.link(k);
            if !is_link(link) {
                continue;
            }
            let a = self.out[k - 1].clone();
            let b = &mut self.out[k];
            if b.unit == Unit::Count
                && matches!(a.unit, Unit::Money(_))
                && a.scale == Number::integer(1)
            {
                b.unit = a.unit;
                b.unit_name = a.unit_name;
            }
        }
        // Compound durations: "2 hours 30 minutes", "1 year and 6 months".
        let mut merged_extra = Vec::new();
        let mut k = 1;
        while k < self.out.len() {
            let (a, b) = (&self.out[k - 1], &self.out[k]);
            let link = self.link(k);
            if a.span.end <= b.span.start
                && matches!(link, "" | "and" | ",")
                && a.unit == b.unit
                && matches!(a.unit, Unit::Duration | Unit::CalendarDuration)
                && b.scale.lt(a.scale)
                && let (Some(ab), Some(bb)) = (a.base_value(), b.base_value())
                && let Some(total) = ab.checked_add(bb)
                && let Some(value) = total.checked_div(b.scale)
            {
                let merged = Quantity {
                    value,
                    unit: b.unit,
                    unit_name: b.unit_name,
                    scale: b.scale,
                    approximate: a.approximate,
                    bound: a.bound,
                    span: a.span.start..b.span.end,
                    text: String::new(),
                };
                if claim {
                    self.out[k - 1] = merged;
                    self.out.remove(k);
                    continue;
                }
                merged_extra.push(merged);
            }
            k += 1;
        }
        self.out.extend(merged_extra);
        // Quotes: "every 8 hours" also says "3 times a day".
        if !claim {
            let day = Number::integer(DAY.into());
            let week = Number::integer((7 * DAY).into());
            let mut derived = Vec::new();
            for q in &self.out {
                if q.unit != Unit::Duration {
                    continue;
                }
                let before = self.text[..q.span.start].trim_end().to_ascii_lowercase();
                if !(before.ends_with("every") || before.ends_with("each")) {
                    continue;
                }
                let Some(d) = q.base_value() else { continue };
                for period in [day, week] {
                    if let Some(times) = period.checked_div(d)
                        && times.is_integer()
                        && times.numerator() >= 1
                    {
                        derived.push(Quantity {
                            value: times,
                            unit: Unit::Times,
                            unit_name: "times",
                            scale: Number::integer(1),
                            approximate: false,
                            bound: Bound::Exact,
                            span: q.span.clone(),
                            text: String::new(),
                        });
                    }
                }
            }
            self.out.extend(derived);
        }
    }

    /// The trimmed text between quantity `k - 1` and quantity `k` (NUL when they overlap).
    fn link(&self, k: usize) -> &'t str {
        let (a, b) = (&self.out[k - 1], &self.out[k]);
        let text: &'t str = self.text;
        text.get(a.span.end..b.span.start)
            .map_or("\u{0}", str::trim)
    }
}

fn is_link(link: &str) -> bool {
    (link.chars().count() == 1 && link.chars().all(|c| DASHES.contains(&c)))
        || matches!(
            link.to_ascii_lowercase().as_str(),
            "to" | "through" | "thru" | "or" | "and" | "," | ", or" | ", and" | "and/or" | "/"
        )
}
