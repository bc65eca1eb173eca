//! The core extensions' C types read from a tree: `asdf_software_t`, `asdf_history_entry_t`,
//! `asdf_extension_metadata_t`, `asdf_time_t` (its value, format and scale) and the root as
//! `asdf_meta_t`. Objects are allocated with the C allocator (`calloc`, `strdup`) and freed by
//! their `asdf_*_destroy`.

use std::ffi::{c_char, c_int, c_void};

use asdf_yaml::{Node, NodeKind};

use crate::file::File;
use crate::util::guard;
use crate::value::{Err, Value};
use crate::version::{Version, asdf_version_destroy, new_version};

/// `asdf_software_t`.
#[repr(C)]
#[derive(Debug)]
pub struct Software {
    name: *const c_char,
    version: *const Version,
    author: *const c_char,
    homepage: *const c_char,
}

/// `asdf_time_t`'s broken-down time.
#[repr(C)]
#[derive(Debug)]
pub struct TimeInfo {
    ts: libc::timespec,
    tm: libc::tm,
}

/// `asdf_time_t` (the value, format and scale are read; the broken-down time is left zero).
#[repr(C)]
#[derive(Debug)]
pub struct Time {
    value: *mut c_char,
    info: TimeInfo,
    format: c_int,
    scale: c_int,
    location: [f64; 3],
}

/// `asdf_history_entry_t`.
#[repr(C)]
#[derive(Debug)]
pub struct HistoryEntry {
    description: *const c_char,
    time: *const Time,
    software: *const *const Software,
}

/// `asdf_extension_metadata_t`.
#[repr(C)]
#[derive(Debug)]
pub struct ExtensionMetadata {
    extension_class: *const c_char,
    package: *const Software,
    metadata: *mut Value,
}

/// `asdf_meta_t`.
#[repr(C)]
#[derive(Debug)]
pub struct Meta {
    asdf_library: *mut Software,
    extensions: *const *const ExtensionMetadata,
    entries: *const *const HistoryEntry,
}

const CORE: &str = "tag:stsci.edu:asdf/core/";

/// A software record that C reads as a global (`libasdf_software`).
#[repr(transparent)]
#[derive(Debug)]
pub struct StaticSoftware(Software);

// SAFETY: the static's pointers are to static, immutable data; nothing writes it.
unsafe impl Sync for StaticSoftware {}

/// This library's software record, as libasdf exports its own (`libasdf_software`): asdf-rs.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static libasdf_software: StaticSoftware = StaticSoftware(Software {
    name: c"asdf-rs".as_ptr(),
    version: &raw const crate::version::libasdf_version.0,
    author: c"The asdf-rs developers".as_ptr(),
    // (libasdf's record has a homepage and programs read it unchecked: an empty one here.)
    homepage: c"".as_ptr(),
});

/// Whether `tag` is `tag:stsci.edu:asdf/<name>-<version>`.
fn tagged(n: &Node, name: &str) -> bool {
    n.tag.as_deref().is_some_and(|t| {
        t.strip_prefix("tag:stsci.edu:asdf/")
            .and_then(|r| r.strip_prefix(name))
            .is_some_and(|v| v.starts_with('-'))
    })
}

/// A C copy of a string (NULL when allocation fails).
fn strdup(s: &str) -> *const c_char {
    let c = crate::util::c_string(s.as_bytes());
    // SAFETY: `c` is a NUL-terminated string.
    unsafe { libc::strdup(c.as_ptr()) }
}

fn free(p: *const c_void) {
    // SAFETY: every pointer freed here came from the C allocator (`calloc`/`strdup` above), once.
    unsafe { libc::free(p.cast_mut()) }
}

/// A zeroed `T` from the C allocator.
fn calloc<T>() -> *mut T {
    // SAFETY: calloc of one `T` (zeroed memory: the C types here are valid all zero).
    unsafe { libc::calloc(1, std::mem::size_of::<T>()) }.cast()
}

