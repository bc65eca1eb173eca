//! `asdf_value_t` (and `asdf_mapping_t`, `asdf_sequence_t`: the same objects seen as
//! containers): a handle on a node of a file's tree, or on a node of its own not yet placed
//! in a tree, with libasdf's typing of scalars.

use std::cell::OnceCell;
use std::ffi::{CString, c_char, c_int};

use asdf_yaml::{Document, Node, NodeKind, ScalarStyle, Step};

use crate::file::{File, at_index, scalar_text};
use crate::util::{bytes, c_string, guard};

/// Where a value's node is.
#[derive(Debug)]
enum Loc {
    /// In the file's tree, at these steps from the root (aliases followed).
    Tree(Vec<Step>),
    /// Its own node, not in a tree (made by `asdf_value_of_*` or `asdf_*_create`).
    Own(Box<Node>),
}

/// A value handle.
#[derive(Debug)]
pub struct Value {
    pub(crate) file: *mut File,
    loc: Loc,
    /// `asdf_value_path`'s string (made on first use).
    path: OnceCell<CString>,
    /// NUL-terminated copies handed out (scalar text, tag), kept as long as the value.
    text: OnceCell<Vec<u8>>,
    tag: OnceCell<Option<CString>>,
}

/// `asdf_value_type_t` (all of C's kinds, some not made here yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
#[allow(dead_code)]
pub(crate) enum Type {
    Unknown = 0,
    Sequence,
    Mapping,
    Scalar,
    String,
    Bool,
    Null,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float,
    Double,
    Extension,
}

/// `asdf_value_err_t` (all of C's codes, some not made here yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
#[allow(dead_code)]
pub(crate) enum Err {
    Unknown = -2,
    NotFound = -1,
    Ok = 0,
    TypeMismatch,
    ParseFailure,
    EmitFailure,
    Overflow,
    Oom,
    ReadOnly,
}

/// A scalar's type as libasdf infers it, with its number.
#[derive(Debug, Clone, Copy)]
struct Inferred {
    ty: Type,
    /// `Ok`, or why a typed read fails (`Overflow` of an integer beyond 64 bits or a float
    /// beyond the double's range).
    err: Err,
    num: Num,
}

#[derive(Debug, Clone, Copy)]
enum Num {
    None,
    Bool(bool),
    I(i64),
    U(u64),
    D(f64),
}

impl Value {
    pub(crate) fn in_tree(file: *mut File, steps: Vec<Step>) -> *mut Value {
        Box::into_raw(Box::new(Value {
            file,
            loc: Loc::Tree(steps),
            path: OnceCell::new(),
            text: OnceCell::new(),
            tag: OnceCell::new(),
        }))
    }

    fn own(file: *mut File, node: Node) -> *mut Value {
        Box::into_raw(Box::new(Value {
            file,
            loc: Loc::Own(Box::new(node)),
            path: OnceCell::new(),
            text: OnceCell::new(),
            tag: OnceCell::new(),
        }))
    }

    fn file(&self) -> Option<&File> {
        // SAFETY: a value's file is NULL or open while the value is used (the API's rule:
        // values are not used after their file is closed).
        unsafe { self.file.as_ref() }
    }

    /// The node, and the document its aliases resolve in (none for a node of its own).
    fn node(&self) -> Option<(&Node, Option<&Document>)> {
        match &self.loc {
            Loc::Own(n) => Some((n, None)),
            Loc::Tree(steps) => {
                let f = self.file()?;
                Some((f.node_at(steps)?, f.doc()))
            }
        }
    }

    fn steps(&self) -> Option<&[Step]> {
        match &self.loc {
            Loc::Tree(s) => Some(s),
            Loc::Own(_) => None,
        }
    }

    /// A handle on the child at `step` (a tree value's child is in the tree; an own value's
    /// child is a copy of the node).
    fn child(&self, step: Step) -> *mut Value {
        match &self.loc {
            Loc::Tree(s) => {
                let mut s = s.clone();
                s.push(step);
                Value::in_tree(self.file, s)
            }
            Loc::Own(n) => {
                let child = match (step, &n.kind) {
                    (Step::Item(i), NodeKind::Sequence(q)) => q.items.get(i),
                    (Step::Entry(i), NodeKind::Mapping(m)) => m.entries.get(i).map(|e| &e.1),
                    (Step::Key(i), NodeKind::Mapping(m)) => m.entries.get(i).map(|e| &e.0),
                    _ => None,
                };
                child.map_or(std::ptr::null_mut(), |c| Value::own(self.file, c.clone()))
            }
        }
    }

    /// The node, to change (`None` for a tree value reached through an alias).
    pub(crate) fn node_mut(&mut self) -> Option<&mut Node> {
        match &mut self.loc {
            Loc::Own(n) => Some(n),
            Loc::Tree(steps) => {
                // SAFETY: as in `file`; the caller holds this value mutably and no other
                // reference into the file is alive during the change.
                let f = unsafe { self.file.as_mut() }?;
                f.node_at_mut(steps)
            }
        }
    }

    /// The value's node, taken out of the value (a copy for a node of a tree).
    pub(crate) fn into_node(self) -> Option<Node> {
        match self.loc {
            Loc::Own(n) => Some(*n),
            Loc::Tree(ref steps) => self.file().and_then(|f| f.node_at(steps)).cloned(),
        }
    }

    /// The node at `path` below this value's (aliases followed).
    pub(crate) fn node_below(&self, path: &[Step]) -> Option<&Node> {
        let (mut n, doc) = self.node()?;
        for s in path {
            let next = match (s, &n.kind) {
                (Step::Item(i), NodeKind::Sequence(q)) => q.items.get(*i)?,
                (Step::Entry(i), NodeKind::Mapping(m)) => &m.entries.get(*i)?.1,
                _ => return None,
            };
            n = doc.map_or(next, |d| d.resolve(next));
        }
        Some(n)
    }

    /// Whether the node at `path` below this value's is a mapping or a sequence.
    pub(crate) fn is_container_below(&self, path: &[Step]) -> bool {
        self.node_below(path)
            .is_some_and(|n| matches!(n.kind, NodeKind::Mapping(_) | NodeKind::Sequence(_)))
    }

    /// A handle on the value at `path` below this one (in the tree for a tree value; a copy of
    /// the node for one of its own), or NULL.
    pub(crate) fn descendant(&self, path: &[Step]) -> *mut Value {
        match &self.loc {
            Loc::Tree(s) => {
                if self.node_below(path).is_none() {
                    return std::ptr::null_mut();
                }
                let mut s = s.clone();
                s.extend_from_slice(path);
                Value::in_tree(self.file, s)
            }
            Loc::Own(_) => self
                .node_below(path)
                .map_or(std::ptr::null_mut(), |n| Value::own(self.file, n.clone())),
        }
    }

