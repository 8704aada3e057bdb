//! The quantity check: the numbers a claim asserts must be carried by its
//! verified quotes.
//!
//! A verbatim quote proves that the source says something; it does not prove
//! that the claim says the same thing. "The refund window is 2 weeks." can
//! cite, verbatim, "Refunds are available within 30 days of purchase." Wrong
//! numbers are the errors that hurt users most and they are checkable, so:
//!
//! 1. [`extract`] finds the quantities a claim asserts: integers and decimals
//!    with their unit or currency, percentages, spelled-out numbers,
//!    ordinals, dates, years, quarters, times of day and durations;
//! 2. [`check_claim`] extracts, more permissively, the quantities each quote
//!    carries and reports every claim quantity that no quote carries, under
//!    the equivalences of the tables in this module (30 = thirty = 30-day,
//!    2 weeks = 14 days, €50 = 50 euros = EUR 50, 2026-11-30 = 30 November 2026).
//!
//! Everything here is pure and deterministic. The rule, its tables and every
//! decision (what is *not* a quantity, ranges, "a month" versus "30 days")
//! are documented in `docs/quantities.md`; a test keeps the unit table there
//! and [`UNITS`] in step.
//!
//! The rule is conservative on the claim side (a false drop of a correct
//! claim is worse than a miss): ambiguous forms (identifiers, versions, phone
//! numbers, footnote digits, "one" without a unit, ordinal words outside a
//! period phrase) are not extracted from claims, while quotes are read
//! permissively.
//!
//! ```
//! use groundcite_core::quantity::check_claim;
//!
//! let check = check_claim(
//!     "The refund window is 2 weeks.",
//!     &["Refunds are available within 30 days of purchase."],
//! );
//! assert_eq!(check.unsupported.len(), 1);
//! assert_eq!(check.unsupported[0].text, "2 weeks");
//!
//! let check = check_claim("You have thirty days to ask for a refund.",
//!                         &["Refunds are available within 30 days of purchase."]);
//! assert!(check.is_consistent());
//! ```

mod checker;
mod lexer;
mod number;
mod parser;
mod units;
mod value;
mod words;

#[cfg(test)]
mod tests;

pub use checker::QuantityCheck;
pub use number::Number;
pub use units::{CURRENCY_PREFIXES, Currency, Date, UNITS, Unit, UnitSpelling};
pub use value::{Quantity, Side};
pub use words::{
    APPROXIMATE_MARKERS, ARTICLE_PREPOSITIONS, BOUNDS_AFTER, BOUNDS_BEFORE, Bound, ID_WORDS,
    MONTHS, NON_QUANTITY_COMPOUNDS, NUMBER_WORDS, ORDINAL_WORDS, PERIOD_NOUNS, SCALE_WORDS,
    TIME_FOLLOWERS, WHOLE_WORDS,
};

use checker::Support;
use parser::Parser;

/// The quantities a claim asserts (conservative reading; see the module docs).
pub fn extract(text: &str) -> Vec<Quantity> {
    extract_as(text, Side::Claim)
}

/// The quantities of `text` read as `side`, each with its `text` filled in.
pub fn extract_as(text: &str, side: Side) -> Vec<Quantity> {
    let mut out = Parser::new(text, side).run();
    for q in &mut out {
        q.text = text[q.span.clone()].to_string();
    }
    out
}

/// Checks the quantities of `claim` against its verified `quotes`: every
/// quantity the claim asserts must be carried, up to the documented
/// equivalences, by at least one quote. Quantities only in the quotes are fine.
pub fn check_claim(claim: &str, quotes: &[&str]) -> QuantityCheck {
    let asserted = extract(claim);
    if asserted.is_empty() {
        return QuantityCheck::default();
    }
    let support = Support::new(quotes);
    let unsupported = asserted
        .iter()
        .filter(|c| !support.carries(c))
        .cloned()
        .collect();
    QuantityCheck {
        asserted,
        unsupported,
    }
}
