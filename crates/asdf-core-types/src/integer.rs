//! `integer-1.0.0`/`1.1.0`: arbitrary-precision integers stored as a sign and little-endian
//! 32-bit words (an ndarray), with the decimal `string` added in 1.1.0.

use num_bigint::{BigInt, Sign};

/// Builds the integer from its sign (`+` or `-`) and words (least significant first).
#[must_use]
pub fn from_words(negative: bool, words: &[u32]) -> BigInt {
    let mag = BigInt::from_slice(Sign::Plus, words);
    if negative { -mag } else { mag }
}

/// The sign and words of `value` (at least one word), as Python asdf writes them.
#[must_use]
pub fn to_words(value: &BigInt) -> (bool, Vec<u32>) {
    let (sign, mut words) = value.to_u32_digits();
    if words.is_empty() {
        words.push(0);
    }
    (sign == Sign::Minus, words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip() {
        let v: BigInt = "-1180591620717411303424".parse().unwrap();
        let (neg, w) = to_words(&v);
        assert!(neg);
        assert_eq!(w, vec![0, 0, 64]);
        assert_eq!(from_words(neg, &w), v);
        assert_eq!(to_words(&BigInt::from(0)), (false, vec![0]));
    }
}
