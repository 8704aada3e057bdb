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

use std::fmt;
use std::ops::Range;

// ---------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------

/// An exact rational number (reduced, positive denominator): 1,000 = 1000,
/// 1.5 = 1.50 = 3/2, and conversions (mg → g, weeks → seconds) never round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Number {
    num: i128,
    den: i128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    // Almost every number fits 64 bits, where division is far cheaper.
    if let (Ok(mut x), Ok(mut y)) = (u64::try_from(a), u64::try_from(b)) {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        return x.into();
    }
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Number {
    /// Zero.
    pub const ZERO: Number = Number { num: 0, den: 1 };

    /// `num / den`, reduced; `None` when `den` is zero or on overflow.
    pub fn new(num: i128, den: i128) -> Option<Number> {
        if den == 0 {
            return None;
        }
        // Fast path in 64 bits (i128 division is a library call).
        if let (Ok(n), Ok(d)) = (i64::try_from(num), i64::try_from(den))
            && n != i64::MIN
            && d != i64::MIN
        {
            let g = gcd(n.unsigned_abs().into(), d.unsigned_abs().into()).max(1);
            let g = i64::try_from(g).ok()?;
            let (n, d) = if d < 0 {
                (-n / g, -d / g)
            } else {
                (n / g, d / g)
            };
            return Some(Number {
                num: n.into(),
                den: d.into(),
            });
        }
        let g = i128::try_from(gcd(num.unsigned_abs(), den.unsigned_abs()).max(1)).ok()?;
        let (mut n, mut d) = (num / g, den / g);
        if d < 0 {
            n = n.checked_neg()?;
            d = d.checked_neg()?;
        }
        Some(Number { num: n, den: d })
    }

    /// The integer `n`.
    pub const fn integer(n: i128) -> Number {
        Number { num: n, den: 1 }
    }

    /// Numerator of the reduced fraction.
    pub fn numerator(self) -> i128 {
        self.num
    }

    /// Denominator of the reduced fraction (always positive).
    pub fn denominator(self) -> i128 {
        self.den
    }

    /// The nearest `f64` (for display and statistics only; comparisons are exact).
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Whether the number is an integer.
    pub fn is_integer(self) -> bool {
        self.den == 1
    }

    fn checked_mul(self, o: Number) -> Option<Number> {
        let g1 = i128::try_from(gcd(self.num.unsigned_abs(), o.den.unsigned_abs()).max(1)).ok()?;
        let g2 = i128::try_from(gcd(o.num.unsigned_abs(), self.den.unsigned_abs()).max(1)).ok()?;
        Number::new(
            (self.num / g1).checked_mul(o.num / g2)?,
            (self.den / g2).checked_mul(o.den / g1)?,
        )
    }

    fn checked_add(self, o: Number) -> Option<Number> {
        Number::new(
            self.num
                .checked_mul(o.den)?
                .checked_add(o.num.checked_mul(self.den)?)?,
            self.den.checked_mul(o.den)?,
        )
    }

    fn checked_sub(self, o: Number) -> Option<Number> {
        self.checked_add(Number {
            num: o.num.checked_neg()?,
            den: o.den,
        })
    }

    fn checked_div(self, o: Number) -> Option<Number> {
        if o.num == 0 {
            return None;
        }
        self.checked_mul(Number::new(o.den, o.num)?)
    }

    fn abs(self) -> Number {
        Number {
            num: self.num.saturating_abs(),
            den: self.den,
        }
    }

    fn le(self, o: Number) -> bool {
        match (self.num.checked_mul(o.den), o.num.checked_mul(self.den)) {
            (Some(a), Some(b)) => a <= b,
            _ => self.to_f64() <= o.to_f64(),
        }
    }

    fn lt(self, o: Number) -> bool {
        self.le(o) && self != o
    }

    /// `10^k` for `k` in `-30..=30`.
    fn pow10(k: i32) -> Option<Number> {
        let p = 10i128.checked_pow(k.unsigned_abs())?;
        if k >= 0 {
            Some(Number::integer(p))
        } else {
            Number::new(1, p)
        }
    }

    /// The place value of the last significant written digit: 30 → 10,
    /// 2 → 1, 1.5 → 0.1.
    fn precision(self) -> Option<Number> {
        if self.den == 1 {
            if self.num == 0 {
                return Some(Number::integer(1));
            }
            let mut n = self.num.unsigned_abs();
            let mut k = 0;
            while n.is_multiple_of(10) {
                n /= 10;
                k += 1;
            }
            return Number::pow10(k);
        }
        for k in 1..=30 {
            let p = Number::pow10(k)?;
            if self.checked_mul(p)?.is_integer() {
                return Number::pow10(-k);
            }
        }
        None
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            return write!(f, "{}", self.num);
        }
        // A terminating decimal when the denominator is 2^a·5^b.
        let (mut d, mut twos, mut fives) = (self.den, 0u32, 0u32);
        while d % 2 == 0 {
            d /= 2;
            twos += 1;
        }
        while d % 5 == 0 {
            d /= 5;
            fives += 1;
        }
        let k = twos.max(fives);
        if d == 1
            && let Some(scale) = 10i128.checked_pow(k)
            && let Some(n) = self.num.checked_mul(scale / self.den)
        {
            let sign = if n < 0 { "-" } else { "" };
            let n = n.unsigned_abs();
            let scale = scale.unsigned_abs();
            return write!(
                f,
                "{sign}{}.{:0width$}",
                n / scale,
                n % scale,
                width = k as usize
            );
        }
        write!(f, "{}/{}", self.num, self.den)
    }
}

// ---------------------------------------------------------------------------
// Units
// ---------------------------------------------------------------------------

/// A currency. `$` alone is [`Currency::Dollar`] (any dollar), `¥` is
/// [`Currency::Yen`] (JPY or CNY), "cents"/`¢` are [`Currency::Any`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Currency {
    /// US dollar (USD, US$, "US dollars").
    Usd,
    /// Euro (EUR, €, "euros").
    Eur,
    /// Pound sterling (GBP, £, "pounds sterling", pence).
    Gbp,
    /// Japanese yen (JPY, "yen").
    Jpy,
    /// Chinese yuan (CNY, RMB, "yuan").
    Cny,
    /// Indian rupee (INR, ₹, Rs).
    Inr,
    /// Swiss franc (CHF, "francs").
    Chf,
    /// Canadian dollar (CAD, CA$, C$).
    Cad,
    /// Australian dollar (AUD, A$, AU$).
    Aud,
    /// New Zealand dollar (NZD, NZ$).
    Nzd,
    /// Hong Kong dollar (HKD, HK$).
    Hkd,
    /// Singapore dollar (SGD, S$).
    Sgd,
    /// Brazilian real (BRL, R$).
    Brl,
    /// `$` or "dollars" without a country: compatible with every dollar.
    Dollar,
    /// `¥`: compatible with JPY and CNY.
    Yen,
    /// Cents (`¢`, "cents"): a hundredth of an unnamed currency.
    Any,
}

