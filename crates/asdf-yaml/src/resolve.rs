//! YAML 1.1 scalar resolution exactly as PyYAML's `SafeLoader` does it (the loader Python asdf
//! builds on), and the Python formatting of values written back.
//!
//! Plain scalars are tried against PyYAML's implicit resolvers in its order, chosen by the
//! first character: bool, float, int, merge, null, timestamp, value.

use num_bigint::BigInt;

/// The YAML core tags (`tag:yaml.org,2002:`).
pub mod tags {
    /// Prefix of the YAML core tags.
    pub const YAML: &str = "tag:yaml.org,2002:";
    /// `!!str`
    pub const STR: &str = "tag:yaml.org,2002:str";
    /// `!!int`
    pub const INT: &str = "tag:yaml.org,2002:int";
    /// `!!float`
    pub const FLOAT: &str = "tag:yaml.org,2002:float";
    /// `!!bool`
    pub const BOOL: &str = "tag:yaml.org,2002:bool";
    /// `!!null`
    pub const NULL: &str = "tag:yaml.org,2002:null";
    /// `!!binary`
    pub const BINARY: &str = "tag:yaml.org,2002:binary";
    /// `!!timestamp`
    pub const TIMESTAMP: &str = "tag:yaml.org,2002:timestamp";
    /// `!!map`
    pub const MAP: &str = "tag:yaml.org,2002:map";
    /// `!!seq`
    pub const SEQ: &str = "tag:yaml.org,2002:seq";
    /// `!!omap`
    pub const OMAP: &str = "tag:yaml.org,2002:omap";
    /// `!!pairs`
    pub const PAIRS: &str = "tag:yaml.org,2002:pairs";
    /// `!!set`
    pub const SET: &str = "tag:yaml.org,2002:set";
    /// The ASDF tag prefix, written as `!` by `%TAG ! tag:stsci.edu:asdf/`.
    pub const ASDF: &str = "tag:stsci.edu:asdf/";
}

/// A scalar's resolved value (YAML 1.1, as PyYAML's SafeLoader resolves it).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `~`, `null`, empty.
    Null,
    /// `true`, `yes`, `on`, ...
    Bool(bool),
    /// An integer that fits in i64.
    Int(i64),
    /// An integer beyond i64, kept exactly.
    BigInt(Box<BigInt>),
    /// A float.
    Float(f64),
    /// A string: the scalar's text.
    Str,
    /// A YAML timestamp, kept as its text.
    Timestamp,
    /// `!!binary` data, decoded from base64.
    Binary(Box<[u8]>),
}

impl Value {
    /// The kind's name as Python types it (`null`, `bool`, `int`, `float`, `str`, `timestamp`,
    /// `bytes`): what `asdf-cli search --type` matches and the viewer shows.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str => "str",
            Value::Timestamp => "timestamp",
            Value::Binary(_) => "bytes",
        }
    }
}

/// Why a scalar could not be given a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstructError {
    /// The text is not valid for the explicit tag (`!!int abc`).
    #[error("`{text}` is not a valid {tag} value")]
    Invalid {
        /// The tag.
        tag: String,
        /// The text (at most 64 characters).
        text: String,
    },
    /// A plain `=`: PyYAML resolves it to `tag:yaml.org,2002:value`, which it cannot construct.
    #[error("plain `=` resolves to tag:yaml.org,2002:value, which cannot be constructed")]
    ValueTag,
    /// A plain `<<` used as a value: PyYAML resolves it to `tag:yaml.org,2002:merge`, which
    /// it can only use as a key.
    #[error("plain `<<` resolves to tag:yaml.org,2002:merge, which is only allowed as a key")]
    MergeTag,
    /// A YAML core tag that the safe loader does not construct (`!!python/tuple`, ...).
    #[error("cannot construct a node tagged {0}")]
    UnsupportedTag(String),
    /// A collection tag on the wrong kind of node, or an `!!omap`/`!!pairs`/`!!set` of the
    /// wrong shape.
    #[error("{tag}: {problem}")]
    Shape {
        /// The tag.
        tag: String,
        /// What was expected.
        problem: &'static str,
    },
}

fn invalid(tag: &str, text: &str) -> ConstructError {
    ConstructError::Invalid {
        tag: tag.to_owned(),
        text: text.chars().take(64).collect(),
    }
}