    /// The steps from the root, for a value of the tree.
    pub(crate) fn tree_steps(&self) -> Option<&[Step]> {
        self.steps()
    }

    /// The node, and the document its aliases resolve in (none for a node of its own).
    pub(crate) fn node_and_doc(&self) -> Option<(&Node, Option<&Document>)> {
        self.node()
    }

    /// A handle on a node of its own.
    pub(crate) fn new_own(file: *mut File, node: Node) -> *mut Value {
        Value::own(file, node)
    }

    fn infer(&self) -> Option<Inferred> {
        let (n, _) = self.node()?;
        Some(infer(n))
    }
}

// ---- libasdf's typing of scalars ----

/// C's `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C's `strtoll`/`strtoull` with base 0 over the whole of `s`: `None` when the text is not
/// one number (leading spaces allowed, a sign, `0x` hexadecimal, a leading `0` octal); the
/// sign and the magnitude, `None` magnitude when it overflows 64 bits.
fn c_integer(s: &[u8]) -> Option<(bool, Option<u64>)> {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let (radix, start) = if s.len() > i + 2 && s[i] == b'0' && (s[i + 1] | 0x20) == b'x' && s[i + 2].is_ascii_hexdigit()
    {
        (16, i + 2)
    } else if i < s.len() && s[i] == b'0' {
        (8, i)
    } else {
        (10, i)
    };
    let digits = &s[start..];
    if digits.is_empty() {
        // No digits: C leaves the end at the start of the text, which is not its end unless
        // the text is empty.
        return if s.is_empty() { Some((false, Some(0))) } else { None };
    }
    let mut mag: Option<u64> = Some(0);
    for &d in digits {
        let v = u64::from(char::from(d).to_digit(radix)?);
        mag = mag.and_then(|m| m.checked_mul(u64::from(radix))?.checked_add(v));
    }
    Some((neg, mag))
}

/// libasdf's unsigned reading: the first character after spaces is a digit or `+`, at most
/// 21 characters are read, and the number fits 64 bits.
fn as_unsigned(s: &[u8]) -> Result<u64, Err> {
    let t = s.iter().position(|b| !is_space(*b)).map_or(&s[s.len()..], |i| &s[i..]);
    if !t.first().is_some_and(|b| b.is_ascii_digit() || *b == b'+') {
        return Err(Err::ParseFailure);
    }
    let t = &t[..t.len().min(21)];
    match c_integer(t) {
        None => Err(Err::ParseFailure),
        Some((_, None)) => Err(Err::Overflow),
        Some((false, Some(m))) => Ok(m),
        // ("+" then a sign cannot parse; a negative cannot get here.)
        Some((true, Some(_))) => Err(Err::ParseFailure),
    }
}

fn as_signed(s: &[u8]) -> Result<i64, Err> {
    match c_integer(s) {
        None => Err(Err::ParseFailure),
        Some((_, None)) => Err(Err::Overflow),
        Some((neg, Some(m))) => {
            if neg {
                if m > i64::MAX as u64 + 1 {
                    Err(Err::Overflow)
                } else {
                    Ok(0i64.wrapping_sub_unsigned(m))
                }
            } else {
                i64::try_from(m).map_err(|_| Err::Overflow)
            }
        }
    }
}

/// C's `strtod` over the whole text (`Overflow` beyond the double's range, and for a
/// non-zero number that underflows to zero).
fn as_double(s: &[u8]) -> Result<f64, (Err, f64)> {
    if s.contains(&0) {
        return Err((Err::ParseFailure, 0.0));
    }
    let c = c_string(s);
    let mut end: *mut c_char = std::ptr::null_mut();
    // SAFETY: `c` is a NUL-terminated string; `end` receives a pointer into it.
    let v = unsafe { libc::strtod(c.as_ptr(), &raw mut end) };
    // SAFETY: `end` points into `c` or at its start.
    let consumed = usize::try_from(unsafe { end.offset_from(c.as_ptr()) }).unwrap_or(0);
    if consumed != s.len() || (consumed == 0 && !s.is_empty()) {
        return Err((Err::ParseFailure, 0.0));
    }
    let body: Vec<u8> = s
        .iter()
        .copied()
        .skip_while(|b| is_space(*b) || *b == b'+' || *b == b'-')
        .collect();
    let named = body.first().is_some_and(|b| matches!(b | 0x20, b'i' | b'n'));
    if v.is_infinite() && !named {
        return Err((Err::Overflow, v));
    }
    let mantissa_nonzero = body
        .iter()
        .take_while(|b| !matches!(*b | 0x20, b'e' | b'p'))
        .any(|b| matches!(b, b'1'..=b'9') || (b.is_ascii_hexdigit() && b.is_ascii_alphabetic() && body.len() > 2));
    if v == 0.0 && mantissa_nonzero && !named {
        return Err((Err::Overflow, v));
    }
    Ok(v)
}

fn smallest_signed(v: i64) -> Type {
    if i8::try_from(v).is_ok() {
        Type::Int8
    } else if i16::try_from(v).is_ok() {
        Type::Int16
    } else if i32::try_from(v).is_ok() {
        Type::Int32
    } else {
        Type::Int64
    }
}

fn smallest_unsigned(v: u64) -> Type {
    if u8::try_from(v).is_ok() {
        Type::Uint8
    } else if u16::try_from(v).is_ok() {
        Type::Uint16
    } else if u32::try_from(v).is_ok() {
        Type::Uint32
    } else {
        Type::Uint64
    }
}

fn infer_null(s: &[u8]) -> Option<Inferred> {
    matches!(s, b"" | b"null" | b"Null" | b"NULL" | b"~").then_some(Inferred {
        ty: Type::Null,
        err: Err::Ok,
        num: Num::None,
    })
}

fn infer_bool(s: &[u8]) -> Option<Inferred> {
    let b = match s {
        b"0" | b"false" | b"False" | b"FALSE" => false,
        b"1" | b"true" | b"True" | b"TRUE" => true,
        _ => return None,
    };
    Some(Inferred {
        ty: Type::Bool,
        err: Err::Ok,
        num: Num::Bool(b),
    })
}

