//! Changing a tree: setting mapping keys, appending to and popping from sequences, setting a
//! value at a path (the mappings on the way made), and writing the file.

use std::ffi::{c_char, c_int, c_void};

use asdf_yaml::{Node, NodeKind};

use crate::file::File;
use crate::util::{bytes, guard};
use crate::value::{Err, Value, string_node};

const OK: c_int = Err::Ok as c_int;
const UNKNOWN: c_int = Err::Unknown as c_int;
const MISMATCH: c_int = Err::TypeMismatch as c_int;
const NOT_FOUND: c_int = Err::NotFound as c_int;

/// The value behind a handle, to change.
///
/// # Safety
/// `v` is NULL or a live value not otherwise borrowed during the call.
unsafe fn get_mut<'a>(v: *mut Value) -> Option<&'a mut Value> {
    // SAFETY: by the contract above.
    unsafe { v.as_mut() }
}

/// Takes a value handle's node and frees the handle (libasdf's functions that take a value
/// always consume it).
///
/// # Safety
/// `v` is NULL or a value of this library not freed yet.
unsafe fn consume(v: *mut Value) -> Option<Node> {
    if v.is_null() {
        return None;
    }
    // SAFETY: made by `Box::into_raw`, not freed yet (the contract above); freed here.
    let b = unsafe { Box::from_raw(v) };
    b.into_node()
}

/// Sets `key` of the mapping to `node` (replacing the value of an existing key).
fn set_key(mapping: *mut Value, key: *const c_char, node: Option<Node>) -> c_int {
    guard(UNKNOWN, || {
        // SAFETY: the entry points pass NULL or a live value and NULL or a C string.
        let (Some(m), Some(key)) = (unsafe { get_mut(mapping) }, unsafe { bytes(key) }) else {
            return UNKNOWN;
        };
        let Some(node) = node else { return UNKNOWN };
        let Some(n) = m.node_mut() else { return UNKNOWN };
        let NodeKind::Mapping(map) = &mut n.kind else {
            return MISMATCH;
        };
        let key = String::from_utf8_lossy(key).into_owned();
        match map
            .entries
            .iter_mut()
            .find(|(k, _)| k.as_scalar().is_some_and(|s| s.text.as_bytes() == key.as_bytes()))
        {
            Some(e) => e.1 = node,
            None => map.entries.push((Node::str(key), node)),
        }
        OK
    })
}

/// Appends `node` to the sequence.
fn append(sequence: *mut Value, node: Option<Node>) -> c_int {
    guard(UNKNOWN, || {
        // SAFETY: the entry points pass NULL or a live value.
        let Some(q) = (unsafe { get_mut(sequence) }) else {
            return UNKNOWN;
        };
        let Some(node) = node else { return UNKNOWN };
        let Some(n) = q.node_mut() else { return UNKNOWN };
        let NodeKind::Sequence(seq) = &mut n.kind else {
            return MISMATCH;
        };
        seq.items.push(node);
        OK
    })
}

/// Sets `key` of a mapping to a value, which is consumed (freed, whatever the outcome).
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string; `value` NULL or a value not
/// freed yet (and not `mapping`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set(mapping: *mut Value, key: *const c_char, value: *mut Value) -> c_int {
    // A container set into itself: refused, and kept (consuming it would free the handle the
    // call is changing).
    if !value.is_null() && value == mapping {
        return UNKNOWN;
    }
    // SAFETY: by the contract above.
    let node = guard(None, || unsafe { consume(value) });
    set_key(mapping, key, node)
}

/// Sets `key` of a mapping to a mapping, which is consumed.
///
/// # Safety
/// As [`asdf_mapping_set`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_mapping(mapping: *mut Value, key: *const c_char, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_mapping_set(mapping, key, value) }
}