fn is_bool(s: &str) -> Option<bool> {
    match s {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

fn digits_us(s: &[u8], ok: impl Fn(u8) -> bool) -> bool {
    s.iter().all(|&b| ok(b) || b == b'_')
}

fn strip_sign(s: &[u8]) -> &[u8] {
    match s.first() {
        Some(b'-' | b'+') => &s[1..],
        _ => s,
    }
}

/// `[eE][-+][0-9]+` (the exponent PyYAML's float pattern requires, sign mandatory).
fn is_exponent(s: &[u8]) -> bool {
    s.len() >= 3 && matches!(s[0], b'e' | b'E') && matches!(s[1], b'-' | b'+') && s[2..].iter().all(u8::is_ascii_digit)
}

/// `(?::[0-5]?[0-9])+` applied to the text after the first sexagesimal part.
fn is_sexagesimal_tail(s: &[u8]) -> bool {
    if s.is_empty() {
        return false;
    }
    s.split(|&b| b == b':').skip(1).all(|p| match p {
        [d] => d.is_ascii_digit(),
        [a, d] => (b'0'..=b'5').contains(a) && d.is_ascii_digit(),
        _ => false,
    }) && s.first() == Some(&b':')
}

fn matches_float(s: &str) -> bool {
    let b = s.as_bytes();
    // [-+]?\.(inf|Inf|INF) and \.(nan|NaN|NAN)
    if matches!(strip_sign(b), b".inf" | b".Inf" | b".INF") || matches!(b, b".nan" | b".NaN" | b".NAN") {
        return true;
    }
    // \.[0-9][0-9_]* (exp)?  (no sign)
    if let Some(rest) = b.strip_prefix(b".") {
        let end = rest
            .iter()
            .position(|&c| !(c.is_ascii_digit() || c == b'_'))
            .unwrap_or(rest.len());
        return rest.first().is_some_and(u8::is_ascii_digit) && (end == rest.len() || is_exponent(&rest[end..]));
    }
    let u = strip_sign(b);
    if !u.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    // [0-9][0-9_]* then either `\.[0-9_]*(exp)?` or `(:[0-5]?[0-9])+\.[0-9_]*`
    let int_end = u
        .iter()
        .position(|&c| !(c.is_ascii_digit() || c == b'_'))
        .unwrap_or(u.len());
    let rest = &u[int_end..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let fe = frac
            .iter()
            .position(|&c| !(c.is_ascii_digit() || c == b'_'))
            .unwrap_or(frac.len());
        return fe == frac.len() || is_exponent(&frac[fe..]);
    }
    if rest.first() == Some(&b':') {
        let Some(dot) = rest.iter().position(|&c| c == b'.') else {
            return false;
        };
        return is_sexagesimal_tail(&rest[..dot]) && digits_us(&rest[dot + 1..], |c| c.is_ascii_digit());
    }
    false
}

fn matches_int(s: &str) -> bool {
    let u = strip_sign(s.as_bytes());
    if let Some(r) = u.strip_prefix(b"0b") {
        return !r.is_empty() && digits_us(r, |c| c == b'0' || c == b'1');
    }
    if let Some(r) = u.strip_prefix(b"0x") {
        return !r.is_empty() && digits_us(r, |c| c.is_ascii_hexdigit());
    }
    if let Some(r) = u.strip_prefix(b"0") {
        // `0` alone, or 0[0-7_]+
        return r.is_empty() || digits_us(r, |c| (b'0'..=b'7').contains(&c));
    }
    if !u.first().is_some_and(|c| (b'1'..=b'9').contains(c)) {
        return false;
    }
    let end = u
        .iter()
        .position(|&c| !(c.is_ascii_digit() || c == b'_'))
        .unwrap_or(u.len());
    end == u.len() || is_sexagesimal_tail(&u[end..])
}

fn matches_null(s: &str) -> bool {
    matches!(s, "" | "~" | "null" | "Null" | "NULL")
}

fn matches_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let d = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    // YYYY-MM-DD exactly
    if b.len() == 10 && (0..4).all(d) && b[4] == b'-' && d(5) && d(6) && b[7] == b'-' && d(8) && d(9) {
        return true;
    }
    // YYYY-M?M-D?D (T|t|[ \t]+) H?H:MM:SS (\.[0-9]*)? ([ \t]*(Z|[-+]H?H(:MM)?))?
    let mut i = 0;
    let take_digits = |i: &mut usize, min: usize, max: usize| -> bool {
        let start = *i;
        while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start >= min
    };
    if !take_digits(&mut i, 4, 4) || b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    if !take_digits(&mut i, 1, 2) || b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    if !take_digits(&mut i, 1, 2) {
        return false;
    }
    match b.get(i) {
        Some(b'T' | b't') => i += 1,
        Some(b' ' | b'\t') => {
            while matches!(b.get(i), Some(b' ' | b'\t')) {
                i += 1;
            }
        }
        _ => return false,
    }
    if !take_digits(&mut i, 1, 2) || b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    if !take_digits(&mut i, 2, 2) || b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    if !take_digits(&mut i, 2, 2) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if i == b.len() {
        return true;
    }
    while matches!(b.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'-' | b'+') => {
            i += 1;
            if !take_digits(&mut i, 1, 2) {
                return false;
            }
            if i == b.len() {
                return true;
            }
            if b.get(i) != Some(&b':') {
                return false;
            }
            i += 1;
            take_digits(&mut i, 2, 2) && i == b.len()
        }
        _ => false,
    }
}

