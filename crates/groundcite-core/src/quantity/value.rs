//! What a text is read as and what is found in it.

use std::fmt;
use std::ops::Range;

use super::number::Number;
use super::units::Unit;
use super::words::Bound;

/// Which side of a claim/quote pair a text is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Conservative: only what the text unmistakably asserts.
    Claim,
    /// Permissive: everything the text could be carrying.
    Quote,
}

/// A quantity found in a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// The number as written, in the written unit ("2 weeks" → 2). For a
    /// time of day, minutes since midnight; for a date, zero.
    pub value: Number,
    /// Its dimension.
    pub unit: Unit,
    /// Canonical name of the written unit ("week", "EUR", "%"; "" for counts).
    pub unit_name: &'static str,
    /// Base units per written unit (week → 604800 seconds).
    pub scale: Number,
    /// Written after "about", "roughly", "~" …: matched at its own precision.
    pub approximate: bool,
    /// A comparator around the number ("under 5", "65+").
    pub bound: Bound,
    /// Byte range in the text.
    pub span: Range<usize>,
    /// The text under `span` (empty for quantities read from quotes).
    pub text: String,
}

impl Quantity {
    /// The value in the dimension's base unit (`value × scale`).
    pub fn base_value(&self) -> Option<Number> {
        self.value.checked_mul(self.scale)
    }

    /// A canonical, unit-normalised description: "2 week", "50 EUR", "12%",
    /// "2026-11-30", "Q3", "17:00".
    pub fn canonical(&self) -> String {
        let approx = if self.approximate { "~" } else { "" };
        match self.unit {
            Unit::Count => format!("{approx}{}", self.value),
            Unit::Percent if self.unit_name == "%" => format!("{approx}{}%", self.value),
            Unit::Ordinal => format!("ordinal {}", self.value),
            Unit::Quarter => format!("Q{}", self.value),
            Unit::Year => format!("year {}", self.value),
            Unit::Times => format!("{approx}{} times", self.value),
            Unit::Date(d) => {
                let y = d.year.map_or("????".to_string(), |y| format!("{y:04}"));
                let m = d.month.map_or("??".to_string(), |m| format!("{m:02}"));
                let dd = d.day.map_or("??".to_string(), |x| format!("{x:02}"));
                let swap = if d.ambiguous {
                    " (day/month ambiguous)"
                } else {
                    ""
                };
                format!("{y}-{m}-{dd}{swap}")
            }
            Unit::TimeOfDay { ambiguous } => {
                let m = self.value.numerator();
                let amb = if ambiguous { " (or +12h)" } else { "" };
                format!("{:02}:{:02}{amb}", m / 60, m % 60)
            }
            _ => format!("{approx}{} {}", self.value, self.unit_name),
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.text.is_empty() {
            f.write_str(&self.canonical())
        } else {
            write!(f, "{:?} ({})", self.text, self.canonical())
        }
    }
}