/// The mapping's string at `key`.
fn text<'n>(doc: Option<&'n asdf_yaml::Document>, n: &'n Node, key: &str) -> Option<&'n str> {
    let v = n.get(key)?;
    let v = doc.map_or(v, |d| d.resolve(v));
    v.as_scalar().map(|s| s.text.as_str())
}

fn software_of(doc: Option<&asdf_yaml::Document>, n: &Node) -> Option<*mut Software> {
    if !matches!(n.kind, NodeKind::Mapping(_)) {
        return None;
    }
    let name = text(doc, n, "name")?;
    let version = text(doc, n, "version")?;
    let s = calloc::<Software>();
    if s.is_null() {
        return None;
    }
    let opt = |k: &str| text(doc, n, k).map_or(std::ptr::null(), strdup);
    // SAFETY: `s` is a zeroed `Software` from calloc.
    unsafe {
        (*s).name = strdup(name);
        (*s).version = new_version(version.as_bytes());
        (*s).author = opt("author");
        (*s).homepage = opt("homepage");
    }
    Some(s)
}

fn software_free(s: *mut Software) {
    if s.is_null() {
        return;
    }
    // SAFETY: a software made by `software_of`: its strings from strdup, its version ours.
    unsafe {
        free((*s).name.cast());
        asdf_version_destroy((*s).version.cast_mut());
        free((*s).author.cast());
        free((*s).homepage.cast());
    }
    free(s.cast());
}

/// libasdf's time formats by name (as astropy's).
const FORMATS: [&str; 23] = [
    "iso",
    "yday",
    "byear",
    "jyear",
    "decimalyear",
    "jd",
    "mjd",
    "gps",
    "unix",
    "utime",
    "tai_seconds",
    "cxcsec",
    "galexsec",
    "unix_tai",
    "",
    "byear_str",
    "datetime",
    "fits",
    "isot",
    "jyear_str",
    "plot_date",
    "ymdhms",
    "datetime64",
];
const SCALES: [&str; 7] = ["utc", "tai", "tcb", "tcg", "tdb", "tt", "ut1"];

fn time_of(doc: Option<&asdf_yaml::Document>, n: &Node) -> Option<*mut Time> {
    let (value, format, scale) = match &n.kind {
        NodeKind::Scalar(s) => (s.text.to_string(), None, None),
        NodeKind::Mapping(_) => (
            text(doc, n, "value")?.to_owned(),
            text(doc, n, "format"),
            text(doc, n, "scale"),
        ),
        _ => return None,
    };
    let t = calloc::<Time>();
    if t.is_null() {
        return None;
    }
    let index = |names: &[&str], v: Option<&str>| {
        v.and_then(|v| names.iter().position(|n| *n == v))
            .and_then(|i| c_int::try_from(i).ok())
            .unwrap_or(0)
    };
    // SAFETY: `t` is a zeroed `Time` from calloc.
    unsafe {
        (*t).value = strdup(&value).cast_mut();
        (*t).format = index(&FORMATS, format);
        (*t).scale = index(&SCALES, scale);
    }
    Some(t)
}

fn time_free(t: *const Time) {
    if t.is_null() {
        return;
    }
    // SAFETY: a time made by `time_of`.
    unsafe { free((*t).value.cast()) };
    free(t.cast());
}

/// A NULL-terminated array from the C allocator.
fn list<T>(items: &[*mut T]) -> *const *const T {
    // SAFETY: malloc of items + 1 pointers.
    let p: *mut *const T = unsafe { libc::malloc((items.len() + 1) * std::mem::size_of::<*const T>()) }.cast();
    if p.is_null() {
        return std::ptr::null();
    }
    for (i, it) in items.iter().enumerate() {
        // SAFETY: `p` has room for items + 1 pointers.
        unsafe { p.add(i).write(it.cast_const()) };
    }
    // SAFETY: as above.
    unsafe { p.add(items.len()).write(std::ptr::null()) };
    p.cast_const()
}