/// The tag PyYAML's resolver gives a plain scalar (`None` for `str`).
#[must_use]
pub fn implicit_tag(s: &str) -> Option<&'static str> {
    let first = s.as_bytes().first().copied();
    match first {
        None => return Some(tags::NULL),
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O') if is_bool(s).is_some() => {
            return Some(tags::BOOL);
        }
        _ => {}
    }
    if matches!(first, Some(b'-' | b'+' | b'0'..=b'9' | b'.')) && matches_float(s) {
        return Some(tags::FLOAT);
    }
    if matches!(first, Some(b'-' | b'+' | b'0'..=b'9')) && matches_int(s) {
        return Some(tags::INT);
    }
    if s == "<<" {
        return Some("tag:yaml.org,2002:merge");
    }
    if matches!(first, Some(b'~' | b'n' | b'N')) && matches_null(s) {
        return Some(tags::NULL);
    }
    if first.is_some_and(|c| c.is_ascii_digit()) && matches_timestamp(s) {
        return Some(tags::TIMESTAMP);
    }
    if s == "=" {
        return Some("tag:yaml.org,2002:value");
    }
    None
}

/// Whether a plain scalar with this text reads back as a string (if not, a string with this
/// text must be quoted when written).
#[must_use]
pub fn plain_is_str(s: &str) -> bool {
    implicit_tag(s).is_none()
}

/// The value of a plain, untagged scalar.
///
/// # Errors
/// [`ConstructError`] for texts PyYAML resolves but cannot construct (`=`, `._`).
pub fn resolve_plain(s: &str) -> Result<Value, ConstructError> {
    if let Some(v) = simple_number(s) {
        return Ok(v);
    }
    match implicit_tag(s) {
        None => Ok(Value::Str),
        Some(t) => construct_core(t, s),
    }
}

/// The common number forms, without the general resolver's allocations: `[-+]?[1-9][0-9]{0,17}`
/// or `0` (an int) and `[-+]?[0-9]+\.[0-9]*` (a float). Anything else: `None`.
fn simple_number(s: &str) -> Option<Value> {
    let b = s.as_bytes();
    let u = match b.first()? {
        b'-' | b'+' => &b[1..],
        _ => b,
    };
    let int_len = u.iter().position(|c| !c.is_ascii_digit()).unwrap_or(u.len());
    if int_len == 0 {
        return None;
    }
    if int_len == u.len() {
        if (u[0] == b'0' && u.len() > 1) || u.len() > 18 {
            return None;
        }
        return s.parse().ok().map(Value::Int);
    }
    let frac = u[int_len..].strip_prefix(b".")?;
    if !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.parse().ok().map(Value::Float)
}

fn parse_radix(digits: &str, radix: u32, tag: &str, text: &str) -> Result<BigInt, ConstructError> {
    if digits.is_empty() {
        return Err(invalid(tag, text));
    }
    BigInt::parse_bytes(digits.as_bytes(), radix).ok_or_else(|| invalid(tag, text))
}

