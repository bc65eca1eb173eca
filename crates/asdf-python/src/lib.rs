//! `asdf_rs._native`: the Rust side of the Python package `asdf_rs`.
//!
//! The Python side (`python/asdf_rs/`) gives the API its Python shape (a lazy tree of mapping
//! and sequence views, numpy arrays, Dask graphs); this module gives it the file: nodes by
//! JSON pointer, array data as `bytes` decoded straight into Python's memory (or, for an
//! uncompressed block of a local file, where numpy can map it), validation, blocks, ranged
//! reads and block decoding for Dask's tasks, and writing. The GIL is released around every
//! read, decode and write.

use asdf::core_types::{ByteOrder, Datatype, ScalarType};
use asdf::{AsdfFile, Error, Label, NewArray, Node, NodeKind, OpenOptions, Value};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{IntoPyDict, PyBytes, PyDict, PyList, PyTuple};
use std::sync::Arc;

pyo3::create_exception!(
    _native,
    AsdfError,
    PyException,
    "An ASDF file that cannot be read or written as asked."
);
pyo3::create_exception!(
    _native,
    AsdfValidationError,
    AsdfError,
    "A tree that violates its schemas."
);

/// An `asdf::Error` as a Python exception carrying `kind`, `pointer`, `line`, `column` and
/// `offset` (those that apply; `None` otherwise).
fn py_err(py: Python<'_>, e: &Error) -> PyErr {
    let (pointer, line, column, offset): (Option<String>, Option<u32>, Option<u32>, Option<u64>) = match e {
        Error::NotFound(p) => (Some(p.clone()), None, None, None),
        Error::Array { pointer, .. } => (Some(pointer.clone()), None, None, None),
        Error::Invalid(v) => (
            v.first().map(|x| x.instance.clone()),
            v.first().map(|x| x.span.line),
            v.first().map(|x| x.span.column),
            None,
        ),
        Error::Yaml(y) => (None, y.span().map(|s| s.line), y.span().map(|s| s.column), None),
        Error::Layout(l) => (None, None, None, l.offset()),
        _ => (None, None, None, None),
    };
    let err = if matches!(e, Error::Invalid(_)) {
        AsdfValidationError::new_err(e.to_string())
    } else if let Some(name) = if is_index_error(e) {
        // What numpy raises IndexError for: an AsdfIndexError (an AsdfError and an IndexError).
        Some("AsdfIndexError")
    } else if matches!(e, Error::NotFound(_)) {
        // No node at a pointer: what a dict (and Python asdf's `af[key]`) raises KeyError for.
        Some("AsdfKeyError")
    } else if matches!(
        e,
        Error::Region {
            source: asdf::RegionError::ZeroStep,
            ..
        }
    ) {
        // numpy's ValueError ("slice step cannot be zero").
        Some("AsdfValueError")
    } else {
        None
    } && let Ok(t) = py
        .import("asdf_rs._native")
        .and_then(|m| m.getattr(name))
        .and_then(|t| t.cast_into::<pyo3::types::PyType>().map_err(PyErr::from))
    {
        PyErr::from_type(t, e.to_string())
    } else {
        AsdfError::new_err(e.to_string())
    };
    let value = err.value(py);
    let _ = value.setattr("kind", format!("{:?}", e.kind()));
    let _ = value.setattr("pointer", pointer);
    let _ = value.setattr("line", line);
    let _ = value.setattr("column", column);
    let _ = value.setattr("offset", offset);
    err
}

/// Whether numpy raises `IndexError` for this: an index outside its axis, more indices than
/// axes, an index beyond 64 bits, two ellipses.
fn is_index_error(e: &Error) -> bool {
    use asdf::RegionError as R;
    matches!(
        e,
        Error::Region {
            source: R::OutOfBounds { .. } | R::TooManyAxes { .. } | R::IndexTooLarge(_) | R::Ellipses,
            ..
        }
    )
}

fn usage(msg: impl Into<String>) -> PyErr {
    AsdfError::new_err(msg.into())
}

/// What cannot be read under a key that no JSON pointer names (see [`entry_tokens`]).
fn unnamed(pointer: &str, what: &str) -> PyErr {
    usage(format!(
        "{pointer}: {what} under a key that another key of its mapping shares the text of (or \
         that is null or a number with a fraction) is not read: asdf_rs reads ndarrays there \
         (in a block of the file or in the tree), not this"
    ))
}

/// Where the file came from, for the Dask tasks that read it again.
#[derive(Debug, Clone)]
struct Target {
    /// The path or URL as given (a path of any bytes: Python gives it as its `os.fsdecode`).
    path: std::path::PathBuf,
    remote: asdf_remote::RemoteOptions,
}

/// `(requests, bytes, ranges)` of a remote file.
type RemoteStats = (u64, u64, Vec<(u64, u64)>);

/// Where the data of an array is, as `NativeFile::layout` reports it.
enum LayoutStorage {
    /// A block of the file.
    Block {
        strides: Vec<i64>,
        offset: u64,
        block: usize,
        label: Label,
        data_len: u64,
        stored_offset: u64,
        stored_len: u64,
        /// numpy may map the path itself (an uncompressed block of a local ASDF file that is
        /// still the file opened).
        mapped: bool,
    },
    /// The tree's `data`.
    Inline,
    /// Chunks (asdf-zarr): read with `region`.
    Chunked {
        chunks: Vec<usize>,
        compressor: Option<String>,
    },
    /// Another file's block, or a FITS HDU.
    Other {
        external: Option<String>,
        strides: Vec<i64>,
        offset: u64,
    },
}

/// What `NativeFile::layout` gathers, without the GIL.
struct LayoutInfo {
    shape: Vec<usize>,
    masked: bool,
    datatype: Datatype,
    byteorder: ByteOrder,
    storage: LayoutStorage,
}

/// The layout of the array at `pointer` (see `NativeFile::layout`): reads block headers, so
/// it runs with the GIL released.
fn layout_info(f: &AsdfFile, pointer: &str) -> Result<Result<LayoutInfo, &'static str>, Error> {
    if pointer.contains(ENTRY) {
        return layout_by_entry(f, pointer);
    }
    match by_pointer(f, pointer) {
        Ok(info) => Ok(Ok(info)),
        // An exploded array whose file is missing or refused has the layout it is written
        // with: its data is read (and the reason it cannot be given) when it is used, as
        // Python asdf's lazy arrays do, so that one such array does not fail a whole tree.
        Err(e) if matches!(e.kind(), asdf::ErrorKind::Reference | asdf::ErrorKind::Io) => {
            written_external(f, pointer)?.ok_or(e).map(Ok)
        }
        Err(e) => Err(e),
    }
}

/// The layout an exploded array's node gives (`None` for other nodes), its file not opened.
fn written_external(f: &AsdfFile, pointer: &str) -> Result<Option<LayoutInfo>, Error> {
    let doc = f.document()?;
    let node = node_at(f, pointer)?;
    let Ok(nd) = asdf::NdArray::from_node(node, doc) else {
        return Ok(None);
    };
    let Some(asdf::core_types::ndarray::Source::Uri(uri)) = &nd.source else {
        return Ok(None);
    };
    let Ok(v) = asdf::View::new(&nd, u64::MAX) else {
        return Ok(None);
    };
    Ok(Some(LayoutInfo {
        shape: v.shape.clone(),
        masked: nd.mask.is_some(),
        datatype: v.datatype.clone(),
        byteorder: v.byteorder,
        storage: LayoutStorage::Other {
            external: Some(uri.clone()),
            strides: v.strides,
            offset: v.offset,
        },
    }))
}

/// The layout of an array under a key that no JSON pointer names (a `~e<i>` token, see
/// [`entry_tokens`]): the facade finds arrays by JSON pointer, so the node is read here. An
/// ndarray in a block of this file or in the tree; `Ok(Err(what))` for other storage.
fn layout_by_entry(f: &AsdfFile, pointer: &str) -> Result<Result<LayoutInfo, &'static str>, Error> {
    let doc = f.document()?;
    let node = node_at(f, pointer)?;
    if node.tag.as_deref().is_some_and(asdf::is_chunked_array_tag) {
        return Ok(Err("a chunked array"));
    }
    let array_err = |source| Error::Array {
        pointer: pointer.to_owned(),
        source,
    };
    let nd = asdf::NdArray::from_node(node, doc).map_err(array_err)?;
    let masked = nd.mask.is_some();
    match nd.source {
        None => {
            let Some(datatype) = nd.datatype.clone() else {
                return Ok(Err("an inline array without a datatype"));
            };
            Ok(Ok(LayoutInfo {
                shape: nd.resolved_shape(None).map_err(array_err)?,
                masked,
                datatype,
                byteorder: nd.byteorder,
                storage: LayoutStorage::Inline,
            }))
        }
        Some(asdf::core_types::ndarray::Source::Block(source)) => {
            if f.source().fits_hdus().is_some() {
                return Ok(Err("an array of ASDF in FITS"));
            }
            let total = f.source().blocks().len();
            let index = if source < 0 {
                i64::try_from(total).ok().and_then(|t| t.checked_add(source))
            } else {
                Some(source)
            }
            .and_then(|i| usize::try_from(i).ok())
            .filter(|&i| i < total)
            .ok_or_else(|| array_err(asdf::NdArrayError::Invalid("source")))?;
            let b = f.source().block(index)?;
            let v = asdf::View::new(&nd, b.data_len()?).map_err(array_err)?;
            Ok(Ok(LayoutInfo {
                shape: v.shape.clone(),
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Block {
                    strides: v.strides.clone(),
                    offset: v.offset,
                    block: index,
                    label: b.compression()?,
                    data_len: b.data_len()?,
                    stored_offset: b.data_offset()?,
                    stored_len: b.header()?.used_size,
                    mapped: false,
                },
            }))
        }
        Some(_) => Ok(Err("an array in another file")),
    }
}

/// [`layout_info`] of an array the facade finds by its JSON pointer.
fn by_pointer(f: &AsdfFile, pointer: &str) -> Result<LayoutInfo, Error> {
    let a = f.array(pointer)?;
    let shape = a.shape().to_vec();
    let masked = a.is_masked();
    match a.storage() {
        // One resolution: the handle holds the view it checked against the block.
        asdf::Storage::Internal { block } => {
            let v = a.view()?;
            let b = f.source().block(block)?;
            let label = b.compression()?;
            let h = b.header()?;
            let data_offset = b.data_offset()?;
            // numpy maps the path itself: only while it is still the file opened (a file
            // replaced by another writer is read through this open file instead).
            // An ASDF file inside FITS has its blocks at offsets of its HDU, not of the file.
            let local_asdf = f.source().layout().file_header().dialect == asdf::layout::Dialect::Asdf
                && f.source().fits_hdus().is_none()
                && f.source().unchanged_on_disk();
            let mapped = label == Label::NONE && local_asdf && !b.is_streamed().unwrap_or(true);
            Ok(LayoutInfo {
                shape,
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Block {
                    strides: v.strides.clone(),
                    offset: v.offset,
                    block,
                    label,
                    data_len: b.data_len()?,
                    stored_offset: data_offset,
                    stored_len: h.used_size,
                    mapped,
                },
            })
        }
        asdf::Storage::Chunked { chunks, compressor } => Ok(LayoutInfo {
            shape,
            masked,
            datatype: a.datatype().clone(),
            byteorder: a.byte_order(),
            storage: LayoutStorage::Chunked { chunks, compressor },
        }),
        asdf::Storage::Inline => Ok(LayoutInfo {
            shape,
            masked,
            datatype: a.datatype().clone(),
            byteorder: a.byte_order(),
            storage: LayoutStorage::Inline,
        }),
        other => {
            let external = match other {
                asdf::Storage::External { uri } => Some(uri.to_string()),
                _ => None,
            };
            let v = a.view()?;
            Ok(LayoutInfo {
                shape,
                masked,
                datatype: v.datatype.clone(),
                byteorder: v.byteorder,
                storage: LayoutStorage::Other {
                    external,
                    strides: v.strides.clone(),
                    offset: v.offset,
                },
            })
        }
    }
}

/// What [`NativeFile::target`] returns: path or URL, settings, anonymous, remote version.
type Target4 = (
    std::ffi::OsString,
    Vec<(String, String)>,
    bool,
    Option<(u64, Option<String>)>,
);

/// Why the chunked array at `pointer` is not read, when its Zarr dtype is one asdf_rs's
/// chunked arrays do not hold (records, strings): the message names the array and the dtype.
fn zarr_dtype_refusal(f: &AsdfFile, pointer: &str) -> Option<String> {
    let doc = f.document().ok()?;
    let node = doc.resolve(node_at(f, pointer).ok()?);
    if !node.tag.as_deref().is_some_and(asdf::is_chunked_array_tag) {
        return None;
    }
    let dtype = doc.resolve(doc.resolve(node.get(".zarray")?).get("dtype")?);
    if let Some(s) = dtype.as_str() {
        let mut c = s.chars();
        let numeric = matches!(c.next(), Some('<' | '>' | '|' | '='))
            && matches!(c.next(), Some('i' | 'u' | 'f' | 'c' | 'b'))
            && c.as_str().parse::<u32>().is_ok();
        if numeric {
            return None;
        }
    }
    fn text(doc: &asdf::Document, n: &Node) -> String {
        match &doc.resolve(n).kind {
            NodeKind::Sequence(s) => format!(
                "[{}]",
                s.items.iter().map(|i| text(doc, i)).collect::<Vec<_>>().join(", ")
            ),
            NodeKind::Scalar(s) => format!("{:?}", s.text.as_str()),
            _ => "?".to_owned(),
        }
    }
    Some(format!(
        "{}: an asdf-zarr array of Zarr dtype {} (records or strings) is not read by asdf_rs, whose \
         chunked arrays hold numbers and booleans (Python asdf with asdf-zarr reads it)",
        if pointer.is_empty() { "/" } else { pointer },
        text(doc, dtype)
    ))
}