/// Frees a NULL-terminated array and its items.
fn list_free<T>(p: *const *const T, item: impl Fn(*mut T)) {
    if p.is_null() {
        return;
    }
    let mut i = 0;
    loop {
        // SAFETY: a NULL-terminated array made by `list`.
        let it = unsafe { *p.add(i) };
        if it.is_null() {
            break;
        }
        item(it.cast_mut());
        i += 1;
    }
    free(p.cast());
}

fn history_entry_of(doc: Option<&asdf_yaml::Document>, n: &Node) -> Option<*mut HistoryEntry> {
    let description = text(doc, n, "description")?;
    let e = calloc::<HistoryEntry>();
    if e.is_null() {
        return None;
    }
    let time = n
        .get("time")
        .map(|t| doc.map_or(t, |d| d.resolve(t)))
        .and_then(|t| time_of(doc, t))
        .unwrap_or(std::ptr::null_mut());
    let software: Vec<*mut Software> = match n.get("software").map(|s| doc.map_or(s, |d| d.resolve(s))) {
        Some(s) => match &s.kind {
            NodeKind::Sequence(q) => q
                .items
                .iter()
                .filter_map(|i| software_of(doc, doc.map_or(i, |d| d.resolve(i))))
                .collect(),
            NodeKind::Mapping(_) => software_of(doc, s).into_iter().collect(),
            _ => Vec::new(),
        },
        None => Vec::new(),
    };
    // SAFETY: `e` is a zeroed entry from calloc.
    unsafe {
        (*e).description = strdup(description);
        (*e).time = time;
        (*e).software = if software.is_empty() {
            std::ptr::null()
        } else {
            list(&software)
        };
    }
    Some(e)
}

fn history_entry_free(e: *mut HistoryEntry) {
    if e.is_null() {
        return;
    }
    // SAFETY: an entry made by `history_entry_of`.
    unsafe {
        free((*e).description.cast());
        time_free((*e).time);
        list_free((*e).software, software_free);
    }
    free(e.cast());
}

fn extension_metadata_of(
    file: *mut File,
    doc: Option<&asdf_yaml::Document>,
    n: &Node,
) -> Option<*mut ExtensionMetadata> {
    let class = text(doc, n, "extension_class");
    let e = calloc::<ExtensionMetadata>();
    if e.is_null() {
        return None;
    }
    let package = n
        .get("package")
        .map(|p| doc.map_or(p, |d| d.resolve(p)))
        .and_then(|p| software_of(doc, p))
        .unwrap_or(std::ptr::null_mut());
    // SAFETY: `e` is a zeroed record from calloc.
    unsafe {
        (*e).extension_class = class.map_or(std::ptr::null(), strdup);
        (*e).package = package;
        (*e).metadata = Value::new_own(file, n.clone());
    }
    Some(e)
}

fn extension_metadata_free(e: *mut ExtensionMetadata) {
    if e.is_null() {
        return;
    }
    // SAFETY: a record made by `extension_metadata_of`.
    unsafe {
        free((*e).extension_class.cast());
        software_free((*e).package.cast_mut());
        crate::value::asdf_value_destroy((*e).metadata);
    }
    free(e.cast());
}

fn meta_of(file: *mut File, doc: Option<&asdf_yaml::Document>, n: &Node) -> Option<*mut Meta> {
    if !matches!(n.kind, NodeKind::Mapping(_)) {
        return None;
    }
    let m = calloc::<Meta>();
    if m.is_null() {
        return None;
    }
    let library = n
        .get("asdf_library")
        .map(|s| doc.map_or(s, |d| d.resolve(s)))
        .and_then(|s| software_of(doc, s))
        .unwrap_or(std::ptr::null_mut());
    let history = n.get("history").map(|h| doc.map_or(h, |d| d.resolve(h)));
    let items = |key: &str| -> Vec<&Node> {
        let node = history.and_then(|h| match &h.kind {
            NodeKind::Mapping(_) => h.get(key),
            // The oldest files: a list of entries.
            NodeKind::Sequence(_) if key == "entries" => Some(h),
            _ => None,
        });
        match node.map(|x| doc.map_or(x, |d| d.resolve(x))).map(|x| &x.kind) {
            Some(NodeKind::Sequence(q)) => q.items.iter().map(|i| doc.map_or(i, |d| d.resolve(i))).collect(),
            _ => Vec::new(),
        }
    };
    let entries: Vec<*mut HistoryEntry> = items("entries")
        .into_iter()
        .filter_map(|e| history_entry_of(doc, e))
        .collect();
    let extensions: Vec<*mut ExtensionMetadata> = items("extensions")
        .into_iter()
        .filter_map(|e| extension_metadata_of(file, doc, e))
        .collect();
    // SAFETY: `m` is a zeroed `Meta` from calloc.
    unsafe {
        (*m).asdf_library = library;
        (*m).entries = if entries.is_empty() {
            std::ptr::null()
        } else {
            list(&entries)
        };
        (*m).extensions = if extensions.is_empty() {
            std::ptr::null()
        } else {
            list(&extensions)
        };
    }
    Some(m)
}

