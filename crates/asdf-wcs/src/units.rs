//! Physical units as astropy writes them (`!unit/unit-1.0.0 arcsec / pix`): a scale to SI and the
//! powers of the base dimensions. Enough to follow the quantities of a gwcs pipeline the way
//! astropy does (an input converted to the unit a transform asks for; a product's unit the
//! product of the units; the final values in the frame's units). Equivalencies (wavelength to
//! frequency, ...) are not applied: astropy applies none unless a model asks, and a model that
//! asks is refused by name.

use std::fmt;

/// The base dimensions: metre, second, kilogram, radian, pixel, ampere, kelvin, count.
const BASES: usize = 8;

/// A unit: value × `scale` is the value in the SI (radian, pixel, count) base units.
#[derive(Clone, Copy, PartialEq)]
pub struct Unit {
    /// The factor to the base units.
    pub scale: f64,
    /// Powers of metre, second, kilogram, radian, pixel, ampere, kelvin, count.
    pub dims: [i8; BASES],
}

impl fmt::Debug for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unit({} {:?})", self.scale, self.dims)
    }
}

/// A unit string that is not one astropy writes (or not one we know).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unit {text:?}: {reason}")]
pub struct UnitError {
    /// The unit as written.
    pub text: String,
    /// What is wrong.
    pub reason: &'static str,
}

const fn base(i: usize) -> [i8; BASES] {
    let mut d = [0; BASES];
    d[i] = 1;
    d
}

const M: [i8; BASES] = base(0);
const S: [i8; BASES] = base(1);
const KG: [i8; BASES] = base(2);
const RAD: [i8; BASES] = base(3);
const PIX: [i8; BASES] = base(4);
const AMP: [i8; BASES] = base(5);
const KELVIN: [i8; BASES] = base(6);
const COUNT: [i8; BASES] = base(7);
const NONE: [i8; BASES] = [0; BASES];
const PER_S: [i8; BASES] = [0, -1, 0, 0, 0, 0, 0, 0];
const JOULE: [i8; BASES] = [2, -2, 1, 0, 0, 0, 0, 0];
const WATT: [i8; BASES] = [2, -3, 1, 0, 0, 0, 0, 0];
const SR: [i8; BASES] = [0, 0, 0, 2, 0, 0, 0, 0];
const JANSKY: [i8; BASES] = [0, -2, 1, 0, 0, 0, 0, 0];

const DEG: f64 = std::f64::consts::PI / 180.0;
const DAY: f64 = 86_400.0;

/// (name, scale, dims, takes SI prefixes)
const NAMED: &[(&str, f64, [i8; BASES], bool)] = &[
    ("m", 1.0, M, true),
    ("s", 1.0, S, true),
    ("g", 1e-3, KG, true),
    ("rad", 1.0, RAD, true),
    ("deg", DEG, RAD, false),
    ("arcmin", DEG / 60.0, RAD, false),
    ("arcsec", DEG / 3600.0, RAD, true),
    ("mas", DEG / 3_600_000.0, RAD, false),
    ("uas", DEG / 3_600_000_000.0, RAD, false),
    ("hourangle", 15.0 * DEG, RAD, false),
    ("sr", 1.0, SR, false),
    ("pix", 1.0, PIX, false),
    ("pixel", 1.0, PIX, false),
    ("A", 1.0, AMP, true),
    ("K", 1.0, KELVIN, true),
    ("ct", 1.0, COUNT, false),
    ("count", 1.0, COUNT, false),
    ("electron", 1.0, COUNT, false),
    ("adu", 1.0, COUNT, false),
    ("DN", 1.0, COUNT, false),
    ("photon", 1.0, COUNT, false),
    ("Hz", 1.0, PER_S, true),
    ("J", 1.0, JOULE, true),
    ("erg", 1e-7, JOULE, false),
    ("eV", 1.602_176_634e-19, JOULE, true),
    ("W", 1.0, WATT, true),
    ("Jy", 1e-26, JANSKY, true),
    ("Angstrom", 1e-10, M, false),
    ("AA", 1e-10, M, false),
    ("angstrom", 1e-10, M, false),
    ("micron", 1e-6, M, false),
    ("au", 149_597_870_700.0, M, false),
    ("AU", 149_597_870_700.0, M, false),
    ("pc", 3.085_677_581_491_367e16, M, true),
    ("lyr", 9.460_730_472_580_8e15, M, false),
    ("min", 60.0, S, false),
    ("h", 3600.0, S, false),
    ("d", DAY, S, false),
    ("day", DAY, S, false),
    ("yr", 365.25 * DAY, S, true),
    ("a", 365.25 * DAY, S, false),
    ("wk", 7.0 * DAY, S, false),
    ("fortnight", 14.0 * DAY, S, false),
    ("cycle", 2.0 * std::f64::consts::PI, RAD, false),
    ("dimensionless", 1.0, NONE, false),
    ("", 1.0, NONE, false),
];