impl Currency {
    /// ISO 4217 code, or the symbol for the unspecific ones.
    pub fn code(self) -> &'static str {
        match self {
            Currency::Usd => "USD",
            Currency::Eur => "EUR",
            Currency::Gbp => "GBP",
            Currency::Jpy => "JPY",
            Currency::Cny => "CNY",
            Currency::Inr => "INR",
            Currency::Chf => "CHF",
            Currency::Cad => "CAD",
            Currency::Aud => "AUD",
            Currency::Nzd => "NZD",
            Currency::Hkd => "HKD",
            Currency::Sgd => "SGD",
            Currency::Brl => "BRL",
            Currency::Dollar => "$",
            Currency::Yen => "¥",
            Currency::Any => "(any currency)",
        }
    }

    fn is_dollar(self) -> bool {
        matches!(
            self,
            Currency::Usd
                | Currency::Cad
                | Currency::Aud
                | Currency::Nzd
                | Currency::Hkd
                | Currency::Sgd
                | Currency::Dollar
        )
    }

    /// Whether an amount in `self` may be the same amount as one in `other`.
    pub fn compatible(self, other: Currency) -> bool {
        self == other
            || self == Currency::Any
            || other == Currency::Any
            || (self == Currency::Dollar && other.is_dollar())
            || (other == Currency::Dollar && self.is_dollar())
            || (self == Currency::Yen && matches!(other, Currency::Jpy | Currency::Cny))
            || (other == Currency::Yen && matches!(self, Currency::Jpy | Currency::Cny))
    }
}

/// A calendar date, possibly partial ("30 November", "November 2026").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Date {
    /// The year, when written.
    pub year: Option<i32>,
    /// The month (1–12), when written.
    pub month: Option<u8>,
    /// The day of the month, when written.
    pub day: Option<u8>,
    /// A numeric date whose day and month may be swapped (03/04/2026).
    pub ambiguous: bool,
}

impl Date {
    fn readings(self) -> impl Iterator<Item = Date> {
        let swapped = match (self.ambiguous, self.day, self.month) {
            (true, Some(d), Some(m)) if d <= 12 && d != m => Some(Date {
                day: Some(m),
                month: Some(d),
                ..self
            }),
            _ => None,
        };
        std::iter::once(self).chain(swapped)
    }
}

/// The dimension of a quantity. Quantities compare only within a dimension
/// (with the cross-dimension exceptions of `docs/quantities.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// A bare number (counts, "5 users", "a dozen").
    Count,
    /// Percent (scale: basis points are 1/100).
    Percent,
    /// Money in a currency (scale: cents and pence are 1/100).
    Money(Currency),
    /// Fixed-length durations; base: second.
    Duration,
    /// Calendar durations (months, years, decades); base: month.
    CalendarDuration,
    /// Business / working days; base: business day. Never converts.
    BusinessDays,
    /// Metric mass; base: gram.
    Mass,
    /// Imperial mass; base: ounce.
    ImperialMass,
    /// "pound(s)": pounds sterling or pounds of mass.
    Pounds,
    /// Metric volume; base: millilitre.
    Volume,
    /// Metric length; base: millimetre.
    Length,
    /// Imperial length; base: inch.
    ImperialLength,
    /// Data size: bytes × 1000^power or 1024^power (either reading).
    Data {
        /// 0 bytes, 1 kilo, 2 mega, 3 giga, 4 tera, 5 peta.
        power: u8,
    },
    /// Data rate; base: bit per second.
    DataRate,
    /// Frequency; base: hertz.
    Frequency,
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
    /// "degrees" without a scale: Celsius, Fahrenheit or an angle.
    Degrees,
    /// International units (IU).
    InternationalUnits,
    /// A multiplier or frequency: "twice", "3 times", "3x".
    Times,
    /// An ordinal: "1st", "twenty-first", "the third payment".
    Ordinal,
    /// A quarter of a year: Q3, "third quarter".
    Quarter,
    /// A calendar year: 2026, FY2026.
    Year,
    /// A calendar date.
    Date(Date),
    /// A time of day; `value` is minutes since midnight.
    TimeOfDay {
        /// Written without am/pm and with an hour ≤ 12: also value + 12 h.
        ambiguous: bool,
    },
}

impl Unit {
    /// A short stable name of the dimension, for reports.
    pub fn kind(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::Percent => "percent",
            Unit::Money(_) => "money",
            Unit::Duration | Unit::CalendarDuration | Unit::BusinessDays => "duration",
            Unit::Mass | Unit::ImperialMass | Unit::Pounds => "mass_or_money",
            Unit::Volume => "volume",
            Unit::Length | Unit::ImperialLength => "length",
            Unit::Data { .. } => "data_size",
            Unit::DataRate => "data_rate",
            Unit::Frequency => "frequency",
            Unit::Celsius | Unit::Fahrenheit | Unit::Degrees => "temperature",
            Unit::InternationalUnits => "international_units",
            Unit::Times => "times",
            Unit::Ordinal => "ordinal",
            Unit::Quarter => "quarter",
            Unit::Year => "year",
            Unit::Date(_) => "date",
            Unit::TimeOfDay { .. } => "time_of_day",
        }
    }

    /// Units a range or list may lend to a bare number before it ("20-30 days").
    fn propagates(self) -> bool {
        !matches!(
            self,
            Unit::Count
                | Unit::Ordinal
                | Unit::Quarter
                | Unit::Year
                | Unit::Date(_)
                | Unit::TimeOfDay { .. }
        )
    }
}

/// One written form of a unit, as matched after a number.
#[derive(Debug, Clone, Copy)]
pub struct UnitSpelling {
    /// The spelling; words separated by single spaces match any white space.
    pub spelling: &'static str,
    /// The dimension.
    pub unit: Unit,
    /// Canonical name of this unit, for reports ("week", "mg", "%").
    pub name: &'static str,
    /// Base units per one of this unit, as `(numerator, denominator)`.
    pub scale: (i64, i64),
    /// Must follow the number with no space ("30d", "99p").
    pub adjacent_only: bool,
    /// Case matters ("s", "h", "B" …).
    pub case_sensitive: bool,
}

const fn u(spelling: &'static str, unit: Unit, name: &'static str, n: i64, d: i64) -> UnitSpelling {
    UnitSpelling {
        spelling,
        unit,
        name,
        scale: (n, d),
        adjacent_only: false,
        case_sensitive: false,
    }
}