/// An open file.
#[pyclass(frozen, module = "asdf_rs._native")]
struct NativeFile {
    file: Arc<AsdfFile>,
    target: Target,
    /// The key renames already warned about (each is warned once per open file, however
    /// often its mapping is read).
    warned: std::sync::Mutex<std::collections::HashSet<String>>,
}

fn remote_options(settings: Vec<(String, String)>, anonymous: bool) -> asdf_remote::RemoteOptions {
    asdf_remote::RemoteOptions {
        settings,
        anonymous,
        ..asdf_remote::RemoteOptions::default()
    }
}

/// Opens a path or URL.
///
/// The schemas of Python asdf's installed extensions, with the standard's (set once by
/// `set_extension_schemas`): files opened with `extension_schemas` are validated with them,
/// and (before ASDF 1.6.0) have their defaults filled from them, as Python asdf's open does.
static EXTENSION_SCHEMAS: std::sync::OnceLock<Arc<asdf::AsdfSchemas>> = std::sync::OnceLock::new();

/// Takes the schema and manifest documents Python asdf's resource manager serves (`[(uri,
/// bytes)]`), once per process; returns how many were added (0 when already set).
#[pyfunction]
fn set_extension_schemas(py: Python<'_>, docs: Vec<(String, Vec<u8>)>) -> PyResult<usize> {
    if EXTENSION_SCHEMAS.get().is_some() {
        return Ok(0);
    }
    let (schemas, n) = py
        .detach(move || -> Result<_, Error> {
            let mut s = asdf::schemas_to_extend()?;
            let n = s.add_documents(docs.iter().map(|(u, t)| (std::path::PathBuf::from(u), t.as_slice())))?;
            Ok((s, n))
        })
        .map_err(|e| py_err(py, &e))?;
    let _ = EXTENSION_SCHEMAS.set(Arc::new(schemas));
    Ok(n)
}

/// Whether `set_extension_schemas` has been called.
#[pyfunction]
fn has_extension_schemas() -> bool {
    EXTENSION_SCHEMAS.get().is_some()
}

/// With `resolve_references`, every `$ref` is resolved (as Python asdf's
/// `AsdfFile.resolve_references`): into this file, and into other files beside it.
#[pyfunction]
/// With `extension_schemas`, the schemas `set_extension_schemas` gave are used.
/// `references` is which other files the file may make asdf_rs read (external blocks, `$ref`s,
/// Zarr directory stores): `"inside"` (relative paths inside its folder), `"any"` (any local
/// path, as Python asdf follows them), `"none"`; as asdf-cli's `--references`.
#[pyo3(signature = (target, validate=true, settings=Vec::new(), anonymous=false, resolve_references=false, extension_schemas=false, references="inside"))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments of `asdf_rs.open`
fn open(
    py: Python<'_>,
    target: std::path::PathBuf,
    validate: bool,
    settings: Vec<(String, String)>,
    anonymous: bool,
    resolve_references: bool,
    extension_schemas: bool,
    references: &str,
) -> PyResult<NativeFile> {
    let policy = match references {
        "inside" => asdf::ReferencePolicy::RelativeOnly,
        "any" => asdf::ReferencePolicy::AnyLocalPath,
        "none" => asdf::ReferencePolicy::None,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "references={other:?}: one of \"inside\" (the default), \"any\", \"none\""
            )));
        }
    };
    let remote = remote_options(settings, anonymous);
    // Any scalar may be a key (null, 1.5, a date), as PyYAML and so Python asdf read them
    // (Python asdf warns; so does `asdf_rs.open`, from `invalid_keys`).
    let mut options = OpenOptions::default()
        .validate(validate)
        .any_scalar_keys(true)
        .references(policy);
    if extension_schemas {
        let s = EXTENSION_SCHEMAS
            .get()
            .ok_or_else(|| usage("extension schemas were asked for before set_extension_schemas"))?;
        options = options.schemas(Arc::clone(s));
    }
    let t = target.clone();
    let r = remote.clone();
    let file = py
        .detach(move || {
            let mut f = asdf::Open::path_or_url(&t).options(options).storage_options(r).open()?;
            if resolve_references {
                f.resolve_references()?;
            }
            Ok::<_, Error>(f)
        })
        .map_err(|e| py_err(py, &e))?;
    // As Python asdf's open: a tree that violates its schemas is an error.
    let violations: Vec<asdf::Violation> = file
        .warnings()
        .iter()
        .filter_map(asdf::Warning::violation)
        .cloned()
        .collect();
    if validate && !violations.is_empty() {
        return Err(py_err(py, &Error::Invalid(violations)));
    }
    // A key given twice in a mapping: the later value is read, the earlier one is not (as
    // PyYAML does, silently): said, with where.
    let duplicates: Vec<String> = file
        .warnings()
        .iter()
        .filter(|w| matches!(w, asdf::Warning::Yaml(asdf::YamlWarning::DuplicateKey { .. })))
        .map(ToString::to_string)
        .collect();
    if !duplicates.is_empty() {
        let msg = format!("keys given twice in a mapping of the tree: {}", duplicates.join("; "));
        let msg = std::ffi::CString::new(msg.replace('\0', " ")).map_err(|_| usage("a warning with a NUL"))?;
        PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &msg, 1)?;
    }
    Ok(NativeFile {
        file: Arc::new(file),
        target: Target { path: target, remote },
        warned: std::sync::Mutex::default(),
    })
}

/// A mapping key as Python asdf reads it: a timestamp as PyYAML's date or datetime (made by
/// `asdf_rs._timestamp`), other scalars as [`scalar_value`].
fn key_value(py: Python<'_>, node: &Node) -> PyResult<Py<PyAny>> {
    match &node.kind {
        NodeKind::Scalar(s) if s.value == Value::Timestamp && user_tag(node).is_none() => Ok(py
            .import("asdf_rs")?
            .getattr("_timestamp")?
            .call1((s.text.as_str(),))?
            .unbind()),
        _ => scalar_value(py, node),
    }
}

fn scalar_value(py: Python<'_>, node: &Node) -> PyResult<Py<PyAny>> {
    let NodeKind::Scalar(s) = &node.kind else {
        return Ok(py.None());
    };
    match &s.value {
        Value::Null => Ok(py.None()),
        Value::Bool(b) => b.into_py_any(py),
        Value::Int(i) => i.into_py_any(py),
        Value::BigInt(b) => {
            let text = b.to_string();
            py.import("builtins")?.getattr("int")?.call1((text,)).map(Bound::unbind)
        }
        Value::Float(f) => f.into_py_any(py),
        Value::Binary(b) => PyBytes::new(py, b).into_py_any(py),
        Value::Str | Value::Timestamp => s.text.as_str().into_py_any(py),
    }
}

/// What [`NativeFile::chunk_store_object`] returns: the array's metadata, its key, the object.
type StoreObjectTuple = (String, &'static str, Option<Py<PyAny>>);

/// The walk of [`NativeFile::convert`].
struct Converter<'a, 'py> {
    doc: &'a asdf::Document,
    array: Bound<'py, PyAny>,
    scalar: Bound<'py, PyAny>,
    mapping: Option<Bound<'py, PyAny>>,
    sequence: Option<Bound<'py, PyAny>>,
    timestamp: Option<Bound<'py, PyAny>>,
    scalar_text: bool,
    /// The objects made of anchored nodes, by node address: an alias gives its anchor's
    /// object (a cycle the container being filled).
    seen: Bound<'py, PyDict>,
    /// Plain string keys made once (a tree of records repeats its keys thousands of times).
    keys: std::collections::HashMap<&'a str, Py<PyAny>>,
    /// Keys renamed because Python holds them equal to an earlier key of their mapping.
    renamed: Vec<String>,
    /// Keys of an `!!omap` written twice (the later value kept).
    duplicates: Vec<String>,
}

/// The keys of the mapping at `pointer` (`(object, text)` each, in order), one-to-one: a key
/// Python holds equal to an earlier one (`1`, `1.0` and `true` are one dict key) becomes its
/// text as a string (with a suffix `_1`, `_2`, ... while that is a key of the mapping too, or
/// given already), the rename recorded: two entries of the file never become one entry of a
/// dict.
fn one_to_one_keys(
    py: Python<'_>,
    keys: Vec<(Py<PyAny>, &str)>,
    pointer: &str,
    renamed: &mut Vec<String>,
) -> PyResult<Vec<Py<PyAny>>> {
    let originals = PyDict::new(py);
    for (k, _) in &keys {
        originals.set_item(k, py.None())?;
    }
    if originals.len() == keys.len() {
        return Ok(keys.into_iter().map(|(k, _)| k).collect());
    }
    let taken = PyDict::new(py);
    let mut out = Vec::with_capacity(keys.len());
    for (k, text) in keys {
        if !taken.contains(&k)? {
            taken.set_item(&k, py.None())?;
            out.push(k);
            continue;
        }
        let mut name = text.to_owned();
        let mut n = 0;
        while taken.contains(&name)? || originals.contains(&name)? {
            n += 1;
            name = format!("{text}_{n}");
        }
        renamed.push(format!(
            "{}: {} read as {name:?} (equal in Python to an earlier key)",
            if pointer.is_empty() { "/" } else { pointer },
            k.bind(py).repr()?
        ));
        taken.set_item(&name, py.None())?;
        out.push(name.into_py_any(py)?);
    }
    Ok(out)
}

/// A `UserWarning` listing the keys renamed by [`one_to_one_key`] that `warned` (the file's)
/// does not hold yet, which it then holds.
fn warn_renamed(
    py: Python<'_>,
    renamed: &[String],
    warned: &std::sync::Mutex<std::collections::HashSet<String>>,
) -> PyResult<()> {
    warn_once(
        py,
        "keys that Python holds equal to an earlier key of their mapping were renamed (the file keeps both)",
        renamed,
        warned,
    )
}

/// A `UserWarning` of `what`, listing the `items` that `warned` (the file's) does not hold
/// yet, which it then holds.
fn warn_once(
    py: Python<'_>,
    what: &str,
    items: &[String],
    warned: &std::sync::Mutex<std::collections::HashSet<String>>,
) -> PyResult<()> {
    let items: Vec<&String> = {
        let mut w = warned.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        items.iter().filter(|r| w.insert((*r).clone())).collect()
    };
    if items.is_empty() {
        return Ok(());
    }
    let msg = format!(
        "{what}: {}",
        items.iter().map(|r| r.as_str()).collect::<Vec<_>>().join("; ")
    );
    let msg = std::ffi::CString::new(msg.replace('\0', " ")).map_err(|_| usage("a warning with a NUL"))?;
    PyErr::warn(py, &py.get_type::<pyo3::exceptions::PyUserWarning>(), &msg, 1)
}

/// A step of the walk's path: the JSON pointer is written out only for an array's callback.
#[derive(Clone, Copy)]
enum Seg<'a> {
    /// Entry `i` of a mapping's entries.
    Entry(&'a [(Node, Node)], usize),
    Index(usize),
}

fn pointer_of(base: &str, path: &[Seg<'_>]) -> String {
    use std::fmt::Write as _;
    let mut out = base.to_owned();
    for seg in path {
        match seg {
            Seg::Entry(entries, i) => {
                out.push('/');
                out.push_str(&entry_token(entries, *i));
            }
            Seg::Index(i) => {
                let _ = write!(out, "/{i}");
            }
        }
    }
    out
}

// Tags other than PyYAML's own (`!!x`, `!!python/tuple`, ...) are kept as tagged nodes,
// never constructed, as Python asdf's loader does.
use asdf::yaml::keys::user_tag;

/// YAML 1.1's collection types that Python asdf's loader builds as Python types: `!!set` (a
/// `set`), `!!omap` (an `OrderedDict`), `!!pairs` (a list of tuples).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Yaml11 {
    Set,
    Omap,
    Pairs,
}

impl Yaml11 {
    fn of(node: &Node) -> Option<Self> {
        match (node.tag.as_deref()?, &node.kind) {
            ("tag:yaml.org,2002:set", NodeKind::Mapping(_)) => Some(Yaml11::Set),
            ("tag:yaml.org,2002:omap", NodeKind::Sequence(_)) => Some(Yaml11::Omap),
            ("tag:yaml.org,2002:pairs", NodeKind::Sequence(_)) => Some(Yaml11::Pairs),
            _ => None,
        }
    }
}

/// The prefix of the tokens that name a mapping's entry by its position (`~e3`: entry 3): what
/// [`NativeFile::node`] gives for a key that no JSON pointer token names one-to-one (the
/// integer `1` beside the string `'1'`, a second `true`, a null or float key). RFC 6901 allows
/// only `~0` and `~1`, so such a token never names a key of its own.
const ENTRY: &str = "~e";

/// The JSON pointer token that names the key `k` (as asdf-yaml matches them: strings and
/// integers by their text, booleans as `true`/`false`); `None` for keys no token names.
fn key_token(k: &Node) -> Option<&str> {
    let s = k.as_scalar()?;
    match &s.value {
        Value::Str | Value::Int(_) | Value::BigInt(_) => Some(s.text.as_str()),
        Value::Bool(true) => Some("true"),
        Value::Bool(false) => Some("false"),
        _ => None,
    }
}

/// The entry a JSON pointer token leads to, as asdf-yaml's pointers choose it: the first string
/// key of that text, else the first key of another type whose token it is (`1`, `true`).
fn token_target(entries: &[(Node, Node)], token: &str) -> Option<usize> {
    entries
        .iter()
        .position(|(k, _)| k.as_str() == Some(token))
        .or_else(|| entries.iter().position(|(k, _)| key_token(k) == Some(token)))
}

/// The one-to-one tokens of a mapping's entries: each key's JSON pointer token when that
/// token leads to that entry ([`token_target`]), else its position (`~e<i>`).
fn entry_tokens(entries: &[(Node, Node)]) -> Vec<String> {
    use std::collections::HashMap;
    let mut strings: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    let mut any: HashMap<&str, usize> = HashMap::with_capacity(entries.len());
    for (i, (k, _)) in entries.iter().enumerate() {
        if let Some(t) = k.as_str() {
            strings.entry(t).or_insert(i);
        }
        if let Some(t) = key_token(k) {
            any.entry(t).or_insert(i);
        }
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, (k, _))| match key_token(k) {
            Some(t) if strings.get(t).or_else(|| any.get(t)) == Some(&i) => asdf::escape_pointer_token(t),
            _ => format!("{ENTRY}{i}"),
        })
        .collect()
}