/// Sets `key` of a mapping to a sequence, which is consumed.
///
/// # Safety
/// As [`asdf_mapping_set`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_sequence(
    mapping: *mut Value,
    key: *const c_char,
    value: *mut Value,
) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_mapping_set(mapping, key, value) }
}

/// Sets `key` of a mapping to the string of `len` bytes at `s`.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string; `s` NULL or `len` readable
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_string(
    mapping: *mut Value,
    key: *const c_char,
    s: *const c_char,
    len: usize,
) -> c_int {
    if s.is_null() {
        return UNKNOWN;
    }
    // SAFETY: `len` readable bytes at `s` (the contract above).
    let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    set_key(mapping, key, Some(string_node(b)))
}

/// Sets `key` of a mapping to a C string.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` and `s` NULL or C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_string0(mapping: *mut Value, key: *const c_char, s: *const c_char) -> c_int {
    // SAFETY: by the contract above.
    let node = unsafe { bytes(s) }.map(string_node);
    set_key(mapping, key, node)
}

/// Sets `key` of a mapping to null.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_null(mapping: *mut Value, key: *const c_char) -> c_int {
    set_key(mapping, key, Some(Node::null()))
}

/// Sets `key` of a mapping to a bool.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_set_bool(mapping: *mut Value, key: *const c_char, b: bool) -> c_int {
    set_key(mapping, key, Some(Node::bool(b)))
}

/// Appends a value, which is consumed (freed, whatever the outcome).
///
/// # Safety
/// `sequence` is NULL or a live value; `value` NULL or a value not freed yet (and not
/// `sequence`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append(sequence: *mut Value, value: *mut Value) -> c_int {
    // Appended to itself: refused, and kept (as `asdf_mapping_set`).
    if !value.is_null() && value == sequence {
        return UNKNOWN;
    }
    // SAFETY: by the contract above.
    let node = guard(None, || unsafe { consume(value) });
    append(sequence, node)
}

/// Appends a mapping, which is consumed.
///
/// # Safety
/// As [`asdf_sequence_append`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_mapping(sequence: *mut Value, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_sequence_append(sequence, value) }
}

/// Appends a sequence, which is consumed.
///
/// # Safety
/// As [`asdf_sequence_append`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_sequence(sequence: *mut Value, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_sequence_append(sequence, value) }
}

/// Appends the string of `len` bytes at `s`.
///
/// # Safety
/// `sequence` is NULL or a live value; `s` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_string(sequence: *mut Value, s: *const c_char, len: usize) -> c_int {
    if s.is_null() {
        return UNKNOWN;
    }
    // SAFETY: `len` readable bytes at `s`.
    let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    append(sequence, Some(string_node(b)))
}

/// Appends a C string.
///
/// # Safety
/// `sequence` is NULL or a live value; `s` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_string0(sequence: *mut Value, s: *const c_char) -> c_int {
    // SAFETY: by the contract above.
    let node = unsafe { bytes(s) }.map(string_node);
    append(sequence, node)
}

/// Appends null.
///
/// # Safety
/// `sequence` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_null(sequence: *mut Value) -> c_int {
    append(sequence, Some(Node::null()))
}

/// Appends a bool.
///
/// # Safety
/// `sequence` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_append_bool(sequence: *mut Value, b: bool) -> c_int {
    append(sequence, Some(Node::bool(b)))
}

macro_rules! numbers {
    ($set:ident, $append:ident, $t:ty, $text:expr) => {
        /// Sets `key` of a mapping to a number.
        ///
        /// # Safety
        /// `mapping` is NULL or a live value; `key` NULL or a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set(mapping: *mut Value, key: *const c_char, v: $t) -> c_int {
            set_key(mapping, key, Some($text(v)))
        }

        /// Appends a number.
        ///
        /// # Safety
        /// `sequence` is NULL or a live value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $append(sequence: *mut Value, v: $t) -> c_int {
            append(sequence, Some($text(v)))
        }
    };
}

