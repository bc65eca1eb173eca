//! The Draft 4 `format` checks: date-time (RFC 3339), email, hostname, ipv4, ipv6, uri.
//! Unknown formats always pass.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// Whether `text` has format `format`.
#[must_use]
pub fn check(format: &str, text: &str) -> bool {
    match format {
        "date-time" => date_time(text),
        "email" => email(text),
        "hostname" => hostname(text),
        "ipv4" => Ipv4Addr::from_str(text).is_ok(),
        "ipv6" => Ipv6Addr::from_str(text).is_ok(),
        "uri" => uri(text),
        _ => true,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        _ => 0,
    }
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, `T`/`Z` in any case.
fn date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 || !b.is_ascii() {
        return false;
    }
    let (Some(y), Some(mo), Some(d)) = (digits(&s[0..4], 4), digits(&s[5..7], 2), digits(&s[8..10], 2)) else {
        return false;
    };
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return false;
    }
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return false;
    }
    let (Some(h), Some(mi), Some(sec)) = (digits(&s[11..13], 2), digits(&s[14..16], 2), digits(&s[17..19], 2)) else {
        return false;
    };
    if b[13] != b':' || b[16] != b':' || h > 23 || mi > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &f[n..];
    }
    let offset_min: i64 = match rest {
        "Z" | "z" => 0,
        _ => {
            let ob = rest.as_bytes();
            if ob.len() != 6 || !matches!(ob[0], b'+' | b'-') || ob[3] != b':' {
                return false;
            }
            let (Some(oh), Some(om)) = (digits(&rest[1..3], 2), digits(&rest[4..6], 2)) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let sign = if ob[0] == b'-' { -1 } else { 1 };
            sign * i64::from(oh * 60 + om)
        }
    };
    if sec == 60 {
        // A leap second only at 23:59:60 UTC.
        let utc = (i64::from(h * 60 + mi) - offset_min).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

fn hostname(s: &str) -> bool {
    let s = s.strip_suffix('.').unwrap_or(s);
    if s.is_empty() || s.len() > 253 {
        return false;
    }
    s.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
    })
}

fn email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    if local.is_empty() || domain.is_empty() {
        return false;
    }
    let quoted = local.len() >= 2 && local.starts_with('"') && local.ends_with('"');
    if !quoted
        && (local.starts_with('.')
            || local.ends_with('.')
            || local.contains("..")
            || !local
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&c)))
    {
        return false;
    }
    if let Some(lit) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match lit.strip_prefix("IPv6:") {
            Some(v6) => Ipv6Addr::from_str(v6).is_ok(),
            None => Ipv4Addr::from_str(lit).is_ok(),
        };
    }
    hostname(domain)
}

/// An absolute URI (RFC 3986): a scheme, then characters allowed in URIs.
fn uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut sb = scheme.bytes();
    if !sb.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !sb.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
    {
        return false;
    }
    let allowed = |c: u8| c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&c);
    if !rest.bytes().all(allowed) {
        return false;
    }
    // Percent escapes must be complete.
    let b = rest.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'%'
            && !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        {
            return false;
        }
    }
    if let Some(auth) = rest.strip_prefix("//") {
        let host = auth.split(['/', '?', '#']).next().unwrap_or("");
        let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
        if host.contains('[') != host.contains(']') {
            return false;
        }
    }
    url::Url::parse(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(date_time("1963-06-19T08:30:06.283185Z"));
        assert!(date_time("1990-12-31T15:59:60-08:00"));
        assert!(!date_time("1990-12-31T15:59:60Z"));
        assert!(!date_time("2026-11-22 03:20:32+00:00"));
        assert!(!date_time("2021-02-29T00:00:00Z"));
        assert!(hostname("www.example.com"));
        assert!(!hostname("-a.com"));
        assert!(email("joe.bloggs@example.com"));
        assert!(!email("2962"));
        assert!(uri("http://foo.bar/?baz=qux#quux"));
        assert!(!uri("//foo.bar/?baz=qux#quux"));
        assert!(!uri("http:// shouldfail.com"));
    }
}