const fn cs(
    spelling: &'static str,
    unit: Unit,
    name: &'static str,
    n: i64,
    d: i64,
) -> UnitSpelling {
    UnitSpelling {
        spelling,
        unit,
        name,
        scale: (n, d),
        adjacent_only: false,
        case_sensitive: true,
    }
}

const fn adj(
    spelling: &'static str,
    unit: Unit,
    name: &'static str,
    n: i64,
    d: i64,
) -> UnitSpelling {
    UnitSpelling {
        spelling,
        unit,
        name,
        scale: (n, d),
        adjacent_only: true,
        case_sensitive: true,
    }
}

const DUR: Unit = Unit::Duration;
const CAL: Unit = Unit::CalendarDuration;
const BIZ: Unit = Unit::BusinessDays;
const DAY: i64 = 86_400;

/// The unit table: every spelling recognised after a number. Longest match
/// wins; spellings made of letters may also follow a hyphen ("30-day").
pub static UNITS: &[UnitSpelling] = &[
    // Percent
    u("%", Unit::Percent, "%", 1, 1),
    u("percent", Unit::Percent, "%", 1, 1),
    u("per cent", Unit::Percent, "%", 1, 1),
    u("pct", Unit::Percent, "%", 1, 1),
    u("percentage point", Unit::Percent, "%", 1, 1),
    u("percentage points", Unit::Percent, "%", 1, 1),
    u("basis point", Unit::Percent, "basis point", 1, 100),
    u("basis points", Unit::Percent, "basis point", 1, 100),
    // Fixed durations (base: second)
    u("ms", DUR, "ms", 1, 1000),
    u("msec", DUR, "ms", 1, 1000),
    u("millisecond", DUR, "ms", 1, 1000),
    u("milliseconds", DUR, "ms", 1, 1000),
    cs("s", DUR, "second", 1, 1),
    u("sec", DUR, "second", 1, 1),
    u("secs", DUR, "second", 1, 1),
    u("second", DUR, "second", 1, 1),
    u("seconds", DUR, "second", 1, 1),
    u("min", DUR, "minute", 60, 1),
    u("mins", DUR, "minute", 60, 1),
    u("minute", DUR, "minute", 60, 1),
    u("minutes", DUR, "minute", 60, 1),
    cs("h", DUR, "hour", 3600, 1),
    u("hr", DUR, "hour", 3600, 1),
    u("hrs", DUR, "hour", 3600, 1),
    u("hour", DUR, "hour", 3600, 1),
    u("hours", DUR, "hour", 3600, 1),
    adj("d", DUR, "day", DAY, 1),
    u("day", DUR, "day", DAY, 1),
    u("days", DUR, "day", DAY, 1),
    u("calendar day", DUR, "day", DAY, 1),
    u("calendar days", DUR, "day", DAY, 1),
    u("wk", DUR, "week", 7 * DAY, 1),
    u("wks", DUR, "week", 7 * DAY, 1),
    u("week", DUR, "week", 7 * DAY, 1),
    u("weeks", DUR, "week", 7 * DAY, 1),
    u("quarter of an hour", DUR, "quarter hour", 900, 1),
    u("quarters of an hour", DUR, "quarter hour", 900, 1),
    u("quarter hour", DUR, "quarter hour", 900, 1),
    u("quarter hours", DUR, "quarter hour", 900, 1),
    u("fortnight", DUR, "fortnight", 14 * DAY, 1),
    u("fortnights", DUR, "fortnight", 14 * DAY, 1),
    // Calendar durations (base: month)
    adj("mo", CAL, "month", 1, 1),
    u("mos", CAL, "month", 1, 1),
    u("month", CAL, "month", 1, 1),
    u("months", CAL, "month", 1, 1),
    u("calendar month", CAL, "month", 1, 1),
    u("calendar months", CAL, "month", 1, 1),
    u("yr", CAL, "year", 12, 1),
    u("yrs", CAL, "year", 12, 1),
    u("year", CAL, "year", 12, 1),
    u("years", CAL, "year", 12, 1),
    u("decade", CAL, "decade", 120, 1),
    u("decades", CAL, "decade", 120, 1),
    // Business days (never convert)
    u("business day", BIZ, "business day", 1, 1),
    u("business days", BIZ, "business day", 1, 1),
    u("working day", BIZ, "business day", 1, 1),
    u("working days", BIZ, "business day", 1, 1),
    u("banking day", BIZ, "business day", 1, 1),
    u("banking days", BIZ, "business day", 1, 1),
    // Money written after the number
    cs("USD", Unit::Money(Currency::Usd), "USD", 1, 1),
    cs("EUR", Unit::Money(Currency::Eur), "EUR", 1, 1),
    cs("GBP", Unit::Money(Currency::Gbp), "GBP", 1, 1),
    cs("JPY", Unit::Money(Currency::Jpy), "JPY", 1, 1),
    cs("CNY", Unit::Money(Currency::Cny), "CNY", 1, 1),
    cs("RMB", Unit::Money(Currency::Cny), "CNY", 1, 1),
    cs("INR", Unit::Money(Currency::Inr), "INR", 1, 1),
    cs("CHF", Unit::Money(Currency::Chf), "CHF", 1, 1),
    cs("CAD", Unit::Money(Currency::Cad), "CAD", 1, 1),
    cs("AUD", Unit::Money(Currency::Aud), "AUD", 1, 1),
    cs("NZD", Unit::Money(Currency::Nzd), "NZD", 1, 1),
    cs("HKD", Unit::Money(Currency::Hkd), "HKD", 1, 1),
    cs("SGD", Unit::Money(Currency::Sgd), "SGD", 1, 1),
    cs("BRL", Unit::Money(Currency::Brl), "BRL", 1, 1),
    u("€", Unit::Money(Currency::Eur), "EUR", 1, 1),
    u("$", Unit::Money(Currency::Dollar), "$", 1, 1),
    u("euro", Unit::Money(Currency::Eur), "EUR", 1, 1),
    u("euros", Unit::Money(Currency::Eur), "EUR", 1, 1),
    u("dollar", Unit::Money(Currency::Dollar), "$", 1, 1),
    u("dollars", Unit::Money(Currency::Dollar), "$", 1, 1),
    u("US dollar", Unit::Money(Currency::Usd), "USD", 1, 1),
    u("US dollars", Unit::Money(Currency::Usd), "USD", 1, 1),
    u("Canadian dollar", Unit::Money(Currency::Cad), "CAD", 1, 1),
    u("Canadian dollars", Unit::Money(Currency::Cad), "CAD", 1, 1),
    u("Australian dollar", Unit::Money(Currency::Aud), "AUD", 1, 1),
    u(
        "Australian dollars",
        Unit::Money(Currency::Aud),
        "AUD",
        1,
        1,
    ),
    u("pound sterling", Unit::Money(Currency::Gbp), "GBP", 1, 1),
    u("pounds sterling", Unit::Money(Currency::Gbp), "GBP", 1, 1),
    u("pound", Unit::Pounds, "pound", 1, 1),
    u("pounds", Unit::Pounds, "pound", 1, 1),
    u("pence", Unit::Money(Currency::Gbp), "GBP", 1, 100),
    adj("p", Unit::Money(Currency::Gbp), "GBP", 1, 100),
    u("cent", Unit::Money(Currency::Any), "cent", 1, 100),
    u("cents", Unit::Money(Currency::Any), "cent", 1, 100),
    u("¢", Unit::Money(Currency::Any), "cent", 1, 100),
    u("yen", Unit::Money(Currency::Jpy), "JPY", 1, 1),
    u("yuan", Unit::Money(Currency::Cny), "CNY", 1, 1),
    u("renminbi", Unit::Money(Currency::Cny), "CNY", 1, 1),
    u("rupee", Unit::Money(Currency::Inr), "INR", 1, 1),
    u("rupees", Unit::Money(Currency::Inr), "INR", 1, 1),
    u("Swiss franc", Unit::Money(Currency::Chf), "CHF", 1, 1),
    u("Swiss francs", Unit::Money(Currency::Chf), "CHF", 1, 1),
    u("franc", Unit::Money(Currency::Chf), "CHF", 1, 1),
    u("francs", Unit::Money(Currency::Chf), "CHF", 1, 1),
    // Metric mass (base: gram)
    u("mcg", Unit::Mass, "mcg", 1, 1_000_000),
    u("µg", Unit::Mass, "mcg", 1, 1_000_000),
    u("μg", Unit::Mass, "mcg", 1, 1_000_000),
    u("ug", Unit::Mass, "mcg", 1, 1_000_000),
    u("microgram", Unit::Mass, "mcg", 1, 1_000_000),
    u("micrograms", Unit::Mass, "mcg", 1, 1_000_000),
    u("mg", Unit::Mass, "mg", 1, 1000),
    u("milligram", Unit::Mass, "mg", 1, 1000),
    u("milligrams", Unit::Mass, "mg", 1, 1000),
    cs("g", Unit::Mass, "g", 1, 1),
    u("gram", Unit::Mass, "g", 1, 1),
    u("grams", Unit::Mass, "g", 1, 1),
    u("gramme", Unit::Mass, "g", 1, 1),
    u("grammes", Unit::Mass, "g", 1, 1),
    u("kg", Unit::Mass, "kg", 1000, 1),
    u("kilogram", Unit::Mass, "kg", 1000, 1),
    u("kilograms", Unit::Mass, "kg", 1000, 1),
    u("kilo", Unit::Mass, "kg", 1000, 1),
    u("kilos", Unit::Mass, "kg", 1000, 1),
    u("tonne", Unit::Mass, "tonne", 1_000_000, 1),
    u("tonnes", Unit::Mass, "tonne", 1_000_000, 1),
    // Imperial mass (base: ounce)
    u("oz", Unit::ImperialMass, "oz", 1, 1),
    u("ounce", Unit::ImperialMass, "oz", 1, 1),
    u("ounces", Unit::ImperialMass, "oz", 1, 1),
    u("lb", Unit::ImperialMass, "lb", 16, 1),
    u("lbs", Unit::ImperialMass, "lb", 16, 1),
    // Metric volume (base: millilitre)
    u("ml", Unit::Volume, "ml", 1, 1),
    u("millilitre", Unit::Volume, "ml", 1, 1),
    u("millilitres", Unit::Volume, "ml", 1, 1),
    u("milliliter", Unit::Volume, "ml", 1, 1),
    u("milliliters", Unit::Volume, "ml", 1, 1),
    u("cc", Unit::Volume, "ml", 1, 1),
    u("cl", Unit::Volume, "cl", 10, 1),
    u("dl", Unit::Volume, "dl", 100, 1),
    cs("l", Unit::Volume, "l", 1000, 1),
    cs("L", Unit::Volume, "l", 1000, 1),
    u("litre", Unit::Volume, "l", 1000, 1),
    u("litres", Unit::Volume, "l", 1000, 1),
    u("liter", Unit::Volume, "l", 1000, 1),
    u("liters", Unit::Volume, "l", 1000, 1),
    // Metric length (base: millimetre)
    u("mm", Unit::Length, "mm", 1, 1),
    u("millimetre", Unit::Length, "mm", 1, 1),
    u("millimetres", Unit::Length, "mm", 1, 1),
    u("millimeter", Unit::Length, "mm", 1, 1),
    u("millimeters", Unit::Length, "mm", 1, 1),
    u("cm", Unit::Length, "cm", 10, 1),
    u("centimetre", Unit::Length, "cm", 10, 1),
    u("centimetres", Unit::Length, "cm", 10, 1),
    u("centimeter", Unit::Length, "cm", 10, 1),
    u("centimeters", Unit::Length, "cm", 10, 1),
    u("metre", Unit::Length, "m", 1000, 1),
    u("metres", Unit::Length, "m", 1000, 1),
    u("meter", Unit::Length, "m", 1000, 1),
    u("meters", Unit::Length, "m", 1000, 1),
    u("km", Unit::Length, "km", 1_000_000, 1),
    u("kilometre", Unit::Length, "km", 1_000_000, 1),
    u("kilometres", Unit::Length, "km", 1_000_000, 1),
    u("kilometer", Unit::Length, "km", 1_000_000, 1),
    u("kilometers", Unit::Length, "km", 1_000_000, 1),
    // Imperial length (base: inch)
    u("inch", Unit::ImperialLength, "inch", 1, 1),
    u("inches", Unit::ImperialLength, "inch", 1, 1),
    u("ft", Unit::ImperialLength, "foot", 12, 1),
    u("foot", Unit::ImperialLength, "foot", 12, 1),
    u("feet", Unit::ImperialLength, "foot", 12, 1),
    u("yd", Unit::ImperialLength, "yard", 36, 1),
    u("yard", Unit::ImperialLength, "yard", 36, 1),
    u("yards", Unit::ImperialLength, "yard", 36, 1),
    u("mile", Unit::ImperialLength, "mile", 63_360, 1),
    u("miles", Unit::ImperialLength, "mile", 63_360, 1),
    // Data size (1000^power or 1024^power bytes)
    u("byte", Unit::Data { power: 0 }, "byte", 1, 1),
    u("bytes", Unit::Data { power: 0 }, "byte", 1, 1),
    u("KB", Unit::Data { power: 1 }, "KB", 1, 1),
    u("KiB", Unit::Data { power: 1 }, "KB", 1, 1),
    u("kilobyte", Unit::Data { power: 1 }, "KB", 1, 1),
    u("kilobytes", Unit::Data { power: 1 }, "KB", 1, 1),
    u("MB", Unit::Data { power: 2 }, "MB", 1, 1),
    u("MiB", Unit::Data { power: 2 }, "MB", 1, 1),
    u("megabyte", Unit::Data { power: 2 }, "MB", 1, 1),
    u("megabytes", Unit::Data { power: 2 }, "MB", 1, 1),
    u("GB", Unit::Data { power: 3 }, "GB", 1, 1),
    u("GiB", Unit::Data { power: 3 }, "GB", 1, 1),
    u("gigabyte", Unit::Data { power: 3 }, "GB", 1, 1),
    u("gigabytes", Unit::Data { power: 3 }, "GB", 1, 1),
    u("TB", Unit::Data { power: 4 }, "TB", 1, 1),
    u("TiB", Unit::Data { power: 4 }, "TB", 1, 1),
    u("terabyte", Unit::Data { power: 4 }, "TB", 1, 1),
    u("terabytes", Unit::Data { power: 4 }, "TB", 1, 1),
    u("PB", Unit::Data { power: 5 }, "PB", 1, 1),
    u("petabyte", Unit::Data { power: 5 }, "PB", 1, 1),
    u("petabytes", Unit::Data { power: 5 }, "PB", 1, 1),
    // Data rate (base: bit/s)
    u("kbps", Unit::DataRate, "kbps", 1000, 1),
    u("Mbps", Unit::DataRate, "Mbps", 1_000_000, 1),
    u("Gbps", Unit::DataRate, "Gbps", 1_000_000_000, 1),
    // Frequency (base: Hz)
    u("Hz", Unit::Frequency, "Hz", 1, 1),
    u("kHz", Unit::Frequency, "kHz", 1000, 1),
    u("MHz", Unit::Frequency, "MHz", 1_000_000, 1),
    u("GHz", Unit::Frequency, "GHz", 1_000_000_000, 1),
    // Temperature and degrees (never convert between scales)
    u("°C", Unit::Celsius, "°C", 1, 1),
    u("ºC", Unit::Celsius, "°C", 1, 1),
    u("degrees Celsius", Unit::Celsius, "°C", 1, 1),
    u("degrees C", Unit::Celsius, "°C", 1, 1),
    u("°F", Unit::Fahrenheit, "°F", 1, 1),
    u("ºF", Unit::Fahrenheit, "°F", 1, 1),
    u("degrees Fahrenheit", Unit::Fahrenheit, "°F", 1, 1),
    u("degrees F", Unit::Fahrenheit, "°F", 1, 1),
    u("°", Unit::Degrees, "degree", 1, 1),
    u("degree", Unit::Degrees, "degree", 1, 1),
    u("degrees", Unit::Degrees, "degree", 1, 1),
    // Others
    cs("IU", Unit::InternationalUnits, "IU", 1, 1),
    u("international units", Unit::InternationalUnits, "IU", 1, 1),
    u("times", Unit::Times, "times", 1, 1),
    u("fold", Unit::Times, "times", 1, 1),
    adj("x", Unit::Times, "times", 1, 1),
    u("×", Unit::Times, "times", 1, 1),
];