numbers!(asdf_mapping_set_int8, asdf_sequence_append_int8, i8, |v: i8| Node::int(
    i64::from(v)
));
numbers!(asdf_mapping_set_int16, asdf_sequence_append_int16, i16, |v: i16| {
    Node::int(i64::from(v))
});
numbers!(asdf_mapping_set_int32, asdf_sequence_append_int32, i32, |v: i32| {
    Node::int(i64::from(v))
});
numbers!(asdf_mapping_set_int64, asdf_sequence_append_int64, i64, Node::int);
numbers!(asdf_mapping_set_uint8, asdf_sequence_append_uint8, u8, |v: u8| {
    Node::int(i64::from(v))
});
numbers!(asdf_mapping_set_uint16, asdf_sequence_append_uint16, u16, |v: u16| {
    Node::int(i64::from(v))
});
numbers!(asdf_mapping_set_uint32, asdf_sequence_append_uint32, u32, |v: u32| {
    Node::int(i64::from(v))
});
numbers!(asdf_mapping_set_uint64, asdf_sequence_append_uint64, u64, uint64_node);
numbers!(asdf_mapping_set_float, asdf_sequence_append_float, f32, |v: f32| {
    Node::float(f64::from(v))
});
numbers!(asdf_mapping_set_double, asdf_sequence_append_double, f64, Node::float);

/// Removes `key` from a mapping and gives its value (a value of its own), or NULL.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_pop(mapping: *mut Value, key: *const c_char) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let (Some(m), Some(key)) = (unsafe { get_mut(mapping) }, unsafe { bytes(key) }) else {
            return std::ptr::null_mut();
        };
        let file = m.file;
        let Some(NodeKind::Mapping(map)) = m.node_mut().map(|n| &mut n.kind) else {
            return std::ptr::null_mut();
        };
        match map
            .entries
            .iter()
            .position(|(k, _)| k.as_scalar().is_some_and(|s| s.text.as_bytes() == key))
        {
            Some(i) => Value::new_own(file, map.entries.remove(i).1),
            None => std::ptr::null_mut(),
        }
    })
}

/// Removes the item at `index` (negative from the end) and gives it, or NULL.
///
/// # Safety
/// `sequence` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_pop(sequence: *mut Value, index: c_int) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(q) = (unsafe { get_mut(sequence) }) else {
            return std::ptr::null_mut();
        };
        let file = q.file;
        let Some(NodeKind::Sequence(seq)) = q.node_mut().map(|n| &mut n.kind) else {
            return std::ptr::null_mut();
        };
        match crate::file::at_index(i64::from(index), seq.items.len()) {
            Some(i) => Value::new_own(file, seq.items.remove(i)),
            None => std::ptr::null_mut(),
        }
    })
}