/// The one-to-one token of entry `i` alone (see [`entry_tokens`]).
fn entry_token(entries: &[(Node, Node)], i: usize) -> String {
    match entries.get(i).and_then(|(k, _)| key_token(k)) {
        Some(t) if token_target(entries, t) == Some(i) => asdf::escape_pointer_token(t),
        _ => format!("{ENTRY}{i}"),
    }
}

/// An entry of a mapping as PyYAML builds the mapping: its key and value nodes, and the steps
/// from the mapping to the value (one entry; or, for an entry a merge key brought, the `<<`
/// entry, the item of its list, and the entry of the mapping merged, which may itself be
/// merged).
struct Flat<'a> {
    key: &'a Node,
    value: &'a Node,
    route: Vec<Seg<'a>>,
}

/// Whether a key is YAML 1.1's merge key: a plain `<<` (or one tagged `!!merge`).
fn is_merge_key(k: &Node) -> bool {
    match &k.kind {
        NodeKind::Scalar(s) => match k.tag.as_deref() {
            None => s.style == asdf::yaml::ScalarStyle::Plain && s.text == "<<",
            Some(t) => t == "tag:yaml.org,2002:merge",
        },
        _ => false,
    }
}

/// What makes two merged keys one in PyYAML's `flatten_mapping`, which drops a merged pair
/// whose key text is the same Python object as an earlier one's (`id(key_node.value)`): the
/// same key node (an anchor merged twice), or, as CPython shares them, one text of at most one
/// Latin-1 character.
#[derive(PartialEq, Eq, Hash)]
enum MergedKeyId<'a> {
    Shared(&'a str),
    Node(usize),
}

fn merged_key_id(k: &Node) -> MergedKeyId<'_> {
    let text = k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (None, _) => MergedKeyId::Shared(text),
        (Some(c), None) if u32::from(c) < 256 => MergedKeyId::Shared(text),
        _ => MergedKeyId::Node(std::ptr::from_ref(k) as usize),
    }
}

/// The entries of mapping `m` (at `pointer`, for messages) as PyYAML's loader (so Python
/// asdf) builds them, merge keys applied (`<<: *base`, `<<: [*a, *b]`), in PyYAML's order:
/// the merged entries first (each `<<` in turn, a list's mappings in order, a key already
/// merged dropped as PyYAML drops it), then the mapping's own. A dict made of them in order
/// is PyYAML's (a later value wins: the mapping's own keys win over merged ones). `None` for
/// a mapping without merge keys (its entries as they are).
fn flatten<'a>(
    doc: &'a asdf::Document,
    m: &'a asdf::yaml::Mapping,
    pointer: &str,
    busy: &mut Vec<usize>,
) -> PyResult<Option<Vec<Flat<'a>>>> {
    if !m.entries.iter().any(|(k, _)| is_merge_key(doc.resolve(k))) {
        return Ok(None);
    }
    busy.push(std::ptr::from_ref(m) as usize);
    let mut merged = Vec::new();
    let mut own = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for (i, (k, v)) in m.entries.iter().enumerate() {
        if !is_merge_key(doc.resolve(k)) {
            own.push(Flat {
                key: k,
                value: v,
                route: vec![Seg::Entry(&m.entries, i)],
            });
            continue;
        }
        let at = format!("{pointer}/{}", entry_token(&m.entries, i));
        let sources: Vec<(Option<usize>, &'a asdf::yaml::Mapping)> = match &doc.resolve(v).kind {
            NodeKind::Mapping(sm) => vec![(None, sm)],
            NodeKind::Sequence(s) => s
                .items
                .iter()
                .enumerate()
                .map(|(j, item)| match &doc.resolve(item).kind {
                    NodeKind::Mapping(sm) => Ok((Some(j), sm)),
                    _ => Err(usage(format!(
                        "{at}/{j}: a merge key's list holds something other than a mapping (PyYAML, so Python asdf, refuses the file)"
                    ))),
                })
                .collect::<PyResult<_>>()?,
            _ => {
                return Err(usage(format!(
                    "{at}: a merge key (<<) whose value is not a mapping or a list of mappings (PyYAML, so Python asdf, refuses the file)"
                )));
            }
        };
        for (j, sm) in sources {
            let sub_pointer = match j {
                Some(j) => format!("{at}/{j}"),
                None => at.clone(),
            };
            // A mapping that merges itself (through an alias to an ancestor): its own entries,
            // as PyYAML, which takes the merge keys out before it flattens what they name.
            let sub = if busy.contains(&(std::ptr::from_ref(sm) as usize)) {
                None
            } else {
                flatten(doc, sm, &sub_pointer, busy)?
            };
            let sub = sub.unwrap_or_else(|| {
                sm.entries
                    .iter()
                    .enumerate()
                    .filter(|(_, (k, _))| !is_merge_key(doc.resolve(k)))
                    .map(|(e, (k, v))| Flat {
                        key: k,
                        value: v,
                        route: vec![Seg::Entry(&sm.entries, e)],
                    })
                    .collect()
            });
            for f in sub {
                if ids.insert(merged_key_id(doc.resolve(f.key))) {
                    let mut route = vec![Seg::Entry(&m.entries, i)];
                    route.extend(j.map(Seg::Index));
                    route.extend(f.route);
                    merged.push(Flat {
                        key: f.key,
                        value: f.value,
                        route,
                    });
                }
            }
        }
    }
    busy.pop();
    merged.extend(own);
    Ok(Some(merged))
}

/// A JSON pointer token unescaped (`~0` is `~`, `~1` is `/`); `None` for another escape
/// (the tree's own pointer rules, asdf-yaml's).
fn unescape_token(t: &str) -> Option<String> {
    asdf::yaml::pointer::tokens(&format!("/{t}")).ok()?.pop()
}

/// An index as RFC 6901 writes array indices (and `~e<i>` its entries): decimal digits,
/// without a sign or leading zeros.
fn strict_index(token: &str) -> Option<usize> {
    let canonical =
        !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'));
    if canonical { token.parse().ok() } else { None }
}

/// The node at `pointer`: a JSON pointer, whose tokens may also be the `~e<i>` of
/// [`entry_tokens`] (aliases followed).
fn node_at<'a>(f: &'a AsdfFile, pointer: &str) -> Result<&'a Node, Error> {
    if !pointer.contains(ENTRY) {
        return f.get(pointer);
    }
    let doc = f.document()?;
    let not_found = || Error::NotFound(pointer.to_owned());
    let rest = pointer.strip_prefix('/').ok_or_else(not_found)?;
    let mut n = doc.resolve(&doc.root);
    for raw in rest.split('/') {
        let next = match &n.kind {
            NodeKind::Mapping(m) => match raw.strip_prefix(ENTRY) {
                Some(i) => m.entries.get(strict_index(i).ok_or_else(not_found)?),
                None => {
                    let t = unescape_token(raw).ok_or_else(not_found)?;
                    token_target(&m.entries, &t).and_then(|i| m.entries.get(i))
                }
            }
            .map(|(_, v)| v),
            NodeKind::Sequence(s) => strict_index(raw).and_then(|i| s.items.get(i)),
            _ => None,
        };
        n = doc.resolve(next.ok_or_else(not_found)?);
        if matches!(n.kind, NodeKind::Alias(_)) {
            return Err(not_found());
        }
    }
    Ok(n)
}

/// The pointer (one-to-one tokens, see [`entry_tokens`]) of the node at `path` under `root`.
fn pointer_by_steps(root: &Node, path: &[asdf::Step]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let mut n = root;
    for step in path {
        match (step, &n.kind) {
            (asdf::Step::Entry(i), NodeKind::Mapping(m)) => {
                out.push('/');
                out.push_str(&entry_token(&m.entries, *i));
                match m.entries.get(*i) {
                    Some((_, v)) => n = v,
                    None => break,
                }
            }
            (asdf::Step::Item(i), NodeKind::Sequence(s)) => {
                let _ = write!(out, "/{i}");
                match s.items.get(*i) {
                    Some(v) => n = v,
                    None => break,
                }
            }
            _ => break,
        }
    }
    out
}

impl<'a, 'py> Converter<'a, 'py> {
    fn node(
        &mut self,
        py: Python<'py>,
        node: &'a Node,
        base: &str,
        path: &mut Vec<Seg<'a>>,
        raw: bool,
    ) -> PyResult<Py<PyAny>> {
        let anchored = matches!(node.kind, NodeKind::Alias(_)) || node.anchor.is_some();
        let node = self.doc.resolve(node);
        let key = std::ptr::from_ref(node) as usize;
        if anchored && let Some(obj) = self.seen.get_item(key)? {
            return Ok(obj.unbind());
        }
        let tag = user_tag(node);
        if !raw && tag.is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t)) {
            let obj = self.array.call1((pointer_of(base, path), tag))?.unbind();
            if anchored {
                self.seen.set_item(key, &obj)?;
            }
            return Ok(obj);
        }
        if let Some(kind) = Yaml11::of(node)
            && let Some(obj) = self.yaml11(py, node, kind, base, path)?
        {
            if anchored {
                self.seen.set_item(key, &obj)?;
            }
            return Ok(obj);
        }
        let obj = match &node.kind {
            NodeKind::Mapping(m) => {
                let d = PyDict::new(py);
                if anchored {
                    self.seen.set_item(key, &d)?;
                }
                let flat = flatten(self.doc, m, &pointer_of(base, path), &mut Vec::new())?;
                // Merge keys applied as PyYAML does (see `flatten`): entries set in its order,
                // so the dict keeps its keys and values.
                for f in flat.iter().flatten() {
                    let kobj = self.key_of(py, f.key)?;
                    let depth = path.len();
                    path.extend(f.route.iter().copied());
                    let vobj = self.node(py, f.value, base, path, false);
                    path.truncate(depth);
                    d.set_item(kobj, vobj?)?;
                }
                let plain = if flat.is_some() { &[][..] } else { &m.entries[..] };
                let mut kobjs = Vec::with_capacity(plain.len());
                for (k, _) in plain {
                    kobjs.push(self.key_with_text(py, k)?);
                }
                let kobjs = one_to_one_keys(py, kobjs, &pointer_of(base, path), &mut self.renamed)?;
                for (i, ((_, v), kobj)) in plain.iter().zip(kobjs).enumerate() {
                    path.push(Seg::Entry(&m.entries, i));
                    let vobj = self.node(py, v, base, path, false);
                    path.pop();
                    d.set_item(kobj, vobj?)?;
                }
                match (tag, &self.mapping) {
                    (Some(t), Some(f)) => f.call1((t, d))?.unbind(),
                    _ => d.into_any().unbind(),
                }
            }
            NodeKind::Sequence(s) => {
                let l = PyList::empty(py);
                if anchored {
                    self.seen.set_item(key, &l)?;
                }
                for (i, item) in s.items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    let obj = self.node(py, item, base, path, false);
                    path.pop();
                    l.append(obj?)?;
                }
                match (tag, &self.sequence) {
                    (Some(t), Some(f)) => f.call1((t, l))?.unbind(),
                    _ => l.into_any().unbind(),
                }
            }
            _ => self.scalar_of(py, node)?,
        };
        if anchored {
            self.seen.set_item(key, &obj)?;
        }
        Ok(obj)
    }

    /// A mapping key as a Python object (strings made once).
    fn key_of(&mut self, py: Python<'py>, k: &'a Node) -> PyResult<Py<PyAny>> {
        let k = self.doc.resolve(k);
        let text = k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
        // A plain `=` key (`!!value`): PyYAML's mappings make it the string `=`.
        let value_key = k.tag.as_deref() == Some("tag:yaml.org,2002:value");
        Ok(match &k.kind {
            NodeKind::Scalar(s) if (k.tag.is_none() || value_key) && s.value == Value::Str => {
                if let Some(o) = self.keys.get(text) {
                    o.clone_ref(py)
                } else {
                    let o = text.into_py_any(py)?;
                    self.keys.insert(text, o.clone_ref(py));
                    o
                }
            }
            NodeKind::Scalar(_) => self.scalar_of(py, k)?,
            // A container as a key (YAML allows it): its text form.
            _ => text.into_py_any(py)?,
        })
    }

    /// A mapping key as Python takes it, with its text (for [`one_to_one_keys`]).
    fn key_with_text(&mut self, py: Python<'py>, k: &'a Node) -> PyResult<(Py<PyAny>, &'a str)> {
        let doc: &'a asdf::Document = self.doc;
        let text = doc.resolve(k).as_scalar().map(|s| s.text.as_str()).unwrap_or_default();
        Ok((self.key_of(py, k)?, text))
    }

    /// `!!set`, `!!omap` or `!!pairs` as PyYAML's safe loader and Python asdf build them;
    /// `None` (then read as an untagged container) when the node is not of that form (an
    /// `!!omap` item that is not a mapping of one key).
    fn yaml11(
        &mut self,
        py: Python<'py>,
        node: &'a Node,
        kind: Yaml11,
        base: &str,
        path: &mut Vec<Seg<'a>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        match (&node.kind, kind) {
            (NodeKind::Mapping(m), Yaml11::Set) => {
                let set = pyo3::types::PySet::empty(py)?;
                for (k, _) in &m.entries {
                    set.add(self.key_of(py, k)?)?;
                }
                Ok(Some(set.into_any().unbind()))
            }
            (NodeKind::Sequence(s), Yaml11::Omap | Yaml11::Pairs) => {
                let mut entries = Vec::with_capacity(s.items.len());
                let mut kobjs = Vec::with_capacity(s.items.len());
                for item in &s.items {
                    let item = self.doc.resolve(item);
                    let NodeKind::Mapping(m) = &item.kind else {
                        return Ok(None);
                    };
                    let [(k, _)] = m.entries.as_slice() else {
                        return Ok(None);
                    };
                    kobjs.push(self.key_with_text(py, k)?);
                    entries.push(m.entries.as_slice());
                }
                // An ordered mapping's keys as a mapping's are: a key written twice (`a` and
                // `a`, `1` and `true`) is one entry, the later value in the earlier place (as
                // PyYAML's OrderedDict makes it), with a warning; keys Python holds equal but
                // written differently (`1` and `1.0`) are renamed. Pairs keep them all.
                let (kobjs, entries) = if kind == Yaml11::Omap {
                    let pointer = pointer_of(base, path);
                    let mut first: std::collections::HashMap<(bool, String), usize> = std::collections::HashMap::new();
                    let mut keys: Vec<(Py<PyAny>, &str)> = Vec::new();
                    let mut kept: Vec<&'a [(Node, Node)]> = Vec::new();
                    for (i, (kobj, m)) in kobjs.into_iter().zip(entries).enumerate() {
                        let id = asdf::yaml::key_identity(self.doc.resolve(&m[0].0));
                        if let Some(&at) = id.as_ref().and_then(|id| first.get(id)) {
                            self.duplicates.push(format!(
                                "{pointer}/{i}: the key {} written again (the later value kept)",
                                kobj.0.bind(py).repr()?,
                            ));
                            kept[at] = m;
                            continue;
                        }
                        if let Some(id) = id {
                            first.insert(id, kept.len());
                        }
                        keys.push(kobj);
                        kept.push(m);
                    }
                    (one_to_one_keys(py, keys, &pointer, &mut self.renamed)?, kept)
                } else {
                    (kobjs.into_iter().map(|(k, _)| k).collect(), entries)
                };
                let mut pairs = Vec::with_capacity(s.items.len());
                for (i, (m, kobj)) in entries.into_iter().zip(kobjs).enumerate() {
                    let v = &m[0].1;
                    path.push(Seg::Index(i));
                    path.push(Seg::Entry(m, 0));
                    let vobj = self.node(py, v, base, path, false);
                    path.pop();
                    path.pop();
                    pairs.push(PyTuple::new(py, [kobj, vobj?])?);
                }
                let list = PyList::new(py, pairs)?;
                if kind == Yaml11::Pairs {
                    return Ok(Some(list.into_any().unbind()));
                }
                let od = py.import("collections")?.getattr("OrderedDict")?.call1((list,))?;
                Ok(Some(od.unbind()))
            }
            _ => Ok(None),
        }
    }

    fn scalar_of(&self, py: Python<'py>, node: &Node) -> PyResult<Py<PyAny>> {
        let NodeKind::Scalar(s) = &node.kind else {
            return Ok(py.None());
        };
        if let Some(t) = user_tag(node) {
            let value = if self.scalar_text {
                s.text.as_str().into_py_any(py)?
            } else {
                scalar_value(py, node)?
            };
            return Ok(self.scalar.call1((t, value))?.unbind());
        }
        if let (Value::Timestamp, Some(f)) = (&s.value, &self.timestamp) {
            return Ok(f.call1((s.text.as_str(),))?.unbind());
        }
        scalar_value(py, node)
    }
}

