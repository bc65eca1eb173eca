//! `NativeFile`, the file the Python package opens: the tree, arrays, blocks, validation,
//! writes of the whole file.

use asdf::core_types::ByteOrder;
use asdf::{AsdfFile, Error, Label, Node, NodeKind, OpenOptions, Value};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use std::sync::Arc;

use crate::buffers::{bytes_filled_without_gil, bytes_of};
use crate::errors::{AsdfError, py_err, unnamed, usage};
use crate::layout::{LayoutStorage, RemoteStats, Target, Target4, layout_info, zarr_dtype_refusal};
use crate::remote::remote_options;
use crate::tree::{
    Converter, ENTRY, entry_tokens, flatten, key_value, node_at, numpy_dtype, one_to_one_keys, pointer_by_steps,
    pointer_of, scalar_value, warn_once, warn_renamed,
};

/// An open file.
#[pyclass(frozen, module = "asdf_rs._native")]
pub(crate) struct NativeFile {
    pub(crate) file: Arc<AsdfFile>,
    pub(crate) target: Target,
    /// The key renames already warned about (each is warned once per open file, however
    /// often its mapping is read).
    pub(crate) warned: std::sync::Mutex<std::collections::HashSet<String>>,
}

/// Opens a path or URL.
///
/// The schemas of Python asdf's installed extensions, with the standard's (set once by
/// `set_extension_schemas`): files opened with `extension_schemas` are validated with them,
/// and (before ASDF 1.6.0) have their defaults filled from them, as Python asdf's open does.
pub(crate) static EXTENSION_SCHEMAS: std::sync::OnceLock<Arc<asdf::AsdfSchemas>> = std::sync::OnceLock::new();