fn meta_free(m: *mut Meta) {
    if m.is_null() {
        return;
    }
    // SAFETY: a `Meta` made by `meta_of`.
    unsafe {
        software_free((*m).asdf_library);
        list_free((*m).entries, history_entry_free);
        list_free((*m).extensions, extension_metadata_free);
    }
    free(m.cast());
}

/// Reads a value as one of the core types: `Ok` with the object in `*out`, `TypeMismatch`
/// for a node not of the type.
fn read_as<T>(
    value: *mut Value,
    out: *mut *mut T,
    check: impl Fn(&Node) -> bool,
    make: impl Fn(*mut File, Option<&asdf_yaml::Document>, &Node) -> Option<*mut T>,
) -> c_int {
    guard(Err::Unknown as c_int, || {
        // SAFETY: the entry points pass NULL or a live value.
        let Some(v) = (unsafe { value.as_ref() }) else {
            return Err::Unknown as c_int;
        };
        let Some((n, doc)) = v.node_and_doc() else {
            return Err::Unknown as c_int;
        };
        if !check(n) {
            return Err::TypeMismatch as c_int;
        }
        match make(v.file, doc, n) {
            Some(obj) => {
                if out.is_null() {
                    // Nothing to hand it to.
                    return Err::Ok as c_int;
                }
                // SAFETY: `out` is writable (the entry points' contract).
                unsafe { *out = obj };
                Err::Ok as c_int
            }
            None => Err::ParseFailure as c_int,
        }
    })
}

fn is(value: *mut Value, check: impl Fn(&Node) -> bool) -> bool {
    guard(false, || {
        // SAFETY: the entry points pass NULL or a live value.
        unsafe { value.as_ref() }
            .and_then(Value::node_and_doc)
            .is_some_and(|(n, _)| check(n))
    })
}

macro_rules! core_type {
    ($is:ident, $as:ident, $destroy:ident, $t:ty, $check:expr, $make:expr, $free:expr, $what:literal) => {
        #[doc = concat!("Whether the value is ", $what, ".")]
        ///
        /// # Safety
        /// `value` is NULL or a live value.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $is(value: *mut Value) -> bool {
            is(value, $check)
        }

        #[doc = concat!("The value read as ", $what, " (freed with its destroy function).")]
        ///
        /// # Safety
        /// `value` is NULL or a live value; `out` NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $as(value: *mut Value, out: *mut *mut $t) -> c_int {
            read_as(value, out, $check, $make)
        }

        #[doc = concat!("Frees ", $what, " and what it holds.")]
        ///
        /// # Safety
        /// `obj` is NULL or an object made by this library, not freed yet.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $destroy(obj: *mut $t) {
            guard((), || $free(obj));
        }
    };
}