/// Currency written before the number, longest first where one is the end
/// of another ("US$" before "$"). Codes and "Rs" are case-sensitive.
pub static CURRENCY_PREFIXES: &[(&str, Currency)] = &[
    ("US$", Currency::Usd),
    ("CA$", Currency::Cad),
    ("AU$", Currency::Aud),
    ("NZ$", Currency::Nzd),
    ("HK$", Currency::Hkd),
    ("C$", Currency::Cad),
    ("A$", Currency::Aud),
    ("S$", Currency::Sgd),
    ("R$", Currency::Brl),
    ("$", Currency::Dollar),
    ("€", Currency::Eur),
    ("£", Currency::Gbp),
    ("¥", Currency::Yen),
    ("₹", Currency::Inr),
    ("USD", Currency::Usd),
    ("EUR", Currency::Eur),
    ("GBP", Currency::Gbp),
    ("JPY", Currency::Jpy),
    ("CNY", Currency::Cny),
    ("RMB", Currency::Cny),
    ("INR", Currency::Inr),
    ("CHF", Currency::Chf),
    ("CAD", Currency::Cad),
    ("AUD", Currency::Aud),
    ("NZD", Currency::Nzd),
    ("HKD", Currency::Hkd),
    ("SGD", Currency::Sgd),
    ("BRL", Currency::Brl),
    ("Rs.", Currency::Inr),
    ("Rs", Currency::Inr),
];

