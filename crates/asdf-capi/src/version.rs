//! `asdf_version_t` and `asdf_tag_t`: versions split into numbers, tags into name and version.

use std::ffi::{CString, c_char, c_uint};

use crate::util::{bytes, c_string, guard};

/// `asdf_version_t`, laid out as libasdf's.
#[repr(C)]
#[derive(Debug)]
pub struct Version {
    version: *const c_char,
    major: c_uint,
    minor: c_uint,
    patch: c_uint,
    extra: *const c_char,
}

impl Version {
    /// The whole version string.
    pub(crate) fn text(&self) -> *const c_char {
        self.version
    }
}

/// A version that C reads as a global (`libasdf_version`): immutable, its strings static.
#[repr(transparent)]
#[derive(Debug)]
pub struct StaticVersion(pub(crate) Version);

// SAFETY: the static's pointers are to static, immutable C strings; nothing writes it.
unsafe impl Sync for StaticVersion {}

/// This library's version, as libasdf exports its own (`libasdf_version`).
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static libasdf_version: StaticVersion = StaticVersion(Version {
    version: c"0.1.0".as_ptr(),
    major: 0,
    minor: 1,
    patch: 0,
    extra: std::ptr::null(),
});

/// `asdf_tag_t`, laid out as libasdf's.
#[repr(C)]
#[derive(Debug)]
pub struct Tag {
    name: *const c_char,
    version: *const Version,
}

/// Digits at the start of `s` as a number (saturating, then cut to `unsigned int` as C's
/// `strtoul` into an `unsigned int` does) and the rest.
fn number(s: &[u8]) -> (c_uint, &[u8]) {
    let end = s.iter().position(|b| !b.is_ascii_digit()).unwrap_or(s.len());
    let v = s[..end]
        .iter()
        .fold(0u64, |v, d| v.saturating_mul(10).saturating_add(u64::from(d - b'0')));
    #[allow(clippy::cast_possible_truncation)]
    (v as c_uint, &s[end..])
}

/// Splits a version: `X[.Y[.Z]]` then the rest (one `.` or `-` after a full `X.Y.Z` dropped;
/// the rest verbatim after a partial one; a version not starting with a digit is all zeros).
fn parse(v: &[u8]) -> (c_uint, c_uint, c_uint, Option<&[u8]>) {
    if !v.first().is_some_and(u8::is_ascii_digit) {
        return (0, 0, 0, None);
    }
    let (major, rest) = number(v);
    let Some(rest) = rest.strip_prefix(b".") else {
        return (major, 0, 0, (!rest.is_empty()).then_some(rest));
    };
    if !rest.first().is_some_and(u8::is_ascii_digit) {
        return (major, 0, 0, Some(rest));
    }
    let (minor, rest) = number(rest);
    let Some(rest) = rest.strip_prefix(b".") else {
        return (major, minor, 0, (!rest.is_empty()).then_some(rest));
    };
    if !rest.first().is_some_and(u8::is_ascii_digit) {
        return (major, minor, 0, Some(rest));
    }
    let (patch, rest) = number(rest);
    let rest = rest
        .strip_prefix(b".")
        .or_else(|| rest.strip_prefix(b"-"))
        .unwrap_or(rest);
    (major, minor, patch, (!rest.is_empty()).then_some(rest))
}

pub(crate) fn new_version(v: &[u8]) -> *mut Version {
    let (major, minor, patch, extra) = parse(v);
    Box::into_raw(Box::new(Version {
        version: c_string(v).into_raw(),
        major,
        minor,
        patch,
        extra: extra.map_or(std::ptr::null(), |e| c_string(e).into_raw()),
    }))
}

/// Parses a version string; NULL for NULL.
///
/// # Safety
/// `version` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_version_parse(version: *const c_char) -> *mut Version {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        match unsafe { bytes(version) } {
            Some(v) => new_version(v),
            None => std::ptr::null_mut(),
        }
    })
}

/// A copy of a version; NULL for NULL.
///
/// # Safety
/// `version` is NULL or a version of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_version_copy(version: *const Version) -> *mut Version {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        match unsafe { version.as_ref() } {
            // SAFETY: a version of this library holds a C string.
            Some(v) => match unsafe { bytes(v.version) } {
                Some(s) => new_version(s),
                None => std::ptr::null_mut(),
            },
            None => std::ptr::null_mut(),
        }
    })
}

/// Frees a version.
///
/// # Safety
/// `version` is NULL or a version of this library not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_version_destroy(version: *mut Version) {
    guard((), || {
        if version.is_null() {
            return;
        }
        // SAFETY: made by `Box::into_raw` here, not freed yet (the contract above).
        let v = unsafe { Box::from_raw(version) };
        for s in [v.version, v.extra] {
            if !s.is_null() {
                // SAFETY: made by `CString::into_raw` here, freed once.
                drop(unsafe { CString::from_raw(s.cast_mut()) });
            }
        }
    });
}

/// Parses a tag: the name, and the version after the last `-` that a digit follows (NULL
/// when there is none). libasdf splits at the first `-`, which gives no version for names
/// with a `-` in them; both agree on every tag of the standard.
///
/// # Safety
/// `tag` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_tag_parse(tag: *const c_char) -> *mut Tag {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(t) = (unsafe { bytes(tag) }) else {
            return std::ptr::null_mut();
        };
        let split = t.windows(2).rposition(|w| w[0] == b'-' && w[1].is_ascii_digit());
        let (name, version) = match split {
            Some(i) => (&t[..i], new_version(&t[i + 1..]).cast_const()),
            None => (t, std::ptr::null()),
        };
        Box::into_raw(Box::new(Tag {
            name: c_string(name).into_raw(),
            version,
        }))
    })
}

/// Frees a tag.
///
/// # Safety
/// `tag` is NULL or a tag of this library not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_tag_destroy(tag: *mut Tag) {
    guard((), || {
        if tag.is_null() {
            return;
        }
        // SAFETY: made by `Box::into_raw` here, not freed yet.
        let t = unsafe { Box::from_raw(tag) };
        if !t.name.is_null() {
            // SAFETY: made by `CString::into_raw` here, freed once.
            drop(unsafe { CString::from_raw(t.name.cast_mut()) });
        }
        // SAFETY: the version is NULL or this library's, owned by the tag.
        unsafe { asdf_version_destroy(t.version.cast_mut()) };
    });
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn versions_split_as_libasdf_splits_them() {
        assert_eq!(parse(b"1.2.3"), (1, 2, 3, None));
        assert_eq!(parse(b"1.2.3.dev4"), (1, 2, 3, Some(&b"dev4"[..])));
        assert_eq!(parse(b"1.2.3-rc1"), (1, 2, 3, Some(&b"rc1"[..])));
        assert_eq!(parse(b"2026-04-15"), (2026, 0, 0, Some(&b"-04-15"[..])));
        assert_eq!(parse(b"1.1asdf"), (1, 1, 0, Some(&b"asdf"[..])));
        assert_eq!(parse(b"1."), (1, 0, 0, Some(&b""[..])));
        assert_eq!(parse(b"x1"), (0, 0, 0, None));
    }
}
