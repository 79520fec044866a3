//! Exact comparison of JSON numbers as serde_json holds them.
//!
//! The crate's serde_json is built without `arbitrary_precision`, so a number arrives as a
//! `u64`, an `i64`, or (for fractions, exponents and integers beyond 64 bits) an `f64`.
//! Comparisons here are exact between those representations: an integer is never rounded
//! to a double before it is compared with one, so `9007199254740993` is greater than
//! `9007199254740992.0` even though both become the same double.

use std::cmp::Ordering;

use serde_json::Number;

/// A JSON number in the representation serde_json parsed it into.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Num {
    /// An integer that fits `u64` or `i64`.
    Int(i128),
    /// Anything else: a finite double (fractions, exponents, integers beyond 64 bits).
    Float(f64),
}

/// 2^64 as a double, the first double above every `u64`.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

impl Num {
    /// The number held by `n`. serde_json never produces a non-finite number from JSON
    /// text, and `Number::from_f64` refuses them, so a double here is always finite.
    pub(crate) fn new(n: &Number) -> Num {
        if let Some(u) = n.as_u64() {
            Num::Int(i128::from(u))
        } else if let Some(i) = n.as_i64() {
            Num::Int(i128::from(i))
        } else {
            Num::Float(n.as_f64().unwrap_or(0.0))
        }
    }

    /// Whether the number has no fractional part. `1.0` and integers beyond 64 bits (which
    /// arrive as doubles) are integers.
    pub(crate) fn is_integer(self) -> bool {
        match self {
            Num::Int(_) => true,
            Num::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }

    /// The number as a count (for `minLength` and friends): `Some` for a non-negative
    /// integer, saturating at `u64::MAX` for integers beyond it, `None` otherwise.
    pub(crate) fn as_count(self) -> Option<u64> {
        match self {
            Num::Int(i) if i >= 0 => Some(u64::try_from(i).unwrap_or(u64::MAX)),
            Num::Int(_) => None,
            // `as` saturates, which is what a bound beyond u64 means for a count.
            Num::Float(f) if self.is_integer() && f >= 0.0 => Some(f as u64),
            Num::Float(_) => None,
        }
    }

    /// The exact order of two numbers. `0` and `-0.0` are equal.
    pub(crate) fn compare(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (Num::Int(a), Num::Float(b)) => compare_integer_float(a, b),
            (Num::Float(a), Num::Int(b)) => compare_integer_float(b, a).reverse(),
            (Num::Float(a), Num::Float(b)) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        }
    }
}

/// Compares the integer `i` (within the u64/i64 range) with the finite double `f`
/// exactly, without rounding `i` to a double.
fn compare_integer_float(i: i128, f: f64) -> Ordering {
    // Every u64 and i64 lies strictly inside (-2^64, 2^64).
    if f >= TWO_POW_64 {
        return Ordering::Less;
    }
    if f <= -TWO_POW_64 {
        return Ordering::Greater;
    }
    // |f| < 2^64, so its integral part converts to i128 exactly.
    let whole = f.trunc();
    match i.cmp(&(whole as i128)) {
        Ordering::Equal if f > whole => Ordering::Less,
        Ordering::Equal if f < whole => Ordering::Greater,
        order => order,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(v: serde_json::Value) -> Num {
        match v {
            serde_json::Value::Number(n) => Num::new(&n),
            other => panic!("not a number: {other}"),
        }
    }

    fn parse(text: &str) -> Num {
        num(serde_json::from_str(text).expect("valid JSON number"))
    }

    #[test]
    fn integers_compare_exactly_with_doubles() {
        // Both round to the same double, but the integer is one more.
        assert_eq!(
            parse("9007199254740993").compare(parse("9007199254740992.0")),
            Ordering::Greater
        );
        assert_eq!(
            parse("9007199254740992").compare(parse("9007199254740992.0")),
            Ordering::Equal
        );
        assert_eq!(
            parse("18446744073709551615").compare(parse("1.8446744073709552e19")),
            Ordering::Less
        );
        assert_eq!(
            parse("-9223372036854775808").compare(parse("-9223372036854775808.0")),
            Ordering::Equal
        );
        assert_eq!(parse("-3").compare(parse("-2.5")), Ordering::Less);
        assert_eq!(parse("-2").compare(parse("-2.5")), Ordering::Greater);
        assert_eq!(parse("2").compare(parse("2.5")), Ordering::Less);
        assert_eq!(parse("3").compare(parse("2.5")), Ordering::Greater);
        assert_eq!(parse("2.5").compare(parse("3")), Ordering::Less);
        assert_eq!(parse("0").compare(parse("-0.0")), Ordering::Equal);
        assert_eq!(parse("1").compare(parse("1e300")), Ordering::Less);
        assert_eq!(parse("-1").compare(parse("-1e300")), Ordering::Greater);
    }

    #[test]
    fn mixed_integer_representations_compare_exactly() {
        assert_eq!(
            num(json!(u64::MAX)).compare(num(json!(-1))),
            Ordering::Greater
        );
        assert_eq!(
            num(json!(i64::MIN)).compare(num(json!(0u64))),
            Ordering::Less
        );
        assert_eq!(num(json!(5)).compare(num(json!(5u64))), Ordering::Equal);
    }

    #[test]
    fn doubles_compare_by_value() {
        assert_eq!(parse("1.5").compare(parse("1.25")), Ordering::Greater);
        assert_eq!(parse("0.0").compare(parse("-0.0")), Ordering::Equal);
    }

    #[test]
    fn integers_include_integral_doubles_and_bignums() {
        assert!(parse("1.0").is_integer());
        assert!(parse("-0.0").is_integer());
        assert!(parse("12345678910111213141516171819202122232425262728293031").is_integer());
        assert!(parse("1e300").is_integer());
        assert!(!parse("1.5").is_integer());
        assert!(!parse("1e-300").is_integer());
    }

    #[test]
    fn counts_accept_integral_non_negative_numbers_only() {
        assert_eq!(parse("2").as_count(), Some(2));
        assert_eq!(parse("2.0").as_count(), Some(2));
        assert_eq!(parse("1e30").as_count(), Some(u64::MAX));
        assert_eq!(parse("-1").as_count(), None);
        assert_eq!(parse("-1.0").as_count(), None);
        assert_eq!(parse("1.5").as_count(), None);
    }
}