fn infer_int(s: &[u8]) -> Inferred {
    match as_unsigned(s) {
        Ok(u) => Inferred {
            ty: smallest_unsigned(u),
            err: Err::Ok,
            num: Num::U(u),
        },
        Err(_) => match as_signed(s) {
            Ok(i) => Inferred {
                ty: smallest_signed(i),
                err: Err::Ok,
                num: Num::I(i),
            },
            Err(e) => Inferred {
                ty: Type::Unknown,
                err: e,
                num: Num::None,
            },
        },
    }
}

fn infer_float(s: &[u8]) -> Inferred {
    match as_double(s) {
        Ok(d) => Inferred {
            ty: Type::Double,
            err: Err::Ok,
            num: Num::D(d),
        },
        Err((Err::Overflow, d)) => Inferred {
            ty: Type::Double,
            err: Err::Overflow,
            num: Num::D(d),
        },
        Err((e, _)) => Inferred {
            ty: Type::Unknown,
            err: e,
            num: Num::None,
        },
    }
}

const STRING: Inferred = Inferred {
    ty: Type::String,
    err: Err::Ok,
    num: Num::None,
};

/// libasdf's type of a node: containers by kind; a quoted or block scalar is a string; a
/// YAML core tag is followed (and checked); else null, an integer, a bool, a float, or a
/// string, in that order.
fn infer(n: &Node) -> Inferred {
    let s = match &n.kind {
        NodeKind::Mapping(_) => {
            return Inferred {
                ty: Type::Mapping,
                err: Err::Ok,
                num: Num::None,
            };
        }
        NodeKind::Sequence(_) => {
            return Inferred {
                ty: Type::Sequence,
                err: Err::Ok,
                num: Num::None,
            };
        }
        NodeKind::Alias(_) => {
            return Inferred {
                ty: Type::Unknown,
                err: Err::Unknown,
                num: Num::None,
            };
        }
        NodeKind::Scalar(s) => s,
    };
    if matches!(
        s.style,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted | ScalarStyle::Literal | ScalarStyle::Folded
    ) {
        return STRING;
    }
    let text = s.text.as_bytes();
    let failed = |err| Inferred {
        ty: Type::Unknown,
        err,
        num: Num::None,
    };
    match n.tag.as_deref() {
        Some("tag:yaml.org,2002:null") => return infer_null(text).unwrap_or(failed(Err::ParseFailure)),
        Some("tag:yaml.org,2002:bool") => return infer_bool(text).unwrap_or(failed(Err::ParseFailure)),
        Some("tag:yaml.org,2002:int") => return infer_int(text),
        Some("tag:yaml.org,2002:float") => return infer_float(text),
        Some("tag:yaml.org,2002:str") => return STRING,
        _ => {}
    }
    if let Some(i) = infer_null(text) {
        return i;
    }
    let i = infer_int(text);
    if matches!(i.err, Err::Ok | Err::Overflow) && i.ty != Type::Unknown || i.err == Err::Overflow {
        return i;
    }
    if let Some(b) = infer_bool(text) {
        return b;
    }
    let f = infer_float(text);
    if matches!(f.err, Err::Ok | Err::Overflow) {
        return f;
    }
    STRING
}

// ---- the C functions ----

/// The value behind a handle.
///
/// # Safety
/// `v` is NULL or a live value of this library.
unsafe fn get<'a>(v: *mut Value) -> Option<&'a Value> {
    // SAFETY: by the contract above.
    unsafe { v.as_ref() }
}

/// Frees a value.
///
/// # Safety
/// `value` is NULL or a value of this library not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_destroy(value: *mut Value) {
    guard((), || {
        if !value.is_null() {
            // SAFETY: made by `Box::into_raw` here, not freed yet.
            drop(unsafe { Box::from_raw(value) });
        }
    });
}

/// `asdf_mapping_destroy`: the same as [`asdf_value_destroy`].
///
/// # Safety
/// As [`asdf_value_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_destroy(mapping: *mut Value) {
    // SAFETY: by the contract above.
    unsafe { asdf_value_destroy(mapping) }
}

/// `asdf_sequence_destroy`: the same as [`asdf_value_destroy`].
///
/// # Safety
/// As [`asdf_value_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_destroy(sequence: *mut Value) {
    // SAFETY: by the contract above.
    unsafe { asdf_value_destroy(sequence) }
}

/// A new handle on the same node.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_copy(value: *mut Value) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(v) = (unsafe { get(value) }) else {
            return std::ptr::null_mut();
        };
        match &v.loc {
            Loc::Tree(s) => Value::in_tree(v.file, s.clone()),
            Loc::Own(n) => Value::own(v.file, (**n).clone()),
        }
    })
}

/// The value's type (`ASDF_VALUE_UNKNOWN` for NULL).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_get_type(value: *mut Value) -> c_int {
    guard(Type::Unknown as c_int, || {
        // SAFETY: by the contract above.
        unsafe { get(value) }
            .and_then(Value::infer)
            .map_or(Type::Unknown as c_int, |i| i.ty as c_int)
    })
}

/// The name of a type.
#[unsafe(no_mangle)]
pub extern "C" fn asdf_value_type_string(ty: c_int) -> *const c_char {
    let s: &'static std::ffi::CStr = match ty {
        1 => c"sequence",
        2 => c"mapping",
        3 => c"scalar",
        4 => c"string",
        5 => c"bool",
        6 => c"null",
        7 => c"int8",
        8 => c"int16",
        9 => c"int32",
        10 => c"int64",
        11 => c"uint8",
        12 => c"uint16",
        13 => c"uint32",
        14 => c"uint64",
        15 => c"float",
        16 => c"double",
        17 => c"<extension>",
        _ => c"<unknown>",
    };
    s.as_ptr()
}

/// The path of the value from the root ("" for one not in a tree).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_path(value: *mut Value) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: by the contract above.
        let Some(v) = (unsafe { get(value) }) else {
            return std::ptr::null();
        };
        v.path
            .get_or_init(|| {
                let mut p = String::new();
                if let (Some(steps), Some(f)) = (v.steps(), v.file()) {
                    for k in 0..steps.len() {
                        p.push('/');
                        match steps[k] {
                            Step::Item(i) => p.push_str(&i.to_string()),
                            Step::Entry(i) | Step::Key(i) => {
                                if let Some(NodeKind::Mapping(m)) = f.node_at(&steps[..k]).map(|n| &n.kind)
                                    && let Some(t) = m.entries.get(i).and_then(|e| scalar_text(&e.0))
                                {
                                    p.push_str(&String::from_utf8_lossy(t));
                                }
                            }
                        }
                    }
                }
                // The root's path is "/" (as libasdf gives it).
                if p.is_empty() && v.steps().is_some() {
                    p.push('/');
                }
                c_string(p.as_bytes())
            })
            .as_ptr()
    })
}

