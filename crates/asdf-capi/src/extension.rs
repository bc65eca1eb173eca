//! Extensions: C types a program registers (`ASDF_REGISTER_EXTENSION` calls
//! `asdf_extension_register` at start-up) with the tags they read and a table of functions;
//! values of those tags read into the program's type (`deserialize`) and written from it
//! (`serialize`).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use crate::file::File;
use crate::util::{bytes, guard};
use crate::value::{Err, Value};

/// `asdf_extension_vtab_t`, laid out as libasdf's.
#[repr(C)]
#[derive(Debug)]
pub struct Vtab {
    serialize: Option<unsafe extern "C" fn(*mut File, *const c_void, *const c_void) -> *mut Value>,
    deserialize: Option<unsafe extern "C" fn(*mut Value, *const c_void, *mut *mut c_void) -> c_int>,
    copy: Option<unsafe extern "C" fn(*mut File, *const c_void, *mut c_void) -> bool>,
    deinit: Option<unsafe extern "C" fn(*mut c_void)>,
    reserved: [Option<unsafe extern "C" fn()>; 4],
}

/// `asdf_extension_t`, laid out as libasdf's.
#[repr(C)]
#[derive(Debug)]
pub struct Extension {
    tags: *const *const c_char,
    software: *mut c_void,
    vtab: *const Vtab,
    size: usize,
    userdata: *mut c_void,
}

/// The registered extensions (their addresses: static objects of the programs).
static REGISTRY: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// A tag as the tree holds it: `tag:` added to a tag written without it (libasdf's
/// extensions list `stsci.edu:asdf/tests/foo-1.0.0`).
fn full_tag(t: &[u8]) -> Vec<u8> {
    if t.starts_with(b"tag:") || t.starts_with(b"http") || t.starts_with(b"asdf:") {
        t.to_vec()
    } else {
        [b"tag:".as_slice(), t].concat()
    }
}

/// The extension's tags, full.
///
/// # Safety
/// `ext` is a registered extension (its tags a NULL-terminated list of C strings).
unsafe fn tags(ext: &Extension) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if ext.tags.is_null() {
        return out;
    }
    for i in 0..1024 {
        // SAFETY: a NULL-terminated list (bounded here).
        let t = unsafe { *ext.tags.add(i) };
        // SAFETY: each is NULL or a C string.
        match unsafe { bytes(t) } {
            Some(b) => out.push(full_tag(b)),
            None => break,
        }
    }
    out
}

/// Registers an extension for every file.
///
/// # Safety
/// `ext` is NULL or an extension that lives as long as the program (a static).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_extension_register(ext: *mut Extension) {
    guard((), || {
        if ext.is_null() {
            return;
        }
        let mut r = REGISTRY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !r.contains(&(ext as usize)) {
            r.push(ext as usize);
        }
    });
}

/// The extension registered for `tag` (one of the tags it lists), or NULL.
///
/// # Safety
/// `tag` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_extension_get(_file: *mut File, tag: *const c_char) -> *const Extension {
    guard(std::ptr::null(), || {
        // SAFETY: by the contract above.
        let Some(t) = (unsafe { bytes(tag) }) else {
            return std::ptr::null();
        };
        let t = full_tag(t);
        let r = REGISTRY.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for &e in r.iter() {
            let ext = e as *const Extension;
            // SAFETY: registered extensions live as long as the program.
            if unsafe { tags(&*ext) }.contains(&t) {
                return ext;
            }
        }
        std::ptr::null()
    })
}

/// Whether the value's tag is one the extension lists.
///
/// # Safety
/// `value` is NULL or a live value; `ext` NULL or an extension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_extension_type(value: *mut Value, ext: *const Extension) -> bool {
    guard(false, || {
        // SAFETY: by the contract above.
        let (Some(v), Some(ext)) = (unsafe { value.as_ref() }, unsafe { ext.as_ref() }) else {
            return false;
        };
        let Some(tag) = v
            .node_and_doc()
            .and_then(|(n, _)| n.tag.as_deref().map(|t| t.as_bytes().to_vec()))
        else {
            return false;
        };
        // SAFETY: `ext` is an extension.
        unsafe { tags(ext) }.contains(&tag)
    })
}