/// Puts `node` at `path` (keys separated by `/`; mappings on the way made where missing; an
/// existing sequence item replaced, or the next index appended).
fn set_at(file: *mut File, path: *const c_char, node: Option<Node>) -> c_int {
    guard(UNKNOWN, || {
        // SAFETY: the entry points pass NULL or an open file and NULL or a C string.
        let (Some(f), Some(path)) = (unsafe { file.as_mut() }, unsafe { bytes(path) }) else {
            return UNKNOWN;
        };
        let Some(node) = node else { return UNKNOWN };
        let segs: Vec<&[u8]> = path.split(|b| *b == b'/').filter(|s| !s.is_empty()).collect();
        let Some(asdf) = f.asdf_mut() else { return UNKNOWN };
        let Ok(mut n) = asdf.get_mut("") else { return UNKNOWN };
        let Some((last, ways)) = segs.split_last() else {
            // The root itself.
            *n = node;
            return OK;
        };
        for seg in ways {
            n = match &mut n.kind {
                NodeKind::Mapping(m) => {
                    let i = match m
                        .entries
                        .iter()
                        .position(|(k, _)| k.as_scalar().is_some_and(|s| s.text.as_bytes() == *seg))
                    {
                        Some(i) => i,
                        None => {
                            m.entries.push((
                                Node::str(String::from_utf8_lossy(seg).into_owned()),
                                Node::map(Vec::new()),
                            ));
                            m.entries.len() - 1
                        }
                    };
                    &mut m.entries[i].1
                }
                NodeKind::Sequence(q) => {
                    let Some(i) = std::str::from_utf8(seg)
                        .ok()
                        .and_then(|t| t.parse::<i64>().ok())
                        .and_then(|i| crate::file::at_index(i, q.items.len()))
                    else {
                        return NOT_FOUND;
                    };
                    &mut q.items[i]
                }
                _ => return NOT_FOUND,
            };
        }
        match &mut n.kind {
            NodeKind::Mapping(m) => {
                match m
                    .entries
                    .iter_mut()
                    .find(|(k, _)| k.as_scalar().is_some_and(|s| s.text.as_bytes() == *last))
                {
                    Some(e) => e.1 = node,
                    None => m
                        .entries
                        .push((Node::str(String::from_utf8_lossy(last).into_owned()), node)),
                }
                OK
            }
            NodeKind::Sequence(q) => {
                let i = std::str::from_utf8(last).ok().and_then(|t| t.parse::<i64>().ok());
                match i {
                    Some(i) if usize::try_from(i).ok() == Some(q.items.len()) => {
                        q.items.push(node);
                        OK
                    }
                    Some(i) => match crate::file::at_index(i, q.items.len()) {
                        Some(i) => {
                            q.items[i] = node;
                            OK
                        }
                        None => NOT_FOUND,
                    },
                    None => NOT_FOUND,
                }
            }
            _ => NOT_FOUND,
        }
    })
}

/// Puts a value at `path` (consumed, whatever the outcome).
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `value` NULL or a value not
/// freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_value(file: *mut File, path: *const c_char, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    let node = guard(None, || unsafe { consume(value) });
    set_at(file, path, node)
}

/// Puts a mapping at `path` (consumed).
///
/// # Safety
/// As [`asdf_set_value`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_mapping(file: *mut File, path: *const c_char, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_set_value(file, path, value) }
}

/// Puts a sequence at `path` (consumed).
///
/// # Safety
/// As [`asdf_set_value`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_sequence(file: *mut File, path: *const c_char, value: *mut Value) -> c_int {
    // SAFETY: by the contract above.
    unsafe { asdf_set_value(file, path, value) }
}

/// Puts the string of `len` bytes at `s` at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `s` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_string(file: *mut File, path: *const c_char, s: *const c_char, len: usize) -> c_int {
    if s.is_null() {
        return UNKNOWN;
    }
    // SAFETY: `len` readable bytes at `s`.
    let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
    set_at(file, path, Some(string_node(b)))
}

/// Puts a C string at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` and `s` NULL or C strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_string0(file: *mut File, path: *const c_char, s: *const c_char) -> c_int {
    // SAFETY: by the contract above.
    let node = unsafe { bytes(s) }.map(string_node);
    set_at(file, path, node)
}

/// Puts null at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_null(file: *mut File, path: *const c_char) -> c_int {
    set_at(file, path, Some(Node::null()))
}

/// Puts a bool at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_bool(file: *mut File, path: *const c_char, b: bool) -> c_int {
    set_at(file, path, Some(Node::bool(b)))
}

macro_rules! set_number {
    ($name:ident, $t:ty, $text:expr) => {
        /// Puts a number at `path`.
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(file: *mut File, path: *const c_char, v: $t) -> c_int {
            set_at(file, path, Some($text(v)))
        }
    };
}