core_type!(
    asdf_value_is_software,
    asdf_value_as_software,
    asdf_software_destroy,
    Software,
    |n: &Node| tagged(n, "core/software"),
    |_f, doc, n| software_of(doc, n),
    software_free,
    "a software record"
);
core_type!(
    asdf_value_is_history_entry,
    asdf_value_as_history_entry,
    asdf_history_entry_destroy,
    HistoryEntry,
    |n: &Node| tagged(n, "core/history_entry"),
    |_f, doc, n| history_entry_of(doc, n),
    history_entry_free,
    "a history entry"
);
core_type!(
    asdf_value_is_extension_metadata,
    asdf_value_as_extension_metadata,
    asdf_extension_metadata_destroy,
    ExtensionMetadata,
    |n: &Node| tagged(n, "core/extension_metadata"),
    extension_metadata_of,
    extension_metadata_free,
    "an extension metadata record"
);
core_type!(
    asdf_value_is_time,
    asdf_value_as_time,
    asdf_time_destroy,
    Time,
    |n: &Node| tagged(n, "time/time"),
    |_f, doc, n| time_of(doc, n),
    |t: *mut Time| time_free(t),
    "a time"
);
core_type!(
    asdf_value_is_meta,
    asdf_value_as_meta,
    asdf_meta_destroy,
    Meta,
    |n: &Node| tagged(n, "core/asdf") || matches!(n.kind, NodeKind::Mapping(_)) && n.tag.is_none(),
    meta_of,
    meta_free,
    "the root's metadata"
);

/// Whether the value is an ndarray (`core/ndarray-1.x`).
///
/// # Safety
/// `value` is NULL or a live value.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_is_ndarray(value: *mut Value) -> bool {
    is(value, |n| {
        n.tag
            .as_deref()
            .is_some_and(|t| t.starts_with(&format!("{CORE}ndarray-")))
    })
}

/// Sets the version written in the file's `asdf_library` (asdf-rs writes its own library
/// record; the version given is kept for `asdf_library` when the file is written).
///
/// # Safety
/// `file` is NULL or an open file; `version` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_library_set_version(file: *mut File, version: *const c_char) {
    guard((), || {
        // SAFETY: by the contract above.
        let (Some(f), Some(v)) = (unsafe { file.as_mut() }, unsafe { crate::util::bytes(version) }) else {
            return;
        };
        f.library_version = Some(String::from_utf8_lossy(v).into_owned());
    });
}

/// `asdf_is_<type>(file, path)` and `asdf_get_<type>(file, path, out)` for the core types.
macro_rules! by_path {
    ($is:ident, $get:ident, $value_is:ident, $value_as:ident, $t:ty) => {
        /// Whether the value at `path` is of the type.
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $is(file: *mut File, path: *const c_char) -> bool {
            guard(false, || {
                crate::open::with_value(file, path, false, |v| {
                    // SAFETY: `v` is a live value.
                    unsafe { $value_is(v) }
                })
            })
        }

        /// The value at `path` read as the type (`ASDF_VALUE_ERR_NOT_FOUND` without one).
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string; `out` NULL or writable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $get(file: *mut File, path: *const c_char, out: *mut *mut $t) -> c_int {
            guard(Err::Unknown as c_int, || {
                crate::open::with_value(file, path, Err::NotFound as c_int, |v| {
                    // SAFETY: `v` is a live value; `out` as above.
                    unsafe { $value_as(v, out) }
                })
            })
        }
    };
}

by_path!(
    asdf_is_software,
    asdf_get_software,
    asdf_value_is_software,
    asdf_value_as_software,
    Software
);
by_path!(
    asdf_is_history_entry,
    asdf_get_history_entry,
    asdf_value_is_history_entry,
    asdf_value_as_history_entry,
    HistoryEntry
);
by_path!(
    asdf_is_extension_metadata,
    asdf_get_extension_metadata,
    asdf_value_is_extension_metadata,
    asdf_value_as_extension_metadata,
    ExtensionMetadata
);
by_path!(
    asdf_is_time,
    asdf_get_time,
    asdf_value_is_time,
    asdf_value_as_time,
    Time
);
by_path!(
    asdf_is_meta,
    asdf_get_meta,
    asdf_value_is_meta,
    asdf_value_as_meta,
    Meta
);