/// Cardinal number words and their values.
pub static NUMBER_WORDS: &[(&str, u32)] = &[
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("seventy", 70),
    ("eighty", 80),
    ("ninety", 90),
];

/// Scale words: they multiply what precedes them ("two hundred", "1.5 million").
pub static SCALE_WORDS: &[(&str, u64)] = &[
    ("hundred", 100),
    ("thousand", 1_000),
    ("million", 1_000_000),
    ("billion", 1_000_000_000),
    ("trillion", 1_000_000_000_000),
];

/// Ordinal words and their values; compounds ("twenty-first") combine a
/// tens word with one of these.
pub static ORDINAL_WORDS: &[(&str, u32)] = &[
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("eleventh", 11),
    ("twelfth", 12),
    ("thirteenth", 13),
    ("fourteenth", 14),
    ("fifteenth", 15),
    ("sixteenth", 16),
    ("seventeenth", 17),
    ("eighteenth", 18),
    ("nineteenth", 19),
    ("twentieth", 20),
    ("thirtieth", 30),
    ("fortieth", 40),
    ("fiftieth", 50),
    ("sixtieth", 60),
    ("seventieth", 70),
    ("eightieth", 80),
    ("ninetieth", 90),
    ("hundredth", 100),
    ("thousandth", 1000),
    ("millionth", 1_000_000),
];

/// Month names and abbreviations. Abbreviations count only next to a day or
/// a year; "May" only next to a day or a year.
pub static MONTHS: &[(&str, u8)] = &[
    ("January", 1),
    ("February", 2),
    ("March", 3),
    ("April", 4),
    ("May", 5),
    ("June", 6),
    ("July", 7),
    ("August", 8),
    ("September", 9),
    ("October", 10),
    ("November", 11),
    ("December", 12),
    ("Jan", 1),
    ("Feb", 2),
    ("Mar", 3),
    ("Apr", 4),
    ("Jun", 6),
    ("Jul", 7),
    ("Aug", 8),
    ("Sep", 9),
    ("Sept", 9),
    ("Oct", 10),
    ("Nov", 11),
    ("Dec", 12),
];

