//! Python values as a tree (dicts, lists, numpy arrays and scalars, astropy-free types) and
//! `write`.

use asdf::core_types::{ByteOrder, Datatype, ScalarType};
use asdf::{AsdfFile, Label, NewArray, Node, NodeKind, Value};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::sync::Arc;

use crate::errors::{PLACE, placed, py_err, usage};
use crate::remote::{interruptible, remote_options};

/// numpy's dtype string (`'<f8'`) as a datatype and byte order.
pub(crate) fn datatype_of(dtype: &str) -> Option<(Datatype, ByteOrder)> {
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
pub(crate) fn structured_of(descr: &Bound<'_, PyAny>) -> PyResult<Option<(Datatype, ByteOrder)>> {
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
pub(crate) struct ToWrite<'py> {
    pub(crate) at: Vec<usize>,
    pub(crate) pointer: String,
    pub(crate) data: Bound<'py, PyAny>,
    pub(crate) mask: Option<Bound<'py, PyAny>>,
}

/// The deepest a written tree may nest (the YAML reader's limit is 1,000 levels, the root and
/// a tagged node's inner value included).
pub(crate) const MAX_WRITE_DEPTH: usize = 990;

pub(crate) fn to_node<'py>(
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
pub(crate) fn to_node_of<'py>(
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
pub(crate) fn key_node<'py>(
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
pub(crate) fn timestamp_node(text: String) -> Node {
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
pub(crate) fn write(
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
    let tag = file.tree().tag.clone();
    root.tag = tag;
    file.set("", root).map_err(|e| py_err(py, &e))?;
    let options = asdf::WriteOptions::default().checksums(checksums).validate(validate);
    if let Some(url) = path.to_str().filter(|p| asdf::is_url(p)) {
        let url = url.to_owned();
        let mut remote = remote_options(settings, anonymous);
        let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
        remote.cancel = Some(cancel.clone());
        return interruptible(py, &cancel, move || {
            let target = asdf::Target::Url {
                url: &url,
                remote: &remote,
                etag: etag.as_deref(),
            };
            file.write(target, &options).map(drop)
        })?
        .map_err(|e| py_err(py, &e));
    }
    if etag.is_some() {
        return Err(usage("etag= is for writes to object storage (s3://, gs://, az://)"));
    }
    py.detach(move || file.write(&path, &options).map(drop))
        .map_err(|e| py_err(py, &e))
}

/// The node at `at` (positions of entries and items from `root`).
pub(crate) fn slot_at<'n>(root: &'n mut Node, at: &[usize]) -> Option<&'n mut Node> {
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
pub(crate) fn new_array(
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