/// A time as a node: `!time/time-1.4.0` with its value, format and scale (the format and scale
/// named by their numbers in `asdf_time_t`).
fn time_node(t: &Time) -> Option<Node> {
    if t.value.is_null() {
        return None;
    }
    // SAFETY: a time's value is a C string.
    let value = unsafe { std::ffi::CStr::from_ptr(t.value) }
        .to_string_lossy()
        .into_owned();
    let mut entries = vec![(Node::str("value"), Node::str(value))];
    fn name(names: &[&'static str], i: c_int) -> Option<&'static str> {
        usize::try_from(i).ok().and_then(|i| names.get(i).copied())
    }
    if let Some(f) = name(&FORMATS, t.format).filter(|f| !f.is_empty() && t.format != 0) {
        entries.push((Node::str("format"), Node::str(f)));
    }
    if let Some(s) = name(&SCALES, t.scale) {
        entries.push((Node::str("scale"), Node::str(s)));
    }
    Some(Node::map(entries).with_tag("tag:stsci.edu:asdf/time/time-1.4.0"))
}

/// A new value of a time.
///
/// # Safety
/// `file` is NULL or an open file; `t` NULL or a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_value_of_time(file: *mut File, t: *const Time) -> *mut Value {
    guard(std::ptr::null_mut(), || {
        // SAFETY: by the contract above.
        match unsafe { t.as_ref() }.and_then(time_node) {
            Some(n) => Value::new_own(file, n),
            None => std::ptr::null_mut(),
        }
    })
}

/// Puts a time at `path`.
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `t` NULL or a time.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_time(file: *mut File, path: *const c_char, t: *const Time) -> c_int {
    // SAFETY: by the contract above.
    let v = unsafe { asdf_value_of_time(file, t) };
    if v.is_null() {
        return Err::Unknown as c_int;
    }
    // SAFETY: `v` is consumed by asdf_set_value.
    unsafe { crate::edit::asdf_set_value(file, path, v) }
}

// ---- writing the core types ----

/// A C string's text (NULL: `None`).
fn c_text(p: *const c_char) -> Option<String> {
    // SAFETY: the core types' strings are NULL or C strings (the API's rule).
    unsafe { crate::util::bytes(p) }.map(|b| String::from_utf8_lossy(b).into_owned())
}

/// A software record as a node (`core/software-1.0.0`).
fn software_node(s: &Software) -> Option<Node> {
    let name = c_text(s.name)?;
    // SAFETY: a software's version is NULL or a version.
    let version = unsafe { s.version.as_ref() }.and_then(|v| c_text(v.text()))?;
    let mut e = vec![
        (Node::str("name"), Node::str(name)),
        (Node::str("version"), Node::str(version)),
    ];
    if let Some(a) = c_text(s.author) {
        e.push((Node::str("author"), Node::str(a)));
    }
    if let Some(h) = c_text(s.homepage) {
        e.push((Node::str("homepage"), Node::str(h)));
    }
    Some(Node::map(e).with_tag(format!("{CORE}software-1.0.0")))
}

/// A NULL-terminated list's items.
fn items<T>(p: *const *const T) -> Vec<*const T> {
    let mut out = Vec::new();
    if p.is_null() {
        return out;
    }
    for i in 0..1_000_000 {
        // SAFETY: a NULL-terminated list (the API's rule).
        let it = unsafe { *p.add(i) };
        if it.is_null() {
            break;
        }
        out.push(it);
    }
    out
}

fn history_entry_node(e: &HistoryEntry) -> Option<Node> {
    let mut m = vec![(Node::str("description"), Node::str(c_text(e.description)?))];
    // SAFETY: the entry's time is NULL or a time.
    if let Some(t) = unsafe { e.time.as_ref() }.and_then(time_node) {
        m.push((Node::str("time"), t));
    }
    let software: Vec<Node> = items(e.software)
        .into_iter()
        // SAFETY: each item is a software record.
        .filter_map(|s| unsafe { s.as_ref() }.and_then(software_node))
        .collect();
    if !software.is_empty() {
        m.push((Node::str("software"), Node::seq(software)));
    }
    Some(Node::map(m).with_tag(format!("{CORE}history_entry-1.0.0")))
}

fn extension_metadata_node(e: &ExtensionMetadata) -> Option<Node> {
    // The whole node given (with keys of its own), else the class and package.
    // SAFETY: the metadata is NULL or a live value.
    let mut n = match unsafe { e.metadata.as_ref() }.and_then(|v| v.node_and_doc().map(|(n, _)| n.clone())) {
        Some(n) if matches!(n.kind, NodeKind::Mapping(_)) => n,
        _ => Node::map(Vec::new()),
    };
    if let NodeKind::Mapping(m) = &mut n.kind {
        let mut set = |k: &str, v: Node| match m.entries.iter_mut().find(|(key, _)| key.as_str() == Some(k)) {
            Some(e) => e.1 = v,
            None => m.entries.push((Node::str(k), v)),
        };
        if let Some(c) = c_text(e.extension_class) {
            set("extension_class", Node::str(c));
        }
        // SAFETY: the package is NULL or a software record.
        if let Some(p) = unsafe { e.package.as_ref() }.and_then(software_node) {
            set("package", p);
        }
    }
    n.tag = Some(format!("{CORE}extension_metadata-1.0.0").into_boxed_str());
    Some(n)
}

/// Puts `node` at `path` (`""` for the root: the root's keys set from `node`'s).
fn put(file: *mut File, path: *const c_char, node: Option<Node>) -> c_int {
    let Some(node) = node else {
        return Err::EmitFailure as c_int;
    };
    let v = Value::new_own(file, node);
    // SAFETY: `v` is consumed by asdf_set_value; `file` and `path` as the callers'.
    unsafe { crate::edit::asdf_set_value(file, path, v) }
}

macro_rules! writer {
    ($set:ident, $of:ident, $t:ty, $node:ident, $what:literal) => {
        #[doc = concat!("A new value of ", $what, ".")]
        ///
        /// # Safety
        /// `file` is NULL or an open file; `obj` NULL or an object of the type.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $of(file: *mut File, obj: *const $t) -> *mut Value {
            guard(std::ptr::null_mut(), || {
                // SAFETY: by the contract above.
                match unsafe { obj.as_ref() }.and_then($node) {
                    Some(n) => Value::new_own(file, n),
                    None => std::ptr::null_mut(),
                }
            })
        }

        #[doc = concat!("Puts ", $what, " at `path`.")]
        ///
        /// # Safety
        /// `file` is NULL or an open file; `path` NULL or a C string; `obj` NULL or an object
        /// of the type.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set(file: *mut File, path: *const c_char, obj: *const $t) -> c_int {
            guard(Err::Unknown as c_int, || {
                // SAFETY: by the contract above.
                let node = unsafe { obj.as_ref() }.and_then($node);
                put(file, path, node)
            })
        }
    };
}