/// Words after which a number is an identifier, not a quantity
/// ("version 2.0", "order 12345", "Section 5(2)", "step 3").
pub static ID_WORDS: &[&str] = &[
    "version",
    "ver",
    "v",
    "release",
    "build",
    "patch",
    "revision",
    "rev",
    "step",
    "section",
    "sec",
    "article",
    "art",
    "chapter",
    "clause",
    "paragraph",
    "para",
    "subsection",
    "part",
    "appendix",
    "annex",
    "schedule",
    "exhibit",
    "rule",
    "regulation",
    "directive",
    "page",
    "pp",
    "p",
    "figure",
    "fig",
    "table",
    "item",
    "line",
    "row",
    "column",
    "col",
    "order",
    "ticket",
    "case",
    "invoice",
    "account",
    "acct",
    "ref",
    "reference",
    "id",
    "no",
    "nr",
    "number",
    "code",
    "pin",
    "error",
    "err",
    "status",
    "port",
    "extension",
    "ext",
    "room",
    "suite",
    "floor",
    "gate",
    "flight",
    "route",
    "bus",
    "platform",
    "terminal",
    "channel",
    "chunk",
    "footnote",
    "note",
    "level",
    "tier",
    "phase",
    "stage",
    "grade",
    "class",
    "category",
    "type",
    "zone",
    "option",
    "question",
    "lesson",
    "module",
    "episode",
    "season",
    "volume",
    "vol",
    "issue",
    "edition",
    "series",
    "batch",
    "lot",
    "form",
    "model",
    "serial",
    "sku",
    "postcode",
    "zip",
    "box",
    "unit",
    "apartment",
    "apt",
    "slot",
    "seat",
    "size",
    "equation",
    "window",
];

/// Hyphenated words after a number word that make a name, not a quantity
/// ("one-time fee", "two-factor authentication", "third-party").
pub static NON_QUANTITY_COMPOUNDS: &[&str] = &[
    "time", "off", "stop", "way", "click", "factor", "step", "sided", "size", "on", "to", "party",
    "hand", "class", "rate", "liner", "shot",
];

/// Nouns that make an ordinal word a quantity in a claim ("the third payment",
/// "the second business day"); one lower-case word may come between.
pub static PERIOD_NOUNS: &[&str] = &[
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "quarter",
    "hour",
    "hours",
    "minute",
    "minutes",
    "anniversary",
    "birthday",
    "payment",
    "payments",
    "instalment",
    "instalments",
    "installment",
    "installments",
    "invoice",
    "dose",
    "doses",
    "reminder",
    "reminders",
    "attempt",
    "attempts",
    "offence",
    "offense",
    "violation",
    "notice",
    "warning",
    "trimester",
    "semester",
    "renewal",
    "cycle",
    "period",
    "charge",
    "breach",
    "strike",
    "session",
    "visit",
    "refill",
    "tablet",
];

/// Words that make a claim quantity approximate ("about 30%").
pub static APPROXIMATE_MARKERS: &[&str] = &[
    "about",
    "around",
    "approximately",
    "approx",
    "roughly",
    "nearly",
    "almost",
    "circa",
    "~",
    "≈",
];

/// Words after which "a"/"an" + a time unit means one of that unit in a claim
/// ("within a month", "for an hour"); elsewhere "a" may mean "per"
/// ("twice a day", "$10 a month").
pub static ARTICLE_PREPOSITIONS: &[&str] = &[
    "within",
    "in",
    "for",
    "after",
    "before",
    "about",
    "around",
    "approximately",
    "than",
    "over",
    "under",
    "to",
    "least",
    "most",
    "only",
    "just",
    "nearly",
    "almost",
    "roughly",
    "takes",
    "take",
    "lasts",
    "last",
    "is",
    "be",
    "of",
    "once",
    "up",
];

/// Adjectives allowed between "a"/"an" and a time unit ("a full day").
pub static WHOLE_WORDS: &[&str] = &["full", "whole", "entire", "single", "complete"];

/// Comparators before a number, and the bound they make ("under 5").
pub static BOUNDS_BEFORE: &[(&str, Bound)] = &[
    ("under", Bound::Below),
    ("below", Bound::Below),
    ("less than", Bound::Below),
    ("fewer than", Bound::Below),
    ("younger than", Bound::Below),
    ("up to", Bound::AtMost),
    ("at most", Bound::AtMost),
    ("no more than", Bound::AtMost),
    ("not more than", Bound::AtMost),
    ("no later than", Bound::AtMost),
    ("over", Bound::Above),
    ("above", Bound::Above),
    ("more than", Bound::Above),
    ("older than", Bound::Above),
    ("greater than", Bound::Above),
    ("at least", Bound::AtLeast),
    ("no less than", Bound::AtLeast),
    ("not less than", Bound::AtLeast),
    ("no fewer than", Bound::AtLeast),
];

/// Comparators after a number, and the bound they make ("4 and under", "65+").
pub static BOUNDS_AFTER: &[(&str, Bound)] = &[
    ("and under", Bound::AtMost),
    ("or under", Bound::AtMost),
    ("and younger", Bound::AtMost),
    ("or younger", Bound::AtMost),
    ("or less", Bound::AtMost),
    ("or fewer", Bound::AtMost),
    ("and below", Bound::AtMost),
    ("or below", Bound::AtMost),
    ("and over", Bound::AtLeast),
    ("or over", Bound::AtLeast),
    ("and older", Bound::AtLeast),
    ("or older", Bound::AtLeast),
    ("or more", Bound::AtLeast),
    ("and above", Bound::AtLeast),
    ("or above", Bound::AtLeast),
    ("+", Bound::AtLeast),
];

/// A comparator attached to a number. Bounds are not checked in general
/// ("more than 30 days" is carried by "30 days"); they only let a whole-number
/// bound match its neighbour: "under 5" = "4 and under", "over 17" = "18+".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Bound {
    /// No comparator.
    #[default]
    Exact,
    /// Strictly less ("under 5").
    Below,
    /// Less or equal ("up to 5", "5 or under").
    AtMost,
    /// Strictly more ("over 65").
    Above,
    /// More or equal ("at least 18", "18+").
    AtLeast,
}

