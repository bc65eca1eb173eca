//! Zarr metadata: the `.zarray` (or `zarr.json`) of a chunked array, read from the tree or a
//! store and checked before anything is allocated; dtypes both ways; the tree as JSON.

use asdf_core_types::{ByteOrder, Datatype};
use asdf_yaml::{Node, NodeKind, Value};

use crate::error::ChunkedError;

/// The byte order of decoded chunks: this machine's.
pub(crate) fn native_order() -> ByteOrder {
    if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

/// The largest chunk (decoded) accepted beyond the array's own size.
pub(crate) const MAX_CHUNK_BYTES: usize = 1 << 28;

/// Zarr format 2 dtypes (without their byte order character) and the ASDF datatypes they are.
pub(crate) const DTYPES: [(&str, &str); 14] = [
    ("b1", "bool8"),
    ("i1", "int8"),
    ("i2", "int16"),
    ("i4", "int32"),
    ("i8", "int64"),
    ("u1", "uint8"),
    ("u2", "uint16"),
    ("u4", "uint32"),
    ("u8", "uint64"),
    ("f2", "float16"),
    ("f4", "float32"),
    ("f8", "float64"),
    ("c8", "complex64"),
    ("c16", "complex128"),
];

/// The Zarr dtype `s` (`<f4`, `>i2`, `|u1`, `|b1`, `<c16`) as an ASDF datatype name.
pub(crate) fn datatype_of(s: &str) -> Option<&'static str> {
    let code = s.get(1..)?;
    DTYPES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The Zarr dtype of `datatype` stored in `order`, if Zarr has one.
pub(crate) fn dtype_of(datatype: &Datatype, order: ByteOrder) -> Option<String> {
    let name = datatype.to_string();
    let (code, _) = DTYPES.iter().find(|(_, n)| *n == name)?;
    let mark = if code.ends_with('1') {
        '|'
    } else if order == ByteOrder::Big {
        '>'
    } else {
        '<'
    };
    Some(format!("{mark}{code}"))
}

/// A YAML node (the `.zarray` mapping as Python asdf wrote it from JSON) as JSON; NaN and the
/// infinities as Zarr writes them (`"NaN"`, `"Infinity"`, `"-Infinity"`).
pub(crate) fn to_json(doc: &asdf_yaml::Document, n: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    let n = doc.resolve(n);
    match &n.kind {
        NodeKind::Mapping(m) => J::Object(
            m.entries
                .iter()
                .map(|(k, v)| {
                    let k = doc
                        .resolve(k)
                        .as_scalar()
                        .map(|s| s.text.to_string())
                        .unwrap_or_default();
                    (k, to_json(doc, v))
                })
                .collect(),
        ),
        NodeKind::Sequence(s) => J::Array(s.items.iter().map(|v| to_json(doc, v)).collect()),
        NodeKind::Scalar(s) => match &s.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) if f.is_nan() => J::from("NaN"),
            Value::Float(f) if f.is_infinite() => J::from(if *f > 0.0 { "Infinity" } else { "-Infinity" }),
            Value::Float(f) => J::from(*f),
            _ => J::from(s.text.to_string()),
        },
        NodeKind::Alias(_) => J::Null,
    }
}

/// Zarr format 2 metadata whose compressor is numcodecs' `lz4` (which `zarrs` has no codec
/// for), without it: what `zarrs` is given, the chunks being decoded here first
/// ([`lz4_decode`]) and encoded here last ([`lz4_encode`]). `None` for any other metadata.
/// The metadata as `zarrs` is given it: [`without_lz4`]'s, and a format 2 `fill_value: null`
/// (zarr-python 2 and asdf-zarr write it; chunks never written are then left uninitialised
/// by zarr-python, so any value is theirs) as the datatype's zero, which `zarrs` reads for
/// every datatype (it refuses `null` for complex ones).
pub(crate) fn for_zarrs(meta: &serde_json::Value) -> serde_json::Value {
    let mut m = without_lz4(meta).unwrap_or_else(|| meta.clone());
    if m.get("zarr_format").and_then(serde_json::Value::as_u64) != Some(3)
        && m.get("fill_value").is_some_and(serde_json::Value::is_null)
    {
        let dtype = m.get("dtype").and_then(serde_json::Value::as_str).unwrap_or("");
        let kind = dtype.trim_start_matches(['<', '>', '|', '=']).chars().next();
        m["fill_value"] = match kind {
            Some('c') => serde_json::json!([0.0, 0.0]),
            Some('f') => serde_json::json!(0.0),
            Some('b') => serde_json::json!(false),
            _ => serde_json::json!(0),
        };
    }
    m
}

