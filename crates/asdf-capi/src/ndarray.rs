//! `asdf_ndarray_t`: an ndarray of a file (its shape, datatype and byte order laid out as
//! libasdf's) and its data, read whole, by element or by tile through the engine (every
//! codec, chunked and FITS-backed arrays included), converted to another type where asked
//! with libasdf's rules: integers clamped to the destination's range and floats beyond it
//! made infinite, both reported as `ASDF_NDARRAY_ERR_OVERFLOW`.

use std::ffi::{c_char, c_int, c_void};

use asdf::{ByteOrder, Datatype, ScalarType};
use asdf_core_types::region::{Region, Slice};
use asdf_yaml::{NodeKind, Step};

use crate::file::File;
use crate::util::{bytes, guard};
use crate::value::Value;

/// `asdf_datatype_t`, laid out as libasdf's.
#[repr(C)]
#[derive(Debug)]
pub struct CDatatype {
    ty: c_int,
    size: u64,
    name: *const c_char,
    byteorder: c_int,
    ndim: u32,
    shape: *const u64,
    nfields: u32,
    fields: *const CDatatype,
}

/// `asdf_ndarray_t`, laid out as libasdf's; `reserved` holds this library's state.
#[repr(C)]
#[derive(Debug)]
pub struct CNdArray {
    source: usize,
    ndim: u32,
    shape: *const u64,
    datatype: CDatatype,
    byteorder: c_int,
    offset: u64,
    strides: *const i64,
    reserved: *mut c_void,
}

/// A box of an array: its origin and shape, one value per axis.
type BoxSpec = (Vec<u64>, Vec<u64>);

/// What the C struct does not show: where the array is, and its data once read.
#[derive(Debug)]
struct State {
    file: *mut File,
    pointer: String,
    /// The elements as stored (the file's byte order), once asked for.
    data: Option<Vec<u8>>,
    /// The box being read (origin, shape), for an inline array.
    boxed: Option<BoxSpec>,
}

const OK: c_int = 0;
const OUT_OF_BOUNDS: c_int = 1;
const OOM: c_int = 2;
const INVAL: c_int = 3;
const OVERFLOW: c_int = 4;
const CONVERSION: c_int = 5;

/// libasdf's scalar type numbers.
fn type_code(t: ScalarType) -> c_int {
    match t {
        ScalarType::Int8 => 1,
        ScalarType::UInt8 => 2,
        ScalarType::Int16 => 3,
        ScalarType::UInt16 => 4,
        ScalarType::Int32 => 5,
        ScalarType::UInt32 => 6,
        ScalarType::Int64 => 7,
        ScalarType::UInt64 => 8,
        ScalarType::Float16 => 9,
        ScalarType::Float32 => 10,
        ScalarType::Float64 => 11,
        ScalarType::Complex64 => 12,
        ScalarType::Complex128 => 13,
        ScalarType::Bool8 => 14,
        _ => 0,
    }
}

const NAMES: [&str; 18] = [
    "",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "bool8",
    "ascii",
    "ucs4",
    "structured",
];

fn code_size(code: c_int) -> usize {
    match code {
        1 | 2 | 14 => 1,
        3 | 4 | 9 => 2,
        5 | 6 | 10 => 4,
        7 | 8 | 11 | 12 => 8,
        13 => 16,
        _ => 0,
    }
}

/// A structured datatype's fields, allocated with the C allocator (freed by `free_fields`).
fn c_fields(fields: &[asdf_core_types::Field], order: ByteOrder) -> (u32, *const CDatatype) {
    let n = fields.len();
    let Ok(count) = u32::try_from(n) else {
        return (0, std::ptr::null());
    };
    if n == 0 {
        return (0, std::ptr::null());
    }
    // SAFETY: calloc of `n` datatypes (all zero is valid for them).
    let p: *mut CDatatype = unsafe { libc::calloc(n, std::mem::size_of::<CDatatype>()) }.cast();
    if p.is_null() {
        return (0, std::ptr::null());
    }
    for (i, f) in fields.iter().enumerate() {
        let mut d = c_datatype(&f.datatype, f.byteorder.unwrap_or(order));
        if let Some(name) = &f.name {
            let c = crate::util::c_string(name.as_bytes());
            // SAFETY: a C string.
            d.name = unsafe { libc::strdup(c.as_ptr()) };
        }
        if !f.shape.is_empty() {
            // SAFETY: malloc of the shape's length.
            let sp: *mut u64 = unsafe { libc::malloc(f.shape.len() * 8) }.cast();
            if !sp.is_null() {
                for (k, dim) in f.shape.iter().enumerate() {
                    // SAFETY: `sp` has room for the shape.
                    unsafe { sp.add(k).write(*dim as u64) };
                }
                d.ndim = u32::try_from(f.shape.len()).unwrap_or(0);
                d.shape = sp;
            }
        }
        // SAFETY: `p` has room for `n` datatypes.
        unsafe { p.add(i).write(d) };
    }
    (count, p)
}

/// Frees what `c_fields` allocated (recursively).
fn free_fields(d: &CDatatype) {
    if d.fields.is_null() {
        return;
    }
    for i in 0..d.nfields as usize {
        // SAFETY: `fields` holds `nfields` datatypes made by `c_fields`.
        let f = unsafe { &*d.fields.add(i) };
        free_fields(f);
        // SAFETY: from strdup/malloc in `c_fields` (or NULL).
        unsafe {
            libc::free(f.name.cast_mut().cast());
            libc::free(f.shape.cast_mut().cast());
        }
    }
    // SAFETY: from calloc in `c_fields`.
    unsafe { libc::free(d.fields.cast_mut().cast()) };
}