/// Words that may follow "a"/"an" + a time unit in a claim when it is a
/// duration ("within a day of", "a year later", "a second or two"). Any other
/// word makes the unit part of a noun ("a day pass", "a second reminder").
pub static TIME_FOLLOWERS: &[&str] = &[
    "and", "or", "to", "of", "for", "before", "after", "later", "earlier", "ago", "than", "in",
    "at", "on", "per", "each", "every", "from", "since", "until", "till", "by", "with", "without",
    "if", "when", "while", "as", "is", "was", "are", "were", "will", "would", "can", "could",
    "should", "must", "may", "might", "has", "have", "had", "apart", "old", "long", "longer",
    "early", "late", "free", "more", "less", "only", "delay", "timeout", "interval", "wait",
];

// ---------------------------------------------------------------------------
// Quantities
// ---------------------------------------------------------------------------

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

/// What [`check_claim`] found.
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

// ---------------------------------------------------------------------------
// Support: what the quotes carry
// ---------------------------------------------------------------------------

struct Support<'q> {
    quotes: &'q [&'q str],
    quantities: Vec<Quantity>,
    /// Every number written in the quotes, in any role (bare claims match these).
    written: Vec<Number>,
}

impl<'q> Support<'q> {
    fn new(quotes: &'q [&'q str]) -> Support<'q> {
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

    fn carries(&self, c: &Quantity) -> bool {
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

// ---------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum K {
    Num,
    Word,
    Sym(char),
    Space,
}

#[derive(Debug, Clone, Copy)]
struct Tok {
    k: K,
    s: usize,
    e: usize,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Class {
    Digit,
    Letter,
    Space,
    Sym,
}

fn class_of(c: char) -> Class {
    if c.is_ascii_digit() {
        Class::Digit
    } else if c.is_alphabetic() {
        Class::Letter
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Sym
    }
}

fn tokenize(text: &str) -> Vec<Tok> {
    let mut out = Vec::with_capacity(text.len() / 3 + 1);
    let mut it = text.char_indices().peekable();
    while let Some((s, c)) = it.next() {
        let class = class_of(c);
        let mut e = s + c.len_utf8();
        let k = match class {
            Class::Sym => K::Sym(c),
            Class::Digit => K::Num,
            Class::Letter => K::Word,
            Class::Space => K::Space,
        };
        if class != Class::Sym {
            while let Some(&(b, d)) = it.peek() {
                if class_of(d) != class {
                    break;
                }
                e = b + d.len_utf8();
                it.next();
            }
        }
        out.push(Tok { k, s, e });
    }
    out
}

/// Words that can start something in [`Parser::at_word`]; every other word is
/// skipped at the cost of one hash look-up.
fn lexicon() -> &'static std::collections::HashSet<String> {
    static LEXICON: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    LEXICON.get_or_init(|| {
        let mut set = std::collections::HashSet::new();
        let mut add = |w: &str| {
            set.insert(w.to_ascii_lowercase());
        };
        NUMBER_WORDS.iter().for_each(|(w, _)| add(w));
        SCALE_WORDS.iter().for_each(|(w, _)| add(w));
        ORDINAL_WORDS.iter().for_each(|(w, _)| add(w));
        MONTHS.iter().for_each(|(w, _)| add(w));
        ID_WORDS.iter().for_each(|w| add(w));
        for w in [
            "q", "fy", "a", "an", "dozen", "half", "quarter", "twice", "thrice", "once", "noon",
            "midday", "midnight", "free", "daily", "weekly", "monthly", "yearly", "annually",
            "hourly", "nightly", "per", "every", "each",
        ] {
            add(w);
        }
        set
    })
}

fn word_may_matter(w: &str) -> bool {
    if w.len() > 24 || !w.is_ascii() {
        return false;
    }
    let mut buf = [0u8; 24];
    for (b, c) in buf.iter_mut().zip(w.bytes()) {
        *b = c.to_ascii_lowercase();
    }
    let lw = std::str::from_utf8(&buf[..w.len()]).unwrap_or("");
    lexicon().contains(lw) || lw.ends_with("fold")
}

/// The look-up key of the first piece of a unit spelling or token: a run of
/// letters, lower-cased, or a single other character.
fn first_piece_key(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_alphabetic() => s
            .chars()
            .take_while(|c| c.is_alphabetic())
            .flat_map(char::to_lowercase)
            .collect(),
        Some(c) => c.to_string(),
        None => String::new(),
    }
}

/// [`UNITS`] indexed by the key of their first piece.
fn unit_index() -> &'static std::collections::HashMap<String, Vec<usize>> {
    static INDEX: std::sync::OnceLock<std::collections::HashMap<String, Vec<usize>>> =
        std::sync::OnceLock::new();
    INDEX.get_or_init(|| {
        let mut map: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::new();
        for (i, u) in UNITS.iter().enumerate() {
            map.entry(first_piece_key(u.spelling)).or_default().push(i);
        }
        map
    })
}

fn lookup<T: Copy>(table: &[(&str, T)], w: &str) -> Option<T> {
    table
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(w))
        .map(|&(_, v)| v)
}

fn in_list(list: &[&str], w: &str) -> bool {
    list.iter().any(|k| k.eq_ignore_ascii_case(w))
}

const DASHES: &[char] = &['-', '–', '—', '‑', '‒'];

// ---------------------------------------------------------------------------
// The parser
// ---------------------------------------------------------------------------

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