pub(crate) fn without_lz4(meta: &serde_json::Value) -> Option<serde_json::Value> {
    let id = meta.get("compressor")?.get("id")?.as_str()?;
    if id != "lz4" || meta.get("zarr_format").and_then(serde_json::Value::as_u64) == Some(3) {
        return None;
    }
    let mut m = meta.clone();
    m["compressor"] = serde_json::Value::Null;
    Some(m)
}

/// JSON as a YAML node (the `.zarray` metadata put in the tree).
pub fn json_node(v: &serde_json::Value) -> Node {
    use serde_json::Value as J;
    match v {
        J::Null => Node::null(),
        J::Bool(b) => Node::bool(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Node::int(i),
            (None, Some(f)) => Node::float(f),
            (None, None) => Node::str(n.to_string()),
        },
        J::String(s) => Node::str(s.clone()),
        J::Array(a) => Node::seq(a.iter().map(json_node).collect()),
        J::Object(o) => Node::map(o.iter().map(|(k, v)| (Node::str(k.clone()), json_node(v))).collect()),
    }
}

pub(crate) fn usize_list(v: Option<&serde_json::Value>, what: &'static str) -> Result<Vec<usize>, ChunkedError> {
    v.and_then(serde_json::Value::as_array)
        .ok_or(ChunkedError::Metadata(what))?
        .iter()
        .map(|d| {
            d.as_u64()
                .and_then(|d| usize::try_from(d).ok())
                .ok_or(ChunkedError::Metadata(what))
        })
        .collect()
}

/// What the tree says of a chunked array: its shape, chunk shape, datatype and compressor
/// (read from `.zarray` without touching a block).
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkLayout {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The chunk shape.
    pub chunks: Vec<usize>,
    /// The element type.
    pub datatype: Datatype,
    /// The compressor's numcodecs id (`None`: uncompressed).
    pub compressor: Option<String>,
    /// `.zarray` as JSON.
    pub(crate) zarray: serde_json::Value,
}

impl ChunkLayout {
    /// The layout of the zarr-tagged node `node` of `doc` whose metadata is in the tree
    /// (`.zarray`: internal storage, as asdf-zarr writes it).
    ///
    /// # Errors
    /// [`ChunkedError`] for metadata that is missing, of the wrong type, or too large;
    /// [`ChunkedError::ExternalStore`] when the metadata is in a store outside the tree.
    pub fn from_node(doc: &asdf_yaml::Document, node: &Node) -> Result<Self, ChunkedError> {
        match node.get(".zarray") {
            Some(meta) => Self::from_json(to_json(doc, meta)),
            None if node.get("store").is_some() => Err(ChunkedError::ExternalStore(
                "the metadata is in the store, not in the tree".to_owned(),
            )),
            None => Err(ChunkedError::Metadata("missing")),
        }
    }

    /// The layout a Zarr metadata document gives: format 2 (`.zarray`) or format 3
    /// (`zarr.json`, regular chunk grid).
    ///
    /// # Errors
    /// As [`ChunkLayout::from_node`].
    pub fn from_json(meta: serde_json::Value) -> Result<Self, ChunkedError> {
        let v3 = meta.get("zarr_format").and_then(serde_json::Value::as_u64) == Some(3);
        let shape = usize_list(meta.get("shape"), "shape")?;
        let chunks = if v3 {
            let grid = meta.get("chunk_grid").ok_or(ChunkedError::Metadata("chunk_grid"))?;
            if grid.get("name").and_then(serde_json::Value::as_str) != Some("regular") {
                return Err(ChunkedError::Metadata("chunk_grid (only a regular grid is read)"));
            }
            usize_list(
                grid.get("configuration").and_then(|c| c.get("chunk_shape")),
                "chunk_grid",
            )?
        } else {
            usize_list(meta.get("chunks"), "chunks")?
        };
        if chunks.len() != shape.len() || chunks.contains(&0) {
            return Err(ChunkedError::Metadata("chunks"));
        }
        let dtype = meta
            .get(if v3 { "data_type" } else { "dtype" })
            .and_then(serde_json::Value::as_str)
            .ok_or(ChunkedError::Metadata("dtype"))?;
        let name = if v3 { v3_datatype(dtype) } else { datatype_of(dtype) }
            .ok_or_else(|| ChunkedError::Dtype(dtype.to_owned()))?;
        let datatype = Datatype::from_node(&Node::str(name)).map_err(|_| ChunkedError::Dtype(dtype.to_owned()))?;
        // Sizes checked before anything is allocated by them: the array, and a chunk (decoded
        // whole by `zarrs` even where the array is smaller: a chunk may exceed the shape, but
        // not by more than a quarter GiB beyond the array, so a few bytes of metadata cannot
        // ask for terabytes).
        let bytes = |dims: &[usize]| {
            dims.iter()
                .try_fold(datatype.size(), |acc, &d| acc.checked_mul(d))
                .filter(|&b| isize::try_from(b).is_ok())
                .ok_or(ChunkedError::TooLarge)
        };
        let array_bytes = bytes(&shape)?;
        if bytes(&chunks)? > array_bytes.max(MAX_CHUNK_BYTES) {
            return Err(ChunkedError::TooLarge);
        }
        let compressor = if v3 {
            // The codecs after the array-to-bytes one, by name (`zstd`, `blosc`, `gzip`, ...).
            let names: Vec<&str> = meta
                .get("codecs")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("name").and_then(serde_json::Value::as_str))
                .filter(|n| !matches!(*n, "bytes" | "transpose" | "crc32c"))
                .collect();
            (!names.is_empty()).then(|| names.join("+"))
        } else {
            meta.get("compressor")
                .and_then(|c| c.get("id"))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        Ok(Self {
            shape,
            chunks,
            datatype,
            compressor,
            zarray: meta,
        })
    }