fn c_datatype(d: &Datatype, order: ByteOrder) -> CDatatype {
    let fields = match d {
        Datatype::Structured(fs) => c_fields(fs, order),
        _ => (0, std::ptr::null()),
    };
    let order = match order {
        ByteOrder::Big => c_int::from(b'>'),
        ByteOrder::Little => c_int::from(b'<'),
    };
    let (ty, size) = match d {
        Datatype::Scalar(s) => (type_code(*s), code_size(type_code(*s))),
        Datatype::Ascii(n) => (15, *n),
        Datatype::Ucs4(n) => (16, n.saturating_mul(4)),
        Datatype::Structured(_) => (17, d.size()),
        _ => (0, d.size()),
    };
    CDatatype {
        ty,
        size: size as u64,
        name: std::ptr::null(),
        byteorder: order,
        ndim: 0,
        shape: std::ptr::null(),
        nfields: fields.0,
        fields: fields.1,
    }
}

/// The JSON pointer of the node at `steps`.
fn json_pointer(file: &File, steps: &[Step]) -> Option<String> {
    let mut p = String::new();
    for k in 0..steps.len() {
        p.push('/');
        match steps[k] {
            Step::Item(i) => p.push_str(&i.to_string()),
            Step::Entry(i) => match &file.node_at(&steps[..k])?.kind {
                NodeKind::Mapping(m) => {
                    let key = m.entries.get(i)?.0.as_scalar()?;
                    p.push_str(&asdf::escape_pointer_token(key.text.as_str()));
                }
                _ => return None,
            },
            Step::Key(_) => return None,
        }
    }
    Some(p)
}

/// A new `asdf_ndarray_t` for the array at `pointer` (`None` when it is not one the engine
/// reads).
fn make(file: *mut File, pointer: String) -> Option<*mut CNdArray> {
    // SAFETY: the callers pass an open file.
    let f = unsafe { file.as_ref() }?;
    let a = f.asdf()?.array(&pointer).ok()?;
    let shape: Vec<u64> = a.shape().iter().map(|d| *d as u64).collect();
    let ndim = u32::try_from(shape.len()).ok()?;
    // SAFETY: malloc of the shape's length (at least one element).
    let sp: *mut u64 = unsafe { libc::malloc(shape.len().max(1) * 8) }.cast();
    if sp.is_null() {
        return None;
    }
    // SAFETY: `sp` has room for the shape.
    unsafe { std::ptr::copy_nonoverlapping(shape.as_ptr(), sp, shape.len()) };
    // SAFETY: calloc of one struct (all zero is valid for it).
    let nd: *mut CNdArray = unsafe { libc::calloc(1, std::mem::size_of::<CNdArray>()) }.cast();
    if nd.is_null() {
        // SAFETY: from malloc above.
        unsafe { libc::free(sp.cast()) };
        return None;
    }
    let state = Box::new(State {
        file,
        pointer,
        data: None,
        boxed: None,
    });
    let source = match a.storage() {
        asdf::Storage::Internal { block } => block,
        _ => 0,
    };
    // SAFETY: `nd` is a zeroed struct from calloc.
    unsafe {
        (*nd).source = source;
        (*nd).ndim = ndim;
        (*nd).shape = sp;
        // (An inline array's numbers have no byte order: the machine's, as libasdf.)
        let order = if a.storage() == asdf::Storage::Inline {
            native()
        } else {
            a.byte_order()
        };
        (*nd).datatype = c_datatype(a.datatype(), order);
        (*nd).byteorder = (*nd).datatype.byteorder;
        (*nd).reserved = Box::into_raw(state).cast();
    }
    Some(nd)
}

fn state<'a>(nd: *mut CNdArray) -> Option<&'a mut State> {
    // SAFETY: `nd` is NULL or an ndarray of this library, whose `reserved` is its state.
    let n = unsafe { nd.as_mut() }?;
    // SAFETY: as above.
    unsafe { n.reserved.cast::<State>().as_mut() }
}

fn shape_of<'a>(nd: *const CNdArray) -> Option<&'a [u64]> {
    // SAFETY: `nd` is NULL or an ndarray of this library: `shape` holds `ndim` values.
    let n = unsafe { nd.as_ref() }?;
    if n.ndim == 0 {
        return Some(&[]);
    }
    // SAFETY: as above.
    Some(unsafe { std::slice::from_raw_parts(n.shape, n.ndim as usize) })
}

/// The value read as an ndarray.
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_ndarray(value: *mut Value, out: *mut *mut CNdArray) -> c_int {
    guard(-2, || {
        // SAFETY: by the contract above.
        let Some(v) = (unsafe { value.as_ref() }) else {
            return -2;
        };
        // SAFETY: by the contract above.
        if !unsafe { crate::core::asdf_value_is_ndarray(value) } {
            return 1;
        }
        // SAFETY: a value's file is open while the value is used.
        let Some(f) = (unsafe { v.file.as_ref() }) else {
            return -2;
        };
        let Some(pointer) = v.tree_steps().and_then(|s| json_pointer(f, s)) else {
            return 1;
        };
        match make(v.file, pointer) {
            Some(nd) => {
                if out.is_null() {
                    // SAFETY: made just above.
                    unsafe { asdf_ndarray_destroy(nd) };
                } else {
                    // SAFETY: `out` is writable.
                    unsafe { *out = nd };
                }
                0
            }
            None => 2,
        }
    })
}