/// numpy's name of a datatype in a byte order (`'<f8'`, `'|S10'`, a list of fields).
fn numpy_dtype(py: Python<'_>, dt: &Datatype, order: ByteOrder) -> PyResult<Py<PyAny>> {
    let o = match order {
        ByteOrder::Big => '>',
        ByteOrder::Little => '<',
    };
    match dt {
        Datatype::Scalar(s) => {
            let (kind, size) = match s {
                ScalarType::Int8 => ('i', 1),
                ScalarType::Int16 => ('i', 2),
                ScalarType::Int32 => ('i', 4),
                ScalarType::Int64 => ('i', 8),
                ScalarType::UInt8 => ('u', 1),
                ScalarType::UInt16 => ('u', 2),
                ScalarType::UInt32 => ('u', 4),
                ScalarType::UInt64 => ('u', 8),
                ScalarType::Float16 => ('f', 2),
                ScalarType::Float32 => ('f', 4),
                ScalarType::Float64 => ('f', 8),
                ScalarType::Complex64 => ('c', 8),
                ScalarType::Complex128 => ('c', 16),
                ScalarType::Bool8 => ('b', 1),
                _ => return Err(usage(format!("datatype {dt} has no numpy equivalent here"))),
            };
            format!("{o}{kind}{size}").into_py_any(py)
        }
        Datatype::Ascii(n) => format!("|S{n}").into_py_any(py),
        Datatype::Ucs4(n) => format!("{o}U{n}").into_py_any(py),
        Datatype::Structured(fields) => {
            let list = PyList::empty(py);
            for (i, f) in fields.iter().enumerate() {
                let name = f.name.clone().unwrap_or_else(|| format!("f{i}"));
                let sub = numpy_dtype(py, &f.datatype, f.byteorder.unwrap_or(order))?;
                if f.shape.is_empty() {
                    list.append((name, sub))?;
                } else {
                    list.append((name, sub, PyTuple::new(py, &f.shape)?))?;
                }
            }
            list.into_py_any(py)
        }
        _ => Err(usage(format!("datatype {dt} has no numpy equivalent here"))),
    }
}

