//! What every entry point needs: a guard that keeps panics on this side, and C strings.

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `f`, giving `failed` if it panics (a panic never crosses into C).
pub(crate) fn guard<T>(failed: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(failed)
}

/// The bytes of a C string, or `None` for NULL.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn bytes<'a>(s: *const c_char) -> Option<&'a [u8]> {
    if s.is_null() {
        None
    } else {
        // SAFETY: non-NULL, and NUL-terminated and valid for the call by the contract above.
        Some(unsafe { CStr::from_ptr(s) }.to_bytes())
    }
}

/// A C string of `s` (an inner NUL ends it, as C would read it).
pub(crate) fn c_string(s: &[u8]) -> std::ffi::CString {
    let end = s.iter().position(|b| *b == 0).unwrap_or(s.len());
    std::ffi::CString::new(&s[..end]).unwrap_or_default()
}

/// `s` and a NUL after it (all of `s`, NULs inside kept: a length handed out with the pointer
/// covers it).
pub(crate) fn with_nul(s: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s);
    v.push(0);
    v
}