/// The ndarray at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_ndarray(file: *mut File, path: *const c_char, out: *mut *mut CNdArray) -> c_int {
    guard(-2, || {
        crate::open::with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out` as above.
            unsafe { asdf_value_as_ndarray(v, out) }
        })
    })
}

/// Whether the value at `path` is an ndarray.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_is_ndarray(file: *mut File, path: *const c_char) -> bool {
    guard(false, || {
        crate::open::with_value(file, path, false, |v| {
            // SAFETY: `v` is a live value.
            unsafe { crate::core::asdf_value_is_ndarray(v) }
        })
    })
}

/// Frees an ndarray (and its data).
///
/// # Safety
/// `nd` is NULL or an ndarray of this library not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_destroy(nd: *mut CNdArray) {
    guard((), || {
        // SAFETY: by the contract above.
        let Some(n) = (unsafe { nd.as_mut() }) else { return };
        if !n.reserved.is_null() {
            // SAFETY: made by `Box::into_raw` in `make`, freed once.
            drop(unsafe { Box::from_raw(n.reserved.cast::<State>()) });
        }
        free_fields(&n.datatype);
        // SAFETY: the shape and the struct came from malloc/calloc in `make`.
        unsafe {
            libc::free(n.shape.cast_mut().cast());
            libc::free(nd.cast());
        }
    });
}

/// The number of elements.
///
/// # Safety
/// `nd` is NULL or an ndarray of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_size(nd: *const CNdArray) -> u64 {
    guard(0, || {
        shape_of(nd).map_or(0, |s| s.iter().try_fold(1u64, |a, d| a.checked_mul(*d)).unwrap_or(0))
    })
}

/// The number of bytes of the elements.
///
/// # Safety
/// `nd` is NULL or an ndarray of this library.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_nbytes(nd: *const CNdArray) -> u64 {
    // SAFETY: by the contract above.
    let n = unsafe { asdf_ndarray_size(nd) };
    // SAFETY: by the contract above.
    let size = unsafe { nd.as_ref() }.map_or(0, |a| a.datatype.size);
    n.saturating_mul(size)
}

/// The machine's byte order.
fn native() -> ByteOrder {
    if cfg!(target_endian = "little") {
        ByteOrder::Little
    } else {
        ByteOrder::Big
    }
}

/// An inline array's elements (numbers in the tree) as bytes of its datatype in the machine's
/// byte order, the box `origin`/`shape` of them when given.
fn inline_bytes(a: &asdf::Array<'_>, boxed: Option<(&[u64], &[u64])>) -> Result<Vec<u8>, c_int> {
    let v = a.values().map_err(|_| INVAL)?;
    let Datatype::Scalar(t) = &v.datatype else {
        return Err(CONVERSION);
    };
    let code = type_code(*t);
    let size = code_size(code);
    if size == 0 || matches!(code, 9 | 12 | 13) {
        return Err(CONVERSION);
    }
    let mut all = vec![0u8; v.elements.len() * size];
    for (e, out) in v.elements.iter().zip(all.chunks_exact_mut(size)) {
        let n = match e {
            asdf::Element::Int(i) => Num::I(i128::from(*i)),
            asdf::Element::UInt(u) => Num::I(i128::from(*u)),
            asdf::Element::Bool(b) => Num::I(i128::from(*b)),
            asdf::Element::Float(f) => Num::F(*f),
            _ => return Err(CONVERSION),
        };
        encode(n, code, out);
    }
    let Some((origin, shape)) = boxed else { return Ok(all) };
    let to_usize = |v: &[u64]| -> Result<Vec<usize>, c_int> {
        v.iter()
            .map(|d| usize::try_from(*d).map_err(|_| OUT_OF_BOUNDS))
            .collect()
    };
    let (origin, shape) = (to_usize(origin)?, to_usize(shape)?);
    // The box, row by row (C order).
    let full: Vec<usize> = v.shape.clone();
    let nd = full.len();
    if nd == 0 {
        return Ok(all);
    }
    let count: usize = shape.iter().product();
    let mut out = Vec::with_capacity(count * size);
    let mut idx = vec![0usize; nd];
    for _ in 0..count {
        let mut flat = 0usize;
        for d in 0..nd {
            flat = flat * full[d] + (origin[d] + idx[d]);
        }
        out.extend_from_slice(all.get(flat * size..(flat + 1) * size).ok_or(OUT_OF_BOUNDS)?);
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Ok(out)
}

/// The array's elements as the engine reads them: (bytes, their byte order, the datatype).
fn read_region(st: &State, region: Option<&Region>) -> Result<(Vec<u8>, ByteOrder, Datatype), c_int> {
    let read = {
        // SAFETY: an ndarray's file is open while it is used.
        let f = unsafe { st.file.as_ref() }.ok_or(INVAL)?;
        let a = f.asdf().ok_or(INVAL)?.array(&st.pointer).map_err(|_| INVAL)?;
        let d = a.datatype().clone();
        if a.storage() == asdf::Storage::Inline {
            let boxed = st.boxed.as_ref().map(|(o, s)| (o.as_slice(), s.as_slice()));
            return Ok((inline_bytes(&a, boxed)?, native(), d));
        }
        let read: Result<asdf::RegionBytes, asdf::Error> = match region {
            Some(r) => a.read_region(r),
            None => a.read(),
        };
        read.map(|rb| (rb.bytes, rb.byte_order, d))
    };
    read.map_err(|e| {
        // The reason on the file (`asdf_error`), as libasdf reports a block it cannot read.
        // SAFETY: an ndarray's file is open while it is used; the borrows above have ended.
        if let Some(f) = unsafe { st.file.as_mut() } {
            f.error.set(crate::error::code_of(&e), Some(&e.to_string()), 0);
        }
        if region.is_some() && (e.kind() == asdf::ErrorKind::Usage || e.kind() == asdf::ErrorKind::NotFound) {
            OUT_OF_BOUNDS
        } else {
            INVAL
        }
    })
}

/// One element as a number.
#[derive(Clone, Copy)]
enum Num {
    I(i128),
    F(f64),
}

fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let frac = f64::from(bits & 0x3ff);
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 => {
            if frac == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Element `k` of `src` (of type `t`, in `order`).
fn decode(src: &[u8], k: usize, t: ScalarType, order: ByteOrder) -> Option<Num> {
    let size = code_size(type_code(t));
    let b = src.get(k * size..(k + 1) * size)?;
    let mut buf = [0u8; 16];
    buf[..size].copy_from_slice(b);
    let native_little = cfg!(target_endian = "little");
    if (order == ByteOrder::Little) != native_little {
        buf[..size].reverse();
    }
    macro_rules! ne {
        ($t:ty, $n:expr) => {
            <$t>::from_ne_bytes(buf[..$n].try_into().ok()?)
        };
    }
    Some(match t {
        ScalarType::Int8 => Num::I(i128::from(ne!(i8, 1))),
        ScalarType::UInt8 | ScalarType::Bool8 => Num::I(i128::from(ne!(u8, 1))),
        ScalarType::Int16 => Num::I(i128::from(ne!(i16, 2))),
        ScalarType::UInt16 => Num::I(i128::from(ne!(u16, 2))),
        ScalarType::Int32 => Num::I(i128::from(ne!(i32, 4))),
        ScalarType::UInt32 => Num::I(i128::from(ne!(u32, 4))),
        ScalarType::Int64 => Num::I(i128::from(ne!(i64, 8))),
        ScalarType::UInt64 => Num::I(i128::from(ne!(u64, 8))),
        ScalarType::Float16 => Num::F(half_to_f64(ne!(u16, 2))),
        ScalarType::Float32 => Num::F(f64::from(ne!(f32, 4))),
        ScalarType::Float64 => Num::F(ne!(f64, 8)),
        _ => return None,
    })
}

/// Writes `v` as type `code` at `out` (native byte order); whether it had to be clamped.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss
)]
fn encode(v: Num, code: c_int, out: &mut [u8]) -> bool {
    macro_rules! int {
        ($t:ty) => {{
            let (x, over) = match v {
                Num::I(i) => match <$t>::try_from(i) {
                    Ok(x) => (x, false),
                    Err(_) => (if i < 0 { <$t>::MIN } else { <$t>::MAX }, true),
                },
                Num::F(f) => {
                    if f.is_nan() {
                        (0 as $t, true)
                    } else if f < <$t>::MIN as f64 {
                        (<$t>::MIN, true)
                    } else if f > <$t>::MAX as f64 {
                        (<$t>::MAX, true)
                    } else {
                        (f as $t, false)
                    }
                }
            };
            out.copy_from_slice(&x.to_ne_bytes());
            over
        }};
    }
    match code {
        1 => int!(i8),
        2 | 14 => int!(u8),
        3 => int!(i16),
        4 => int!(u16),
        5 => int!(i32),
        6 => int!(u32),
        7 => int!(i64),
        8 => int!(u64),
        10 => {
            let (x, over) = match v {
                Num::F(f) if f.is_finite() && (f as f32).is_infinite() => (f as f32, true),
                Num::F(f) => (f as f32, false),
                Num::I(i) => (i as f32, false),
            };
            out.copy_from_slice(&x.to_ne_bytes());
            over
        }
        11 => {
            let x = match v {
                Num::F(f) => f,
                Num::I(i) => i as f64,
            };
            out.copy_from_slice(&x.to_ne_bytes());
            false
        }
        _ => false,
    }
}

/// Elements (`src`, of `d` in `order`) converted to `dst` (0: as stored, in the machine's byte
/// order): the bytes and whether any was clamped.
fn convert(src: &[u8], d: &Datatype, order: ByteOrder, dst: c_int) -> Result<(Vec<u8>, bool), c_int> {
    let Datatype::Scalar(t) = d else {
        // Strings and records: only as stored.
        return if dst == 0 {
            Ok((src.to_vec(), false))
        } else {
            Err(CONVERSION)
        };
    };
    let size = code_size(type_code(*t));
    if size == 0 {
        return Err(CONVERSION);
    }
    let count = src.len() / size;
    let native_little = cfg!(target_endian = "little");
    if dst == 0 || dst == type_code(*t) {
        let mut v = src.to_vec();
        if (order == ByteOrder::Little) != native_little {
            // Complex numbers swap each half.
            let unit = match t {
                ScalarType::Complex64 => 4,
                ScalarType::Complex128 => 8,
                _ => size,
            };
            for c in v.chunks_exact_mut(unit) {
                c.reverse();
            }
        }
        return Ok((v, false));
    }
    let out_size = code_size(dst);
    // (Numbers to bool8: refused, as libasdf refuses them.)
    if out_size == 0 || matches!(dst, 9 | 12 | 13 | 14) {
        return Err(CONVERSION);
    }
    let mut out = vec![0u8; count.checked_mul(out_size).ok_or(OOM)?];
    let mut over = false;
    for k in 0..count {
        let v = decode(src, k, *t, order).ok_or(CONVERSION)?;
        over |= encode(v, dst, &mut out[k * out_size..(k + 1) * out_size]);
    }
    Ok((out, over))
}

/// Hands `bytes` to C: into `*dst` when it is set (the caller's buffer, large enough), else a
/// new malloc'd buffer there.
fn hand_out(bytes: &[u8], dst: *mut *mut c_void) -> c_int {
    if dst.is_null() {
        return INVAL;
    }
    // SAFETY: `dst` is writable (checked above; the callers' contract).
    let mut p = unsafe { *dst };
    if p.is_null() {
        // SAFETY: malloc of the length (at least one byte).
        p = unsafe { libc::malloc(bytes.len().max(1)) };
        if p.is_null() {
            return OOM;
        }
        // SAFETY: `dst` is writable.
        unsafe { *dst = p };
    }
    // SAFETY: `p` is the caller's buffer of at least the tile's size, or the one just made.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>(), bytes.len()) };
    OK
}

fn read_into(nd: *mut CNdArray, region: Option<(&Region, BoxSpec)>, dst_t: c_int, dst: *mut *mut c_void) -> c_int {
    guard(INVAL, || {
        let Some(st) = state(nd) else { return INVAL };
        st.boxed = region.as_ref().map(|(_, b)| b.clone());
        let read = read_region(st, region.as_ref().map(|(r, _)| *r));
        st.boxed = None;
        let (src, order, d) = match read {
            Ok(x) => x,
            Err(e) => return e,
        };
        match convert(&src, &d, order, dst_t) {
            Ok((bytes, over)) => {
                let r = hand_out(&bytes, dst);
                if r == OK && over { OVERFLOW } else { r }
            }
            Err(e) => e,
        }
    })
}

/// Every element, converted to `dst_t`, into `*dst` (malloc'd when NULL).
///
/// # Safety
/// `nd` is NULL or an ndarray of this library; `dst` NULL or writable, pointing at NULL or at
/// a buffer of the array's size in `dst_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_read_all(nd: *mut CNdArray, dst_t: c_int, dst: *mut *mut c_void) -> c_int {
    read_into(nd, None, dst_t, dst)
}

/// The region of a box: `origin` and `shape` per axis, checked against the array.
fn box_region(nd: *const CNdArray, origin: &[u64], shape: &[u64]) -> Result<Region, c_int> {
    let full = shape_of(nd).ok_or(INVAL)?;
    if origin.len() != full.len() || shape.len() != full.len() {
        return Err(INVAL);
    }
    let mut slices = Vec::with_capacity(full.len());
    for ((o, s), n) in origin.iter().zip(shape).zip(full) {
        let end = o.checked_add(*s).ok_or(OUT_OF_BOUNDS)?;
        if end > *n || *s == 0 {
            return Err(OUT_OF_BOUNDS);
        }
        slices.push(Slice::Range {
            start: Some(i64::try_from(*o).map_err(|_| OUT_OF_BOUNDS)?),
            stop: Some(i64::try_from(end).map_err(|_| OUT_OF_BOUNDS)?),
            step: None,
        });
    }
    Ok(Region { slices })
}

/// Reads `n` values at `p` (NULL: none).
///
/// # Safety
/// `p` is NULL or `n` readable values.
unsafe fn slice<'a>(p: *const u64, n: usize) -> Option<&'a [u64]> {
    if p.is_null() {
        None
    } else {
        // SAFETY: by the contract above.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// The box at `origin` of `shape` (one value per axis), converted to `dst_t`, into `*dst`.
///
/// # Safety
/// As [`asdf_ndarray_read_all`]; `origin` and `shape` NULL or one value per axis.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_read_tile_ndim(
    nd: *mut CNdArray,
    origin: *const u64,
    shape: *const u64,
    dst_t: c_int,
    dst: *mut *mut c_void,
) -> c_int {
    guard(INVAL, || {
        let ndim = shape_of(nd).map_or(0, <[u64]>::len);
        // SAFETY: by the contract above.
        let (Some(o), Some(s)) = (unsafe { slice(origin, ndim) }, unsafe { slice(shape, ndim) }) else {
            return INVAL;
        };
        // An empty box: nothing to read (as libasdf).
        if s.contains(&0)
            && o.iter()
                .zip(s)
                .zip(shape_of(nd).unwrap_or_default())
                .all(|((o, s), n)| o.saturating_add(*s) <= *n)
        {
            return hand_out(&[], dst);
        }
        match box_region(nd, o, s) {
            Ok(r) => read_into(nd, Some((&r, (o.to_vec(), s.to_vec()))), dst_t, dst),
            Err(e) => e,
        }
    })
}

/// A `width` x `height` tile at (`x`, `y`) of the plane that `plane_origin` (the leading
/// indices; NULL for a 2-D array) picks.
///
/// # Safety
/// As [`asdf_ndarray_read_all`]; `plane_origin` NULL or one value per leading axis.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn asdf_ndarray_read_tile_2d(
    nd: *mut CNdArray,
    x: u64,
    y: u64,
    width: u64,
    height: u64,
    plane_origin: *const u64,
    dst_t: c_int,
    dst: *mut *mut c_void,
) -> c_int {
    guard(INVAL, || {
        let ndim = shape_of(nd).map_or(0, <[u64]>::len);
        if ndim < 2 {
            return INVAL;
        }
        let lead: Vec<u64> = if ndim == 2 {
            Vec::new()
        } else {
            // SAFETY: by the contract above.
            match unsafe { slice(plane_origin, ndim - 2) } {
                Some(p) => p.to_vec(),
                None => vec![0; ndim - 2],
            }
        };
        let mut origin = lead.clone();
        origin.extend([y, x]);
        let mut shape = vec![1; lead.len()];
        shape.extend([height, width]);
        match box_region(nd, &origin, &shape) {
            Ok(r) => read_into(nd, Some((&r, (origin.clone(), shape.clone()))), dst_t, dst),
            Err(e) => e,
        }
    })
}

/// One element, converted to `dst_t`, into `dst`.
///
/// # Safety
/// `nd` is NULL or an ndarray of this library; `indices` NULL or one per axis; `dst` NULL or
/// writable for one `dst_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_read_at(
    nd: *mut CNdArray,
    indices: *const u64,
    dst_t: c_int,
    dst: *mut c_void,
) -> c_int {
    guard(INVAL, || {
        if dst.is_null() {
            return INVAL;
        }
        let ndim = shape_of(nd).map_or(0, <[u64]>::len);
        // SAFETY: by the contract above.
        let Some(ix) = (unsafe { slice(indices, ndim) }) else {
            return INVAL;
        };
        let ones = vec![1; ndim];
        let r = match box_region(nd, ix, &ones) {
            Ok(r) => r,
            Err(e) => return e,
        };
        let mut p = dst;
        read_into(nd, Some((&r, (ix.to_vec(), ones))), dst_t, &raw mut p)
    })
}

macro_rules! read_typed_at {
    ($name:ident, $t:ty, $code:expr) => {
        /// One element converted to the type (0 on an error, which `err` gets when given).
        ///
        /// # Safety
        /// As [`asdf_ndarray_read_at`]; `err` NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(nd: *mut CNdArray, indices: *const u64, err: *mut c_int) -> $t {
            let mut v: $t = Default::default();
            // SAFETY: by the contract above; `v` is writable for one value of the type.
            let e = unsafe { asdf_ndarray_read_at(nd, indices, $code, (&raw mut v).cast()) };
            if !err.is_null() {
                // SAFETY: `err` is writable.
                unsafe { *err = e };
            }
            if e == OK || e == OVERFLOW {
                v
            } else {
                Default::default()
            }
        }
    };
}