/// The container holding the value (NULL at the root and for a value not in a tree).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_parent(value: *mut Value) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        match unsafe { get(value) }.and_then(|v| Some((v, v.steps()?))) {
            Some((v, steps)) if !steps.is_empty() => Value::in_tree(v.file, steps[..steps.len() - 1].to_vec()),
            _ => std::ptr::null_mut(),
        }
    })
}

/// The node's tag in full, or NULL.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_tag(value: *mut Value) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: by the contract above.
        let Some(v) = (unsafe { get(value) }) else {
            return std::ptr::null();
        };
        v.tag
            .get_or_init(|| {
                v.node()
                    .and_then(|(n, _)| n.tag.as_deref().map(|t| c_string(t.as_bytes())))
            })
            .as_ref()
            .map_or(std::ptr::null(), |t| t.as_ptr())
    })
}

/// The file the value belongs to.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_file(value: *mut Value) -> *mut File {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        unsafe { get(value) }.map_or(std::ptr::null_mut(), |v| v.file)
    })
}

fn kind_is(value: *mut Value, ty: Type) -> bool {
    guard(false, || {
        // SAFETY: the entry points pass NULL or a live value.
        unsafe { get(value) }.and_then(Value::infer).is_some_and(|i| i.ty == ty)
    })
}

/// Whether the value is a mapping.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_mapping(value: *mut Value) -> bool {
    kind_is(value, Type::Mapping)
}

/// Whether the value is a sequence.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_sequence(value: *mut Value) -> bool {
    kind_is(value, Type::Sequence)
}

/// Whether the value is a mapping or a sequence.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_container(value: *mut Value) -> bool {
    kind_is(value, Type::Mapping) || kind_is(value, Type::Sequence)
}

fn size_of(value: *mut Value, want: Option<Type>) -> c_int {
    guard(-1, || {
        // SAFETY: the entry points pass NULL or a live value.
        let Some((n, _)) = unsafe { get(value) }.and_then(Value::node) else {
            return -1;
        };
        let (ty, len) = match &n.kind {
            NodeKind::Mapping(m) => (Type::Mapping, m.entries.len()),
            NodeKind::Sequence(q) => (Type::Sequence, q.items.len()),
            _ => return -1,
        };
        if want.is_some_and(|w| w != ty) {
            return -1;
        }
        c_int::try_from(len).unwrap_or(c_int::MAX)
    })
}

/// The number of entries, or -1.
///
/// # Safety
/// `mapping` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_size(mapping: *mut Value) -> c_int {
    size_of(mapping, Some(Type::Mapping))
}

/// The number of items, or -1.
///
/// # Safety
/// `sequence` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_size(sequence: *mut Value) -> c_int {
    size_of(sequence, Some(Type::Sequence))
}

/// The number of entries or items, or -1.
///
/// # Safety
/// `container` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_container_size(container: *mut Value) -> c_int {
    size_of(container, None)
}

fn as_container(value: *mut Value, out: *mut *mut Value, ty: Type) -> c_int {
    guard(Err::Unknown as c_int, || {
        // SAFETY: the entry points pass NULL or a live value.
        let Some(i) = unsafe { get(value) }.and_then(Value::infer) else {
            return Err::Unknown as c_int;
        };
        if i.ty != ty {
            return Err::TypeMismatch as c_int;
        }
        if !out.is_null() {
            // SAFETY: `out` is NULL or writable (the entry points' contract).
            unsafe { *out = value };
        }
        Err::Ok as c_int
    })
}

/// The value seen as a mapping (the same object).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_mapping(value: *mut Value, out: *mut *mut Value) -> c_int {
    as_container(value, out, Type::Mapping)
}

/// The value seen as a sequence (the same object).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_sequence(value: *mut Value, out: *mut *mut Value) -> c_int {
    as_container(value, out, Type::Sequence)
}

/// The mapping seen as a value (the same object).
#[unsafe(no_mangle)]
pub extern "C" fn asdf_value_of_mapping(mapping: *mut Value) -> *mut Value {
    mapping
}

/// The sequence seen as a value (the same object).
#[unsafe(no_mangle)]
pub extern "C" fn asdf_value_of_sequence(sequence: *mut Value) -> *mut Value {
    sequence
}

/// A new empty mapping of `file`, not in its tree yet.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_create(file: *mut File) -> *mut Value {
    guard(std::ptr::null_mut(), || Value::own(file, Node::map(Vec::new())))
}

/// A new empty sequence of `file`, not in its tree yet.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_create(file: *mut File) -> *mut Value {
    guard(std::ptr::null_mut(), || Value::own(file, Node::seq(Vec::new())))
}

/// The value under `key`, or NULL.
///
/// # Safety
/// `mapping` is NULL or a live value; `key` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_get(mapping: *mut Value, key: *const c_char) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let (Some(v), Some(key)) = (unsafe { get(mapping) }, unsafe { bytes(key) }) else {
            return std::ptr::null_mut();
        };
        let Some((n, doc)) = v.node() else {
            return std::ptr::null_mut();
        };
        let NodeKind::Mapping(m) = &n.kind else {
            return std::ptr::null_mut();
        };
        let resolve = |k: &Node| -> Option<Vec<u8>> {
            let k = doc.map_or(k, |d| d.resolve(k));
            scalar_text(k).map(<[u8]>::to_vec)
        };
        match m.entries.iter().position(|(k, _)| resolve(k).as_deref() == Some(key)) {
            Some(i) => v.child(Step::Entry(i)),
            None => std::ptr::null_mut(),
        }
    })
}

/// The item at `index` (negative from the end), or NULL.
///
/// # Safety
/// `sequence` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_get(sequence: *mut Value, index: c_int) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        let Some(v) = (unsafe { get(sequence) }) else {
            return std::ptr::null_mut();
        };
        let Some((n, _)) = v.node() else {
            return std::ptr::null_mut();
        };
        let NodeKind::Sequence(q) = &n.kind else {
            return std::ptr::null_mut();
        };
        match at_index(i64::from(index), q.items.len()) {
            Some(i) => v.child(Step::Item(i)),
            None => std::ptr::null_mut(),
        }
    })
}

// ---- iterators ----

/// `asdf_mapping_iter_t`, `asdf_sequence_iter_t` and `asdf_container_iter_t` share this
/// object: C sees the public part of its kind at the start.
/// The public part of `asdf_mapping_iter_t`.
#[repr(C)]
#[derive(Debug)]
pub struct MappingPublic {
    key: *const c_char,
    value: *mut Value,
}

