//! `complex-1.0.0`: complex numbers written as text (`1+2j`, `(nan+infj)`, `3-4i`).
//!
//! Reading follows the standard's grammar exactly (`j`, `J`, `i`, `I` suffixes; `inf`/`nan` in
//! lower or upper case; optional parentheses; no `3.` or `4.i`). Writing gives what Python's
//! `repr(complex)` gives, which is what Python asdf writes.

use asdf_yaml::resolve::python_repr;

/// A complex number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Complex {
    /// Real part.
    pub re: f64,
    /// Imaginary part.
    pub im: f64,
}

impl Complex {
    /// Builds `re + im j`.
    #[must_use]
    pub fn new(re: f64, im: f64) -> Self {
        Self { re, im }
    }

    /// Equal, counting NaN equal to NaN in each part.
    #[must_use]
    pub fn same(&self, other: &Complex) -> bool {
        let eq = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
        eq(self.re, other.re) && eq(self.im, other.im)
    }
}

struct P<'a> {
    s: &'a [u8],
    i: usize,
    /// Python's `complex()` rules: `3.` and `infinity` allowed, any case.
    lenient: bool,
}

impl P<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    /// `number` or `scientific` (no sign): digits | .digits | digits.digits | inf | nan, then an
    /// optional exponent `e` sign digits.
    fn unsigned(&mut self) -> Option<f64> {
        let start = self.i;
        let rest = &self.s[self.i..];
        let words: &[&[u8]] = if self.lenient {
            &[b"infinity", b"inf", b"nan"]
        } else {
            &[b"inf", b"INF", b"nan", b"NAN"]
        };
        for word in words {
            let hit = if self.lenient {
                rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word)
            } else {
                rest.starts_with(word)
            };
            if hit {
                self.i += word.len();
                return Some(if word[0].eq_ignore_ascii_case(&b'n') {
                    f64::NAN
                } else {
                    f64::INFINITY
                });
            }
        }
        let int = self.digits();
        if self.peek() == Some(b'.') {
            self.i += 1;
            let frac = self.digits();
            if frac == 0 && (int == 0 || !self.lenient) {
                return None;
            }
        } else if int == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        std::str::from_utf8(&self.s[start..self.i]).ok()?.parse().ok()
    }

    fn sign(&mut self) -> f64 {
        match self.peek() {
            Some(b'+') => {
                self.i += 1;
                1.0
            }
            Some(b'-') => {
                self.i += 1;
                -1.0
            }
            _ => 1.0,
        }
    }

    fn suffix(&mut self) -> bool {
        if matches!(self.peek(), Some(b'j' | b'J' | b'i' | b'I')) {
            self.i += 1;
            true
        } else {
            false
        }
    }
}

/// Parses a complex literal of the standard's grammar (what the schema accepts).
#[must_use]
pub fn parse(text: &str) -> Option<Complex> {
    parse_with(text, false)
}

/// Parses a complex literal as Python asdf reads one (Python's `complex()` after `i` -> `j`):
/// also `3.+4j`, `3+4.j` and `infinity`. Use it to read values; the schema still rejects what
/// the standard's grammar does not allow.
#[must_use]
pub fn parse_lenient(text: &str) -> Option<Complex> {
    parse_with(text.trim(), true)
}

fn parse_with(text: &str, lenient: bool) -> Option<Complex> {
    let t = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(text);
    let mut p = P {
        s: t.as_bytes(),
        i: 0,
        lenient,
    };
    let s1 = p.sign();
    let a = p.unsigned()?;
    if p.suffix() {
        // `sign imag`
        return (p.i == t.len()).then(|| Complex::new(0.0, s1 * a));
    }
    if p.i == t.len() {
        return Some(Complex::new(s1 * a, 0.0));
    }
    // `real (+|-) imag`
    let s2 = match p.peek() {
        Some(b'+' | b'-') => p.sign(),
        _ => return None,
    };
    let b = p.unsigned()?;
    if !p.suffix() || p.i != t.len() {
        return None;
    }
    Some(Complex::new(s1 * a, s2 * b))
}

/// A part as Python writes it inside a complex: `repr` without a trailing `.0`.
fn part(f: f64) -> String {
    let r = python_repr(f);
    r.strip_suffix(".0").map(str::to_owned).unwrap_or(r)
}

/// The text Python's `repr(complex)` gives (`(1+2j)`, `2j`, `(-0+0j)`, `(nan+infj)`).
#[must_use]
pub fn to_python_string(c: Complex) -> String {
    if c.re == 0.0 && c.re.is_sign_positive() {
        return format!("{}j", part(c.im));
    }
    let im = part(c.im);
    let sign = if im.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im}j)", part(c.re))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        for (t, re, im) in [
            ("3+4j", 3.0, 4.0),
            ("(3+4j)", 3.0, 4.0),
            (".3+4j", 0.3, 4.0),
            ("3+.4j", 3.0, 0.4),
            ("3e10+4j", 3e10, 4.0),
            ("3+4e-10j", 3.0, 4e-10),
            ("3+4I", 3.0, 4.0),
            ("inf", f64::INFINITY, 0.0),
            ("INFi", 0.0, f64::INFINITY),
            ("-1.7976931348623157e+308j", 0.0, -1.797_693_134_862_315_7e308),
            ("(-0+0j)", -0.0, 0.0),
            ("1J", 0.0, 1.0),
            ("1-1j", 1.0, -1.0),
        ] {
            let c = parse(t).unwrap_or_else(|| panic!("{t}"));
            assert!(c.same(&Complex::new(re, im)), "{t}: {c:?}");
        }
        for bad in [
            "3 + 4i",
            "3+-4i",
            "3-+4i",
            "3i+4i",
            "X3+4iX",
            "3+X4i",
            "3+4",
            "3i+43+4z",
            "3.+4i",
            "3+4.i",
            "3e-4.0+4i",
            "3+4e4.0i",
            "",
        ] {
            assert!(parse(bad).is_none(), "{bad}");
        }
        assert!(parse("nan+nanj").unwrap().re.is_nan());
        assert!(parse_lenient("3.+4i").unwrap().same(&Complex::new(3.0, 4.0)));
        assert!(parse_lenient("3+4.i").unwrap().same(&Complex::new(3.0, 4.0)));
        assert!(parse_lenient("Infinityj").unwrap().im.is_infinite());
        assert!(parse_lenient("3 + 4i").is_none());
        assert!(parse_lenient("3e-4.0+4i").is_none());
    }

    #[test]
    fn python_repr_of_complex() {
        assert_eq!(to_python_string(Complex::new(1.0, 2.0)), "(1+2j)");
        assert_eq!(to_python_string(Complex::new(0.0, 1.0)), "1j");
        assert_eq!(to_python_string(Complex::new(0.0, 0.0)), "0j");
        assert_eq!(to_python_string(Complex::new(-0.0, 0.0)), "(-0+0j)");
        assert_eq!(to_python_string(Complex::new(f64::NAN, f64::INFINITY)), "(nan+infj)");
        assert_eq!(to_python_string(Complex::new(f64::NAN, -f64::INFINITY)), "(nan-infj)");
        assert_eq!(to_python_string(Complex::new(1.5, -2.5e-7)), "(1.5-2.5e-07j)");
        assert_eq!(to_python_string(Complex::new(0.0, 1e16)), "1e+16j");
    }
}