/// PyYAML's `construct_yaml_int` on any text.
fn construct_int(text: &str) -> Result<Value, ConstructError> {
    let t = tags::INT;
    let v: String = text.chars().filter(|&c| c != '_').collect();
    let (neg, u) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, &v[..]),
    };
    let n = if u == "0" {
        BigInt::from(0)
    } else if let Some(r) = u.strip_prefix("0b") {
        parse_radix(r, 2, t, text)?
    } else if let Some(r) = u.strip_prefix("0x") {
        parse_radix(r, 16, t, text)?
    } else if u.starts_with('0') {
        parse_radix(u, 8, t, text)?
    } else if u.contains(':') {
        let mut acc = BigInt::from(0);
        for part in u.split(':') {
            acc = acc * 60 + parse_radix(part, 10, t, text)?;
        }
        acc
    } else {
        // Python's int() also accepts surrounding white space.
        parse_radix(u.trim(), 10, t, text)?
    };
    let n = if neg { -n } else { n };
    Ok(match i64::try_from(&n) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::BigInt(Box::new(n)),
    })
}

fn python_float(s: &str) -> Option<f64> {
    let s = s.trim();
    let lower = s.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return lower.parse().ok();
    }
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'))
    {
        return None;
    }
    // Python accepts "1." and ".5"; make both explicit for Rust.
    let fixed = lower.replace(".e", ".0e");
    let fixed = if fixed.ends_with('.') {
        format!("{fixed}0")
    } else {
        fixed
    };
    fixed.parse().ok()
}

/// PyYAML's `construct_yaml_float` on any text.
fn construct_float(text: &str) -> Result<Value, ConstructError> {
    let t = tags::FLOAT;
    let v: String = text.chars().filter(|&c| c != '_').collect::<String>().to_lowercase();
    let (sign, u) = match v.as_bytes().first() {
        Some(b'-') => (-1.0, &v[1..]),
        Some(b'+') => (1.0, &v[1..]),
        _ => (1.0, &v[..]),
    };
    if u == ".inf" {
        return Ok(Value::Float(sign * f64::INFINITY));
    }
    if u == ".nan" {
        return Ok(Value::Float(f64::NAN));
    }
    if u.contains(':') {
        let mut acc = 0.0;
        for part in u.split(':') {
            acc = acc * 60.0 + python_float(part).ok_or_else(|| invalid(t, text))?;
        }
        return Ok(Value::Float(sign * acc));
    }
    python_float(u)
        .map(|f| Value::Float(sign * f))
        .ok_or_else(|| invalid(t, text))
}

/// Constructs a YAML core scalar tag's value from `text`, as PyYAML's SafeConstructor does.
///
/// # Errors
/// [`ConstructError`] when the text is not valid for the tag, or the tag is not one the safe
/// loader constructs from a scalar.
pub fn construct_core(tag: &str, text: &str) -> Result<Value, ConstructError> {
    match tag {
        tags::STR => Ok(Value::Str),
        tags::NULL => Ok(Value::Null),
        tags::BOOL => is_bool(text)
            .or_else(|| is_bool_lower(text))
            .map(Value::Bool)
            .ok_or_else(|| invalid(tag, text)),
        tags::INT => construct_int(text),
        tags::FLOAT => construct_float(text),
        tags::TIMESTAMP => Ok(Value::Timestamp),
        tags::BINARY => decode_base64(text)
            .map(|b| Value::Binary(b.into_boxed_slice()))
            .ok_or_else(|| invalid(tag, text)),
        "tag:yaml.org,2002:value" => Err(ConstructError::ValueTag),
        "tag:yaml.org,2002:merge" => Err(ConstructError::MergeTag),
        tags::SEQ | tags::MAP | tags::OMAP | tags::PAIRS | tags::SET => Err(ConstructError::Shape {
            tag: tag.to_owned(),
            problem: "expected a collection, found a scalar",
        }),
        other => Err(ConstructError::UnsupportedTag(other.to_owned())),
    }
}