/// The public part of `asdf_sequence_iter_t`.
#[repr(C)]
#[derive(Debug)]
pub struct SequencePublic {
    value: *mut Value,
    index: c_int,
}

/// The public part of `asdf_container_iter_t`.
#[repr(C)]
#[derive(Debug)]
pub struct ContainerPublic {
    key: *const c_char,
    index: c_int,
    value: *mut Value,
}

/// An iterator: the public part first (C reads it), then the state.
#[repr(C)]
#[derive(Debug)]
pub struct Iter<P> {
    public: P,
    container: *mut Value,
    /// The positions left, in order.
    order: std::vec::IntoIter<usize>,
    key: CString,
    current: *mut Value,
}

impl<P> Iter<P> {
    fn new(container: *mut Value, public: P, reverse: bool, ty: Option<Type>) -> *mut Iter<P> {
        guard(std::ptr::null_mut(), || {
            // SAFETY: the entry points pass NULL or a live value.
            let Some((n, _)) = unsafe { get(container) }.and_then(Value::node) else {
                return std::ptr::null_mut();
            };
            let (t, len) = match &n.kind {
                NodeKind::Mapping(m) => (Type::Mapping, m.entries.len()),
                NodeKind::Sequence(q) => (Type::Sequence, q.items.len()),
                _ => return std::ptr::null_mut(),
            };
            if ty.is_some_and(|w| w != t) {
                return std::ptr::null_mut();
            }
            let mut order: Vec<usize> = (0..len).collect();
            if reverse {
                order.reverse();
            }
            Box::into_raw(Box::new(Iter {
                public,
                container,
                order: order.into_iter(),
                key: CString::default(),
                current: std::ptr::null_mut(),
            }))
        })
    }

    /// Steps on: the next position's value (and key, for a mapping), or `None` at the end.
    fn step(&mut self) -> Option<(usize, Option<*const c_char>, *mut Value)> {
        // SAFETY: the value made for the last step is this iterator's, freed once here.
        unsafe { asdf_value_destroy(self.current) };
        self.current = std::ptr::null_mut();
        let i = self.order.next()?;
        // SAFETY: the container outlives its iterators (the API's rule).
        let v = unsafe { get(self.container) }?;
        let (n, doc) = v.node()?;
        match &n.kind {
            NodeKind::Mapping(m) => {
                let k = &m.entries.get(i)?.0;
                let k = doc.map_or(k, |d| d.resolve(k));
                self.key = c_string(scalar_text(k).unwrap_or_default());
                self.current = v.child(Step::Entry(i));
                Some((i, Some(self.key.as_ptr()), self.current))
            }
            NodeKind::Sequence(_) => {
                self.current = v.child(Step::Item(i));
                Some((i, None, self.current))
            }
            _ => None,
        }
    }
}

impl<P> Drop for Iter<P> {
    fn drop(&mut self) {
        // SAFETY: the iterator's current value is its own, freed once.
        unsafe { asdf_value_destroy(self.current) };
    }
}

/// Advances `*iter`; at the end frees it and sets `*iter` to NULL.
fn next<P>(iter: *mut *mut Iter<P>, set: impl FnOnce(&mut P, usize, Option<*const c_char>, *mut Value)) -> bool {
    guard(false, || {
        if iter.is_null() {
            return false;
        }
        // SAFETY: `iter` points at NULL or an iterator of this kind (the entry points'
        // contract).
        let Some(it) = (unsafe { (*iter).as_mut() }) else {
            return false;
        };
        match it.step() {
            Some((i, key, value)) => {
                set(&mut it.public, i, key, value);
                true
            }
            None => {
                // SAFETY: made by `Box::into_raw` in `Iter::new`, freed once.
                drop(unsafe { Box::from_raw(*iter) });
                // SAFETY: `iter` is writable.
                unsafe { *iter = std::ptr::null_mut() };
                false
            }
        }
    })
}

fn destroy<P>(iter: *mut Iter<P>) {
    guard((), || {
        if !iter.is_null() {
            // SAFETY: made by `Box::into_raw` in `Iter::new`, freed once.
            drop(unsafe { Box::from_raw(iter) });
        }
    });
}

const NO_MAPPING: MappingPublic = MappingPublic {
    key: std::ptr::null(),
    value: std::ptr::null_mut(),
};
const NO_SEQUENCE: SequencePublic = SequencePublic {
    value: std::ptr::null_mut(),
    index: -1,
};
const NO_CONTAINER: ContainerPublic = ContainerPublic {
    key: std::ptr::null(),
    index: -1,
    value: std::ptr::null_mut(),
};

/// An iterator over a mapping's entries, in order.
///
/// # Safety
/// `mapping` is NULL or a live value, which outlives the iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_iter_init(mapping: *mut Value) -> *mut c_char {
    Iter::new(mapping, NO_MAPPING, false, Some(Type::Mapping)).cast()
}

/// An iterator over a mapping's entries, last first.
///
/// # Safety
/// As [`asdf_mapping_iter_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_reverse_iter_init(mapping: *mut Value) -> *mut c_char {
    Iter::new(mapping, NO_MAPPING, true, Some(Type::Mapping)).cast()
}

/// The next entry.
///
/// # Safety
/// `iter` is NULL or points at NULL or a mapping iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_iter_next(iter: *mut *mut Iter<MappingPublic>) -> bool {
    next(iter, |p, _, key, value| {
        p.key = key.unwrap_or(std::ptr::null());
        p.value = value;
    })
}

/// Frees a mapping iterator.
///
/// # Safety
/// `iter` is NULL or a mapping iterator not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_mapping_iter_destroy(iter: *mut Iter<MappingPublic>) {
    destroy(iter);
}

/// An iterator over a sequence's items, in order.
///
/// # Safety
/// `sequence` is NULL or a live value, which outlives the iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_iter_init(sequence: *mut Value) -> *mut c_char {
    Iter::new(sequence, NO_SEQUENCE, false, Some(Type::Sequence)).cast()
}

/// An iterator over a sequence's items, last first.
///
/// # Safety
/// As [`asdf_sequence_iter_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_reverse_iter_init(sequence: *mut Value) -> *mut c_char {
    Iter::new(sequence, NO_SEQUENCE, true, Some(Type::Sequence)).cast()
}

/// The next item.
///
/// # Safety
/// `iter` is NULL or points at NULL or a sequence iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_iter_next(iter: *mut *mut Iter<SequencePublic>) -> bool {
    next(iter, |p, i, _, value| {
        p.index = c_int::try_from(i).unwrap_or(c_int::MAX);
        p.value = value;
    })
}