read_typed_at!(asdf_ndarray_read_int8_at, i8, 1);
read_typed_at!(asdf_ndarray_read_uint8_at, u8, 2);
read_typed_at!(asdf_ndarray_read_int16_at, i16, 3);
read_typed_at!(asdf_ndarray_read_uint16_at, u16, 4);
read_typed_at!(asdf_ndarray_read_int32_at, i32, 5);
read_typed_at!(asdf_ndarray_read_uint32_at, u32, 6);
read_typed_at!(asdf_ndarray_read_int64_at, i64, 7);
read_typed_at!(asdf_ndarray_read_uint64_at, u64, 8);
read_typed_at!(asdf_ndarray_read_float32_at, f32, 10);
read_typed_at!(asdf_ndarray_read_float64_at, f64, 11);

/// The elements as stored (decoded from any compression; the file's byte order), kept by the
/// ndarray; `size` gets their length.
///
/// # Safety
/// `nd` is NULL or an ndarray of this library; `size` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_data(nd: *mut CNdArray, size: *mut usize) -> *const c_void {
    guard(std::ptr::null(), || {
        let Some(st) = state(nd) else { return std::ptr::null() };
        if st.data.is_none() {
            let Ok((mut bytes, order, d)) = read_region(st, None) else {
                return std::ptr::null();
            };
            // The engine may give another byte order than the file's: back to the file's.
            // SAFETY: `nd` is live (state found).
            let want = unsafe { (*nd).byteorder };
            let stored = if want == c_int::from(b'>') {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            if let Datatype::Scalar(t) = d
                && order != stored
            {
                let unit = match t {
                    ScalarType::Complex64 => 4,
                    ScalarType::Complex128 => 8,
                    t => code_size(type_code(t)),
                };
                for c in bytes.chunks_exact_mut(unit.max(1)) {
                    c.reverse();
                }
            }
            st.data = Some(bytes);
        }
        let d = st.data.as_deref().unwrap_or_default();
        if !size.is_null() {
            // SAFETY: `size` is writable.
            unsafe { *size = d.len() };
        }
        d.as_ptr().cast()
    })
}

