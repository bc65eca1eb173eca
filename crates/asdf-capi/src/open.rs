//! The C functions on files: opening (a path, a `FILE *`, memory; NULL for a new file) and
//! closing, errors, and the tree's values by path.

use std::ffi::{c_char, c_int, c_void};

use crate::error::{Code, GLOBAL, set_global};
use crate::file::File;
use crate::util::{bytes, guard};
use crate::value::{self, Value};

/// How the C API opens files, as libasdf reads them: no validation, and mapping keys as
/// written (any node a key, `null:` and `? [1, 2]` included; keys the same only when their text
/// is, so `1`, `0x1` and `01` are three keys; the ASDF Standard allows strings, integers and
/// booleans, and Python asdf makes one key of each group).
fn lenient(open: asdf::Open) -> asdf::Open {
    open.options(asdf::OpenOptions::default().any_scalar_keys(true).keys_as_written(true))
        .validate(false)
}

fn into_c(f: File) -> *mut File {
    Box::into_raw(Box::new(f))
}

/// Opens the file at `filename`: mode "r" (the default) reads it; "w" makes a new, empty file
/// (written with asdf_write_to); other modes are refused. NULL, with `asdf_error(NULL)` set,
/// when the file cannot be opened; a file whose content cannot be read opens with its error
/// set.
///
/// # Safety
/// `filename` and `mode` are NULL or C strings; `config` is NULL or an `asdf_config_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_open_file_ex(
    filename: *const c_char,
    mode: *const c_char,
    _config: *mut c_void,
) -> *mut File {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let (name, mode) = unsafe { (bytes(filename), bytes(mode)) };
        let Some(name) = name else {
            set_global(Code::InvalidArgument, Some("invalid argument for filename: (null)"), 0);
            return std::ptr::null_mut();
        };
        // "w": a new, empty file (written with asdf_write_to).
        if mode == Some(b"w") {
            return into_c(File::new_empty());
        }
        if !matches!(mode, None | Some(b"r")) {
            set_global(
                Code::InvalidArgument,
                Some(&format!(
                    "invalid argument for mode: {}",
                    String::from_utf8_lossy(mode.unwrap_or_default())
                )),
                0,
            );
            return std::ptr::null_mut();
        }
        let path = std::path::PathBuf::from(String::from_utf8_lossy(name).into_owned());
        if let Err(e) = std::fs::metadata(&path) {
            set_global(Code::System, None, e.raw_os_error().unwrap_or(0));
            return std::ptr::null_mut();
        }
        into_c(File::from_open(lenient(asdf::Open::path(&path)).open()))
    })
}

/// Opens the file read from `fp` (from its current position to its end; `filename` names it
/// in messages). NULL for a NULL `fp`.
///
/// # Safety
/// `fp` is NULL or an open `FILE *` for reading; `filename` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_open_fp_ex(
    fp: *mut libc::FILE,
    _filename: *const c_char,
    _config: *mut c_void,
) -> *mut File {
    guard(std::ptr::null_mut(), || {
        if fp.is_null() {
            set_global(Code::InvalidArgument, Some("invalid argument for fp: (null)"), 0);
            return std::ptr::null_mut();
        }
        let mut data = Vec::new();
        let mut buf = [0u8; 65536];
        loop {
            // SAFETY: `fp` is an open FILE * (the contract above); `buf` is writable for its
            // length.
            let n = unsafe { libc::fread(buf.as_mut_ptr().cast(), 1, buf.len(), fp) };
            data.extend_from_slice(&buf[..n]);
            if n < buf.len() {
                break;
            }
        }
        into_c(File::from_open(lenient(asdf::Open::bytes(data)).open()))
    })
}

/// Opens the file held in `buf` (`size` bytes); `buf` NULL and `size` 0 make a new, empty
/// file.
///
/// # Safety
/// `buf` is NULL or `size` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_open_mem_ex(buf: *const c_void, size: usize, _config: *mut c_void) -> *mut File {
    guard(std::ptr::null_mut(), || {
        if buf.is_null() {
            if size == 0 {
                return into_c(File::new_empty());
            }
            set_global(Code::InvalidArgument, Some("invalid argument for buf: (null)"), 0);
            return std::ptr::null_mut();
        }
        // SAFETY: `size` readable bytes at `buf` (the contract above).
        let data = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), size) }.to_vec();
        into_c(File::from_open(lenient(asdf::Open::bytes(data)).open()))
    })
}

/// Closes a file.
///
/// # Safety
/// `file` is NULL or a file of this library not closed yet; its values are not used after.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_close(file: *mut File) {
    guard((), || {
        if !file.is_null() {
            // SAFETY: made by `Box::into_raw` here, not freed yet (the contract above).
            drop(unsafe { Box::from_raw(file) });
        }
    });
}