#[pymethods]
impl NativeFile {
    /// `(kind, tag, payload)` of the node at `pointer` (aliases followed): `"map"` with its
    /// `[(key, token)]`, `"seq"` with its length, `"ndarray"` with `None`, `"scalar"` with
    /// its value (`"timestamp"` with its text for an untagged timestamp).
    /// With `raw`, an ndarray is given as the mapping or sequence it is written as.
    #[pyo3(signature = (pointer, raw=false))]
    fn node(&self, py: Python<'_>, pointer: &str, raw: bool) -> PyResult<(String, Option<String>, Py<PyAny>)> {
        let f = &self.file;
        let node = node_at(f, pointer).map_err(|e| py_err(py, &e))?;
        let doc = f.document().map_err(|e| py_err(py, &e))?;
        let node = doc.resolve(node);
        let tag = node.tag.as_deref().map(str::to_string);
        if !raw
            && tag
                .as_deref()
                .is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t))
        {
            return Ok(("ndarray".into(), tag, py.None()));
        }
        match &node.kind {
            NodeKind::Mapping(m) => {
                // Each key with a token of its own: keys that differ only in type (`1`, `'1'`)
                // or that no JSON pointer names (null, floats) are different entries.
                let keys = PyList::empty(py);
                if let Some(flat) = flatten(doc, m, pointer, &mut Vec::new())? {
                    // Merge keys applied, as PyYAML does: an entry a merge brought is reached
                    // through the `<<` entry (its token is that path); a key given twice is
                    // one key of the dict the Python side makes, the later value winning.
                    for f in flat {
                        let token = pointer_of("", &f.route);
                        let token = token.strip_prefix('/').unwrap_or(&token).to_owned();
                        keys.append((key_value(py, doc.resolve(f.key))?, token))?;
                    }
                    return Ok(("map".into(), tag, keys.into_py_any(py)?));
                }
                let mut renamed = Vec::new();
                let mut kobjs = Vec::with_capacity(m.entries.len());
                for (k, _) in &m.entries {
                    let k = doc.resolve(k);
                    kobjs.push((
                        key_value(py, k)?,
                        k.as_scalar().map(|s| s.text.as_str()).unwrap_or_default(),
                    ));
                }
                let kobjs = one_to_one_keys(py, kobjs, pointer, &mut renamed)?;
                for (kobj, token) in kobjs.into_iter().zip(entry_tokens(&m.entries)) {
                    keys.append((kobj, token))?;
                }
                warn_renamed(py, &renamed, &self.warned)?;
                Ok(("map".into(), tag, keys.into_py_any(py)?))
            }
            NodeKind::Sequence(s) => Ok(("seq".into(), tag, s.items.len().into_py_any(py)?)),
            NodeKind::Scalar(s) if s.value == Value::Timestamp => {
                Ok(("timestamp".into(), tag, scalar_value(py, node)?))
            }
            _ => Ok(("scalar".into(), tag, scalar_value(py, node)?)),
        }
    }

    /// An identity of the node at `pointer` (aliases followed): two pointers to one node
    /// (an alias and its anchor) give the same; walks use it to see a node that contains
    /// itself (`a: &a {self: *a}`).
    fn node_id(&self, py: Python<'_>, pointer: &str) -> PyResult<usize> {
        let f = &self.file;
        let node = node_at(f, pointer).map_err(|e| py_err(py, &e))?;
        let doc = f.document().map_err(|e| py_err(py, &e))?;
        Ok(std::ptr::from_ref(doc.resolve(node)) as usize)
    }

    /// The subtree at `pointer` as Python objects in one call: mappings as dicts, sequences
    /// as lists, scalars as their values, with Python callables for what needs the Python
    /// side: `array(pointer, tag)` for each ndarray or chunked array, `scalar(tag, value)` for
    /// each tagged scalar (given its text when `scalar_text`), `mapping(tag, dict)` and
    /// `sequence(tag, list)` for each tagged container (`None`: left plain), `timestamp(text)`
    /// for each untagged timestamp (`None`: its text). An alias gives the same object as its
    /// anchor (as a YAML loader does). With `raw`, the node at `pointer` itself is not given
    /// to `array`.
    /// `memo` (a dict, when given) keeps the objects made of anchored nodes from call to call
    /// (by node address): an alias reached by a later call gives the same object.
    #[pyo3(signature = (pointer, array, scalar, mapping=None, sequence=None, timestamp=None, scalar_text=false, raw=false, memo=None))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn convert(
        &self,
        py: Python<'_>,
        pointer: &str,
        array: Bound<'_, PyAny>,
        scalar: Bound<'_, PyAny>,
        mapping: Option<Bound<'_, PyAny>>,
        sequence: Option<Bound<'_, PyAny>>,
        timestamp: Option<Bound<'_, PyAny>>,
        scalar_text: bool,
        raw: bool,
        memo: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let f = &self.file;
        let node = node_at(f, pointer).map_err(|e| py_err(py, &e))?;
        let doc = f.document().map_err(|e| py_err(py, &e))?;
        let mut c = Converter {
            doc,
            array,
            scalar,
            mapping,
            sequence,
            timestamp,
            scalar_text,
            seen: memo.unwrap_or_else(|| PyDict::new(py)),
            keys: std::collections::HashMap::new(),
            renamed: Vec::new(),
            duplicates: Vec::new(),
        };
        let out = c.node(py, node, pointer, &mut Vec::new(), raw)?;
        warn_renamed(py, &c.renamed, &self.warned)?;
        warn_once(
            py,
            "keys written twice in an ordered mapping (!!omap), read as Python asdf reads them",
            &c.duplicates,
            &self.warned,
        )?;
        Ok(out)
    }

    /// How to build the numpy array at `pointer`: a dict with `dtype`, `shape`, `strides`,
    /// `offset` (in the block), and either `path` + `data_offset` (an uncompressed block of
    /// a local ASDF file: numpy maps it) or `inline` (the tree's `data` holds the elements)
    /// or nothing (read the block with `block_bytes`). Also `block`, `compression`, `data_len`,
    /// `stored_offset`, `stored_len`, `mask` (a pointer) for Dask.
    fn layout(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
        // Everything that may read (a remote block header is fetched) runs without the GIL.
        let f = Arc::clone(&self.file);
        let pointer_owned = pointer.to_owned();
        let info = py
            .detach(move || layout_info(&f, &pointer_owned))
            .map_err(|e| match zarr_dtype_refusal(&self.file, pointer) {
                Some(msg) => usage(msg),
                None => py_err(py, &e),
            })?
            .map_err(|what| unnamed(pointer, what))?;
        let d = PyDict::new(py);
        if pointer.contains(ENTRY) {
            // Read whole, then sliced: region reads find arrays by JSON pointer.
            d.set_item("by_entry", true)?;
        }
        d.set_item("shape", PyTuple::new(py, &info.shape)?)?;
        if info.masked {
            d.set_item("masked", true)?;
        }
        d.set_item("dtype", numpy_dtype(py, &info.datatype, info.byteorder)?)?;
        match info.storage {
            LayoutStorage::Block {
                strides,
                offset,
                block,
                label,
                data_len,
                stored_offset,
                stored_len,
                mapped,
            } => {
                d.set_item("strides", PyTuple::new(py, &strides)?)?;
                d.set_item("offset", offset)?;
                d.set_item("block", block)?;
                d.set_item("compression", label.name())?;
                d.set_item("data_len", data_len)?;
                d.set_item("stored_offset", stored_offset)?;
                d.set_item("stored_len", stored_len)?;
                if mapped {
                    d.set_item("path", self.target.path.as_os_str())?;
                    d.set_item("data_offset", stored_offset)?;
                }
            }
            LayoutStorage::Inline => d.set_item("inline", true)?,
            LayoutStorage::Chunked { chunks, compressor } => {
                d.set_item("chunked", true)?;
                d.set_item("chunks", PyTuple::new(py, &chunks)?)?;
                d.set_item("compressor", compressor)?;
            }
            LayoutStorage::Other {
                external,
                strides,
                offset,
            } => {
                if let Some(uri) = external {
                    d.set_item("external", uri)?;
                }
                d.set_item("strides", PyTuple::new(py, &strides)?)?;
                d.set_item("offset", offset)?;
            }
        }
        d.into_py_any(py)
    }

    /// A region of the array at `pointer` (numpy's basic slicing as text; `""` for all):
    /// `(shape, bytes, byte order)`, the elements in C order. Only what the region touches
    /// is read and decoded, with the GIL released.
    fn region(&self, py: Python<'_>, pointer: &str, region: &str) -> PyResult<(Vec<usize>, Py<PyAny>, char)> {
        if pointer.contains(ENTRY) {
            return Err(unnamed(pointer, "a region of an array"));
        }
        let f = Arc::clone(&self.file);
        let r: asdf::Region = region.parse().map_err(|source| {
            py_err(
                py,
                &Error::Region {
                    pointer: pointer.to_owned(),
                    source,
                },
            )
        })?;
        let (shape, len) = py
            .detach(|| -> Result<_, Error> {
                let a = f.array(pointer)?;
                let shape = a.region_shape(&r)?;
                let len = shape.iter().product::<usize>().saturating_mul(a.datatype().size());
                Ok((shape, len))
            })
            .map_err(|e| py_err(py, &e))?;
        // Decoded straight into the `bytes` numpy then wraps (a chunked array's chunks each
        // copied into place as it is decoded): no second buffer of the region, and no pass
        // that zeroes it first with the GIL held.
        let mut order = ByteOrder::Little;
        let out = bytes_filled_without_gil(py, len, |buf| {
            f.array(pointer)
                .and_then(|a| a.read_region_bytes_into(&r, buf))
                .map(|o| order = o)
        })?;
        let order = match order {
            ByteOrder::Big => '>',
            ByteOrder::Little => '<',
        };
        Ok((shape, out.into_py_any(py)?, order))
    }

    /// The data of the exploded array at `pointer`: block 0 of the file its `source` names,
    /// found and read by asdf_rs under the reference policy (the name percent-decoded as a
    /// URI's; beside a remote file, fetched with its settings). The GIL is released.
    fn external_data(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
        let f = Arc::clone(&self.file);
        let pointer = pointer.to_owned();
        let data = py
            .detach(move || f.external_data(&pointer))
            .map_err(|e| py_err(py, &e))?;
        bytes_of(py, data)
    }

    /// The decoded data of block `index` as `bytes`, decoded straight into them.
    fn block_bytes(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>> {
        let f = Arc::clone(&self.file);
        let b = f.source().block(index).map_err(|e| py_err(py, &e))?;
        let len = usize::try_from(b.data_len().map_err(|e| py_err(py, &e))?)
            .map_err(|_| usage("a block larger than memory"))?;
        // A claim the file cannot back (stored bytes past its end, or a compressed block
        // claiming more than 64 times its stored size and 64 MiB) is read a piece at a time,
        // memory following what really decodes, before anything the size of the claim is
        // made: a 305-byte file claiming 3 GB took 3 GB (zeroed) before its error.
        let h = b.header().map_err(|e| py_err(py, &e))?;
        let stored_end = b.data_offset().map_err(|e| py_err(py, &e))?.saturating_add(h.used_size);
        let suspicious = (!h.is_streamed() && stored_end > f.source().layout().file_len())
            || (h.compression != asdf::Label::NONE && len as u64 > h.used_size.saturating_mul(64).max(64 << 20));
        if suspicious {
            let mut v = Vec::new();
            py.detach(|| f.source().block(index).and_then(|b| b.read_into_vec(&mut v)))
                .map_err(|e| py_err(py, &e))?;
            return bytes_of(py, v);
        }
        // Read (decoded) straight into the `bytes`, not zeroed first: a 915 MiB block zeroed
        // with the GIL held stalled other threads for 0.9 s.
        bytes_filled_without_gil(py, len, |buf| f.source().block(index).and_then(|b| b.read_into(buf)))?.into_py_any(py)
    }

    /// An inline ndarray's elements as nested lists (its `data`, or the node itself when the
    /// ndarray is written as a bare sequence).
    fn inline_data(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
        let f = &self.file;
        let doc = f.document().map_err(|e| py_err(py, &e))?;
        let node = doc.resolve(node_at(f, pointer).map_err(|e| py_err(py, &e))?);
        let data = match &node.kind {
            NodeKind::Mapping(_) => node
                .get("data")
                .map(|d| doc.resolve(d))
                .ok_or_else(|| usage(format!("{pointer}: an ndarray without data or source")))?,
            _ => node,
        };
        fn lists(py: Python<'_>, doc: &asdf::Document, n: &Node) -> PyResult<Py<PyAny>> {
            match &doc.resolve(n).kind {
                NodeKind::Sequence(s) => {
                    let out = PyList::empty(py);
                    for item in &s.items {
                        out.append(lists(py, doc, item)?)?;
                    }
                    out.into_py_any(py)
                }
                _ => scalar_value(py, doc.resolve(n)),
            }
        }
        lists(py, doc, data)
    }

    /// Bytes `start..end` of block `index`'s decoded data: only those bytes are read from an
    /// uncompressed block (one ranged request for a remote file).
    fn block_range(&self, py: Python<'_>, index: usize, start: u64, end: u64) -> PyResult<Py<PyAny>> {
        let f = Arc::clone(&self.file);
        let bytes = py
            .detach(move || {
                f.source()
                    .layout()
                    .read_range(index, start..end)
                    .map(|c| c.into_owned())
            })
            .map_err(|e| py_err(py, &Error::Layout(e)))?;
        bytes_of(py, bytes)
    }

    /// The blocks: a dict each (`index`, `offset`, `data_offset`, `compression`,
    /// `data_len`, `stored_len`, `allocated`).
    fn blocks(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        // Block headers may be fetched (a remote file): without the GIL.
        let f = Arc::clone(&self.file);
        let rows = py
            .detach(move || -> Result<Vec<_>, Error> {
                f.source()
                    .blocks()
                    .map(|b| {
                        let h = b.header()?;
                        Ok((
                            b.index(),
                            b.offset()?,
                            b.data_offset()?,
                            b.compression()?.name().to_owned(),
                            h.data_size,
                            h.used_size,
                            h.allocated_size,
                        ))
                    })
                    .collect()
            })
            .map_err(|e| py_err(py, &e))?;
        let list = PyList::empty(py);
        for (index, offset, data_offset, compression, data_len, stored_len, allocated) in rows {
            let d = PyDict::new(py);
            d.set_item("index", index)?;
            d.set_item("offset", offset)?;
            d.set_item("data_offset", data_offset)?;
            d.set_item("compression", compression)?;
            d.set_item("data_len", data_len)?;
            d.set_item("stored_len", stored_len)?;
            d.set_item("allocated", allocated)?;
            list.append(d)?;
        }
        list.into_py_any(py)
    }

    /// Reads, decodes and checksums every block (on every core, in bounded memory) and checks
    /// every array's view (`AsdfFile::verify`, as the CLI's `verify`); returns
    /// `[(index, status)]`, or raises `AsdfError` naming every problem found. The GIL is
    /// released meanwhile.
    fn verify(&self, py: Python<'_>) -> PyResult<Vec<(usize, String)>> {
        let f = Arc::clone(&self.file);
        let report = py.detach(move || f.verify(None));
        let problems = report.problems();
        if let Some((_, Err(e))) = report.blocks.iter().find(|(_, r)| r.is_err())
            && problems.len() == 1
        {
            return Err(py_err(py, e));
        }
        if !problems.is_empty() {
            return Err(AsdfError::new_err(problems.join("\n")));
        }
        Ok(report
            .blocks
            .iter()
            .filter_map(|(i, r)| r.as_ref().ok().map(|s| (*i, format!("{s:?}"))))
            .collect())
    }

    /// Validates the tree: `[(pointer, message)]`, empty when valid.
    fn validate(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let f = Arc::clone(&self.file);
        let report = py.detach(move || f.validate(None, None)).map_err(|e| py_err(py, &e))?;
        Ok(report
            .violations
            .iter()
            .map(|v| (v.instance.clone(), v.to_string()))
            .collect())
    }

    /// The warnings met opening the file.
    fn warnings(&self) -> Vec<String> {
        self.file.warnings().iter().map(ToString::to_string).collect()
    }

    /// The ASDF Standard version.
    fn standard(&self) -> String {
        self.file.standard_version().to_string()
    }

    /// The tree as YAML text.
    fn yaml(&self, py: Python<'_>) -> PyResult<String> {
        let f = Arc::clone(&self.file);
        let bytes = py
            .detach(move || f.document().and_then(asdf::emit_yaml))
            .map_err(|e| py_err(py, &e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Where the chunks of the asdf-zarr array at `pointer` are, when they are blocks of the
    /// file: `(metadata JSON, grid, [(stored_offset, stored_len, compression, data_len) or
    /// None per chunk, C order])`; `None` for other arrays (for Dask's tasks).
    #[allow(clippy::type_complexity)]
    fn chunk_map(
        &self,
        py: Python<'_>,
        pointer: &str,
    ) -> PyResult<Option<(String, Vec<usize>, Vec<Option<(u64, u64, String, u64)>>)>> {
        if pointer.contains(ENTRY) {
            return Err(unnamed(pointer, "a chunked array"));
        }
        let f = Arc::clone(&self.file);
        let pointer = pointer.to_owned();
        py.detach(move || -> Result<_, Error> {
            let Some(map) = f.chunk_map(&pointer)? else {
                return Ok(None);
            };
            let mut chunks = Vec::with_capacity(map.blocks.len());
            for b in &map.blocks {
                chunks.push(match b {
                    Some(i) => {
                        let b = f.source().block(*i)?;
                        Some((
                            b.data_offset()?,
                            b.header()?.used_size,
                            b.compression()?.name().to_owned(),
                            b.data_len()?,
                        ))
                    }
                    None => None,
                });
            }
            Ok(Some((map.metadata, map.grid, chunks)))
        })
        .map_err(|e| py_err(py, &e))
    }

    /// For the asdf-zarr array at `pointer` whose chunks are in a store outside the file:
    /// `(metadata JSON, metadata key, the store object `key` as bytes or None)`, read under the
    /// file's reference policy (the store found from the file's directory, its links kept
    /// inside it); `None` for an array whose chunks are in the file. For `to_objects`, whose
    /// zarr array reads its store through this (never through a path of its own).
    fn chunk_store_object(&self, py: Python<'_>, pointer: &str, key: &str) -> PyResult<Option<StoreObjectTuple>> {
        if pointer.contains(ENTRY) {
            return Err(unnamed(pointer, "a chunked array"));
        }
        let f = Arc::clone(&self.file);
        let (pointer, key) = (pointer.to_owned(), key.to_owned());
        let found = py
            .detach(move || f.chunk_store_object(&pointer, &key))
            .map_err(|e| py_err(py, &e))?;
        let Some(o) = found else { return Ok(None) };
        let bytes = o.bytes.map(|b| bytes_of(py, b)).transpose()?;
        Ok(Some((o.metadata, o.metadata_key, bytes)))
    }

    /// The JSON pointers of every array in the tree (ndarrays and chunked arrays), in the
    /// tree's order.
    /// Their tokens are one-to-one (see `node`): two arrays under keys of the same text have
    /// two pointers.
    fn array_pointers(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let root = &self.file.document().map_err(|e| py_err(py, &e))?.root;
        let mut out = Vec::new();
        root.walk_with(&mut |path, n| {
            if matches!(path.last(), Some(asdf::Step::Key(_))) {
                return asdf::Visit::SkipChildren;
            }
            if n.tag
                .as_deref()
                .is_some_and(|t| asdf::is_ndarray_tag(t) || asdf::is_chunked_array_tag(t))
            {
                out.push(pointer_by_steps(root, path));
                return asdf::Visit::SkipChildren;
            }
            asdf::Visit::Continue
        });
        Ok(out)
    }

    /// `[(pointer, key text)]` of every mapping key the standard does not allow (null, a
    /// float, a timestamp, a tagged key), for the warning Python asdf gives reading them.
    fn invalid_keys(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let root = &self.file.document().map_err(|e| py_err(py, &e))?.root;
        let mut out = Vec::new();
        for path in asdf::yaml::keys::nonstandard_keys(root) {
            let Some((_, parent)) = path.split_last() else { continue };
            let text = root
                .at_path(&path)
                .and_then(Node::as_scalar)
                .map(|s| s.text.to_string())
                .unwrap_or_default();
            let at = pointer_by_steps(root, parent);
            out.push((if at.is_empty() { "/".to_owned() } else { at }, text));
        }
        Ok(out)
    }

    /// Writes this file to `path` (or an object-store URL) as it is: each block's compression
    /// kept (or `compression` for every block: `"none"` removes it), arrays that share a block
    /// still sharing it, chunked arrays chunked, exploded arrays brought into the file.
    /// Atomic (a new file renamed over the old); over the file's own path, refused when
    /// another writer changed it since it was opened.
    #[pyo3(signature = (path, compression=None, checksums=true, validate=true))]
    fn write_to(
        &self,
        py: Python<'_>,
        path: std::path::PathBuf,
        compression: Option<String>,
        checksums: bool,
        validate: bool,
    ) -> PyResult<()> {
        let compression = match compression.as_deref() {
            None | Some("keep") => asdf::Compression::Keep,
            Some(name) => asdf::Compression::All(
                Label::from_name(name).ok_or_else(|| usage(format!("unknown compression {name:?}")))?,
            ),
        };
        let options = asdf::WriteOptions::default()
            .compression(compression)
            .checksums(checksums)
            .validate(validate);
        let file = self.file.clone();
        py.detach(move || file.write_to(&path, &options))
            .map_err(|e| py_err(py, &e))
    }

    /// Whether the file is an ASDF file inside FITS (Appendix A of the standard).
    fn in_fits(&self) -> bool {
        self.file.source().fits_hdus().is_some()
    }

    /// `(requests, bytes, ranges)` fetched from a remote file so far; `None` for local files.
    fn remote_stats(&self) -> Option<RemoteStats> {
        self.file
            .source()
            .remote_stats()
            .map(|s| (s.requests(), s.bytes(), s.ranges()))
    }

    /// The path or URL opened, the store settings, and for a remote file the (size, ETag) of
    /// the version opened (for Dask's tasks).
    fn target(&self) -> Target4 {
        (
            // A str (not a `pathlib.Path`, which would make `s3://b/k` `s3:/b/k`).
            self.target.path.clone().into_os_string(),
            self.target.remote.settings.clone(),
            self.target.remote.anonymous,
            self.file.source().remote_stats().and_then(|s| s.version()),
        )
    }
}

/// `end - start` bytes at `start` of a path or URL, in one ranged request (or one
/// positioned read): what a Dask task fetches.
#[pyfunction]
#[pyo3(signature = (target, start, end, settings=Vec::new(), anonymous=false, size=None, etag=None))]
#[allow(clippy::too_many_arguments)]
fn read_range(
    py: Python<'_>,
    target: std::path::PathBuf,
    start: u64,
    end: u64,
    settings: Vec<(String, String)>,
    anonymous: bool,
    size: Option<u64>,
    etag: Option<String>,
) -> PyResult<Py<PyAny>> {
    if end < start {
        return Err(usage(format!("range {start}..{end} ends before it starts")));
    }
    let len = usize::try_from(end - start).map_err(|_| usage("a range larger than memory"))?;
    let out = bytes_filled(
        py,
        len,
        |buf| -> Result<(), String> {
            if let Some(url) = target.to_str().filter(|t| asdf::is_url(t)) {
                let got = asdf_remote::fetch_range(
                    url,
                    &remote_options(settings, anonymous),
                    start..end,
                    size.map(|s| (s, etag)),
                )
                .map_err(|e| e.to_string())?;
                buf.copy_from_slice(&got);
            } else {
                let name = target.display();
                let f = std::fs::File::open(&target).map_err(|e| format!("{name}: {e}"))?;
                asdf::ReadAt::read_exact_at(&f, start, buf)
                    .map_err(|e| format!("{name}: bytes {start}..{end}: {e}"))?;
            }
            Ok(())
        },
        |_, e| AsdfError::new_err(e),
    )?;
    out.into_py_any(py)
}

/// Whether `target` is a URL (http, https, s3) rather than a path.
#[pyfunction]
fn is_url(target: &str) -> bool {
    asdf::is_url(target)
}

/// Decodes a block's stored bytes (`compression` a label such as `zlib`) into `data_len`
/// bytes.
#[pyfunction]
fn decode_block(py: Python<'_>, compression: &str, stored: &[u8], data_len: usize) -> PyResult<Py<PyAny>> {
    let label = Label::from_name(compression).ok_or_else(|| usage(format!("unknown compression {compression:?}")))?;
    if label == Label::NONE {
        return PyBytes::new(py, stored).into_py_any(py);
    }
    let registry = asdf::compression::Registry::shared_default();
    let codec = registry
        .get(label)
        .ok_or_else(|| usage(format!("no codec for {compression:?} in this build")))?;
    bytes_filled(
        py,
        data_len,
        |buf| codec.decode(stored, buf),
        |_, e| AsdfError::new_err(format!("{compression}: {e}")),
    )?
    .into_py_any(py)
}

/// Bytes `lo..hi` of a block's decoded data, the block's stored bytes being `stored_len` bytes
/// at `stored_offset` of a path or URL: a codec with random access (a Blosc2 frame) fetches
/// only its header, chunk index and the chunks the range touches; others fetch the whole
/// block. What a Dask task over one chunk of a frame reads. The GIL is released.
#[pyfunction]
#[pyo3(signature = (target, stored_offset, stored_len, compression, data_len, lo, hi, settings=Vec::new(), anonymous=false, size=None, etag=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, as read_range's
fn read_block_range(
    py: Python<'_>,
    target: std::path::PathBuf,
    stored_offset: u64,
    stored_len: u64,
    compression: &str,
    data_len: usize,
    lo: usize,
    hi: usize,
    settings: Vec<(String, String)>,
    anonymous: bool,
    size: Option<u64>,
    etag: Option<String>,
) -> PyResult<Py<PyAny>> {
    let label = Label::from_name(compression).ok_or_else(|| usage(format!("unknown compression {compression:?}")))?;
    if lo > hi || hi > data_len {
        return Err(usage(format!("range {lo}..{hi} is not inside {data_len} bytes")));
    }
    let out = py
        .detach(|| -> Result<Vec<u8>, String> {
            let registry = asdf::compression::Registry::shared_default();
            let codec = registry
                .get(label)
                .ok_or_else(|| format!("no codec for {compression:?} in this build"))?;
            let opts = remote_options(settings, anonymous);
            let url = target.to_str().filter(|t| asdf::is_url(t));
            let name = target.display();
            let local = if url.is_some() {
                None
            } else {
                Some(std::fs::File::open(&target).map_err(|e| format!("{name}: {e}"))?)
            };
            let mut failed = None;
            let mut read = |off: u64, len: usize| -> Result<Vec<u8>, asdf::compression::CodecError> {
                let at = stored_offset + off;
                let got = match &local {
                    Some(f) => {
                        let mut buf = vec![0u8; len];
                        asdf::ReadAt::read_exact_at(f, at, &mut buf)
                            .map(|()| buf)
                            .map_err(|e| e.to_string())
                    }
                    None => asdf_remote::fetch_range(
                        url.unwrap_or_default(),
                        &opts,
                        at..at + len as u64,
                        size.map(|s| (s, etag.clone())),
                    )
                    .map(|b| b.to_vec())
                    .map_err(|e| e.to_string()),
                };
                got.map_err(|e| {
                    failed = Some(format!("{name}: bytes {at}..{}: {e}", at + len as u64));
                    asdf::compression::CodecError::Truncated { consumed: off }
                })
            };
            let r = codec.decode_range_from(stored_len, &mut read, data_len, lo..hi);
            if let Some(e) = failed {
                return Err(e);
            }
            r.map_err(|e| format!("{compression}: {e}"))
        })
        .map_err(AsdfError::new_err)?;
    bytes_of(py, out)
}

/// One chunk of a Zarr array (`metadata` JSON text) at grid position `index`, decoded from
/// its stored bytes (`None`: never written, the fill value): the whole chunk's elements in C
/// order and this machine's byte order, decoded with the GIL released.
#[pyfunction]
#[pyo3(signature = (metadata, index, stored=None))]
fn decode_zarr_chunk(
    py: Python<'_>,
    metadata: String,
    index: Vec<u64>,
    stored: Option<Vec<u8>>,
) -> PyResult<Py<PyAny>> {
    let out = py
        .detach(move || asdf::decode_zarr_chunk(&metadata, &index, stored))
        .map_err(|e| AsdfError::new_err(format!("Zarr chunk: {e}")))?;
    bytes_of(py, out)
}

/// numpy's dtype string (`'<f8'`) as a datatype and byte order.
fn datatype_of(dtype: &str) -> Option<(Datatype, ByteOrder)> {
    let mut chars = dtype.chars();
    let order = match chars.next()? {
        '>' => ByteOrder::Big,
        '<' => ByteOrder::Little,
        '|' | '=' => {
            if cfg!(target_endian = "big") {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            }
        }
        _ => return None,
    };
    let kind = chars.next()?;
    let size: usize = chars.as_str().parse().ok()?;
    let s = match (kind, size) {
        ('i', 1) => ScalarType::Int8,
        ('i', 2) => ScalarType::Int16,
        ('i', 4) => ScalarType::Int32,
        ('i', 8) => ScalarType::Int64,
        ('u', 1) => ScalarType::UInt8,
        ('u', 2) => ScalarType::UInt16,
        ('u', 4) => ScalarType::UInt32,
        ('u', 8) => ScalarType::UInt64,
        ('f', 2) => ScalarType::Float16,
        ('f', 4) => ScalarType::Float32,
        ('f', 8) => ScalarType::Float64,
        ('c', 8) => ScalarType::Complex64,
        ('c', 16) => ScalarType::Complex128,
        ('b', 1) => ScalarType::Bool8,
        ('S', n) => return Some((Datatype::Ascii(n), order)),
        ('U', n) => return Some((Datatype::Ucs4(n), order)),
        _ => return None,
    };
    Some((Datatype::Scalar(s), order))
}

/// A structured numpy dtype's `descr` (`[(name, '<i4'), (name, '>f8', (2, 3)), ...]`) as a
/// structured datatype, each field with its byte order; `None` for fields this cannot write
/// (records of records, objects, padding).
fn structured_of(descr: &Bound<'_, PyAny>) -> PyResult<Option<(Datatype, ByteOrder)>> {
    let mut fields = Vec::new();
    for item in descr.try_iter()? {
        let item = item?;
        let name: String = item.get_item(0)?.extract()?;
        let Ok(typestr) = item.get_item(1)?.extract::<String>() else {
            return Ok(None);
        };
        let shape: Vec<usize> = if item.len()? > 2 {
            item.get_item(2)?.extract()?
        } else {
            Vec::new()
        };
        let Some((datatype, order)) = datatype_of(&typestr) else {
            return Ok(None);
        };
        let single_byte = typestr.starts_with('|');
        fields.push(asdf::core_types::Field {
            name: Some(name),
            datatype,
            byteorder: (!single_byte).then_some(order),
            shape,
        });
    }
    let order = if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    };
    Ok(Some((Datatype::Structured(fields), order)))
}

/// A Python value as a tree node; numpy arrays (anything with `dtype` and `shape`) are
/// collected with their pointers, to become blocks.
/// An array of the tree being written: where it goes (the positions of its entries and items
/// from the root), its pointer (for messages), its data, and its mask.
struct ToWrite<'py> {
    at: Vec<usize>,
    pointer: String,
    data: Bound<'py, PyAny>,
    mask: Option<Bound<'py, PyAny>>,
}

/// The deepest a written tree may nest (the YAML reader's limit is 1,000 levels, the root and
/// a tagged node's inner value included).
const MAX_WRITE_DEPTH: usize = 990;

fn to_node<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    pointer: &str,
    at: &mut Vec<usize>,
    arrays: &mut Vec<ToWrite<'py>>,
    integer_tag: &str,
    open: &mut Vec<(usize, String)>,
) -> PyResult<Node> {
    // A tree that contains itself (`r["self"] = r`) or nests deeper than a reader takes (the
    // YAML limit of 1,000 levels): refused, never a stack overflow of the interpreter, nor a
    // file that cannot be read back.
    if at.len() >= MAX_WRITE_DEPTH {
        return Err(usage(format!(
            "{pointer}: the tree nests deeper than {MAX_WRITE_DEPTH} levels (or contains itself), which no reader takes"
        )));
    }
    // A container met again inside itself: Python asdf writes an anchor and an alias; refused
    // here, naming both places (the depth limit would name a pointer thousands of keys long).
    let id = obj.as_ptr() as usize;
    if let Some((_, outer)) = open.iter().find(|(o, _)| *o == id) {
        return Err(usage(format!(
            "{}: the tree contains itself: this is the {} at {} (a tree with cycles cannot be written)",
            if pointer.is_empty() { "/" } else { pointer },
            obj.get_type().name()?,
            if outer.is_empty() { "/" } else { outer.as_str() }
        )));
    }
    let container = obj.is_instance_of::<PyDict>() || obj.is_instance_of::<PyList>() || obj.hasattr("items")?;
    if container {
        open.push((id, pointer.to_owned()));
    }
    let node = to_node_of(py, obj, pointer, at, arrays, integer_tag, open);
    if container {
        open.pop();
    }
    node
}