/// Frees a sequence iterator.
///
/// # Safety
/// `iter` is NULL or a sequence iterator not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_sequence_iter_destroy(iter: *mut Iter<SequencePublic>) {
    destroy(iter);
}

/// An iterator over a mapping's entries or a sequence's items.
///
/// # Safety
/// `container` is NULL or a live value, which outlives the iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_container_iter_init(container: *mut Value) -> *mut c_char {
    Iter::new(container, NO_CONTAINER, false, None).cast()
}

/// As [`asdf_container_iter_init`], last first.
///
/// # Safety
/// As [`asdf_container_iter_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_container_reverse_iter_init(container: *mut Value) -> *mut c_char {
    Iter::new(container, NO_CONTAINER, true, None).cast()
}

/// The next entry or item.
///
/// # Safety
/// `iter` is NULL or points at NULL or a container iterator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_container_iter_next(iter: *mut *mut Iter<ContainerPublic>) -> bool {
    next(iter, |p, i, key, value| {
        p.key = key.unwrap_or(std::ptr::null());
        p.index = c_int::try_from(i).unwrap_or(c_int::MAX);
        p.value = value;
    })
}

/// Frees a container iterator.
///
/// # Safety
/// `iter` is NULL or a container iterator not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_container_iter_destroy(iter: *mut Iter<ContainerPublic>) {
    destroy(iter);
}

// ---- scalars ----

fn inferred(value: *mut Value) -> Result<Inferred, Err> {
    // SAFETY: the entry points pass NULL or a live value.
    let Some(v) = (unsafe { get(value) }) else {
        return Err(Err::Unknown);
    };
    let i = v.infer().ok_or(Err::Unknown)?;
    match i.ty {
        Type::Mapping | Type::Sequence => Err(Err::TypeMismatch),
        _ if i.err != Err::Ok => Err(i.err),
        _ => Ok(i),
    }
}

/// The scalar's text and length: the stable NUL-terminated copy (the node's own bytes may
/// move when the tree changes).
fn text_of(value: *mut Value) -> Option<(*const c_char, usize)> {
    // SAFETY: the entry points pass NULL or a live value.
    let v = unsafe { get(value) }?;
    let (n, _) = v.node()?;
    let len = scalar_text(n)?.len();
    Some((text0_of(value)?, len))
}

/// The scalar's text NUL-terminated: kept by the file for a node of its tree (as long as the
/// file is open, as libasdf's), by the value for one of its own.
fn text0_of(value: *mut Value) -> Option<*const c_char> {
    // SAFETY: the entry points pass NULL or a live value.
    let v = unsafe { get(value) }?;
    let (n, _) = v.node()?;
    let t = scalar_text(n)?;
    match (&v.loc, v.file()) {
        (Loc::Tree(_), Some(f)) => Some(f.text0(t)),
        _ => Some(v.text.get_or_init(|| crate::util::with_nul(t)).as_ptr().cast()),
    }
}

fn write<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: `out` is NULL or writable for a `T` (the entry points' contract).
        unsafe { out.write(v) };
    }
}

/// Whether the value is of `ty` (as libasdf's `asdf_value_is_type`).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_type(value: *mut Value, ty: c_int) -> bool {
    // SAFETY: by the contract above (each checker takes the same).
    unsafe {
        match ty {
            1 => asdf_value_is_sequence(value),
            2 => asdf_value_is_mapping(value),
            3 => asdf_value_is_scalar(value),
            4 => asdf_value_is_string(value),
            5 => asdf_value_is_bool(value),
            6 => asdf_value_is_null(value),
            7 => asdf_value_is_int8(value),
            8 => asdf_value_is_int16(value),
            9 => asdf_value_is_int32(value),
            10 => asdf_value_is_int64(value),
            11 => asdf_value_is_uint8(value),
            12 => asdf_value_is_uint16(value),
            13 => asdf_value_is_uint32(value),
            14 => asdf_value_is_uint64(value),
            15 => asdf_value_is_float(value),
            16 => asdf_value_is_double(value),
            _ => false,
        }
    }
}

/// Whether the value is a string.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_string(value: *mut Value) -> bool {
    guard(false, || inferred(value).is_ok_and(|i| i.ty == Type::String))
}

/// The string's text (not NUL-terminated) and length.
///
/// # Safety
/// `value` is NULL or a live value; `out` and `len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_string(value: *mut Value, out: *mut *const c_char, len: *mut usize) -> c_int {
    guard(Err::Unknown as c_int, || match inferred(value) {
        Err(e) => e as c_int,
        Ok(i) if i.ty != Type::String => Err::TypeMismatch as c_int,
        Ok(_) => match text_of(value) {
            Some((p, n)) => {
                write(out, p);
                write(len, n);
                Err::Ok as c_int
            }
            None => Err::Unknown as c_int,
        },
    })
}

/// The string's text, NUL-terminated.
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_string0(value: *mut Value, out: *mut *const c_char) -> c_int {
    guard(Err::Unknown as c_int, || match inferred(value) {
        Err(e) => e as c_int,
        Ok(i) if i.ty != Type::String => Err::TypeMismatch as c_int,
        Ok(_) => match text0_of(value) {
            Some(p) => {
                write(out, p);
                Err::Ok as c_int
            }
            None => Err::Unknown as c_int,
        },
    })
}

/// Whether the value is a scalar (of a type that reads).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_scalar(value: *mut Value) -> bool {
    guard(false, || inferred(value).is_ok())
}

fn scalar_kind(value: *mut Value) -> Result<(), Err> {
    // SAFETY: the entry points pass NULL or a live value.
    let v = unsafe { get(value) }.ok_or(Err::Unknown)?;
    match v.node().map(|(n, _)| &n.kind) {
        Some(NodeKind::Scalar(_)) => Ok(()),
        Some(_) => Err(Err::TypeMismatch),
        None => Err(Err::Unknown),
    }
}

/// Any scalar's text as written.
///
/// # Safety
/// `value` is NULL or a live value; `out` and `len` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_scalar(value: *mut Value, out: *mut *const c_char, len: *mut usize) -> c_int {
    guard(Err::Unknown as c_int, || match scalar_kind(value) {
        Err(e) => e as c_int,
        Ok(()) => match text_of(value) {
            Some((p, n)) => {
                write(out, p);
                write(len, n);
                Err::Ok as c_int
            }
            None => Err::Unknown as c_int,
        },
    })
}