writer!(
    asdf_set_software,
    asdf_value_of_software,
    Software,
    software_node,
    "a software record"
);
writer!(
    asdf_set_history_entry,
    asdf_value_of_history_entry,
    HistoryEntry,
    history_entry_node,
    "a history entry"
);
writer!(
    asdf_set_extension_metadata,
    asdf_value_of_extension_metadata,
    ExtensionMetadata,
    extension_metadata_node,
    "an extension metadata record"
);

/// Sets the root's `asdf_library` and `history` from `meta` (`path` must name the root).
///
/// # Safety
/// `file` is NULL or an open file; `path` NULL or a C string; `meta` NULL or a `asdf_meta_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_set_meta(file: *mut File, path: *const c_char, meta: *const Meta) -> c_int {
    guard(Err::Unknown as c_int, || {
        // SAFETY: by the contract above.
        let Some(m) = (unsafe { meta.as_ref() }) else {
            return Err::Unknown as c_int;
        };
        // SAFETY: by the contract above.
        let base =
            unsafe { crate::util::bytes(path) }.map(|p| String::from_utf8_lossy(p).trim_end_matches('/').to_owned());
        let Some(base) = base else { return Err::Unknown as c_int };
        let at = |key: &str| crate::util::c_string(format!("{base}/{key}").as_bytes());
        // SAFETY: the library record is NULL or a software record.
        if let Some(lib) = unsafe { m.asdf_library.as_ref() }.and_then(software_node) {
            let p = at("asdf_library");
            let r = put(file, p.as_ptr(), Some(lib));
            if r != Err::Ok as c_int {
                return r;
            }
        }
        let entries: Vec<Node> = items(m.entries)
            .into_iter()
            // SAFETY: each is a history entry.
            .filter_map(|e| unsafe { e.as_ref() }.and_then(history_entry_node))
            .collect();
        let extensions: Vec<Node> = items(m.extensions)
            .into_iter()
            // SAFETY: each is an extension metadata record.
            .filter_map(|e| unsafe { e.as_ref() }.and_then(extension_metadata_node))
            .collect();
        if !entries.is_empty() || !extensions.is_empty() {
            let mut h = Vec::new();
            if !extensions.is_empty() {
                h.push((Node::str("extensions"), Node::seq(extensions)));
            }
            if !entries.is_empty() {
                h.push((Node::str("entries"), Node::seq(entries)));
            }
            let p = at("history");
            return put(file, p.as_ptr(), Some(Node::map(h)));
        }
        Err::Ok as c_int
    })
}