/// The value at `path`, or NULL.
///
/// # Safety
/// `file` is NULL or an open file of this library; `path` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_value(file: *mut File, path: *const c_char) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let (Some(f), Some(p)) = (unsafe { file.as_ref() }, unsafe { bytes(path) }) else {
            return std::ptr::null_mut();
        };
        match f.steps_of(p) {
            Some(steps) => Value::in_tree(file, steps),
            None => std::ptr::null_mut(),
        }
    })
}

/// The value at `path` for one call: made, used by `f`, freed (`missing` without one).
pub(crate) fn with_value<T>(file: *mut File, path: *const c_char, missing: T, f: impl FnOnce(*mut Value) -> T) -> T {
    // SAFETY: the entry points pass NULL or an open file, and NULL or a C string.
    let v = unsafe { asdf_get_value(file, path) };
    if v.is_null() {
        return missing;
    }
    let r = f(v);
    // SAFETY: made just above, freed once.
    unsafe { value::asdf_value_destroy(v) };
    r
}

/// `asdf_is_<type>(file, path)` and `asdf_get_<type>(file, path, out)`: the value's check and
/// read (`ASDF_VALUE_ERR_NOT_FOUND` where there is no value at `path`).
macro_rules! by_path {
    ($is:ident, $value_is:ident) => {
        /// Whether the value at `path` is of the type.
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $is(file: *mut File, path: *const c_char) -> bool {
            guard(false, || {
                with_value(file, path, false, |v| {
                    // SAFETY: `v` is a live value.
                    unsafe { value::$value_is(v) }
                })
            })
        }
    };
    ($is:ident, $value_is:ident, $get:ident, $value_as:ident, $t:ty) => {
        by_path!($is, $value_is);

        /// The value at `path`, read as the type.
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string; `out` NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $get(file: *mut File, path: *const c_char, out: *mut $t) -> c_int {
            guard(-2, || {
                with_value(file, path, -1, |v| {
                    // SAFETY: `v` is a live value; `out` as above.
                    unsafe { value::$value_as(v, out) }
                })
            })
        }
    };
}

by_path!(asdf_is_mapping, asdf_value_is_mapping);
by_path!(asdf_is_sequence, asdf_value_is_sequence);
by_path!(asdf_is_string, asdf_value_is_string);
by_path!(asdf_is_scalar, asdf_value_is_scalar);
by_path!(asdf_is_null, asdf_value_is_null);
by_path!(asdf_is_int, asdf_value_is_int);
by_path!(
    asdf_is_bool,
    asdf_value_is_bool,
    asdf_get_bool,
    asdf_value_as_bool,
    bool
);
by_path!(asdf_is_int8, asdf_value_is_int8, asdf_get_int8, asdf_value_as_int8, i8);
by_path!(
    asdf_is_int16,
    asdf_value_is_int16,
    asdf_get_int16,
    asdf_value_as_int16,
    i16
);
by_path!(
    asdf_is_int32,
    asdf_value_is_int32,
    asdf_get_int32,
    asdf_value_as_int32,
    i32
);
by_path!(
    asdf_is_int64,
    asdf_value_is_int64,
    asdf_get_int64,
    asdf_value_as_int64,
    i64
);
by_path!(
    asdf_is_uint8,
    asdf_value_is_uint8,
    asdf_get_uint8,
    asdf_value_as_uint8,
    u8
);
by_path!(
    asdf_is_uint16,
    asdf_value_is_uint16,
    asdf_get_uint16,
    asdf_value_as_uint16,
    u16
);
by_path!(
    asdf_is_uint32,
    asdf_value_is_uint32,
    asdf_get_uint32,
    asdf_value_as_uint32,
    u32
);
by_path!(
    asdf_is_uint64,
    asdf_value_is_uint64,
    asdf_get_uint64,
    asdf_value_as_uint64,
    u64
);
by_path!(
    asdf_is_float,
    asdf_value_is_float,
    asdf_get_float,
    asdf_value_as_float,
    f32
);
by_path!(
    asdf_is_double,
    asdf_value_is_double,
    asdf_get_double,
    asdf_value_as_double,
    f64
);

/// The string at `path` (pointing into the tree: valid while the file is open).
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `out`, `len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_string(
    file: *mut File,
    path: *const c_char,
    out: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    guard(-2, || {
        with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out`, `len` as above.
            unsafe { value::asdf_value_as_string(v, out, len) }
        })
    })
}

/// The string at `path`, NUL-terminated (kept while the file is open).
///
/// # Safety
/// As [`asdf_get_string`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_string0(file: *mut File, path: *const c_char, out: *mut *const c_char) -> c_int {
    guard(-2, || {
        with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out` as above.
            unsafe { value::asdf_value_as_string0(v, out) }
        })
    })
}

/// The scalar's text at `path`.
///
/// # Safety
/// As [`asdf_get_string`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_scalar(
    file: *mut File,
    path: *const c_char,
    out: *mut *const c_char,
    len: *mut usize,
) -> c_int {
    guard(-2, || {
        with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out`, `len` as above.
            unsafe { value::asdf_value_as_scalar(v, out, len) }
        })
    })
}