/// [`to_node`] past its checks.
fn to_node_of<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    pointer: &str,
    at: &mut Vec<usize>,
    arrays: &mut Vec<ToWrite<'py>>,
    integer_tag: &str,
    open: &mut Vec<(usize, String)>,
) -> PyResult<Node> {
    let mut tag: Option<String> = None;
    // Our tree's views and `Tagged` carry `_asdf_tag`; Python asdf's tagged types `_tag`.
    for attr in ["_asdf_tag", "_tag"] {
        if let Ok(t) = obj.getattr(attr)
            && !t.is_none()
        {
            tag = Some(t.extract()?);
            break;
        }
    }
    let node = if obj.get_type().name()? == "Tagged" && obj.hasattr("value")? && tag.is_some() {
        // asdf_rs.Tagged: its value with its tag.
        let mut n = to_node(py, &obj.getattr("value")?, pointer, at, arrays, integer_tag, open)?;
        n.tag = None;
        n
    } else if obj.is_none() {
        Node::null()
    } else if let Ok(b) = obj.cast::<pyo3::types::PyBool>() {
        Node::bool(b.is_true())
    } else if obj.is_instance_of::<pyo3::types::PyInt>() {
        // Python asdf's literals are from -(2**63-2) to 2**63-1 (its validator refuses others,
        // -2**63 included): beyond, `core/integer`.
        match obj.extract::<i64>().ok().filter(|&i| i >= -(i64::MAX - 1)) {
            Some(i) => Node::int(i),
            None => {
                let text: String = obj.str()?.extract()?;
                let big: num_bigint::BigInt = text.parse().map_err(|_| usage(format!("{pointer}: integer {text}")))?;
                // Beyond 64 bits the standard's `core/integer` (words least significant first),
                // as Python asdf writes it: a plain YAML integer that large is warned about.
                let (sign, words) = big.to_u32_digits();
                let words = words.into_iter().map(|w| Node::int(i64::from(w))).collect();
                let sign = if sign == num_bigint::Sign::Minus { "-" } else { "+" };
                Node::map(vec![
                    (Node::str("words"), Node::seq(words)),
                    (Node::str("sign"), Node::str(sign)),
                    (Node::str("string"), Node::str(text)),
                ])
                .with_tag(integer_tag)
            }
        }
    } else if obj.is_instance_of::<pyo3::types::PyFloat>() {
        Node::float(obj.extract::<f64>()?)
    } else if obj.is_instance_of::<pyo3::types::PyString>() {
        Node::str(obj.extract::<String>().map_err(|_| {
            usage(format!(
                "{}: the string {} is not valid Unicode (a lone surrogate): a YAML tree is UTF-8",
                if pointer.is_empty() { "/" } else { pointer },
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?)
    } else if let Ok(b) = obj.cast::<PyBytes>() {
        Node::binary(b.as_bytes().to_vec())
    } else if let Ok(b) = obj.cast::<pyo3::types::PyByteArray>() {
        // As `bytes` (Python asdf refuses it): never a list of small integers.
        Node::binary(b.to_vec())
    } else if obj.is_instance_of::<pyo3::types::PyMemoryView>() {
        // Its bytes (in C order), as a bytearray's (Python asdf refuses it).
        let bytes = obj.call_method0("tobytes")?;
        Node::binary(bytes.cast::<PyBytes>()?.as_bytes().to_vec())
    } else if obj.is_instance(&py.import("datetime")?.getattr("date")?)? {
        // A date or datetime as PyYAML writes it (so Python asdf): an untagged timestamp,
        // `2020-01-01` or `2001-12-14 21:59:43.100000-05:00`.
        let is_datetime = obj.is_instance(&py.import("datetime")?.getattr("datetime")?)?;
        let text: String = if is_datetime {
            obj.call_method1("isoformat", (" ",))?.extract()?
        } else {
            obj.call_method0("isoformat")?.extract()?
        };
        timestamp_node(text)
    } else if obj.hasattr("dtype")? && obj.hasattr("shape")? && obj.hasattr("tobytes")? {
        // A numpy scalar (shape ()) becomes its Python value; an array, a block.
        let shape: Vec<usize> = obj.getattr("shape")?.extract()?;
        let np = py.import("numpy")?;
        if shape.is_empty() && obj.is_instance(&np.getattr("generic")?)? {
            // A numpy scalar as its Python value (as Python asdf writes it). Not datetimes,
            // timedeltas or records (their `item()` is an integer, None, or a tuple without its
            // field names; Python asdf refuses them too), and long doubles as Python floats
            // (their `item()` is the numpy scalar again).
            let refused = ["datetime64", "timedelta64", "void"]
                .iter()
                .map(|t| np.getattr(*t).and_then(|c| obj.is_instance(&c)))
                .collect::<PyResult<Vec<bool>>>()?;
            if refused.contains(&true) {
                return Err(usage(format!(
                    "{}: cannot write a numpy {} scalar (as Python asdf cannot): write a 0-d array, or the value as a str",
                    if pointer.is_empty() { "/" } else { pointer },
                    obj.getattr("dtype")?.str()?
                )));
            }
            let value = obj.call_method0("item")?;
            let value = if value.is_instance(&np.getattr("generic")?)? {
                if value.is_instance(&np.getattr("complexfloating")?)? {
                    py.import("builtins")?.getattr("complex")?.call1((value,))?
                } else if value.is_instance(&np.getattr("floating")?)? {
                    py.import("builtins")?.getattr("float")?.call1((value,))?
                } else {
                    return Err(usage(format!(
                        "{}: cannot write a numpy {} scalar",
                        if pointer.is_empty() { "/" } else { pointer },
                        obj.getattr("dtype")?.str()?
                    )));
                }
            } else {
                value
            };
            return to_node(py, &value, pointer, at, arrays, integer_tag, open);
        }
        let ma = py.import("numpy")?.getattr("ma")?;
        let (data, mask) = if ma.call_method1("isMaskedArray", (obj,))?.is_truthy()? {
            // A masked array: its data, and its mask as the ndarray's `mask` (bool8), as
            // Python asdf writes it.
            (obj.getattr("data")?, Some(ma.call_method1("getmaskarray", (obj,))?))
        } else {
            (obj.clone(), None)
        };
        arrays.push(ToWrite {
            at: at.clone(),
            pointer: pointer.to_owned(),
            data,
            mask,
        });
        Node::null()
    } else if let Ok(d) = obj.cast::<PyDict>()
        // A plain dict, or a subclass whose items are its own: Python asdf's `AsdfObject` and
        // `TaggedDict` are dicts that keep their items in a `UserDict`'s `data`, read below
        // through `items()` (their dict storage is empty: they were written empty).
        && (d.is_exact_instance_of::<PyDict>() || !obj.hasattr("data")?)
    {
        let ordered = obj.is_instance(&py.import("collections")?.getattr("OrderedDict")?)?;
        let first_array = arrays.len();
        let mut entries = Vec::with_capacity(d.len());
        for (i, (k, v)) in d.iter().enumerate() {
            let (text, key) = key_node(py, &k, pointer, integer_tag, "mapping key", "keys are")?;
            let child = format!("{pointer}/{}", asdf::escape_pointer_token(&text));
            at.push(i);
            let value = to_node(py, &v, &child, at, arrays, integer_tag, open);
            at.pop();
            entries.push((key, value?));
        }
        if ordered {
            // An OrderedDict as Python asdf writes it (PyYAML's `!!omap`: a sequence of
            // one-entry mappings), which Python asdf reads back as an OrderedDict. The arrays
            // under it are one level deeper (the entry's mapping).
            let depth = at.len();
            for w in &mut arrays[first_array..] {
                w.at.insert(depth + 1, 0);
            }
            let items = entries.into_iter().map(|e| Node::map(vec![e])).collect();
            Node::seq(items).with_tag("tag:yaml.org,2002:omap")
        } else {
            Node::map(entries)
        }
    } else if obj.hasattr("items")? && obj.hasattr("keys")? {
        let d = PyDict::new(py);
        for item in obj.call_method0("items")?.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            d.set_item(k, v)?;
        }
        let mut n = to_node(py, d.as_any(), pointer, at, arrays, integer_tag, open)?;
        n.tag = None;
        n
    } else if obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.hasattr("__getitem__")? && obj.hasattr("__len__")?
    {
        let mut items = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            at.push(i);
            let node = to_node(py, &item?, &format!("{pointer}/{i}"), at, arrays, integer_tag, open);
            at.pop();
            items.push(node?);
        }
        Node::seq(items)
    } else if obj.is_instance_of::<pyo3::types::PySet>() || obj.is_instance_of::<pyo3::types::PyFrozenSet>() {
        // A set as Python asdf writes it (PyYAML's `!!set`: a mapping of its members to null),
        // its members keys as a mapping's are; sorted by their text, so that the file does not
        // depend on hashing.
        let mut members = Vec::new();
        for m in obj.try_iter()? {
            members.push(key_node(
                py,
                &m?,
                pointer,
                integer_tag,
                "set member",
                "members are None, float,",
            )?);
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Node::map(members.into_iter().map(|(_, k)| (k, Node::null())).collect()).with_tag("tag:yaml.org,2002:set")
    } else if obj.is_instance_of::<pyo3::types::PyComplex>() {
        // As Python asdf writes it (Python's `repr`: `(nan+1j)`, `1e+300j`).
        let c =
            asdf::core_types::complex::Complex::new(obj.getattr("real")?.extract()?, obj.getattr("imag")?.extract()?);
        Node::str(asdf::core_types::complex::to_python_string(c)).with_tag("tag:stsci.edu:asdf/core/complex-1.0.0")
    } else {
        return Err(usage(format!(
            "{}: cannot write a {} (dicts, lists, tuples, sets, str, int, float, bool, None, bytes, complex, dates, datetimes, numpy arrays and scalars can be written)",
            if pointer.is_empty() { "/" } else { pointer },
            obj.get_type().name()?
        )));
    };
    Ok(match tag {
        Some(t) => node.with_tag(t),
        None => node,
    })
}

/// A mapping key (or a set's member) `k` of the mapping at `pointer` as a node, with its text:
/// as Python asdf's write, str, int or bool only (not None, floats, tuples, bytes, numpy
/// scalars or tagged strings), which every reader reads back; `what` and `rule` name it in
/// the refusal.
fn key_node<'py>(
    py: Python<'py>,
    k: &Bound<'py, PyAny>,
    pointer: &str,
    integer_tag: &str,
    what: &str,
    rule: &str,
) -> PyResult<(String, Node)> {
    let tagged = k.hasattr("_asdf_tag")? || k.hasattr("_tag")?;
    // A set's members may also be None and floats: Python asdf writes them (and reads them
    // back); a dict's keys may not.
    let member = what == "set member" && (k.is_none() || k.is_instance_of::<pyo3::types::PyFloat>());
    if tagged || !(member || k.is_instance_of::<pyo3::types::PyString>() || k.is_instance_of::<pyo3::types::PyInt>()) {
        return Err(usage(format!(
            "{}: the {what} {} ({}) is not permitted: {rule} str, int or bool (as Python asdf writes them)",
            if pointer.is_empty() { "/" } else { pointer },
            k.repr()?,
            k.get_type().name()?
        )));
    }
    let key = to_node(
        py,
        k,
        pointer,
        &mut Vec::new(),
        &mut Vec::new(),
        integer_tag,
        &mut Vec::new(),
    )?;
    // An int beyond 64 bits is a `core/integer` mapping, which no reader takes as a key.
    let Some(text) = key.as_scalar().map(|s| s.text.to_string()) else {
        return Err(usage(format!(
            "{}: the {what} {} is not permitted: an integer {what} must be from -(2**63-2) to 2**63-1 (Python asdf's integer literals)",
            if pointer.is_empty() { "/" } else { pointer },
            k.repr()?
        )));
    };
    Ok((text, key))
}

/// An untagged timestamp scalar of `text`.
fn timestamp_node(text: String) -> Node {
    let mut n = Node::str(text);
    if let NodeKind::Scalar(s) = &mut n.kind {
        s.value = Value::Timestamp;
    }
    n
}

/// Writes `tree` (dicts, lists, scalars, numpy arrays) to `path`.
#[pyfunction]
#[pyo3(signature = (path, tree, compression=None, checksums=true, standard=None, validate=true, chunks=None, settings=Vec::new(), anonymous=false, etag=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments of `asdf_rs.write`
fn write(
    py: Python<'_>,
    path: std::path::PathBuf,
    tree: &Bound<'_, PyAny>,
    compression: Option<String>,
    checksums: bool,
    standard: Option<String>,
    validate: bool,
    chunks: Option<Vec<i64>>,
    settings: Vec<(String, String)>,
    anonymous: bool,
    etag: Option<String>,
) -> PyResult<()> {
    let version = match standard {
        Some(s) => s
            .parse::<asdf::Version>()
            .map_err(|_| usage(format!("{s:?} is not a version")))?,
        // What Python asdf 6.0 writes.
        None => asdf::Version::new(1, 6, 0),
    };
    let integer_tag = if version >= asdf::Version::new(1, 6, 0) {
        "tag:stsci.edu:asdf/core/integer-1.1.0"
    } else {
        "tag:stsci.edu:asdf/core/integer-1.0.0"
    };
    let label = match compression.as_deref() {
        None | Some("none") => None,
        Some(name) => Some(Label::from_name(name).ok_or_else(|| usage(format!("unknown compression {name:?}")))?),
    };
    if let Some((i, c)) = chunks.iter().flatten().enumerate().find(|&(_, &c)| c == 0 || c < -1) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "chunks[{i}] is {c}: a chunk size is a whole number of at least 1 (or -1 for the whole axis)"
        )));
    }
    let mut arrays = Vec::new();
    let mut root = to_node(py, tree, "", &mut Vec::new(), &mut arrays, integer_tag, &mut Vec::new())?;
    if !matches!(root.kind, NodeKind::Mapping(_)) {
        return Err(usage("the tree must be a mapping (a dict)"));
    }
    let mut file = AsdfFile::new(version).map_err(|e| py_err(py, &e))?;
    let np = py.import("numpy")?;
    let mut unchunked = Vec::new();
    for w in arrays {
        // Each array is made at a key of its own of the (still empty) root, then moved to its
        // place in `root` by position: keys that differ only in type (`1`, `'1'`) are
        // different places, which pointers would not tell apart.
        // A chunk size of -1 is the array's whole axis (zarr's rule; `asdf_rs.write` checked
        // the sizes: -1 or at least 1).
        let shape: Vec<usize> = w.data.getattr("shape")?.extract()?;
        let chunked: Option<Vec<usize>> = chunks.as_ref().filter(|c| c.len() == shape.len()).map(|c| {
            c.iter()
                .zip(&shape)
                .map(|(&c, &n)| usize::try_from(c).unwrap_or(n).max(1))
                .collect()
        });
        let chunked = match chunked {
            // asdf-zarr arrays have no mask (Python asdf reads an ndarray's mask only from an
            // ndarray): a masked array is written as an ndarray with its mask.
            Some(_) if w.mask.is_some() => {
                unchunked.push(w.pointer.clone());
                None
            }
            c => c,
        };
        if chunked.is_some() {
            // asdf_rs's asdf-zarr arrays hold numbers and booleans: records and strings are
            // refused by name (write them without `chunks`, as ndarrays).
            let dtype = w.data.getattr("dtype")?;
            let kind: String = dtype.getattr("kind")?.extract()?;
            if !dtype.getattr("names")?.is_none() || matches!(kind.as_str(), "S" | "U" | "V" | "O" | "M" | "m") {
                return Err(usage(format!(
                    "{}: an array of dtype {} cannot be written chunked (chunks=...): asdf_rs's \
                     asdf-zarr arrays hold numbers and booleans; write it without chunks (as an \
                     ndarray)",
                    if w.pointer.is_empty() { "/" } else { w.pointer.as_str() },
                    dtype.str()?
                )));
            }
        }
        let a = new_array(&np, &w.pointer, &w.data, label, chunked.as_deref())?;
        py.detach(|| file.put_array(PLACE, a))
            .map_err(|e| placed(py, &e, &w.pointer))?;
        if let Some(mask) = &w.mask {
            let m = new_array(&np, &format!("{}/mask", w.pointer), mask, label, None)?;
            py.detach(|| file.put_array(&format!("{PLACE}/mask"), m))
                .map_err(|e| placed(py, &e, &w.pointer))?;
        }
        let node = file.remove(PLACE).map_err(|e| py_err(py, &e))?;
        if let Some(slot) = slot_at(&mut root, &w.at) {
            *slot = node;
        }
    }
    if !unchunked.is_empty() {
        let warnings = py.import("warnings")?;
        warnings.call_method1(
            "warn",
            (format!(
                "masked arrays written as ndarrays with their masks, not chunked (an asdf-zarr \
                 array has no mask): {}",
                unchunked
                    .iter()
                    .map(|p| if p.is_empty() { "/" } else { p.as_str() })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),),
        )?;
    }
    // The root keeps the tag the new file gave it (`core/asdf`).
    let tag = file.tree().map_err(|e| py_err(py, &e))?.tag.clone();
    root.tag = tag;
    file.set("", root).map_err(|e| py_err(py, &e))?;
    let options = asdf::WriteOptions::default().checksums(checksums).validate(validate);
    if let Some(url) = path.to_str().filter(|p| asdf::is_url(p)) {
        let url = url.to_owned();
        let mut remote = remote_options(settings, anonymous);
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        remote.cancel = Some(cancel.clone());
        return interruptible(py, &cancel, move || match etag {
            Some(e) => file.write_to_url_over(&url, &e, &options, &remote),
            None => file.write_to_url(&url, &options, &remote),
        })?
        .map_err(|e| py_err(py, &e));
    }
    if etag.is_some() {
        return Err(usage("etag= is for writes to object storage (s3://, gs://, az://)"));
    }
    py.detach(move || file.write_to(&path, &options))
        .map_err(|e| py_err(py, &e))
}