/// Any scalar's text, NUL-terminated.
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_scalar0(value: *mut Value, out: *mut *const c_char) -> c_int {
    guard(Err::Unknown as c_int, || match scalar_kind(value) {
        Err(e) => e as c_int,
        Ok(()) => match text0_of(value) {
            Some(p) => {
                write(out, p);
                Err::Ok as c_int
            }
            None => Err::Unknown as c_int,
        },
    })
}

/// Whether the value reads as a bool (a bool, or an integer 0 or 1).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_bool(value: *mut Value) -> bool {
    guard(false, || match inferred(value) {
        Ok(Inferred { num: Num::Bool(_), .. }) => true,
        Ok(Inferred { num: Num::U(u), .. }) => u <= 1,
        Ok(Inferred { num: Num::I(i), .. }) => i == 0 || i == 1,
        _ => false,
    })
}

/// The bool (a bool, or an unsigned 8-bit 0 or 1).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_bool(value: *mut Value, out: *mut bool) -> c_int {
    guard(Err::Unknown as c_int, || match inferred(value) {
        Err(e) => e as c_int,
        Ok(Inferred { num: Num::Bool(b), .. }) => {
            write(out, b);
            Err::Ok as c_int
        }
        Ok(Inferred {
            ty: Type::Uint8,
            num: Num::U(u @ (0 | 1)),
            ..
        }) => {
            write(out, u == 1);
            Err::Ok as c_int
        }
        Ok(_) => Err::TypeMismatch as c_int,
    })
}

/// Whether the value is null.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_null(value: *mut Value) -> bool {
    guard(false, || inferred(value).is_ok_and(|i| i.ty == Type::Null))
}

/// Whether the value is an integer.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_int(value: *mut Value) -> bool {
    guard(false, || {
        inferred(value).is_ok_and(|i| matches!(i.num, Num::I(_) | Num::U(_)))
    })
}

/// The integer kinds: whether the value is one that `T` holds, and its value cut to `T`
/// (with `Overflow` when it does not fit).
macro_rules! integer {
    ($is:ident, $as:ident, $t:ty) => {
        /// Whether the value is an integer that fits the type.
        ///
        /// # Safety
        /// `value` is NULL or a live value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $is(value: *mut Value) -> bool {
            guard(false, || match inferred(value) {
                Ok(Inferred { num: Num::I(i), .. }) => <$t>::try_from(i).is_ok(),
                Ok(Inferred { num: Num::U(u), .. }) => <$t>::try_from(u).is_ok(),
                _ => false,
            })
        }

        /// The integer cut to the type (`ASDF_VALUE_ERR_OVERFLOW`, with the cut value, when
        /// it does not fit).
        ///
        /// # Safety
        /// `value` is NULL or a live value; `out` NULL or writable.
        #[unsafe(no_mangle)]
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_possible_wrap
        )]
        pub unsafe extern "C" fn $as(value: *mut Value, out: *mut $t) -> c_int {
            guard(Err::Unknown as c_int, || match inferred(value) {
                Err(e) => e as c_int,
                Ok(Inferred { num: Num::I(i), .. }) => {
                    write(out, i as $t);
                    if <$t>::try_from(i).is_ok() {
                        Err::Ok as c_int
                    } else {
                        Err::Overflow as c_int
                    }
                }
                Ok(Inferred { num: Num::U(u), .. }) => {
                    write(out, u as $t);
                    if <$t>::try_from(u).is_ok() {
                        Err::Ok as c_int
                    } else {
                        Err::Overflow as c_int
                    }
                }
                Ok(_) => Err::TypeMismatch as c_int,
            })
        }
    };
}

integer!(asdf_value_is_int8, asdf_value_as_int8, i8);
integer!(asdf_value_is_int16, asdf_value_as_int16, i16);
integer!(asdf_value_is_int32, asdf_value_as_int32, i32);
integer!(asdf_value_is_int64, asdf_value_as_int64, i64);
integer!(asdf_value_is_uint8, asdf_value_as_uint8, u8);
integer!(asdf_value_is_uint16, asdf_value_as_uint16, u16);
integer!(asdf_value_is_uint32, asdf_value_as_uint32, u32);
integer!(asdf_value_is_uint64, asdf_value_as_uint64, u64);

/// Whether the value is a float that a `float` holds.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_float(value: *mut Value) -> bool {
    guard(false, || match inferred(value) {
        #[allow(clippy::cast_possible_truncation)]
        Ok(Inferred { num: Num::D(d), .. }) => !d.is_finite() || (d as f32).is_finite(),
        _ => false,
    })
}

/// The number as a `float` (`ASDF_VALUE_ERR_OVERFLOW` beyond its range).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
pub unsafe extern "C" fn asdf_value_as_float(value: *mut Value, out: *mut f32) -> c_int {
    guard(Err::Unknown as c_int, || match inferred(value) {
        Err(e) => e as c_int,
        Ok(Inferred { num: Num::D(d), .. }) => {
            write(out, d as f32);
            if d.is_finite() && !(d as f32).is_finite() {
                Err::Overflow as c_int
            } else {
                Err::Ok as c_int
            }
        }
        Ok(Inferred { num: Num::I(i), .. }) => {
            write(out, i as f32);
            Err::Ok as c_int
        }
        Ok(Inferred { num: Num::U(u), .. }) => {
            write(out, u as f32);
            Err::Ok as c_int
        }
        Ok(_) => Err::TypeMismatch as c_int,
    })
}

/// Whether the value is a float.
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_double(value: *mut Value) -> bool {
    guard(false, || inferred(value).is_ok_and(|i| i.ty == Type::Double))
}

/// The number as a `double` (integers converted).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::cast_precision_loss)]
pub unsafe extern "C" fn asdf_value_as_double(value: *mut Value, out: *mut f64) -> c_int {
    guard(Err::Unknown as c_int, || match inferred(value) {
        Err(e) => e as c_int,
        Ok(Inferred { num: Num::D(d), .. }) => {
            write(out, d);
            Err::Ok as c_int
        }
        Ok(Inferred { num: Num::I(i), .. }) => {
            write(out, i as f64);
            Err::Ok as c_int
        }
        Ok(Inferred { num: Num::U(u), .. }) => {
            write(out, u as f64);
            Err::Ok as c_int
        }
        Ok(_) => Err::TypeMismatch as c_int,
    })
}

// ---- new scalars ----