struct Parser<'t> {
    text: &'t str,
    toks: Vec<Tok>,
    side: Side,
    out: Vec<Quantity>,
    /// Second readings of quote numbers, added after the post-pass.
    alts: Vec<Quantity>,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str, side: Side) -> Parser<'t> {
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

    fn run(mut self) -> Vec<Quantity> {
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
    fn run_keep_raw(&mut self, written: &mut Vec<Number>) -> Vec<Quantity> {
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

    // ----- token helpers -----

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

    // ----- dispatch -----

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

    fn at_sym(&mut self, i: usize, c: char) -> usize {
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

    // ----- numbers written with digits -----

    fn at_number(&mut self, i: usize, sign: Option<usize>) -> usize {
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

    /// 2026-11-30 (optionally followed by a time).
    fn try_iso_date(&mut self, i: usize) -> Option<usize> {
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
    fn try_numeric_date(&mut self, i: usize) -> Option<usize> {
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
    fn try_clock(&mut self, i: usize) -> Option<usize> {
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

    /// am / pm / a.m. / p.m. at token `j` (after at most one space).
    fn meridiem(&self, j: usize) -> Option<(bool, usize)> {
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

    /// Phone numbers: `+44 20 7946 0958`, `1-800-555-0100`, `800 555 0100`,
    /// `555-0100`, `0800 123 4567`. Returns the token index after.
    fn phone_end(&self, i: usize, plus: bool) -> Option<usize> {
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

    // ----- units and context after a numeral -----

    /// Attaches a unit (or a special suffix) to numeral `n` read from token
    /// `first` and pushes the quantity. Returns the next token index.
    fn finish(&mut self, first: usize, start_byte: usize, mut n: Numeral) -> usize {
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

    /// A bare number right after a capitalised name that is not at the start
    /// of a sentence: "Windows 11", "Pixel 8", "TLS 1.3".
    fn named_number(&self, first: usize) -> bool {
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

    fn currency_before(&self, byte: usize) -> Option<(Currency, usize)> {
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
    fn magnitude(&self, j: usize, money: bool) -> Option<(i128, usize)> {
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

    fn and_a_half(&self, j: usize) -> Option<usize> {
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

    fn oclock(&self, j: usize) -> Option<usize> {
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

    fn ordinal_suffix(&self, j: usize, v: Number) -> Option<Number> {
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
    fn match_unit(&self, j: usize) -> Option<(&'static UnitSpelling, usize)> {
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

    /// "30 November 2026", "30th of November", "1 Jan 2026" from the day at
    /// `start`; `j` is the token after the day (and its ordinal suffix).
    fn day_month(&mut self, start: usize, j: usize, day: i128) -> Option<usize> {
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

    fn after_ordinal(&mut self, start: usize, j: usize, v: Number, digits: bool) -> usize {
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

    fn period_noun_follows(&self, j: usize) -> bool {
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

    // ----- words -----

    fn at_word(&mut self, i: usize) -> usize {
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

    /// A time unit right after token `j` (one space allowed).
    fn time_unit_at(&self, j: usize) -> Option<(&'static UnitSpelling, usize)> {
        self.match_unit(j).filter(|(m, _)| {
            matches!(
                m.unit,
                Unit::Duration | Unit::CalendarDuration | Unit::BusinessDays
            ) && m.spelling.len() > 1
        })
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

    /// "half past five", "quarter past three", "quarter to six": a time of
    /// day (am or pm).
    fn clock_phrase(&mut self, i: usize, k: usize, is_half: bool) -> Option<usize> {
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

    /// "November 30, 2026", "Nov. 30", "November 2026", "November".
    fn try_month_first(&mut self, i: usize) -> Option<usize> {
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

    // ----- after all tokens -----

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
}

impl<'t> Parser<'t> {
    /// The trimmed text between quantity `k - 1` and quantity `k` (NUL when they overlap).
    fn link(&self, k: usize) -> &'t str {
        let (a, b) = (&self.out[k - 1], &self.out[k]);
        let text: &'t str = self.text;
        text.get(a.span.end..b.span.start)
            .map_or("\u{0}", str::trim)
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

fn is_link(link: &str) -> bool {
    (link.chars().count() == 1 && link.chars().all(|c| DASHES.contains(&c)))
        || matches!(
            link.to_ascii_lowercase().as_str(),
            "to" | "through" | "thru" | "or" | "and" | "," | ", or" | ", and" | "and/or" | "/"
        )
}

fn half() -> Number {
    Number { num: 1, den: 2 }
}

fn fraction_sym(c: char) -> Number {
    match c {
        '½' => Number { num: 1, den: 2 },
        '¼' => Number { num: 1, den: 4 },
        _ => Number { num: 3, den: 4 },
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

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        extract(s).into_iter().map(|q| q.text).collect()
    }

    fn canon(s: &str) -> Vec<String> {
        extract(s).iter().map(Quantity::canonical).collect()
    }

    #[test]
    fn basic_forms() {
        assert_eq!(canon("within 30 days"), ["30 day"]);
        assert_eq!(canon("a thirty-day window"), ["30 day"]);
        assert_eq!(canon("a 30-day window"), ["30 day"]);
        assert_eq!(canon("12% off"), ["12%"]);
        assert_eq!(canon("12 per cent off"), ["12%"]);
        assert_eq!(
            canon("€50 or 50 euros or EUR 50"),
            ["50 EUR", "50 EUR", "50 EUR"]
        );
        assert_eq!(canon("1,000 users"), ["1000"]);
        assert_eq!(canon("one thousand users"), ["1000"]);
        assert_eq!(canon("on 2026-11-30"), ["2026-11-30"]);
        assert_eq!(canon("on 30 November 2026"), ["2026-11-30"]);
        assert_eq!(canon("on November 30, 2026"), ["2026-11-30"]);
        assert_eq!(canon("Q3 results"), ["Q3"]);
        assert_eq!(canon("the third quarter"), ["Q3"]);
        assert_eq!(canon("the 21st payment"), ["ordinal 21"]);
        assert_eq!(canon("the twenty-first payment"), ["ordinal 21"]);
        assert_eq!(canon("one hundred and five items"), ["105"]);
        assert_eq!(canon("a dozen eggs"), ["12"]);
        assert_eq!(canon("half an hour"), ["0.5 hour"]);
    }

    #[test]
    fn not_quantities() {
        assert!(texts("Update to version 2.0 or v1.2.3.").is_empty());
        assert!(texts("Call +1 800 555 0100 or 1-800-555-0100.").is_empty());
        assert!(texts("Your order #12345 shipped.").is_empty());
        assert!(texts("See SKU-123 on Windows 11 with TLS 1.3.").is_empty());
        assert!(texts("Refunds are available.[1]").is_empty());
        assert!(texts("Support is open 24/7 with two-factor authentication.").is_empty());
        assert!(texts("First, open Settings.").is_empty());
        assert!(texts("Pick one of the plans.").is_empty());
    }

    #[test]
    fn ranges_share_units() {
        assert_eq!(canon("20-30 days"), ["20 day", "30 day"]);
        assert_eq!(canon("between 2 and 4 weeks"), ["2 week", "4 week"]);
        assert_eq!(canon("$20-30"), ["20 $", "30 $"]);
    }

    #[test]
    fn the_issue_example() {
        let c = check_claim(
            "The refund window is 2 weeks.",
            &["Refunds are available within 30 days of purchase."],
        );
        assert_eq!(c.unsupported.len(), 1);
        assert!(check_claim("You get 14 days.", &["within 2 weeks"]).is_consistent());
        assert!(check_claim("You get 2 weeks.", &["within fourteen days"]).is_consistent());
        assert!(!check_claim("You get a month.", &["within 30 days"]).is_consistent());
    }

    #[test]
    fn number_display() {
        assert_eq!(
            Number::new(3, 2).map(|n| n.to_string()).as_deref(),
            Some("1.5")
        );
        assert_eq!(
            Number::new(1, 3).map(|n| n.to_string()).as_deref(),
            Some("1/3")
        );
        assert_eq!(
            Number::new(-1, 4).map(|n| n.to_string()).as_deref(),
            Some("-0.25")
        );
    }
}