/// The data as [`asdf_ndarray_data`] gives it (blocks are decoded by the engine).
///
/// # Safety
/// As [`asdf_ndarray_data`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_data_raw(nd: *mut CNdArray, size: *mut usize) -> *const c_void {
    // SAFETY: by the contract above.
    unsafe { asdf_ndarray_data(nd, size) }
}

/// The number of blocks of the file.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_block_count(file: *mut File) -> usize {
    guard(0, || {
        // SAFETY: by the contract above.
        unsafe { file.as_ref() }
            .and_then(File::asdf)
            .map_or(0, |a| a.source().blocks().len())
    })
}

/// A scalar datatype's number from its name.
///
/// # Safety
/// `name` is NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_scalar_datatype_from_string(name: *const c_char) -> c_int {
    guard(0, || {
        // SAFETY: by the contract above.
        let Some(b) = (unsafe { bytes(name) }) else { return 0 };
        NAMES
            .iter()
            .take(15)
            .position(|n| !n.is_empty() && n.as_bytes() == b)
            .and_then(|i| c_int::try_from(i).ok())
            .unwrap_or(0)
    })
}

/// A scalar datatype's name ("unknown" for others; "<structured>" for records, as libasdf).
#[unsafe(no_mangle)]
pub extern "C" fn asdf_scalar_datatype_to_string(t: c_int) -> *const c_char {
    const C: [&std::ffi::CStr; 18] = [
        c"unknown",
        c"int8",
        c"uint8",
        c"int16",
        c"uint16",
        c"int32",
        c"uint32",
        c"int64",
        c"uint64",
        c"float16",
        c"float32",
        c"float64",
        c"complex64",
        c"complex128",
        c"bool8",
        c"ascii",
        c"ucs4",
        c"<structured>",
    ];
    usize::try_from(t).ok().and_then(|i| C.get(i)).unwrap_or(&C[0]).as_ptr()
}