set_number!(asdf_set_int8, i8, |v: i8| Node::int(i64::from(v)));
set_number!(asdf_set_int16, i16, |v: i16| Node::int(i64::from(v)));
set_number!(asdf_set_int32, i32, |v: i32| Node::int(i64::from(v)));
set_number!(asdf_set_int64, i64, Node::int);
set_number!(asdf_set_uint8, u8, |v: u8| Node::int(i64::from(v)));
set_number!(asdf_set_uint16, u16, |v: u16| Node::int(i64::from(v)));
set_number!(asdf_set_uint32, u32, |v: u32| Node::int(i64::from(v)));
set_number!(asdf_set_uint64, u64, uint64_node);
set_number!(asdf_set_float, f32, |v: f32| Node::float(f64::from(v)));
set_number!(asdf_set_double, f64, Node::float);

/// The file written as bytes.
fn written(file: *mut File) -> Result<Vec<u8>, c_int> {
    write(file, asdf::Target::Bytes).map(asdf::Written::into_bytes)
}

/// Writes the file to `target` (the engine's write: a path is replaced atomically, nothing
/// left half-written when it fails, and a concurrent writer's change refused), the error on
/// the file when it fails.
fn write(file: *mut File, target: asdf::Target<'_>) -> Result<asdf::Written, c_int> {
    // SAFETY: the entry points pass NULL or an open file.
    let f = unsafe { file.as_mut() }.ok_or(-1)?;
    let Some(asdf) = f.asdf_mut() else { return Err(-1) };
    asdf.write(target, &asdf::WriteOptions::default()).map_err(|e| {
        f.error.set(crate::error::code_of(&e), Some(&e.to_string()), 0);
        -1
    })
}

/// Writes the file to `filename`: 0, or -1 with the file's error set.
///
/// # Safety
/// `file` is NULL or an open file; `filename` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_write_to_file(file: *mut File, filename: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: by the contract above.
        let Some(name) = (unsafe { bytes(filename) }) else {
            return -1;
        };
        let path = std::path::PathBuf::from(String::from_utf8_lossy(name).into_owned());
        match write(file, asdf::Target::Path(std::borrow::Cow::Borrowed(&path))) {
            Ok(_) => 0,
            Err(e) => e,
        }
    })
}

/// Writes the file to a `FILE *`: 0, or -1.
///
/// # Safety
/// `file` is NULL or an open file; `fp` NULL or a `FILE *` open for writing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_write_to_fp(file: *mut File, fp: *mut libc::FILE) -> c_int {
    guard(-1, || {
        if fp.is_null() {
            return -1;
        }
        let bytes = match written(file) {
            Ok(b) => b,
            Err(e) => return e,
        };
        // SAFETY: `fp` is open for writing; `bytes` is readable for its length.
        let n = unsafe { libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), fp) };
        if n == bytes.len() { 0 } else { -1 }
    })
}

/// Writes the file into memory: `*buf` from `malloc` (the caller frees it with `free`),
/// `*size` its length; 0, or -1.
///
/// # Safety
/// `file` is NULL or an open file; `buf` and `size` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_write_to_mem(file: *mut File, buf: *mut *mut c_void, size: *mut usize) -> c_int {
    guard(-1, || {
        if buf.is_null() || size.is_null() {
            return -1;
        }
        let bytes = match written(file) {
            Ok(b) => b,
            Err(e) => return e,
        };
        // SAFETY: malloc of the length (at least 1 byte, so that NULL means failure).
        let p = unsafe { libc::malloc(bytes.len().max(1)) };
        if p.is_null() {
            return -1;
        }
        // SAFETY: `p` has room for `bytes.len()` bytes; the regions do not overlap; `buf`
        // and `size` are writable.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len());
            *buf = p;
            *size = bytes.len();
        }
        0
    })
}

/// An unsigned 64-bit number's node (beyond i64 an arbitrary-precision integer).
fn uint64_node(v: u64) -> Node {
    match i64::try_from(v) {
        Ok(i) => Node::int(i),
        Err(_) => Node::bigint(v.into()),
    }
}