/// Where [`write`] makes each array before moving it to its place.
const PLACE: &str = "/array";

/// An error of making the array at [`PLACE`] as the error of the array at `pointer`, its
/// place in the tree written.
fn placed(py: Python<'_>, e: &Error, pointer: &str) -> PyErr {
    let err = py_err(py, e);
    let at = if pointer.is_empty() { "/" } else { pointer };
    let text = e.to_string();
    let Some(rest) = text.strip_prefix(PLACE) else {
        return err;
    };
    let moved = AsdfError::new_err(format!("{at}{rest}"));
    let value = moved.value(py);
    for attr in ["kind", "line", "column", "offset"] {
        if let Ok(v) = err.value(py).getattr(attr) {
            let _ = value.setattr(attr, v);
        }
    }
    let _ = value.setattr("pointer", at);
    moved
}

/// The node at `at` (positions of entries and items from `root`).
fn slot_at<'n>(root: &'n mut Node, at: &[usize]) -> Option<&'n mut Node> {
    let mut n = root;
    for &i in at {
        n = match &mut n.kind {
            NodeKind::Mapping(m) => &mut m.entries.get_mut(i)?.1,
            NodeKind::Sequence(s) => s.items.get_mut(i)?,
            _ => return None,
        };
    }
    Some(n)
}

