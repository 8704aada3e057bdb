//! The unit tables: currencies, dates, unit dimensions and every unit spelling.

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

    pub(super) fn is_dollar(self) -> bool {
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
    pub(super) fn readings(self) -> impl Iterator<Item = Date> {
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
    pub(super) fn propagates(self) -> bool {
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
pub(super) const DAY: i64 = 86_400;

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
