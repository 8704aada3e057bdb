//! What the quotes carry, and when a claim quantity is carried by one.

use super::number::Number;
use super::parser::Parser;
use super::units::{Currency, Date, Unit};
use super::value::{Quantity, Side};
use super::words::Bound;

/// What [`check_claim`](super::check_claim) found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuantityCheck {
    /// The quantities the claim asserts, in order.
    pub asserted: Vec<Quantity>,
    /// Those no quote carries, in order.
    pub unsupported: Vec<Quantity>,
}

impl QuantityCheck {
    /// Whether every asserted quantity is carried by a quote.
    pub fn is_consistent(&self) -> bool {
        self.unsupported.is_empty()
    }
}

pub(super) struct Support<'q> {
    pub(super) quotes: &'q [&'q str],
    pub(super) quantities: Vec<Quantity>,
    /// Every number written in the quotes, in any role (bare claims match these).
    pub(super) written: Vec<Number>,
}

impl<'q> Support<'q> {
    pub(super) fn new(quotes: &'q [&'q str]) -> Support<'q> {
        let mut quantities = Vec::new();
        let mut written = Vec::new();
        for quote in quotes {
            let mut p = Parser::new(quote, Side::Quote);
            let qs = p.run_keep_raw(&mut written);
            quantities.extend(qs);
        }
        for q in &quantities {
            match q.unit {
                // Numeric dates left their digits in `written` already; a month
                // name is not the number of its month ("April" is not 4).
                Unit::Date(_) => {}
                Unit::TimeOfDay { .. } => {
                    let h = q.value.numerator() / 60;
                    written.push(Number::integer(h));
                    written.push(Number::integer(if h % 12 == 0 { 12 } else { h % 12 }));
                }
                _ => written.push(q.value),
            }
        }
        Support {
            quotes,
            quantities,
            written,
        }
    }

    pub(super) fn carries(&self, c: &Quantity) -> bool {
        if self
            .quantities
            .iter()
            .any(|q| self.equivalent(c, q) || self.bound_equivalent(c, q))
        {
            return true;
        }
        if matches!(c.unit, Unit::Count | Unit::Year)
            && self
                .written
                .iter()
                .any(|&w| same_number(c.value, w, c.approximate))
        {
            return true;
        }
        // Last resort: the claim's words for the quantity are in a quote.
        !c.text.is_empty() && self.quotes.iter().any(|q| contains_words(q, &c.text))
    }

    fn equivalent(&self, c: &Quantity, q: &Quantity) -> bool {
        let hundred = Number::integer(100);
        match (c.unit, q.unit) {
            (Unit::Count | Unit::Year, Unit::Date(_) | Unit::TimeOfDay { .. }) => false,
            (Unit::Count | Unit::Year, Unit::Percent) => {
                // "half" = 50%; a bare claim number also matches the written percent.
                same_number(c.value, q.value, c.approximate)
                    || q.base_value()
                        .and_then(|qb| qb.checked_div(hundred))
                        .is_some_and(|qf| same_number(c.value, qf, c.approximate))
            }
            (Unit::Count | Unit::Year, _) => same_number(c.value, q.value, c.approximate),
            (Unit::Date(_), Unit::Count) => false,
            (Unit::TimeOfDay { ambiguous }, Unit::Count) => {
                // "9am" is carried by a bare 9 ("open 9 to 5").
                let m = c.value.numerator();
                let h = m / 60;
                let hours = [Some(h), ambiguous.then_some((h + 12) % 24), Some(h % 12)];
                m % 60 == 0
                    && hours
                        .iter()
                        .flatten()
                        .any(|&x| Number::integer(x) == q.value)
            }
            (_, Unit::Count) => {
                same_number(c.value, q.value, c.approximate)
                    || (c.unit == Unit::Percent
                        && c.base_value()
                            .zip(q.value.checked_mul(hundred))
                            .is_some_and(|(cb, qv)| same_number(cb, qv, c.approximate)))
            }
            (Unit::Date(cd), Unit::Date(qd)) => self.date_carried(cd, qd),
            (Unit::TimeOfDay { ambiguous: ca }, Unit::TimeOfDay { ambiguous: qa }) => {
                let readings = |v: i128, amb: bool| {
                    let alt = amb.then_some((v + 720) % 1440);
                    std::iter::once(v).chain(alt)
                };
                readings(c.value.numerator(), ca)
                    .any(|x| readings(q.value.numerator(), qa).any(|y| x == y))
            }
            (Unit::Ordinal, Unit::Ordinal)
            | (Unit::Quarter, Unit::Quarter)
            | (Unit::Times, Unit::Times) => c.value == q.value,
            (Unit::Celsius, Unit::Fahrenheit) | (Unit::Fahrenheit, Unit::Celsius) => {
                // °F = °C × 9/5 + 32, exactly.
                let nine_fifths = Number { num: 9, den: 5 };
                let thirty_two = Number::integer(32);
                let converted = if c.unit == Unit::Celsius {
                    q.value
                        .checked_sub(thirty_two)
                        .and_then(|v| v.checked_div(nine_fifths))
                } else {
                    q.value
                        .checked_mul(nine_fifths)
                        .and_then(|v| v.checked_add(thirty_two))
                };
                converted.is_some_and(|v| same_number(c.value, v, c.approximate))
            }
            (Unit::Ordinal, Unit::Date(qd)) => qd
                .readings()
                .any(|r| r.day.is_some_and(|d| Number::integer(d.into()) == c.value)),
            _ => conversion_factors(c, q).into_iter().flatten().any(|f| {
                q.value
                    .checked_mul(f)
                    .is_some_and(|qv| same_number(c.value, qv, c.approximate))
            }),
        }
    }

    /// Whole-number bounds one apart: "under 5" and "4 and under", "18+" and "over 17".
    fn bound_equivalent(&self, c: &Quantity, q: &Quantity) -> bool {
        let countable = |u: Unit| {
            matches!(
                u,
                Unit::Count | Unit::Duration | Unit::CalendarDuration | Unit::BusinessDays
            )
        };
        if !c.value.is_integer() || !countable(c.unit) || !countable(q.unit) {
            return false;
        }
        let delta = match (c.bound, q.bound) {
            (Bound::Below, Bound::AtMost) | (Bound::AtLeast, Bound::Above) => -1,
            (Bound::AtMost, Bound::Below) | (Bound::Above, Bound::AtLeast) => 1,
            _ => return false,
        };
        let Some(value) = c.value.checked_add(Number::integer(delta)) else {
            return false;
        };
        let shifted = Quantity {
            value,
            bound: Bound::Exact,
            approximate: false,
            ..c.clone()
        };
        self.equivalent(&shifted, q)
    }

    fn date_carried(&self, c: Date, q: Date) -> bool {
        c.readings().any(|c| {
            q.readings().any(|q| {
                c.day.is_none_or(|d| q.day == Some(d))
                    && c.month.is_none_or(|m| q.month == Some(m))
                    && c.year.is_none_or(|y| match q.year {
                        Some(qy) => qy == y,
                        None => self.written.contains(&Number::integer(y.into())),
                    })
            })
        })
    }
}