/// Takes the schema and manifest documents Python asdf's resource manager serves (`[(uri,
/// bytes)]`), once per process; returns how many were added (0 when already set).
#[pyfunction]
pub(crate) fn set_extension_schemas(py: Python<'_>, docs: Vec<(String, Vec<u8>)>) -> PyResult<usize> {
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
pub(crate) fn has_extension_schemas() -> bool {
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
pub(crate) fn open(
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

/// What [`NativeFile::chunk_store_object`] returns: the array's metadata, its key, the object.
pub(crate) type StoreObjectTuple = (String, &'static str, Option<Py<PyAny>>);

#[pymethods]
impl NativeFile {
    /// `(kind, tag, payload)` of the node at `pointer` (aliases followed): `"map"` with its
    /// `[(key, token)]`, `"seq"` with its length, `"ndarray"` with `None`, `"scalar"` with
    /// its value (`"timestamp"` with its text for an untagged timestamp).
    /// With `raw`, an ndarray is given as the mapping or sequence it is written as.
    #[pyo3(signature = (pointer, raw=false))]
    pub(crate) fn node(
        &self,
        py: Python<'_>,
        pointer: &str,
        raw: bool,
    ) -> PyResult<(String, Option<String>, Py<PyAny>)> {
        let f = &self.file;
        let node = node_at(f, pointer).map_err(|e| py_err(py, &e))?;
        let doc = f.document();
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
    pub(crate) fn node_id(&self, py: Python<'_>, pointer: &str) -> PyResult<usize> {
        let f = &self.file;
        let node = node_at(f, pointer).map_err(|e| py_err(py, &e))?;
        let doc = f.document();
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
    pub(crate) fn convert(
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
        let doc = f.document();
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
    pub(crate) fn layout(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
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
    pub(crate) fn region(
        &self,
        py: Python<'_>,
        pointer: &str,
        region: &str,
    ) -> PyResult<(Vec<usize>, Py<PyAny>, char)> {
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
                .and_then(|a| a.read_region_into(&r, buf))
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
    pub(crate) fn external_data(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
        let f = Arc::clone(&self.file);
        let pointer = pointer.to_owned();
        let data = py
            .detach(move || f.external_data(&pointer))
            .map_err(|e| py_err(py, &e))?;
        bytes_of(py, data)
    }

    /// The decoded data of block `index` as `bytes`, decoded straight into them.
    pub(crate) fn block_bytes(&self, py: Python<'_>, index: usize) -> PyResult<Py<PyAny>> {
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
    pub(crate) fn inline_data(&self, py: Python<'_>, pointer: &str) -> PyResult<Py<PyAny>> {
        let f = &self.file;
        let doc = f.document();
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
    pub(crate) fn block_range(&self, py: Python<'_>, index: usize, start: u64, end: u64) -> PyResult<Py<PyAny>> {
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
    pub(crate) fn blocks(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
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
    pub(crate) fn verify(&self, py: Python<'_>) -> PyResult<Vec<(usize, String)>> {
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
    pub(crate) fn validate(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let f = Arc::clone(&self.file);
        let report = py.detach(move || f.validate(None, None)).map_err(|e| py_err(py, &e))?;
        Ok(report
            .violations
            .iter()
            .map(|v| (v.instance.clone(), v.to_string()))
            .collect())
    }

    /// The warnings met opening the file.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.file.warnings().iter().map(ToString::to_string).collect()
    }

    /// The ASDF Standard version.
    pub(crate) fn standard(&self) -> String {
        self.file.standard_version().to_string()
    }

    /// The tree as YAML text.
    pub(crate) fn yaml(&self, py: Python<'_>) -> PyResult<String> {
        let f = Arc::clone(&self.file);
        let bytes = py
            .detach(move || asdf::emit_yaml(f.document()))
            .map_err(|e| py_err(py, &e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Where the chunks of the asdf-zarr array at `pointer` are, when they are blocks of the
    /// file: `(metadata JSON, grid, [(stored_offset, stored_len, compression, data_len) or
    /// None per chunk, C order])`; `None` for other arrays (for Dask's tasks).
    #[allow(clippy::type_complexity)]
    pub(crate) fn chunk_map(
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
            let Some(map) = f.array(&pointer)?.chunk_map() else {
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
    pub(crate) fn chunk_store_object(
        &self,
        py: Python<'_>,
        pointer: &str,
        key: &str,
    ) -> PyResult<Option<StoreObjectTuple>> {
        if pointer.contains(ENTRY) {
            return Err(unnamed(pointer, "a chunked array"));
        }
        let f = Arc::clone(&self.file);
        let (pointer, key) = (pointer.to_owned(), key.to_owned());
        let found = py
            .detach(move || f.array(&pointer)?.chunk_store_object(&key))
            .map_err(|e| py_err(py, &e))?;
        let Some(o) = found else { return Ok(None) };
        let bytes = o.bytes.map(|b| bytes_of(py, b)).transpose()?;
        Ok(Some((o.metadata, o.metadata_key, bytes)))
    }

    /// The gwcs WCS at `pointer` (the first of the file when `None`), read and ready to
    /// evaluate; `None` when the file has none.
    #[pyo3(signature = (pointer=None))]
    pub(crate) fn wcs(&self, py: Python<'_>, pointer: Option<String>) -> PyResult<Option<crate::wcs::NativeWcs>> {
        use asdf_wcs::WcsExt;
        let f = Arc::clone(&self.file);
        let read = py.detach(move || {
            let p = match pointer {
                Some(p) => p,
                None => match f.wcs_pointers().into_iter().next() {
                    Some(p) => p,
                    None => return Ok(None),
                },
            };
            f.wcs(&p).map(Some)
        });
        match read {
            Ok(w) => Ok(w.map(|wcs| crate::wcs::NativeWcs { wcs })),
            Err(e) => Err(crate::wcs::wcs_err(&e)),
        }
    }

    /// The JSON pointers of the gwcs WCS nodes, in the tree's order.
    pub(crate) fn wcs_pointers(&self, _py: Python<'_>) -> Vec<String> {
        asdf_wcs::WcsExt::wcs_pointers(&*self.file)
    }

    /// The JSON pointers of every array in the tree (ndarrays and chunked arrays), in the
    /// tree's order.
    /// Their tokens are one-to-one (see `node`): two arrays under keys of the same text have
    /// two pointers.
    pub(crate) fn array_pointers(&self, _py: Python<'_>) -> PyResult<Vec<String>> {
        let root = &self.file.document().root;
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
    pub(crate) fn invalid_keys(&self, _py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        let root = &self.file.document().root;
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
    pub(crate) fn write_to(
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
        py.detach(move || file.write(&path, &options).map(drop))
            .map_err(|e| py_err(py, &e))
    }

    /// Whether the file is an ASDF file inside FITS (Appendix A of the standard).
    pub(crate) fn in_fits(&self) -> bool {
        self.file.source().fits_hdus().is_some()
    }

    /// `(requests, bytes, ranges)` fetched from a remote file so far; `None` for local files.
    pub(crate) fn remote_stats(&self) -> Option<RemoteStats> {
        self.file
            .source()
            .remote_stats()
            .map(|s| (s.requests(), s.bytes(), s.ranges()))
    }

    /// The path or URL opened, the store settings, and for a remote file the (size, ETag) of
    /// the version opened (for Dask's tasks).
    pub(crate) fn target(&self) -> Target4 {
        (
            // A str (not a `pathlib.Path`, which would make `s3://b/k` `s3:/b/k`).
            self.target.path.clone().into_os_string(),
            self.target.remote.settings.clone(),
            self.target.remote.anonymous,
            self.file.source().remote_stats().and_then(|s| s.version()),
        )
    }
}
