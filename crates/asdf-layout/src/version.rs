//! Three-part version numbers as they appear in `#ASDF` and `#ASDF_STANDARD` lines.

use std::fmt;
use std::str::FromStr;

/// A `major.minor.patch` version (the file format version or the ASDF Standard version).
///
/// Ordering is numeric, field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incompatible changes.
    pub major: u32,
    /// Compatible additions.
    pub minor: u32,
    /// Fixes.
    pub patch: u32,
}

impl Version {
    /// Builds a version from its three parts.
    #[must_use]
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self { major, minor, patch }
    }

    /// The only file format version defined so far, `1.0.0`.
    pub const FILE_FORMAT_1_0_0: Version = Version::new(1, 0, 0);
    /// The standard version assumed when a file has no `#ASDF_STANDARD` comment.
    pub const STANDARD_DEFAULT: Version = Version::new(1, 0, 0);
    /// The newest ASDF Standard version this project writes by default.
    pub const STANDARD_LATEST: Version = Version::new(1, 6, 0);
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The text was not a `major.minor.patch` version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a major.minor.patch version")]
pub struct ParseVersionError {
    /// The rejected text (lossy UTF-8, at most 64 characters).
    pub text: String,
}

impl FromStr for Version {
    type Err = ParseVersionError;

    /// Parses `X.Y.Z` with decimal parts. Semantic-versioning pre-release and build suffixes
    /// (`-dev`, `+abc`) are accepted and ignored, as Python asdf does.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseVersionError {
            text: s.chars().take(64).collect(),
        };
        let core = s.split(['-', '+']).next().unwrap_or_default();
        let mut parts = core.split('.');
        let mut next = || -> Result<u32, ParseVersionError> {
            let p = parts.next().ok_or_else(err)?;
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0')) {
                return Err(err());
            }
            p.parse().map_err(|_| err())
        };
        let v = Version::new(next()?, next()?, next()?);
        if parts.next().is_some() {
            return Err(err());
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_orders() {
        assert_eq!("1.6.0".parse::<Version>().unwrap(), Version::new(1, 6, 0));
        assert_eq!("1.0.0-dev+x".parse::<Version>().unwrap(), Version::new(1, 0, 0));
        assert!("1.6".parse::<Version>().is_err());
        assert!("1.6.0.1".parse::<Version>().is_err());
        assert!("a.b.c".parse::<Version>().is_err());
        assert!("01.0.0".parse::<Version>().is_err());
        assert!("".parse::<Version>().is_err());
        assert!(Version::new(1, 10, 0) > Version::new(1, 9, 9));
        assert_eq!(Version::new(1, 2, 3).to_string(), "1.2.3");
    }
}