/// SI prefixes (the ones astropy accepts; `u` for micro).
const PREFIXES: &[(&str, f64)] = &[
    ("da", 1e1),
    ("Y", 1e24),
    ("Z", 1e21),
    ("E", 1e18),
    ("P", 1e15),
    ("T", 1e12),
    ("G", 1e9),
    ("M", 1e6),
    ("k", 1e3),
    ("h", 1e2),
    ("d", 1e-1),
    ("c", 1e-2),
    ("m", 1e-3),
    ("u", 1e-6),
    ("n", 1e-9),
    ("p", 1e-12),
    ("f", 1e-15),
    ("a", 1e-18),
    ("z", 1e-21),
    ("y", 1e-24),
];

impl Unit {
    /// The dimensionless unit of scale 1.
    pub const ONE: Unit = Unit { scale: 1.0, dims: NONE };
    /// The degree.
    pub const DEGREE: Unit = Unit { scale: DEG, dims: RAD };

    /// Parses a unit as astropy's generic format writes it: `deg`, `arcsec / pix`,
    /// `km / s`, `erg / (Angstrom s cm2)`, `m**2`, `m^2`, `s-1`, `10**-3 m`.
    ///
    /// # Errors
    /// [`UnitError`] naming the unit when a part is not known.
    pub fn parse(text: &str) -> Result<Unit, UnitError> {
        if text.trim().is_empty() {
            return Ok(Unit::ONE);
        }
        let err = |reason| UnitError {
            text: text.to_owned(),
            reason,
        };
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let u = p.product().map_err(err)?;
        p.skip_ws();
        if p.i != p.s.len() {
            return Err(err("unexpected text"));
        }
        Ok(u)
    }

    /// Whether the two measure the same thing (a value of one converts to the other).
    #[must_use]
    pub fn same_kind(&self, other: &Unit) -> bool {
        self.dims == other.dims
    }

    /// Whether this has no dimension (a plain ratio, possibly scaled).
    #[must_use]
    pub fn is_dimensionless(&self) -> bool {
        self.dims == NONE
    }

    /// The factor that takes a value in `self` to a value in `to` (`None` when they do not
    /// measure the same thing).
    #[must_use]
    pub fn factor_to(&self, to: &Unit) -> Option<f64> {
        if !self.same_kind(to) {
            return None;
        }
        if self.scale == to.scale {
            Some(1.0)
        } else {
            Some(self.scale / to.scale)
        }
    }

    /// The product of two units.
    #[must_use]
    pub fn times(&self, other: &Unit) -> Unit {
        let mut dims = self.dims;
        for (d, o) in dims.iter_mut().zip(other.dims) {
            *d = d.saturating_add(o);
        }
        Unit {
            scale: self.scale * other.scale,
            dims,
        }
    }

    /// `self` raised to `n`.
    #[must_use]
    pub fn pow(&self, n: i8) -> Unit {
        let mut dims = self.dims;
        for d in &mut dims {
            *d = d.saturating_mul(n);
        }
        Unit {
            scale: self.scale.powi(i32::from(n)),
            dims,
        }
    }