fn is_bool_lower(s: &str) -> Option<bool> {
    match s.to_lowercase().as_str() {
        "yes" | "true" | "on" => Some(true),
        "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(compact).ok()
}

/// Base64 in lines of 76 characters, each ending in a newline (Python's `base64.encodebytes`,
/// which PyYAML uses for `!!binary`).
#[must_use]
pub fn base64_lines(data: &[u8]) -> String {
    use base64::Engine as _;
    let enc = base64::engine::general_purpose::STANDARD.encode(data);
    let mut out = String::with_capacity(enc.len() + enc.len() / 76 + 1);
    for chunk in enc.as_bytes().chunks(76) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// A float as PyYAML writes it: Python's `repr`, lower case, `.inf`/`-.inf`/`.nan`, and a
/// `.0` added to exponent forms without a dot (`1e+20` -> `1.0e+20`).
#[must_use]
pub fn python_float_repr(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let r = python_repr(f);
    match r.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => r,
    }
}

/// Python's `repr(float)`: shortest round-trip digits, scientific notation below 1e-4 and from
/// 1e16 (`1e+16`, `2.5e-07`), `inf`, `-inf`, `nan`, `-0.0`.
#[must_use]
pub fn python_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_owned();
    }
    // Positional, and too few digits for a tie (see below): Rust's shortest digits as they are.
    if (1e-4..1e16).contains(&f.abs()) {
        let mut s = f.to_string();
        if s.len() <= 14 {
            if !s.contains('.') {
                s.push_str(".0");
            }
            return s;
        }
    }
    // The number of digits is Rust's shortest round trip; the digits themselves are the
    // correctly rounded ones (ties to even), as Python's repr picks them: Rust's shortest form
    // can end one higher on a tie (1394865425023536.3 where Python writes ...536.2).
    let shortest = format!("{f:e}");
    let n = shortest
        .split_once('e')
        .map_or(17, |(m, _)| m.bytes().filter(u8::is_ascii_digit).count());
    // A tie needs a round-trip interval wider than a unit of the last digit, which takes
    // 16 or more digits (relative precision 2^-52); 15 keeps a margin.
    let sci = if n >= 15 {
        let rounded = format!("{:.*e}", n - 1, f);
        // Next to a power of two the rounded digits may fall outside the round-trip interval.
        if rounded.parse::<f64>() == Ok(f) {
            rounded
        } else {
            shortest
        }
    } else {
        shortest
    };
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if mant.starts_with('-') { "-" } else { "" };
    if !(-4..16).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}e{esign}{:02}", exp.abs());
    }
    let n = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let s = if exp >= n - 1 {
        format!("{digits}{}.0", "0".repeat(usize::try_from(exp - n + 1).unwrap_or(0)))
    } else if exp >= 0 {
        let (a, b) = digits.split_at(usize::try_from(exp + 1).unwrap_or(0));
        format!("{a}.{b}")
    } else {
        format!("0.{}{digits}", "0".repeat(usize::try_from(-exp - 1).unwrap_or(0)))
    };
    format!("{sign}{s}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_like_python() {
        for (f, s) in [
            (0.5, "0.5"),
            (1.0, "1.0"),
            (1e16, "1.0e+16"),
            (1.5e16, "1.5e+16"),
            (123_456_789_012_345.6, "123456789012345.6"),
            (1e-5, "1.0e-05"),
            (0.0001, "0.0001"),
            (-2.5e-7, "-2.5e-07"),
            (2.75, "2.75"),
            (1e100, "1.0e+100"),
            (f64::INFINITY, ".inf"),
            (f64::NEG_INFINITY, "-.inf"),
            (f64::NAN, ".nan"),
            (-0.0, "-0.0"),
            (100.0, "100.0"),
        ] {
            assert_eq!(python_float_repr(f), s, "{f}");
        }
        assert_eq!(python_repr(1e16), "1e+16");
        assert_eq!(python_repr(2.5e-7), "2.5e-07");
        assert_eq!(python_repr(-1.7976931348623157e308), "-1.7976931348623157e+308");
        assert_eq!(python_repr(f64::NAN), "nan");
        // Ties: Python's repr (recorded from CPython 3) rounds the last digit to even.
        for (f, want) in [
            (1.394_865_425_023_536_3e15, "1394865425023536.2"),
            (-1.675_813_638_237_761_3e14, "-167581363823776.12"),
            (-6.749_332_687_181_013e14, "-674933268718101.2"),
            (-21_514_922_366_059.313, "-21514922366059.312"),
            (5.960_464_477_539_063e-8, "5.960464477539063e-08"),
        ] {
            assert_eq!(python_repr(f), want);
        }
    }
}