/// The size in bytes of an element of the datatype.
///
/// # Safety
/// `d` is NULL or a datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_datatype_size(d: *mut CDatatype) -> u64 {
    // SAFETY: by the contract above.
    guard(0, || unsafe { d.as_ref() }.map_or(0, |d| d.size))
}

/// The scalar type of a libasdf type number.
fn scalar_of(code: c_int) -> Option<ScalarType> {
    Some(match code {
        1 => ScalarType::Int8,
        2 => ScalarType::UInt8,
        3 => ScalarType::Int16,
        4 => ScalarType::UInt16,
        5 => ScalarType::Int32,
        6 => ScalarType::UInt32,
        7 => ScalarType::Int64,
        8 => ScalarType::UInt64,
        9 => ScalarType::Float16,
        10 => ScalarType::Float32,
        11 => ScalarType::Float64,
        12 => ScalarType::Complex64,
        13 => ScalarType::Complex128,
        14 => ScalarType::Bool8,
        _ => return None,
    })
}

/// A buffer for the data of an ndarray the program builds (zeroed, `asdf_ndarray_nbytes` long),
/// kept by the ndarray until `asdf_ndarray_data_dealloc` or `asdf_ndarray_destroy`; for an
/// ndarray read from a file, its data (as `asdf_ndarray_data`).
///
/// # Safety
/// `nd` is NULL or an ndarray (of this library, or a struct the program filled, whose
/// `_reserved` is NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_data_alloc(nd: *mut CNdArray) -> *mut c_void {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(n) = (unsafe { nd.as_mut() }) else {
            return std::ptr::null_mut();
        };
        if n.reserved.is_null() {
            // SAFETY: by the contract above.
            let bytes = unsafe { asdf_ndarray_nbytes(nd) };
            let Ok(len) = usize::try_from(bytes) else {
                return std::ptr::null_mut();
            };
            let mut data = Vec::new();
            if data.try_reserve_exact(len).is_err() {
                return std::ptr::null_mut();
            }
            data.resize(len, 0u8);
            n.reserved = Box::into_raw(Box::new(State {
                file: std::ptr::null_mut(),
                pointer: String::new(),
                data: Some(data),
                boxed: None,
            }))
            .cast();
        } else {
            // SAFETY: by the contract above.
            let _ = unsafe { asdf_ndarray_data(nd, std::ptr::null_mut()) };
        }
        state(nd)
            .and_then(|st| st.data.as_mut())
            .map_or(std::ptr::null_mut(), |d| d.as_mut_ptr().cast())
    })
}