    /// The reciprocal unit.
    #[must_use]
    pub fn recip(&self) -> Unit {
        self.pow(-1)
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i] == b' ' {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.i).copied()
    }

    /// factor (('/' | ' ' | '.' | '*') factor)*
    fn product(&mut self) -> Result<Unit, &'static str> {
        let mut u = self.factor()?;
        loop {
            match self.peek() {
                Some(b'/') => {
                    self.i += 1;
                    u = u.times(&self.factor()?.recip());
                }
                Some(b'.' | b'*') if self.s.get(self.i + 1) != Some(&b'*') => {
                    self.i += 1;
                    u = u.times(&self.factor()?);
                }
                Some(c) if c == b'(' || c.is_ascii_alphabetic() || c == b'1' => {
                    u = u.times(&self.factor()?);
                }
                _ => return Ok(u),
            }
        }
    }

    /// '(' product ')' power? | number | name power?
    fn factor(&mut self) -> Result<Unit, &'static str> {
        match self.peek() {
            Some(b'(') => {
                self.i += 1;
                let u = self.product()?;
                if self.peek() != Some(b')') {
                    return Err("unclosed parenthesis");
                }
                self.i += 1;
                let n = self.power()?;
                Ok(u.pow(n))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' => {
                let start = self.i;
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || b".-+*".contains(&self.s[self.i]))
                    && !self.s[self.i].is_ascii_alphabetic()
                {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| "not text")?;
                let v = if let Some((b, e)) = t.split_once("**") {
                    let b: f64 = b.parse().map_err(|_| "bad number")?;
                    let e: i32 = e.parse().map_err(|_| "bad exponent")?;
                    b.powi(e)
                } else {
                    t.parse().map_err(|_| "bad number")?
                };
                Ok(Unit { scale: v, dims: NONE })
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self.i < self.s.len() && (self.s[self.i].is_ascii_alphabetic() || self.s[self.i] == b'_') {
                    self.i += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| "not text")?;
                let u = named(name).ok_or("unknown unit")?;
                let n = self.power()?;
                Ok(u.pow(n))
            }
            _ => Err("expected a unit"),
        }
    }

    /// ('**' | '^')? '-'? digits, or nothing (1); `(n)` around the exponent allowed.
    fn power(&mut self) -> Result<i8, &'static str> {
        let rest = &self.s[self.i..];
        let mut j = 0;
        if rest.starts_with(b"**") {
            j = 2;
        } else if rest.starts_with(b"^") {
            j = 1;
        }
        let paren = rest.get(j) == Some(&b'(');
        if paren {
            j += 1;
        }
        let num_start = j;
        if matches!(rest.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let digits = j;
        while rest.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j == digits {
            // No exponent: `-` here is not one (a `/`-less `m -1` is not written).
            if num_start > 0 {
                return Err("expected an exponent");
            }
            return Ok(1);
        }
        let t = std::str::from_utf8(&rest[num_start..j]).map_err(|_| "not text")?;
        let n: i8 = t.parse().map_err(|_| "exponent out of range")?;
        if paren {
            if rest.get(j) != Some(&b')') {
                return Err("unclosed parenthesis");
            }
            j += 1;
        }
        self.i += j;
        Ok(n)
    }
}

fn named(name: &str) -> Option<Unit> {
    if let Some((_, scale, dims, _)) = NAMED.iter().find(|(n, ..)| *n == name) {
        return Some(Unit {
            scale: *scale,
            dims: *dims,
        });
    }
    for (p, f) in PREFIXES {
        if let Some(rest) = name.strip_prefix(p)
            && let Some((_, scale, dims, _)) = NAMED.iter().find(|(n, _, _, pre)| *pre && *n == rest)
        {
            return Some(Unit {
                scale: scale * f,
                dims: *dims,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Unit {
        match Unit::parse(s) {
            Ok(u) => u,
            Err(e) => unreachable!("{e}"),
        }
    }

    #[test]
    fn astropy_strings_parse() {
        assert_eq!(u("arcsec / pix").dims, [0, 0, 0, 1, -1, 0, 0, 0]);
        assert!((u("arcsec / pix").scale - DEG / 3600.0).abs() < 1e-30);
        assert_eq!(u("km / s").scale, 1000.0);
        assert_eq!(u("m2").dims[0], 2);
        assert_eq!(u("m**2").dims[0], 2);
        assert_eq!(u("s-1").dims[1], -1);
        assert_eq!(u("erg / (Angstrom s cm2)").dims, [-1, -3, 1, 0, 0, 0, 0, 0]);
        assert_eq!(u("nm").scale, 1e-9);
        assert_eq!(
            u("mas").factor_to(&u("arcsec")),
            Some(1e-3 / 1.0).map(|_| u("mas").scale / u("arcsec").scale)
        );
        assert_eq!(u("10**-3 m").scale, 1e-3);
        assert!(Unit::parse("furlong").is_err());
        assert!(Unit::parse("m / (s").is_err());
    }

    #[test]
    fn conversions_follow_the_dimension() {
        assert_eq!(u("deg").factor_to(&u("pix")), None);
        let f = u("arcsec").factor_to(&u("deg")).unwrap_or(f64::NAN);
        assert!((f - 1.0 / 3600.0).abs() < 1e-18);
        assert_eq!(u("arcsec / pix").times(&u("pix")).dims, RAD);
    }
}