/// The value read into the extension's type (its `deserialize`), into `*out`.
///
/// # Safety
/// `value` is NULL or a live value; `ext` NULL or an extension; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_extension_type(
    value: *mut Value,
    ext: *const Extension,
    out: *mut *mut c_void,
) -> c_int {
    guard(Err::Unknown as c_int, || {
        // SAFETY: by the contract above.
        if !unsafe { asdf_value_is_extension_type(value, ext) } {
            return Err::TypeMismatch as c_int;
        }
        // SAFETY: checked non-NULL above.
        let ext = unsafe { &*ext };
        // SAFETY: the vtable is NULL or the extension's table.
        let Some(de) = (unsafe { ext.vtab.as_ref() }).and_then(|t| t.deserialize) else {
            return Err::Unknown as c_int;
        };
        let mut obj: *mut c_void = std::ptr::null_mut();
        // SAFETY: the extension's own function, given a live value and its data.
        let r = unsafe { de(value, ext.userdata, &raw mut obj) };
        if r == Err::Ok as c_int && !out.is_null() {
            // SAFETY: `out` is writable.
            unsafe { *out = obj };
        }
        r
    })
}

/// A new value of an object (its extension's `serialize`), tagged with the extension's first
/// tag.
///
/// # Safety
/// `file` is NULL or an open file; `obj` what the extension's functions take; `ext` NULL or an
/// extension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_extension_type(
    file: *mut File,
    obj: *const c_void,
    ext: *const Extension,
) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(ext) = (unsafe { ext.as_ref() }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the vtable is NULL or the extension's table.
        let Some(ser) = (unsafe { ext.vtab.as_ref() }).and_then(|t| t.serialize) else {
            return std::ptr::null_mut();
        };
        // SAFETY: the extension's own function.
        let v = unsafe { ser(file, obj, ext.userdata) };
        // SAFETY: `ext` is an extension.
        let tag = unsafe { tags(ext) }.into_iter().next();
        // SAFETY: `v` is NULL or a value the serializer made for the caller.
        if let (Some(val), Some(tag)) = (unsafe { v.as_mut() }, tag)
            && let Some(n) = val.node_mut()
        {
            n.tag = Some(String::from_utf8_lossy(&tag).into_owned().into_boxed_str());
        }
        v
    })
}

/// Whether the value at `path` is of the extension's type.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `ext` NULL or an extension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_is_extension_type(file: *mut File, path: *const c_char, ext: *const Extension) -> bool {
    guard(false, || {
        crate::open::with_value(file, path, false, |v| {
            // SAFETY: `v` is a live value.
            unsafe { asdf_value_is_extension_type(v, ext) }
        })
    })
}

/// The value at `path` read into the extension's type.
///
/// # Safety
/// As [`asdf_is_extension_type`]; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_extension_type(
    file: *mut File,
    path: *const c_char,
    ext: *const Extension,
    out: *mut *mut c_void,
) -> c_int {
    guard(Err::Unknown as c_int, || {
        crate::open::with_value(file, path, Err::NotFound as c_int, |v| {
            // SAFETY: `v` is a live value; the rest as above.
            unsafe { asdf_value_as_extension_type(v, ext, out) }
        })
    })
}

/// Puts an object at `path`, written by its extension.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `obj` what the extension's
/// functions take; `ext` NULL or an extension.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_extension_type(
    file: *mut File,
    path: *const c_char,
    obj: *const c_void,
    ext: *const Extension,
) -> c_int {
    guard(Err::Unknown as c_int, || {
        // SAFETY: by the contract above.
        let v = unsafe { asdf_value_of_extension_type(file, obj, ext) };
        if v.is_null() {
            return Err::EmitFailure as c_int;
        }
        // SAFETY: `v` is consumed.
        unsafe { crate::edit::asdf_set_value(file, path, v) }
    })
}