/// A scratch buffer for an ndarray's data (`asdf_ndarray_data_alloc`'s; the file is not used).
///
/// # Safety
/// As [`asdf_ndarray_data_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_data_alloc_temp(_file: *mut File, nd: *mut CNdArray) -> *mut c_void {
    // SAFETY: by the contract above.
    unsafe { asdf_ndarray_data_alloc(nd) }
}

/// Frees the data buffer of an ndarray the program built (and an ndarray's read data).
///
/// # Safety
/// `nd` is NULL or an ndarray.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_ndarray_data_dealloc(nd: *mut CNdArray) {
    guard((), || {
        // SAFETY: by the contract above.
        let Some(n) = (unsafe { nd.as_mut() }) else { return };
        let Some(st) = state(nd) else { return };
        if st.file.is_null() {
            // The program's own ndarray: its state was made by `asdf_ndarray_data_alloc`.
            // SAFETY: made by `Box::into_raw` there, freed once; `reserved` cleared.
            drop(unsafe { Box::from_raw(n.reserved.cast::<State>()) });
            n.reserved = std::ptr::null_mut();
        } else {
            st.data = None;
        }
    });
}

/// Puts an ndarray at `path` (its data written as a block with the file): the shape, datatype
/// and byte order of the struct, the data of `asdf_ndarray_data_alloc`'s buffer (or the array
/// it was read as). Offsets and strides are not kept: the data is written in C order.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `nd` NULL or an ndarray.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_ndarray(file: *mut File, path: *const c_char, nd: *const CNdArray) -> c_int {
    guard(-2, || {
        // SAFETY: by the contract above.
        let (Some(n), Some(p)) = (unsafe { nd.as_ref() }, unsafe { bytes(path) }) else {
            return -2;
        };
        let Some(t) = scalar_of(n.datatype.ty) else {
            return 1;
        };
        let Some(shape) = shape_of(nd) else { return -2 };
        let Ok(shape) = shape.iter().map(|d| usize::try_from(*d)).collect::<Result<Vec<_>, _>>() else {
            return 4;
        };
        let order = if n.byteorder == c_int::from(b'>') {
            ByteOrder::Big
        } else {
            native()
        };
        let nd_mut = nd.cast_mut();
        // SAFETY: by the contract above (the data read or allocated is kept by the ndarray).
        let data_ptr = unsafe { asdf_ndarray_data(nd_mut, std::ptr::null_mut()) };
        let data = state(nd_mut).and_then(|st| st.data.clone()).unwrap_or_default();
        if data_ptr.is_null() && !data.is_empty() {
            return -2;
        }
        let pointer: String = String::from_utf8_lossy(p)
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| format!("/{}", asdf::escape_pointer_token(s)))
            .collect();
        // SAFETY: by the contract above.
        let Some(f) = (unsafe { file.as_mut() }) else { return -2 };
        let Some(asdf) = f.asdf_mut() else { return -2 };
        let new = asdf::NewArray::from_bytes(Datatype::Scalar(t), &shape, order, data);
        match asdf.put_array(&pointer, new) {
            Ok(()) => 0,
            Err(e) => {
                f.error.set(crate::error::code_of(&e), Some(&e.to_string()), 0);
                -2
            }
        }
    })
}

// ---- datatypes as objects ----

/// A datatype as a node (`int16`, `[ascii, 4]`, `[ucs4, 4]`, or a list of fields, each
/// `{name, datatype, byteorder, shape}`).
fn datatype_node(d: &CDatatype) -> Option<asdf_yaml::Node> {
    use asdf_yaml::Node;
    let n = match d.ty {
        15 => Node::seq(vec![Node::str("ascii"), Node::int(i64::try_from(d.size).ok()?)]),
        16 => Node::seq(vec![Node::str("ucs4"), Node::int(i64::try_from(d.size / 4).ok()?)]),
        17 => {
            let mut fields = Vec::new();
            for i in 0..d.nfields as usize {
                // SAFETY: `fields` holds `nfields` datatypes (the API's rule).
                let f = unsafe { d.fields.add(i).as_ref() }?;
                let mut m = Vec::new();
                // SAFETY: a field's name is NULL or a C string.
                if let Some(name) = unsafe { bytes(f.name) } {
                    m.push((Node::str("name"), Node::str(String::from_utf8_lossy(name).into_owned())));
                }
                m.push((Node::str("datatype"), datatype_node(f)?));
                match u8::try_from(f.byteorder) {
                    Ok(b'>') => m.push((Node::str("byteorder"), Node::str("big"))),
                    Ok(b'<') => m.push((Node::str("byteorder"), Node::str("little"))),
                    _ => {}
                }
                if f.ndim > 0 && !f.shape.is_null() {
                    // SAFETY: `shape` holds `ndim` values.
                    let sh = unsafe { std::slice::from_raw_parts(f.shape, f.ndim as usize) };
                    let dims: Option<Vec<Node>> = sh.iter().map(|x| i64::try_from(*x).ok().map(Node::int)).collect();
                    m.push((Node::str("shape"), Node::seq(dims?)));
                }
                fields.push(Node::map(m));
            }
            Node::seq(fields)
        }
        t => Node::str(*NAMES.get(usize::try_from(t).ok()?).filter(|n| !n.is_empty())?),
    };
    Some(n)
}