/// The scalar's text at `path`, NUL-terminated.
///
/// # Safety
/// As [`asdf_get_string`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_scalar0(file: *mut File, path: *const c_char, out: *mut *const c_char) -> c_int {
    guard(-2, || {
        with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out` as above.
            unsafe { value::asdf_value_as_scalar0(v, out) }
        })
    })
}

/// The mapping at `path` (a new handle the caller frees).
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_mapping(file: *mut File, path: *const c_char, out: *mut *mut Value) -> c_int {
    // SAFETY: by the contract above.
    guard(-2, || unsafe {
        get_container(file, path, out, value::asdf_value_as_mapping)
    })
}

/// The sequence at `path` (a new handle the caller frees).
///
/// # Safety
/// As [`asdf_get_mapping`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_sequence(file: *mut File, path: *const c_char, out: *mut *mut Value) -> c_int {
    // SAFETY: by the contract above.
    guard(-2, || unsafe {
        get_container(file, path, out, value::asdf_value_as_sequence)
    })
}

/// # Safety
/// As [`asdf_get_mapping`].
unsafe fn get_container(
    file: *mut File,
    path: *const c_char,
    out: *mut *mut Value,
    as_kind: unsafe extern "C" fn(*mut Value, *mut *mut Value) -> c_int,
) -> c_int {
    // SAFETY: by the contract above.
    let v = unsafe { asdf_get_value(file, path) };
    if v.is_null() {
        return -1;
    }
    // SAFETY: `v` is a live value; `out` NULL or writable.
    let r = unsafe { as_kind(v, out) };
    if r != 0 || out.is_null() {
        // Not handed out: freed here.
        // SAFETY: made above, freed once.
        unsafe { value::asdf_value_destroy(v) };
    }
    r
}

/// The ASDF_ERROR_COMMON functions' (in error.h) record of an error on `file`.
///
/// # Safety
/// `file` is NULL or a file of this library; `message` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_capi_file_error(file: *mut File, code: c_int, message: *const c_char, errnum: c_int) {
    guard((), || {
        // SAFETY: by the contract above.
        let message = unsafe { bytes(message) }.map(|m| String::from_utf8_lossy(m).into_owned());
        // SAFETY: by the contract above.
        match unsafe { file.as_mut() } {
            Some(f) => f.error.set(Code::from_raw(code), message.as_deref(), errnum),
            None => set_global(Code::from_raw(code), message.as_deref(), errnum),
        }
    });
}

/// The ASDF_ERROR_COMMON functions' (in error.h) record of an error on `value`'s file.
///
/// # Safety
/// `value` is NULL or a value of this library whose file is open; `message` NULL or a C
/// string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_capi_value_error(value: *mut Value, code: c_int, message: *const c_char, errnum: c_int) {
    // SAFETY: by the contract above.
    let file = unsafe { value.as_ref() }.map_or(std::ptr::null_mut(), |v| v.file);
    // SAFETY: `file` is NULL or the value's open file.
    unsafe { asdf_capi_file_error(file, code, message, errnum) };
}

/// `ASDF_ERROR_OOM(file)`.
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_file_error_oom(file: *mut File, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_file_error(file, Code::OutOfMemory as c_int, std::ptr::null(), 0) };
}

/// `ASDF_ERROR_OOM(value)`.
///
/// # Safety
/// As [`asdf_capi_value_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_error_oom(value: *mut Value, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_value_error(value, Code::OutOfMemory as c_int, std::ptr::null(), 0) };
}

/// `ASDF_ERROR_SYSTEM(file, errnum)`.
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_file_error_system(file: *mut File, errnum: c_int, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_file_error(file, Code::System as c_int, std::ptr::null(), errnum) };
}

/// `ASDF_ERROR_SYSTEM(value, errnum)`.
///
/// # Safety
/// As [`asdf_capi_value_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_error_system(value: *mut Value, errnum: c_int, _src: *const c_char, _line: c_int) {
    // SAFETY: by the contract above.
    unsafe { asdf_capi_value_error(value, Code::System as c_int, std::ptr::null(), errnum) };
}

/// The last error's message, or NULL (`file` NULL: the thread's last failed open).
///
/// # Safety
/// `file` is NULL or a file of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error(file: *mut File) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.message_ptr(),
            // (The thread's state lives as long as the thread; the pointer until its next
            // failed open.)
            None => GLOBAL.with(|g| g.borrow().message_ptr()),
        }
    })
}

/// The last error's code (`ASDF_ERR_NONE` when there is none).
///
/// # Safety
/// As [`asdf_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error_code(file: *mut File) -> c_int {
    guard(0, || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.code(),
            None => GLOBAL.with(|g| g.borrow().code()),
        }
    })
}

/// The errno of the last error (0 when it was not a system error).
///
/// # Safety
/// As [`asdf_error`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_error_errno(file: *mut File) -> c_int {
    guard(0, || {
        // SAFETY: by the contract above.
        match unsafe { file.as_ref() } {
            Some(f) => f.error.errno,
            None => GLOBAL.with(|g| g.borrow().errno),
        }
    })
}