/// A string scalar: plain where it reads back as this string, quoted otherwise.
pub(crate) fn string_node(b: &[u8]) -> Node {
    let text = String::from_utf8_lossy(b).into_owned();
    let mut n = Node::str(text);
    if let NodeKind::Scalar(sc) = &mut n.kind {
        sc.style = if infer(&plain(sc.text.to_string())).ty == Type::String {
            ScalarStyle::Plain
        } else {
            ScalarStyle::DoubleQuoted
        };
    }
    n
}

pub(crate) fn plain(text: String) -> Node {
    let mut n = Node::str(text);
    if let NodeKind::Scalar(s) = &mut n.kind {
        s.style = ScalarStyle::Plain;
    }
    n
}

/// A new string value (quoted where it would read as another type).
///
/// # Safety
/// `file` is NULL or an open file; `s` NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_string(file: *mut File, s: *const c_char, len: usize) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        if s.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: `len` readable bytes at `s` (the contract above).
        let b = unsafe { std::slice::from_raw_parts(s.cast::<u8>(), len) };
        Value::own(file, string_node(b))
    })
}

/// A new string value from a C string.
///
/// # Safety
/// `file` is NULL or an open file; `s` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_string0(file: *mut File, s: *const c_char) -> *mut Value {
    // SAFETY: by the contract above.
    match unsafe { bytes(s) } {
        // SAFETY: `b` is the string's bytes.
        Some(b) => unsafe { asdf_value_of_string(file, s, b.len()) },
        None => std::ptr::null_mut(),
    }
}

/// A new bool value.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_bool(file: *mut File, b: bool) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        Value::own(file, plain(if b { "true" } else { "false" }.into()))
    })
}

/// A new null value.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_null(file: *mut File) -> *mut Value {
    guard(std::ptr::null_mut(), || Value::own(file, Node::null()))
}

macro_rules! of_number {
    ($name:ident, $t:ty, $node:expr) => {
        /// A new number value.
        ///
        /// # Safety
        /// `file` is NULL or an open file.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(file: *mut File, v: $t) -> *mut Value {
            guard(std::ptr::null_mut(), || Value::own(file, $node(v)))
        }
    };
}

of_number!(asdf_value_of_int8, i8, |v: i8| Node::int(i64::from(v)));
of_number!(asdf_value_of_int16, i16, |v: i16| Node::int(i64::from(v)));
of_number!(asdf_value_of_int32, i32, |v: i32| Node::int(i64::from(v)));
of_number!(asdf_value_of_int64, i64, Node::int);
of_number!(asdf_value_of_uint8, u8, |v: u8| Node::int(i64::from(v)));
of_number!(asdf_value_of_uint16, u16, |v: u16| Node::int(i64::from(v)));
of_number!(asdf_value_of_uint32, u32, |v: u32| Node::int(i64::from(v)));
of_number!(asdf_value_of_uint64, u64, |v: u64| match i64::try_from(v) {
    Ok(i) => Node::int(i),
    Err(_) => Node::bigint(v.into()),
});

/// A float written so that it reads back exactly (and as a float).
pub(crate) fn float_text(d: f64) -> String {
    if d.is_nan() {
        ".nan".into()
    } else if d.is_infinite() {
        if d > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let s = format!("{d:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// A new float value.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_float(file: *mut File, v: f32) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        Value::own(file, plain(float_text(f64::from(v))))
    })
}

/// A new double value.
///
/// # Safety
/// `file` is NULL or an open file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_double(file: *mut File, v: f64) -> *mut Value {
    guard(std::ptr::null_mut(), || Value::own(file, Node::float(v)))
}

/// The value read as `ty` into `out` (libasdf's `asdf_value_as_type`: a new handle for the
/// unknown type and for containers, the text for scalars and strings, the number for the
/// numeric types; nothing is written for null).
///
/// # Safety
/// `value` is NULL or a live value; `out` NULL or writable for the type's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_as_type(value: *mut Value, ty: c_int, out: *mut std::ffi::c_void) -> c_int {
    // SAFETY: by the contract above (each reader takes the same and `out` of its type).
    unsafe {
        match ty {
            0..=2 => {
                let ok = match ty {
                    1 => asdf_value_is_sequence(value),
                    2 => asdf_value_is_mapping(value),
                    _ => !value.is_null(),
                };
                if !ok {
                    return Err::TypeMismatch as c_int;
                }
                write(out.cast::<*mut Value>(), asdf_value_copy(value));
                Err::Ok as c_int
            }
            3 => asdf_value_as_scalar0(value, out.cast()),
            4 => asdf_value_as_string0(value, out.cast()),
            5 => asdf_value_as_bool(value, out.cast()),
            6 => {
                if asdf_value_is_null(value) {
                    Err::Ok as c_int
                } else {
                    Err::TypeMismatch as c_int
                }
            }
            7 => asdf_value_as_int8(value, out.cast()),
            8 => asdf_value_as_int16(value, out.cast()),
            9 => asdf_value_as_int32(value, out.cast()),
            10 => asdf_value_as_int64(value, out.cast()),
            11 => asdf_value_as_uint8(value, out.cast()),
            12 => asdf_value_as_uint16(value, out.cast()),
            13 => asdf_value_as_uint32(value, out.cast()),
            14 => asdf_value_as_uint64(value, out.cast()),
            15 => asdf_value_as_float(value, out.cast()),
            16 => asdf_value_as_double(value, out.cast()),
            _ => Err::TypeMismatch as c_int,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(text: &str) -> Type {
        infer(&plain(text.into())).ty
    }

    #[test]
    fn plain_scalars_are_typed_as_libasdf_types_them() {
        assert_eq!(ty("-127"), Type::Int8);
        assert_eq!(ty("255"), Type::Uint8);
        assert_eq!(ty("0"), Type::Uint8);
        assert_eq!(ty("256"), Type::Uint16);
        assert_eq!(ty("-129"), Type::Int16);
        assert_eq!(ty("18446744073709551615"), Type::Uint64);
        assert_eq!(ty("18446744073709551616"), Type::Unknown);
        assert_eq!(ty("-9223372036854775808"), Type::Int64);
        assert_eq!(ty("0x1F"), Type::Uint8);
        assert_eq!(ty("true"), Type::Bool);
        assert_eq!(ty("yes"), Type::String);
        assert_eq!(ty("~"), Type::Null);
        assert_eq!(ty(""), Type::Null);
        assert_eq!(ty("1.5"), Type::Double);
        assert_eq!(ty("1e400"), Type::Double);
        assert_eq!(ty(".inf"), Type::String);
        assert_eq!(ty("inf"), Type::Double);
        assert_eq!(ty("hello"), Type::String);
        assert_eq!(ty("08"), Type::Double);
    }
}