/// A datatype from C's allocator, from a node.
fn datatype_from_node(n: &asdf_yaml::Node) -> Option<*mut CDatatype> {
    let d = Datatype::from_node(n).ok()?;
    let c = c_datatype(&d, native());
    // SAFETY: calloc of one datatype.
    let p: *mut CDatatype = unsafe { libc::calloc(1, std::mem::size_of::<CDatatype>()) }.cast();
    if p.is_null() {
        free_fields(&c);
        return None;
    }
    // SAFETY: `p` has room for one datatype.
    unsafe { p.write(c) };
    Some(p)
}

/// Whether the value reads as a datatype.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_datatype(value: *mut Value) -> bool {
    guard(false, || {
        // SAFETY: by the contract above.
        unsafe { value.as_ref() }
            .and_then(Value::node_and_doc)
            .is_some_and(|(n, _)| Datatype::from_node(n).is_ok())
    })
}

/// The value read as a datatype (freed with `asdf_datatype_destroy`).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_datatype(value: *mut Value, out: *mut *mut CDatatype) -> c_int {
    guard(-2, || {
        // SAFETY: by the contract above.
        let Some((n, _)) = (unsafe { value.as_ref() }).and_then(Value::node_and_doc) else {
            return -2;
        };
        match datatype_from_node(n) {
            Some(d) => {
                if out.is_null() {
                    // SAFETY: made just above.
                    unsafe { asdf_datatype_destroy(d) };
                } else {
                    // SAFETY: `out` is writable.
                    unsafe { *out = d };
                }
                0
            }
            None => 1,
        }
    })
}

/// The datatype at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_get_datatype(file: *mut File, path: *const c_char, out: *mut *mut CDatatype) -> c_int {
    guard(-2, || {
        crate::open::with_value(file, path, -1, |v| {
            // SAFETY: `v` is a live value; `out` as above.
            unsafe { asdf_value_as_datatype(v, out) }
        })
    })
}

/// Puts a datatype at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `d` NULL or a datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_datatype(file: *mut File, path: *const c_char, d: *const CDatatype) -> c_int {
    guard(-2, || {
        // SAFETY: by the contract above.
        let Some(node) = (unsafe { d.as_ref() }).and_then(datatype_node) else {
            return 3;
        };
        let v = Value::new_own(file, node);
        // SAFETY: `v` is consumed.
        unsafe { crate::edit::asdf_set_value(file, path, v) }
    })
}

/// A deep copy of a datatype (its fields, names and shapes too).
///
/// # Safety
/// `d` is NULL or a datatype.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_datatype_copy(_file: *mut File, d: *const CDatatype) -> *mut CDatatype {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(src) = (unsafe { d.as_ref() }) else {
            return std::ptr::null_mut();
        };
        // SAFETY: calloc of one datatype.
        let p: *mut CDatatype = unsafe { libc::calloc(1, std::mem::size_of::<CDatatype>()) }.cast();
        if p.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `p` has room for one datatype.
        unsafe { p.write(copy_datatype(src)) };
        p
    })
}

/// A deep copy (C allocator) of a datatype's contents.
fn copy_datatype(src: &CDatatype) -> CDatatype {
    let name = if src.name.is_null() {
        std::ptr::null()
    } else {
        // SAFETY: a C string.
        unsafe { libc::strdup(src.name) }.cast_const()
    };
    let shape = if src.ndim == 0 || src.shape.is_null() {
        std::ptr::null()
    } else {
        let n = src.ndim as usize;
        // SAFETY: malloc of `n` values, copied from the source's `n`.
        unsafe {
            let p: *mut u64 = libc::malloc(n * 8).cast();
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(src.shape, p, n);
            }
            p.cast_const()
        }
    };
    let fields = if src.nfields == 0 || src.fields.is_null() {
        std::ptr::null()
    } else {
        let n = src.nfields as usize;
        // SAFETY: calloc of `n` datatypes; each written once from the source's.
        unsafe {
            let p: *mut CDatatype = libc::calloc(n, std::mem::size_of::<CDatatype>()).cast();
            if !p.is_null() {
                for i in 0..n {
                    p.add(i).write(copy_datatype(&*src.fields.add(i)));
                }
            }
            p.cast_const()
        }
    };
    CDatatype {
        ty: src.ty,
        size: src.size,
        name,
        byteorder: src.byteorder,
        ndim: if shape.is_null() { 0 } else { src.ndim },
        shape,
        nfields: if fields.is_null() { 0 } else { src.nfields },
        fields,
    }
}

/// Frees a datatype made by this library and what it holds.
///
/// # Safety
/// `d` is NULL or a datatype this library made, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_datatype_destroy(d: *mut CDatatype) {
    guard((), || {
        // SAFETY: by the contract above.
        let Some(dt) = (unsafe { d.as_ref() }) else { return };
        free_fields(dt);
        // SAFETY: the name, shape and struct came from the C allocator here.
        unsafe {
            libc::free(dt.name.cast_mut().cast());
            libc::free(dt.shape.cast_mut().cast());
            libc::free(d.cast());
        }
    });
}
