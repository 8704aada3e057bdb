//! Exact rational numbers.

use std::fmt;

/// An exact rational number (reduced, positive denominator): 1,000 = 1000,
/// 1.5 = 1.50 = 3/2, and conversions (mg → g, weeks → seconds) never round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Number {
    pub(super) num: i128,
    pub(super) den: i128,
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

    pub(super) fn checked_mul(self, o: Number) -> Option<Number> {
        let g1 = i128::try_from(gcd(self.num.unsigned_abs(), o.den.unsigned_abs()).max(1)).ok()?;
        let g2 = i128::try_from(gcd(o.num.unsigned_abs(), self.den.unsigned_abs()).max(1)).ok()?;
        Number::new(
            (self.num / g1).checked_mul(o.num / g2)?,
            (self.den / g2).checked_mul(o.den / g1)?,
        )
    }

    pub(super) fn checked_add(self, o: Number) -> Option<Number> {
        Number::new(
            self.num
                .checked_mul(o.den)?
                .checked_add(o.num.checked_mul(self.den)?)?,
            self.den.checked_mul(o.den)?,
        )
    }

    pub(super) fn checked_sub(self, o: Number) -> Option<Number> {
        self.checked_add(Number {
            num: o.num.checked_neg()?,
            den: o.den,
        })
    }

    pub(super) fn checked_div(self, o: Number) -> Option<Number> {
        if o.num == 0 {
            return None;
        }
        self.checked_mul(Number::new(o.den, o.num)?)
    }

    pub(super) fn abs(self) -> Number {
        Number {
            num: self.num.saturating_abs(),
            den: self.den,
        }
    }

    pub(super) fn le(self, o: Number) -> bool {
        match (self.num.checked_mul(o.den), o.num.checked_mul(self.den)) {
            (Some(a), Some(b)) => a <= b,
            _ => self.to_f64() <= o.to_f64(),
        }
    }

    pub(super) fn lt(self, o: Number) -> bool {
        self.le(o) && self != o
    }

    /// `10^k` for `k` in `-30..=30`.
    pub(super) fn pow10(k: i32) -> Option<Number> {
        let p = 10i128.checked_pow(k.unsigned_abs())?;
        if k >= 0 {
            Some(Number::integer(p))
        } else {
            Number::new(1, p)
        }
    }

    /// The place value of the last significant written digit: 30 → 10,
    /// 2 → 1, 1.5 → 0.1.
    pub(super) fn precision(self) -> Option<Number> {
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

#[cfg(test)]
mod tests {
    use super::Number;

    #[test]
    pub(super) fn number_display() {
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