/// Appends a history entry (the description, the time now, and this library) to the file's
/// `history/entries`: 0, or -1.
///
/// # Safety
/// `file` is NULL or an open file; `description` NULL or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn asdf_history_entry_add(file: *mut File, description: *const c_char) -> c_int {
    guard(-1, || {
        let Some(d) = c_text(description) else { return -1 };
        // SAFETY: by the contract above.
        let Some(f) = (unsafe { file.as_mut() }) else { return -1 };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // (history_entry-1.0.0's time is a date-time string, UTC.)
        let time = Node::str(format!("{}Z", iso_utc(now)));
        let entry = Node::map(vec![
            (Node::str("description"), Node::str(d)),
            (Node::str("time"), time),
            (
                Node::str("software"),
                Node::seq(vec![
                    Node::map(vec![
                        (Node::str("name"), Node::str("asdf-rs")),
                        (Node::str("version"), Node::str(env!("CARGO_PKG_VERSION"))),
                    ])
                    .with_tag(format!("{CORE}software-1.0.0")),
                ]),
            ),
        ])
        .with_tag(format!("{CORE}history_entry-1.0.0"));
        let Some(asdf) = f.asdf_mut() else { return -1 };
        let Ok(root) = asdf.get_mut("") else { return -1 };
        let NodeKind::Mapping(m) = &mut root.kind else {
            return -1;
        };
        let hi = match m.entries.iter().position(|(k, _)| k.as_str() == Some("history")) {
            Some(i) => i,
            None => {
                m.entries.push((Node::str("history"), Node::map(Vec::new())));
                m.entries.len() - 1
            }
        };
        let history = &mut m.entries[hi].1;
        // The oldest form (a list of entries) becomes the mapping form.
        if matches!(history.kind, NodeKind::Sequence(_)) {
            let old = std::mem::replace(history, Node::map(Vec::new()));
            if let NodeKind::Mapping(h) = &mut history.kind {
                h.entries.push((Node::str("entries"), old));
            }
        }
        let NodeKind::Mapping(h) = &mut history.kind else {
            return -1;
        };
        let ei = match h.entries.iter().position(|(k, _)| k.as_str() == Some("entries")) {
            Some(i) => i,
            None => {
                h.entries.push((Node::str("entries"), Node::seq(Vec::new())));
                h.entries.len() - 1
            }
        };
        match &mut h.entries[ei].1.kind {
            NodeKind::Sequence(q) => {
                q.items.push(entry);
                0
            }
            _ => -1,
        }
    })
}

/// Seconds since 1970 as an ISO 8601 UTC time (`2026-11-30T01:02:03`).
fn iso_utc(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = i64::try_from(days).unwrap_or(0) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