    /// The metadata's key in a Zarr store.
    pub(crate) fn key(&self) -> &'static str {
        if self.zarray.get("zarr_format").and_then(serde_json::Value::as_u64) == Some(3) {
            "zarr.json"
        } else {
            ".zarray"
        }
    }
}

/// The Zarr format 3 data type `s` as an ASDF datatype name.
pub(crate) fn v3_datatype(s: &str) -> Option<&'static str> {
    Some(match s {
        "bool" => "bool8",
        "int8" => "int8",
        "int16" => "int16",
        "int32" => "int32",
        "int64" => "int64",
        "uint8" => "uint8",
        "uint16" => "uint16",
        "uint32" => "uint32",
        "uint64" => "uint64",
        "float16" => "float16",
        "float32" => "float32",
        "float64" => "float64",
        "complex64" => "complex64",
        "complex128" => "complex128",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(zarray: &str) -> Result<ChunkLayout, ChunkedError> {
        let text =
            format!("z: !<asdf://asdf-format.org/zarr/tags/zarr-1.0.0>\n  .zarray: {zarray}\n  chunk_block_map: 0\n");
        let doc = asdf_yaml::parse(text.as_bytes(), &asdf_yaml::Limits::default())
            .map_err(|_| ChunkedError::Metadata("yaml"))?
            .document;
        let node = doc.root.get("z").ok_or(ChunkedError::Metadata("z"))?;
        ChunkLayout::from_node(&doc, node)
    }

    #[test]
    fn metadata_is_checked_before_anything_is_allocated() {
        let ok = layout("{shape: [10, 7], chunks: [3, 100], dtype: '>f4', compressor: {id: zlib}}").unwrap();
        assert_eq!(
            (ok.shape, ok.chunks, ok.compressor.as_deref()),
            (vec![10, 7], vec![3, 100], Some("zlib"))
        );
        assert_eq!(ok.datatype.to_string(), "float32");
        let too_large = |z: &str| matches!(layout(z), Err(ChunkedError::TooLarge));
        // A chunk of 2^40 elements for an array of 10.
        assert!(too_large("{shape: [10], chunks: [1099511627776], dtype: '<f8'}"));
        // Shapes whose product overflows.
        assert!(too_large(
            "{shape: [4294967296, 4294967296, 16], chunks: [1, 1, 1], dtype: '<f8'}"
        ));
        let bad = |z: &str| matches!(layout(z), Err(ChunkedError::Metadata(_)));
        assert!(bad("{shape: [10], chunks: [0], dtype: '<f8'}"));
        assert!(bad("{shape: [10], chunks: [1, 1], dtype: '<f8'}"));
        assert!(bad("{shape: [-1], chunks: [1], dtype: '<f8'}"));
        assert!(bad("{chunks: [1], dtype: '<f8'}"));
        assert!(matches!(
            layout("{shape: [1], chunks: [1], dtype: '<U4'}"),
            Err(ChunkedError::Dtype(_))
        ));
    }
}