/// Equality, or for an approximate claim, equality at the claim's precision.
fn same_number(claim: Number, other: Number, approximate: bool) -> bool {
    if claim == other {
        return true;
    }
    if !approximate {
        return false;
    }
    let (Some(p), Some(diff)) = (claim.precision(), claim.checked_sub(other)) else {
        return false;
    };
    diff.abs()
        .checked_mul(Number::integer(2))
        .is_some_and(|d2| d2.le(p))
}

/// Factors `f` such that `q.value × f` is `q` expressed in `c`'s written unit;
/// none when the dimensions are incompatible.
fn conversion_factors(c: &Quantity, q: &Quantity) -> [Option<Number>; 2] {
    let ratio = |extra: Number| {
        q.scale
            .checked_mul(extra)
            .and_then(|s| s.checked_div(c.scale))
    };
    let one = Number::integer(1);
    let sixteen = Number::integer(16);
    match (c.unit, q.unit) {
        (Unit::Money(a), Unit::Money(b)) if a.compatible(b) => [ratio(one), None],
        (Unit::Data { power: pc }, Unit::Data { power: pq }) => {
            let k = i32::from(pq) - i32::from(pc);
            let f = |base: i128| -> Option<Number> {
                let p = base.checked_pow(k.unsigned_abs())?;
                if k >= 0 {
                    Some(Number::integer(p))
                } else {
                    Number::new(1, p)
                }
            };
            [f(1000), f(1024)]
        }
        (Unit::Pounds, Unit::Money(b)) if Currency::Gbp.compatible(b) => [ratio(one), None],
        (Unit::Money(a), Unit::Pounds) if a.compatible(Currency::Gbp) => [ratio(one), None],
        (Unit::Pounds, Unit::ImperialMass) => [
            q.scale
                .checked_div(c.scale)
                .and_then(|r| r.checked_div(sixteen)),
            None,
        ],
        (Unit::ImperialMass, Unit::Pounds) => [ratio(sixteen), None],
        (Unit::Degrees, Unit::Celsius | Unit::Fahrenheit)
        | (Unit::Celsius | Unit::Fahrenheit, Unit::Degrees) => [ratio(one), None],
        (a, b) if a == b && !matches!(a, Unit::Money(_)) => [ratio(one), None],
        _ => [None, None],
    }
}

/// Whether `needle`'s words occur in `hay`, case-insensitively, with
/// white-space runs equal and at word boundaries.
fn contains_words(hay: &str, needle: &str) -> bool {
    let norm = |s: &str| -> String {
        let mut out = String::with_capacity(s.len());
        for w in s.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.extend(w.chars().flat_map(char::to_lowercase));
        }
        out
    };
    let (h, n) = (norm(hay), norm(needle));
    if n.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(rel) = h[from..].find(&n) {
        let s = from + rel;
        let e = s + n.len();
        // Not inside a longer number or word: "4 mg" is not in "0.4 mg".
        let mut back = h[..s].chars().rev();
        let before_ok = match back.next() {
            None => true,
            Some(c) if c.is_alphanumeric() => false,
            Some('.' | ',' | '-') => back.next().is_none_or(|c| !c.is_ascii_digit()),
            Some(_) => true,
        };
        let mut fwd = h[e..].chars();
        let after_ok = match fwd.next() {
            None => true,
            Some(c) if c.is_alphanumeric() => false,
            Some('.' | ',') => fwd.next().is_none_or(|c| !c.is_ascii_digit()),
            Some(_) => true,
        };
        if before_ok && after_ok {
            return true;
        }
        from = s + h[s..].chars().next().map_or(1, char::len_utf8);
    }
    false
}