/// A numpy array as a [`NewArray`]: its shape kept (0-d too), compressed with `label`, chunked
/// as `chunks` (asdf-zarr's layout) when given and it has as many dimensions.
fn new_array(
    np: &Bound<'_, PyAny>,
    pointer: &str,
    arr: &Bound<'_, PyAny>,
    label: Option<Label>,
    chunks: Option<&[usize]>,
) -> PyResult<NewArray> {
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    // `ascontiguousarray` makes 0-d arrays 1-d: the shape is the array's own.
    let c = np.call_method1("ascontiguousarray", (arr,))?;
    let dtype: String = c.getattr("dtype")?.getattr("str")?.extract()?;
    let (datatype, order) = if c.getattr("dtype")?.getattr("names")?.is_none() {
        datatype_of(&dtype)
    } else {
        structured_of(&c.getattr("dtype")?.getattr("descr")?)?
    }
    .ok_or_else(|| {
        usage(format!(
            "{}: numpy dtype {dtype} cannot be written (object arrays, and records of records, cannot)",
            if pointer.is_empty() { "/" } else { pointer }
        ))
    })?;
    let data: Vec<u8> = c.call_method0("tobytes")?.extract()?;
    let mut a = NewArray::from_bytes(datatype, &shape, order, data);
    if let Some(l) = label {
        a = a.compression(l);
    }
    // Arrays with as many dimensions as `chunks` has (never 0-d ones) are stored chunked
    // (asdf-zarr's layout); their chunks are compressed without the GIL.
    if let Some(c) = chunks.filter(|c| c.len() == shape.len() && !shape.is_empty()) {
        a = a.chunks(c);
    }
    Ok(a)
}

/// Runs `work` on a thread of its own without the GIL, looking at Python's signals every
/// tenth of a second: on an interrupt (Ctrl-C's `KeyboardInterrupt`, or what a signal handler
/// raises), sets `cancel`, waits for `work` to wind up (an upload aborts: nothing written),
/// and raises the interrupt.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &std::sync::atomic::AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    use std::sync::mpsc::RecvTimeoutError;
    std::thread::scope(|s| {
        let (tx, mut rx) = std::sync::mpsc::channel();
        s.spawn(move || {
            let _ = tx.send(work());
        });
        loop {
            // The receiver goes to the GIL-free closure and back (it is not `Sync`).
            let (answer, back) = py.detach(move || (rx.recv_timeout(std::time::Duration::from_millis(100)), rx));
            rx = back;
            match answer {
                Ok(v) => return Ok(v),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "asdf_rs: the writing thread ended without an answer",
                    ));
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(interrupt) = py.check_signals() {
                        cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                        // The work sees the flag before its next part and winds up.
                        let _ = py.detach(move || rx.recv());
                        return Err(interrupt);
                    }
                }
            }
        }
    })
}

/// Sets the command started to guard each multipart upload (`asdf_rs` sets its interpreter
/// running `upload_guard`), or none.
#[pyfunction]
fn set_upload_guard(command: Option<Vec<String>>) {
    asdf_remote::set_upload_guard(command.map(|c| c.into_iter().map(Into::into).collect()));
}

/// The upload guard's body: reads its request from standard input and, when the writer goes
/// away before its upload settled, aborts the upload. Returns the exit status.
#[pyfunction]
fn upload_guard(py: Python<'_>) -> i32 {
    match py.detach(|| asdf_remote::run_upload_guard(std::io::stdin().lock(), std::io::stdout().lock())) {
        // The writer reports the store's answer itself.
        Ok(asdf_remote::GuardOutcome::Settled | asdf_remote::GuardOutcome::NotCreated) => 0,
        Ok(asdf_remote::GuardOutcome::Aborted) => {
            eprintln!("asdf_rs: the writer ended before its upload did; the upload was aborted (nothing written)");
            0
        }
        Err(e) => {
            eprintln!("asdf_rs: the upload guard could not abort the upload: {e}");
            1
        }
    }
}

/// The objects under a prefix of an object store (`s3://bucket/run/`): (URL, size) pairs.
#[pyfunction]
#[pyo3(signature = (prefix, settings=Vec::new(), anonymous=false))]
fn list(
    py: Python<'_>,
    prefix: String,
    settings: Vec<(String, String)>,
    anonymous: bool,
) -> PyResult<Vec<(String, u64)>> {
    let opts = remote_options(settings, anonymous);
    py.detach(move || asdf_remote::list(&prefix, &opts, 1_000_000))
        .map_err(|e| py_err(py, &asdf::Error::Remote(Box::new(e))))
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(read_range, m)?)?;
    m.add_function(wrap_pyfunction!(list, m)?)?;
    m.add_function(wrap_pyfunction!(decode_block, m)?)?;
    m.add_function(wrap_pyfunction!(decode_zarr_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(read_block_range, m)?)?;
    m.add_function(wrap_pyfunction!(write, m)?)?;
    m.add_function(wrap_pyfunction!(set_upload_guard, m)?)?;
    m.add_function(wrap_pyfunction!(upload_guard, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add_function(wrap_pyfunction!(set_extension_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(has_extension_schemas, m)?)?;
    m.add("AsdfError", m.py().get_type::<AsdfError>())?;
    m.add("AsdfValidationError", m.py().get_type::<AsdfValidationError>())?;
    // AsdfErrors that are also the builtin error numpy or a dict raises for the same thing.
    for (name, builtin, doc) in [
        (
            "AsdfIndexError",
            m.py().get_type::<pyo3::exceptions::PyIndexError>(),
            "An index outside an array (an AsdfError and an IndexError, as numpy's).",
        ),
        (
            "AsdfKeyError",
            m.py().get_type::<pyo3::exceptions::PyKeyError>(),
            "No node at a JSON pointer (an AsdfError and a KeyError, as Python asdf's `af[key]`).",
        ),
        (
            "AsdfValueError",
            m.py().get_type::<pyo3::exceptions::PyValueError>(),
            "A region numpy refuses with ValueError, as a slice step of 0 (an AsdfError and a ValueError).",
        ),
    ] {
        let t = m.py().import("builtins")?.getattr("type")?.call1((
            name,
            (m.py().get_type::<AsdfError>(), builtin),
            [("__module__", "asdf_rs._native"), ("__doc__", doc)].into_py_dict(m.py())?,
        ))?;
        m.add(name, t)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

/// A new `bytes` of `len` bytes, written by `fill` with the GIL released. `fill` must write
/// every byte when it succeeds (every reader given to it does: a region's bytes, a block's
/// data); on its error the object is dropped unread. Unlike `PyBytes::new_with`, the bytes
/// are not zeroed first: for a 256 MiB array that pass (and its page faults) took the GIL
/// for about 0.1 s before any decoding began, where now the decoding threads touch each
/// page once.
fn bytes_filled_without_gil<'py>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), Error> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_filled(py, len, fill, |py, e| py_err(py, &e))
}

/// As [`bytes_filled_without_gil`], `fill`'s error made a Python error by `err`.
fn bytes_filled<'py, E: Send>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), E> + Send,
    err: impl FnOnce(Python<'py>, E) -> PyErr,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len).map_err(|_| usage("a region larger than memory"))?;
    // SAFETY: `PyBytes_FromStringAndSize(NULL, n)` returns a new reference to a `bytes` object
    // of `n` bytes (or NULL with an exception set, turned into the error), which we own.
    let bytes = unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size))?
            .cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: the object is a `bytes` of `len` bytes that no other code has seen yet (nothing
    // else can read or write it while the GIL is released below, and its storage does not
    // move: `bytes` never resize); its buffer is valid for `len` bytes for as long as
    // `bytes` lives, which outlives the slice. The slice is only written before it is read
    // (see above), so its not yet initialised bytes are never read.
    let buf: &mut [u8] = unsafe {
        let at = pyo3::ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>();
        if at.is_null() {
            return Err(usage("a bytes object without a buffer"));
        }
        std::slice::from_raw_parts_mut(at, len)
    };
    py.detach(move || fill(buf)).map_err(|e| err(py, e))?;
    Ok(bytes)
}

/// `bytes` holding `v`, copied with the GIL released (a chunk or a block of a GB copied
/// with it held stalls every other thread for a large part of a second).
fn bytes_of(py: Python<'_>, v: Vec<u8>) -> PyResult<Py<PyAny>> {
    if v.len() < 1 << 20 {
        return PyBytes::new(py, &v).into_py_any(py);
    }
    bytes_filled(
        py,
        v.len(),
        |buf| {
            buf.copy_from_slice(&v);
            Ok::<(), std::convert::Infallible>(())
        },
        |_, e| match e {},
    )?
    .into_py_any(py)
}
