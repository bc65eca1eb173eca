//! Chunked arrays of asdf-zarr (tag `asdf://asdf-format.org/zarr/tags/zarr-1.0.0`): a Zarr
//! (format 2) array whose `.zarray` metadata is in the tree and whose chunks are blocks of this
//! file, found through `chunk_block_map` (a block of little-endian `int32` block indices, one
//! per chunk in C order over the chunk grid; `-1` for a chunk never written, which reads as the
//! fill value). This is the layout asdf-zarr 0.0.4 writes with its internal store.
//!
//! The Zarr side (metadata, the codec pipeline zarr-python writes through numcodecs: blosc,
//! zlib, gzip, zstd, bz2, `order: F`, fill values) is `zarrs`'s: the chunks' bytes are read from
//! our blocks into an in-memory store holding `.zarray` and those chunks, and `zarrs` decodes
//! and assembles them. The decoded array is C-ordered in the machine's byte order and is then
//! read through the same paths as a block's bytes.
//!
//! numcodecs' `lz4` compressor has no `zarrs` codec: its chunks are decoded (and encoded)
//! here, `zarrs` seeing the metadata without it. Stores beside the file: directories (inside
//! the file's directory under the default reference policy) and, for a file opened from a
//! URL, `FSStore`s on the file's own origin.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use asdf_core_types::{ByteOrder, Datatype};
use asdf_yaml::{Node, NodeKind, Value};
use zarrs::storage::WritableStorageTraits as _;

use asdf_core_types::ReferencePolicy;

/// The file's blocks, as the facade holds them.
type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

pub use asdf_core_types::chunk_tags::{ZARR_TAG_PREFIX, is_chunked_ndarray_tag, is_zarr_tag};

/// The largest chunk (decoded) accepted beyond the array's own size.
const MAX_CHUNK_BYTES: usize = 1 << 28;

/// Why a chunked array cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkedError {
    /// The `.zarray` metadata is missing a key or has one of the wrong type.
    #[error("`.zarray`: {0}")]
    Metadata(&'static str),
    /// A store key asked for that does not name an object inside the store (an empty, `.` or
    /// `..` segment, a leading `/`, a backslash).
    #[error("the store key {0:?} does not name an object inside the store")]
    OutsideKey(String),
    /// `zarrs` refused the metadata.
    #[error("Zarr metadata: {0}")]
    Create(#[source] Box<zarrs::array::ArrayCreateError>),
    /// `zarrs` could not decode the chunks.
    #[error("Zarr chunks: {0}")]
    Decode(#[source] Box<zarrs::array::ArrayError>),
    /// A block compression with no Zarr compressor that is written.
    #[error("compression `{0}` has no Zarr compressor that is written (zlib, bzp2, zstd, lz4, blsc and bls2 do)")]
    Compressor(String),
    /// A chunk of numcodecs' `lz4` that does not decode (or claims more than a chunk).
    #[error("an lz4 chunk does not decode to at most a chunk's bytes")]
    Lz4,
    /// A Zarr dtype no ASDF datatype matches.
    #[error("Zarr dtype `{0}` is not one an ASDF array holds")]
    Dtype(String),
    /// The chunk map block has the wrong length.
    #[error("chunk_block_map holds {have} bytes; a chunk grid of {chunks} chunks needs {want}")]
    MapSize {
        /// Its length.
        have: usize,
        /// The length needed (4 bytes per chunk).
        want: usize,
        /// The number of chunks.
        chunks: usize,
    },
    /// A chunk's block could not be read.
    #[error("block {block} (a chunk): {source}")]
    Block {
        /// The block.
        block: usize,
        /// Why.
        #[source]
        source: Box<asdf_layout::Error>,
    },
    /// A block index in the chunk map (or the map's own) that the file does not have.
    #[error("block {block} named by the chunk map is not in the file ({count} blocks)")]
    MissingBlock {
        /// The index.
        block: i64,
        /// The file's blocks.
        count: usize,
    },
    /// The chunks are in a store this version does not read.
    #[error("the chunks are in a Zarr store outside the file that is not read: {0}")]
    ExternalStore(String),
    /// A store path the reference policy does not allow (outside the file's directory by
    /// default).
    #[error(
        "the Zarr store {0} is outside the file's directory, where the reference policy keeps reads (the policy of any local path reads it: `--references any` in asdf-cli, `references=\"any\"` in asdf_rs, `ReferencePolicy::AnyLocalPath` in Rust)"
    )]
    StoreRefused(PathBuf),
    /// A store outside the file under the policy that follows no reference.
    #[error(
        "the chunks are in the Zarr store {0}, outside the file, and the reference policy allows no other file (`--references inside` in asdf-cli, `references=\"inside\"` in asdf_rs, reads a store in the file's folder)"
    )]
    StoreRefusedByNone(PathBuf),
    /// A file of a store that resolves (through a symbolic link) outside the file's
    /// directory, which the reference policy does not allow.
    #[error(
        "the Zarr store's file {0} leads outside the file's directory (to {1}), where the reference policy keeps reads (the policy of any local path reads it: `--references any` in asdf-cli, `references=\"any\"` in asdf_rs, `ReferencePolicy::AnyLocalPath` in Rust)"
    )]
    StoreFileRefused(PathBuf, PathBuf),
    /// A file of a directory store could not be read.
    #[error("Zarr store {0}: {1}")]
    StoreIo(PathBuf, #[source] std::io::Error),
    /// The whole array decoded is larger than the limit of a decoded block.
    #[error(
        "the array decoded is {bytes} bytes, more than the limit of {limit} (read a region, or raise Limits::max_block_bytes)"
    )]
    TooLargeToRead {
        /// Its size decoded.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// Shape or chunk counts whose product overflows, or a chunk of size 0.
    #[error("the shape and chunk shape give more elements or chunks than memory can hold")]
    TooLarge,
}

/// Where a chunked array's chunks are.
#[derive(Debug)]
enum Chunks {
    /// Blocks of this file: the block of each chunk, C order over the chunk grid (negative:
    /// never written).
    Blocks(Vec<i32>),
    /// Files of a directory store beside the file (zarr-python's `DirectoryStore`,
    /// `NestedDirectoryStore`, `LocalStore`), named by the chunk keys; each file read must
    /// resolve (links followed) inside the bound the reference policy sets (`None`: anywhere).
    Directory(PathBuf, Option<PathBuf>),
    /// ASDF.jl's chunked ndarray: ndarrays in blocks, each placed at its start.
    Tiles(Vec<Tile>),
    /// Objects under a URL (zarr-python's `FSStore` over HTTP or S3), read with the options
    /// the file was opened with.
    #[cfg(feature = "remote")]
    Url(String, asdf_remote::RemoteOptions),
}

/// A chunk of ASDF.jl's chunked ndarray (`core/ndarray-chunk-1.0.0`): an ndarray in a block
/// and where its first element goes.
#[derive(Debug)]
struct Tile {
    start: Vec<usize>,
    shape: Vec<usize>,
    data: TileData,
}

/// Where a chunk of ASDF.jl's chunked ndarray has its elements.
#[derive(Debug)]
enum TileData {
    /// In a block, C-contiguous from `offset`, in `order`.
    Block {
        block: usize,
        offset: usize,
        order: ByteOrder,
    },
    /// Inline in the tree (asdf-cxx writes them so): the elements, native byte order.
    Inline(Vec<u8>),
}

/// Inline elements as the bytes of `t` in this machine's byte order (`None`: an element that
/// is not of that type).
fn element_bytes(elements: &[asdf_core_types::Element], t: asdf_core_types::ScalarType) -> Option<Vec<u8>> {
    use asdf_core_types::{Element as E, ScalarType as S};
    let mut out = Vec::with_capacity(elements.len() * t.size());
    for e in elements {
        let int = || match e {
            E::Int(i) => Some(i128::from(*i)),
            E::UInt(u) => Some(i128::from(*u)),
            E::Bool(b) => Some(i128::from(*b)),
            _ => None,
        };
        let float = || match e {
            E::Float(f) => Some(*f),
            E::Int(i) => Some(*i as f64),
            E::UInt(u) => Some(*u as f64),
            _ => None,
        };
        let complex = || match e {
            E::Complex(c) => Some((c.re, c.im)),
            _ => float().map(|f| (f, 0.0)),
        };
        match t {
            S::Int8 => out.extend_from_slice(&i8::try_from(int()?).ok()?.to_ne_bytes()),
            S::Int16 => out.extend_from_slice(&i16::try_from(int()?).ok()?.to_ne_bytes()),
            S::Int32 => out.extend_from_slice(&i32::try_from(int()?).ok()?.to_ne_bytes()),
            S::Int64 => out.extend_from_slice(&i64::try_from(int()?).ok()?.to_ne_bytes()),
            S::UInt8 => out.extend_from_slice(&u8::try_from(int()?).ok()?.to_ne_bytes()),
            S::UInt16 => out.extend_from_slice(&u16::try_from(int()?).ok()?.to_ne_bytes()),
            S::UInt32 => out.extend_from_slice(&u32::try_from(int()?).ok()?.to_ne_bytes()),
            S::UInt64 => out.extend_from_slice(&u64::try_from(int()?).ok()?.to_ne_bytes()),
            S::Bool8 => out.push(u8::from(int()? != 0)),
            S::Float16 => out.extend_from_slice(&half::f16::from_f64(float()?).to_bits().to_ne_bytes()),
            #[allow(clippy::cast_possible_truncation)] // float32 elements, as numpy casts them
            S::Float32 => out.extend_from_slice(&(float()? as f32).to_ne_bytes()),
            S::Float64 => out.extend_from_slice(&float()?.to_ne_bytes()),
            #[allow(clippy::cast_possible_truncation)]
            S::Complex64 => {
                let (re, im) = complex()?;
                out.extend_from_slice(&(re as f32).to_ne_bytes());
                out.extend_from_slice(&(im as f32).to_ne_bytes());
            }
            S::Complex128 => {
                let (re, im) = complex()?;
                out.extend_from_slice(&re.to_ne_bytes());
                out.extend_from_slice(&im.to_ne_bytes());
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A chunked array: its metadata, where its chunks are, and its decoded bytes once read.
#[derive(Debug)]
pub struct Chunked {
    /// The metadata document as JSON text, and the key it has in a Zarr store (`.zarray` for
    /// Zarr format 2, `zarr.json` for format 3).
    metadata: (String, &'static str),
    /// The metadata `zarrs` is given: without numcodecs' `lz4` compressor, whose chunks are
    /// decoded here ([`lz4_decode`]).
    zarrs_metadata: String,
    /// Whether the chunks are numcodecs `lz4`.
    lz4: bool,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The shape of one chunk.
    pub chunks: Vec<usize>,
    /// The element type.
    pub datatype: Datatype,
    /// The compressor's numcodecs id (`None`: uncompressed).
    pub compressor: Option<String>,
    source: Chunks,
    /// The largest whole array decoded into memory (the layout limit of a decoded block).
    max_bytes: u64,
    /// The whole array, decoded (C order, native byte order), once read.
    decoded: OnceLock<Vec<u8>>,
}

/// Zarr format 2 dtypes (without their byte order character) and the ASDF datatypes they are.
const DTYPES: [(&str, &str); 14] = [
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
fn datatype_of(s: &str) -> Option<&'static str> {
    let code = s.get(1..)?;
    DTYPES.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The Zarr dtype of `datatype` stored in `order`, if Zarr has one.
fn dtype_of(datatype: &Datatype, order: ByteOrder) -> Option<String> {
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

/// The Zarr (format 2, numcodecs) compressor a block compression label stands for: zlib,
/// bzp2 (bz2), zstd, Blosc and Blosc2 (blosc with zstd and byte shuffle: zarr-python's
/// default compressor is blosc); none for no label.
///
/// # Errors
/// [`ChunkedError::Compressor`] for a label with no Zarr compressor `zarrs` writes (lz4).
pub fn zarr_compressor(label: Option<asdf_layout::Label>) -> Result<serde_json::Value, ChunkedError> {
    use asdf_layout::Label;
    use serde_json::json;
    Ok(match label {
        None => serde_json::Value::Null,
        Some(l) if l == Label::NONE => serde_json::Value::Null,
        Some(l) if l == Label::ZLIB => json!({"id": "zlib", "level": 6}),
        Some(l) if l == Label::BZP2 => json!({"id": "bz2", "level": 9}),
        Some(l) if l == Label::ZSTD => json!({"id": "zstd", "level": 3}),
        Some(l) if l == Label::LZ4 => json!({"id": "lz4", "acceleration": 1}),
        Some(l) if l == Label::BLS2 || l == Label::BLSC => {
            json!({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 1, "blocksize": 0})
        }
        Some(l) => return Err(ChunkedError::Compressor(l.to_string())),
    })
}

/// An array cut into chunks as asdf-zarr stores them: the `.zarray` metadata (Zarr format 2,
/// C order, fill value 0, `.` separator) and each chunk's stored bytes in C order over the
/// chunk grid (`None`: a chunk of fill values only, not stored).
#[derive(Debug)]
pub struct Encoded {
    /// The `.zarray` metadata.
    pub zarray: serde_json::Value,
    /// Each chunk's stored bytes (`None`: fill values only).
    pub chunks: Vec<Option<Vec<u8>>>,
}

/// Cuts `data` (C order, elements of `datatype` in `order`) of shape `shape` into chunks of
/// `chunks` compressed with `compressor` ([`zarr_compressor`]), through `zarrs`.
pub fn encode(
    datatype: &Datatype,
    order: ByteOrder,
    shape: &[usize],
    chunks: &[usize],
    mut data: Vec<u8>,
    compressor: serde_json::Value,
) -> Result<Encoded, ChunkedError> {
    use zarrs::storage::ReadableStorageTraits as _;
    let dtype = dtype_of(datatype, order).ok_or_else(|| ChunkedError::Dtype(datatype.to_string()))?;
    // The fill value as zarr-python 2 writes it: complex ones as [real, imaginary].
    let name = datatype.to_string();
    let fill = if name == "bool8" {
        serde_json::json!(false)
    } else if name.starts_with("complex") {
        serde_json::json!([0.0, 0.0])
    } else {
        serde_json::json!(0)
    };
    let zarray = serde_json::json!({
        "zarr_format": 2,
        "shape": shape,
        "chunks": chunks,
        "dtype": dtype,
        "compressor": compressor,
        "fill_value": fill,
        "order": "C",
        "filters": null,
        "dimension_separator": ".",
    });
    let layout = ChunkLayout::from_json(zarray.clone())?;
    // zarrs takes elements in this machine's byte order and writes the dtype's.
    let size = layout.datatype.size();
    if order != Chunked::byte_order() && size > 1 {
        let part = if datatype.to_string().starts_with("complex") {
            size / 2
        } else {
            size
        };
        for e in data.chunks_exact_mut(part) {
            e.reverse();
        }
    }
    let store = Arc::new(zarrs::storage::store::MemoryStore::new());
    let key = zarrs::storage::StoreKey::new(".zarray").map_err(|_| ChunkedError::Metadata("chunk key"))?;
    let lz4 = without_lz4(&zarray);
    store
        .set(&key, lz4.as_ref().unwrap_or(&zarray).to_string().into_bytes().into())
        .map_err(|_| ChunkedError::Metadata("chunk key"))?;
    let array = zarrs::array::Array::open(store.clone(), "/").map_err(|e| ChunkedError::Create(Box::new(e)))?;
    array
        .store_array_subset(
            &array.subset_all(),
            zarrs::array::ArrayBytes::new_flen(std::borrow::Cow::Owned(data)),
        )
        .map_err(|e| ChunkedError::Decode(Box::new(e)))?;
    let grid = grid_of(shape, chunks);
    let count: usize = grid.iter().product();
    let mut out = Vec::with_capacity(count);
    let mut index = vec![0u64; grid.len()];
    for flat in 0..count {
        let mut rest = flat;
        for d in (0..grid.len()).rev() {
            index[d] = (rest % grid[d]) as u64;
            rest /= grid[d];
        }
        let bytes = store
            .get(&array.chunk_key(&index))
            .map_err(|_| ChunkedError::Metadata("chunk key"))?;
        out.push(bytes.map(|b| if lz4.is_some() { lz4_encode(&b) } else { b.to_vec() }));
    }
    Ok(Encoded { zarray, chunks: out })
}

/// A YAML node (the `.zarray` mapping as Python asdf wrote it from JSON) as JSON; NaN and the
/// infinities as Zarr writes them (`"NaN"`, `"Infinity"`, `"-Infinity"`).
fn to_json(doc: &asdf_yaml::Document, n: &Node) -> serde_json::Value {
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
fn for_zarrs(meta: &serde_json::Value) -> serde_json::Value {
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

fn without_lz4(meta: &serde_json::Value) -> Option<serde_json::Value> {
    let id = meta.get("compressor")?.get("id")?.as_str()?;
    if id != "lz4" || meta.get("zarr_format").and_then(serde_json::Value::as_u64) == Some(3) {
        return None;
    }
    let mut m = meta.clone();
    m["compressor"] = serde_json::Value::Null;
    Some(m)
}

/// A chunk of numcodecs' `lz4`: its decoded size (4 bytes, little-endian) and one LZ4 block;
/// the size is held to `max` (the chunk's size) before anything is allocated.
fn lz4_decode(stored: &[u8], max: usize) -> Result<Vec<u8>, ChunkedError> {
    let bad = || ChunkedError::Lz4;
    let size = stored
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(bad)?;
    if size > max {
        return Err(bad());
    }
    lz4_flex::block::decompress(&stored[4..], size).map_err(|_| bad())
}

/// [`lz4_decode`]'s inverse: the framing numcodecs' `LZ4` writes.
fn lz4_encode(raw: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(raw.len()).unwrap_or(u32::MAX).to_le_bytes().to_vec();
    out.extend_from_slice(&lz4_flex::block::compress(raw));
    out
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

fn usize_list(v: Option<&serde_json::Value>, what: &'static str) -> Result<Vec<usize>, ChunkedError> {
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
    zarray: serde_json::Value,
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
    fn key(&self) -> &'static str {
        if self.zarray.get("zarr_format").and_then(serde_json::Value::as_u64) == Some(3) {
            "zarr.json"
        } else {
            ".zarray"
        }
    }
}

/// The Zarr format 3 data type `s` as an ASDF datatype name.
fn v3_datatype(s: &str) -> Option<&'static str> {
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

/// The directory of the store `store` (a `store:` or `meta_store:` mapping as asdf-zarr
/// writes it), checked against `policy`: under the default policy it must be inside `dir`,
/// the file's directory (asdf-zarr writes absolute paths, so an absolute path inside it is
/// accepted). With it, the bound every file read from the store must resolve inside (the
/// file's directory, links followed; `None` when the policy allows any local path).
fn store_dir(
    store: &Node,
    dir: Option<&Path>,
    policy: ReferencePolicy,
) -> Result<(PathBuf, Option<PathBuf>), ChunkedError> {
    let kind = store
        .get("type_string")
        .and_then(Node::as_str)
        .ok_or(ChunkedError::Metadata("store type_string"))?;
    if !matches!(kind, "DirectoryStore" | "NestedDirectoryStore" | "LocalStore") && local_fs_store(store).is_none() {
        return Err(ChunkedError::ExternalStore(format!(
            "a `{kind}` store is not read (directory stores are, and FSStores on the local file system or at a URL)"
        )));
    }
    let path = local_store_path(store).ok_or(ChunkedError::Metadata("store path"))?;
    if policy == ReferencePolicy::None {
        return Err(ChunkedError::StoreRefusedByNone(PathBuf::from(path)));
    }
    let dir = dir.ok_or_else(|| {
        ChunkedError::ExternalStore("the file has no directory (a remote or in-memory file)".to_owned())
    })?;
    let path = dir.join(path);
    let canon = path
        .canonicalize()
        .map_err(|e| ChunkedError::StoreIo(path.clone(), e))?;
    if policy == ReferencePolicy::RelativeOnly {
        let base = dir
            .canonicalize()
            .map_err(|e| ChunkedError::StoreIo(dir.to_path_buf(), e))?;
        if !canon.starts_with(&base) {
            return Err(ChunkedError::StoreRefused(path));
        }
        return Ok((canon, Some(base)));
    }
    Ok((canon, None))
}

/// The folder of a store on the local file system as written (a directory store's, or a local
/// `FSStore`'s): `None` for other stores.
pub fn local_store_path(store: &Node) -> Option<&str> {
    match store.get("type_string").and_then(Node::as_str)? {
        "DirectoryStore" | "NestedDirectoryStore" | "LocalStore" => store.get("path").and_then(Node::as_str),
        _ => local_fs_store(store),
    }
}

/// The folder of an `FSStore` on the local file system (zarr-python's `FSStore` of a path, whose
/// `fs` is fsspec's local file system, or a `file://` path): read as a directory store, under
/// the reference policy. `None` for other stores.
fn local_fs_store(store: &Node) -> Option<&str> {
    if store.get("type_string").and_then(Node::as_str) != Some("FSStore") {
        return None;
    }
    let path = store.get("path").and_then(Node::as_str)?;
    if let Some(local) = path.strip_prefix("file://") {
        return Some(local);
    }
    if path.contains("://") {
        return None;
    }
    // fsspec's description of its file system (JSON text): a local one says so.
    let fs: serde_json::Value = serde_json::from_str(store.get("fs").and_then(Node::as_str)?).ok()?;
    let local = |p: &serde_json::Value| matches!(p.as_str(), Some("file" | "local"));
    let protocol = fs.get("protocol")?;
    let is_local = local(protocol) || protocol.as_array().is_some_and(|a| a.iter().any(local));
    is_local.then_some(path)
}

/// The URL of the key `key` of the store at `url`, built by the remote crate's encoding (never
/// by formatting: an HTTP store's keys are percent-encoded where a URL path needs it).
#[cfg(feature = "remote")]
fn store_key_url(url: &str, key: &str) -> Result<String, ChunkedError> {
    let prefix = if url.ends_with('/') {
        url.to_owned()
    } else {
        format!("{url}/")
    };
    asdf_remote::child_url(&prefix, key).map_err(|e| ChunkedError::ExternalStore(e.to_string()))
}

/// The URL of an `FSStore` (asdf-zarr writes its `path` as the URL) and the options to read it
/// with: only for a file opened from a URL, and only on the same origin (scheme, host and
/// port) as the file, so that a file cannot make its reader fetch from elsewhere.
#[cfg(feature = "remote")]
fn url_store(
    store: &Node,
    remote: Option<&(String, asdf_remote::RemoteOptions)>,
) -> Result<(String, asdf_remote::RemoteOptions), ChunkedError> {
    let path = store
        .get("path")
        .and_then(Node::as_str)
        .ok_or(ChunkedError::Metadata("store path"))?;
    let Some((file_url, opts)) = remote else {
        return Err(ChunkedError::ExternalStore(format!(
            "an FSStore at {path} is read only for a file opened from a URL"
        )));
    };
    if !asdf_remote::is_url(path) || !asdf_remote::same_origin(path, file_url) {
        return Err(ChunkedError::StoreRefused(PathBuf::from(path)));
    }
    Ok((path.trim_end_matches('/').to_owned(), opts.clone()))
}

/// The object at `url` (`None`: not there), at most `limit` bytes.
#[cfg(feature = "remote")]
fn fetch_object(url: &str, opts: &asdf_remote::RemoteOptions, limit: u64) -> Result<Option<Vec<u8>>, ChunkedError> {
    use asdf_layout::ReadAt as _;
    let io = |e: std::io::Error| ChunkedError::StoreIo(PathBuf::from(url), e);
    let src = match asdf_remote::RemoteSource::open(url, opts) {
        Ok(s) => s,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(io(std::io::Error::other(e.to_string()))),
    };
    let size = src.size().map_err(io)?;
    if size > limit {
        return Err(io(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("{size} bytes, more than {limit}"),
        )));
    }
    let len = usize::try_from(size).map_err(|_| io(std::io::Error::from(std::io::ErrorKind::FileTooLarge)))?;
    Ok(Some(src.bytes_at(0, len).map_err(io)?.into_owned()))
}

/// The largest metadata document read from a store.
const MAX_METADATA_BYTES: u64 = 1 << 24;

/// Reads the file `key` of the directory store `dir`, `None` when it is not there.
fn read_store_file(dir: &Path, within: Option<&Path>, key: &str, limit: u64) -> Result<Option<Vec<u8>>, ChunkedError> {
    use std::io::Read as _;
    let path = dir.join(key);
    // The policy applies where links lead: the file is opened by its resolved path, which
    // must be inside the bound (a chunk file that is a link out of the folder is refused).
    let real = match path.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ChunkedError::StoreIo(path, e)),
    };
    if let Some(bound) = within
        && !real.starts_with(bound)
    {
        return Err(ChunkedError::StoreFileRefused(path, real));
    }
    // Opened without blocking (a FIFO put in the store would wait for a writer forever), and
    // read only when it is a regular file.
    let f = match asdf_layout::source::open_nonblocking(&real) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ChunkedError::StoreIo(path, e)),
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(ChunkedError::StoreIo(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file (a FIFO, a socket, a device or a folder)",
            ),
        ));
    }
    let mut out = Vec::new();
    f.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| ChunkedError::StoreIo(path.clone(), e))?;
    if out.len() as u64 > limit {
        return Err(ChunkedError::StoreIo(
            path,
            std::io::Error::new(std::io::ErrorKind::FileTooLarge, format!("larger than {limit} bytes")),
        ));
    }
    Ok(Some(out))
}

/// Where a chunked array is read from: the file's blocks, its directory and what may be
/// opened beside it.
#[allow(missing_debug_implementations)] // `absolute` is a closure
pub struct Context<'a> {
    /// The file's blocks.
    pub reader: &'a Reader,
    /// Turns a block source (negative: from the end) into a block index.
    pub absolute: &'a dyn Fn(i64, usize) -> Option<usize>,
    /// The file's directory (for stores beside it).
    pub dir: Option<&'a Path>,
    /// Which stores beside the file may be opened.
    pub policy: ReferencePolicy,
    /// The largest whole array decoded into memory.
    pub max_bytes: u64,
    /// The URL the file was opened from and the options it was opened with (a remote file).
    #[cfg(feature = "remote")]
    pub remote: Option<(String, asdf_remote::RemoteOptions)>,
}

impl Chunked {
    /// The chunked array of the zarr-tagged node `node` of `doc`.
    pub fn open(cx: &Context<'_>, doc: &asdf_yaml::Document, node: &Node) -> Result<Self, ChunkedError> {
        if node.tag.as_deref().is_some_and(is_chunked_ndarray_tag) {
            return Self::open_tiles(cx, doc, node);
        }
        let (layout, source) = match (node.get(".zarray"), node.get("store")) {
            #[cfg(feature = "remote")]
            (None, Some(store))
                if store.get("type_string").and_then(Node::as_str) == Some("FSStore")
                    && local_fs_store(store).is_none() =>
            {
                let (url, opts) = url_store(store, cx.remote.as_ref())?;
                let text = fetch_object(&store_key_url(&url, ".zarray")?, &opts, MAX_METADATA_BYTES)?
                    .ok_or_else(|| ChunkedError::ExternalStore(format!("{url}/.zarray is not there")))?;
                let meta = serde_json::from_slice(&text).map_err(|_| ChunkedError::Metadata("not JSON"))?;
                (ChunkLayout::from_json(meta)?, Chunks::Url(url, opts))
            }
            (None, Some(store)) => {
                // asdf-zarr's external storage: metadata and chunks in a directory store (the
                // metadata in `meta_store` when it has one of its own).
                let (chunks, within) = store_dir(store, cx.dir, cx.policy)?;
                let (meta_dir, meta_within) = match node.get("meta_store") {
                    Some(m) => store_dir(m, cx.dir, cx.policy)?,
                    None => (chunks.clone(), within.clone()),
                };
                let meta_within = meta_within.as_deref();
                let text = match read_store_file(&meta_dir, meta_within, ".zarray", MAX_METADATA_BYTES)? {
                    Some(t) => t,
                    None => {
                        read_store_file(&meta_dir, meta_within, "zarr.json", MAX_METADATA_BYTES)?.ok_or_else(|| {
                            ChunkedError::StoreIo(
                                meta_dir.join(".zarray"),
                                std::io::Error::from(std::io::ErrorKind::NotFound),
                            )
                        })?
                    }
                };
                let meta = serde_json::from_slice(&text).map_err(|_| ChunkedError::Metadata("not JSON"))?;
                (ChunkLayout::from_json(meta)?, Chunks::Directory(chunks, within))
            }
            _ => {
                let layout = ChunkLayout::from_node(doc, node)?;
                let count = grid_of(&layout.shape, &layout.chunks)
                    .iter()
                    .try_fold(1usize, |a, &g| a.checked_mul(g))
                    .ok_or(ChunkedError::TooLarge)?;
                let map_block = node
                    .get("chunk_block_map")
                    .and_then(Node::as_i64)
                    .ok_or(ChunkedError::Metadata("chunk_block_map"))?;
                let blocks = cx.reader.block_count();
                let missing = |block: i64| ChunkedError::MissingBlock { block, count: blocks };
                let map_index = (cx.absolute)(map_block, blocks).ok_or_else(|| missing(map_block))?;
                // The map is 4 bytes a chunk: its block's size is checked before it is read.
                let want = count.checked_mul(4).ok_or(ChunkedError::TooLarge)?;
                let have = cx.reader.block(map_index).map_err(|_| missing(map_block))?.data_len();
                if have != want as u64 {
                    return Err(ChunkedError::MapSize {
                        have: usize::try_from(have).unwrap_or(usize::MAX),
                        want,
                        chunks: count,
                    });
                }
                let bytes = cx.reader.read_data(map_index).map_err(|_| missing(map_block))?;
                if bytes.len() != want {
                    return Err(ChunkedError::MapSize {
                        have: bytes.len(),
                        want,
                        chunks: count,
                    });
                }
                // asdf-zarr writes the map as numpy's native int32: little-endian on every
                // machine it runs on.
                let map: Vec<i32> = bytes
                    .chunks_exact(4)
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                if let Some(&b) = map
                    .iter()
                    .find(|&&b| b >= 0 && usize::try_from(b).is_ok_and(|b| b >= blocks))
                {
                    return Err(missing(i64::from(b)));
                }
                (layout, Chunks::Blocks(map))
            }
        };
        let key = layout.key();
        Ok(Self {
            metadata: (layout.zarray.to_string(), key),
            zarrs_metadata: for_zarrs(&layout.zarray).to_string(),
            lz4: without_lz4(&layout.zarray).is_some(),
            shape: layout.shape,
            chunks: layout.chunks,
            datatype: layout.datatype,
            compressor: layout.compressor,
            source,
            max_bytes: cx.max_bytes,
            decoded: OnceLock::new(),
        })
    }

    /// ASDF.jl's chunked ndarray (`core/chunked-ndarray-1.0.0`): `shape`, `datatype`, and
    /// `chunks`, a list of `core/ndarray-chunk-1.0.0` mappings each with `start` (C order, as
    /// the shape) and `ndarray` (an ndarray in a block). As ASDF.jl reads them, chunks may
    /// overlap (a later one wins) and leave gaps (read here as zeros: ASDF.jl leaves them
    /// undefined).
    fn open_tiles(cx: &Context<'_>, doc: &asdf_yaml::Document, node: &Node) -> Result<Self, ChunkedError> {
        use asdf_core_types::{Dim, NdArray, Source};
        let shape = usize_list(
            Some(&to_json(doc, node.get("shape").ok_or(ChunkedError::Metadata("shape"))?)),
            "shape",
        )?;
        let datatype =
            Datatype::from_node(doc.resolve(node.get("datatype").ok_or(ChunkedError::Metadata("datatype"))?))
                .map_err(|_| ChunkedError::Metadata("datatype"))?;
        if !matches!(datatype, Datatype::Scalar(_)) {
            return Err(ChunkedError::Dtype(datatype.to_string()));
        }
        let size = datatype.size();
        shape
            .iter()
            .try_fold(size, |a, &d| a.checked_mul(d))
            .filter(|&b| isize::try_from(b).is_ok())
            .ok_or(ChunkedError::TooLarge)?;
        let list = node
            .get("chunks")
            .map(|n| doc.resolve(n))
            .and_then(Node::as_sequence)
            .ok_or(ChunkedError::Metadata("chunks"))?;
        let blocks = cx.reader.block_count();
        let mut tiles = Vec::with_capacity(list.items.len());
        let mut compressor = None;
        for item in &list.items {
            let item = doc.resolve(item);
            let start = usize_list(item.get("start").map(|s| to_json(doc, s)).as_ref(), "chunk start")?;
            let inner = item
                .get("ndarray")
                .map(|n| doc.resolve(n))
                .ok_or(ChunkedError::Metadata("chunk ndarray"))?;
            let nd = NdArray::from_node(inner, doc).map_err(|_| ChunkedError::Metadata("chunk ndarray"))?;
            if nd.datatype.as_ref() != Some(&datatype) {
                return Err(ChunkedError::Metadata("chunk datatype differs from the array's"));
            }
            let tshape: Vec<usize> = nd
                .shape
                .iter()
                .flatten()
                .map(|d| match d {
                    Dim::Fixed(n) => Ok(*n),
                    Dim::Streamed => Err(ChunkedError::Metadata("chunk shape")),
                })
                .collect::<Result<_, _>>()?;
            let fits = start.len() == shape.len()
                && tshape.len() == shape.len()
                && start
                    .iter()
                    .zip(&tshape)
                    .zip(&shape)
                    .all(|((&s, &t), &n)| s.checked_add(t).is_some_and(|e| e <= n));
            if !fits {
                return Err(ChunkedError::Metadata("a chunk reaches past the array's shape"));
            }
            let data = match nd.source {
                None => {
                    // Inline elements (asdf-cxx writes ASDF.jl's chunks so).
                    let Datatype::Scalar(t) = &datatype else {
                        return Err(ChunkedError::Dtype(datatype.to_string()));
                    };
                    let d = nd.decode(None).map_err(|_| ChunkedError::Metadata("chunk ndarray"))?;
                    if d.shape != tshape {
                        return Err(ChunkedError::Metadata("chunk ndarray's data differ from its shape"));
                    }
                    TileData::Inline(
                        element_bytes(&d.elements, *t).ok_or(ChunkedError::Metadata("chunk ndarray's data"))?,
                    )
                }
                Some(Source::Block(src)) => {
                    let block = (cx.absolute)(src, blocks).ok_or(ChunkedError::MissingBlock {
                        block: src,
                        count: blocks,
                    })?;
                    let b = cx.reader.block(block).map_err(|_| ChunkedError::MissingBlock {
                        block: src,
                        count: blocks,
                    })?;
                    // The chunk's elements, C-contiguous (as ASDF.jl writes them), inside its block.
                    let contiguous = nd
                        .strides
                        .as_ref()
                        .is_none_or(|st| *st == asdf_core_types::view::c_strides(&tshape, size));
                    let len = tshape.iter().product::<usize>() * size;
                    let offset = usize::try_from(nd.offset).map_err(|_| ChunkedError::TooLarge)?;
                    if !contiguous || offset.checked_add(len).is_none_or(|end| end as u64 > b.data_len()) {
                        return Err(ChunkedError::Metadata("chunk ndarray does not fit its block"));
                    }
                    if compressor.is_none() && !b.compression().is_none() {
                        compressor = Some(b.compression().to_string());
                    }
                    TileData::Block {
                        block,
                        offset,
                        order: nd.byteorder,
                    }
                }
                Some(_) => return Err(ChunkedError::Metadata("chunk source (a block or inline data is read)")),
            };
            tiles.push(Tile {
                start,
                shape: tshape,
                data,
            });
        }
        let chunks = tiles.first().map_or_else(|| shape.clone(), |t| t.shape.clone());
        Ok(Self {
            metadata: (String::new(), ""),
            zarrs_metadata: String::new(),
            lz4: false,
            shape,
            chunks,
            datatype,
            compressor,
            source: Chunks::Tiles(tiles),
            max_bytes: cx.max_bytes,
            decoded: OnceLock::new(),
        })
    }

    /// The box `lo` + `extent` of ASDF.jl's chunked ndarray: the tiles it meets copied in
    /// (in their order: a later one wins), the rest zeros.
    fn decode_tiles(
        &self,
        reader: &Reader,
        tiles: &[Tile],
        lo: &[usize],
        extent: &[usize],
    ) -> Result<Vec<u8>, ChunkedError> {
        let size = self.datatype.size();
        let total = extent.iter().product::<usize>() * size;
        let mut out = Vec::new();
        out.try_reserve_exact(total).map_err(|_| ChunkedError::TooLarge)?;
        out.resize(total, 0);
        if total == 0 {
            return Ok(out);
        }
        let swap = self.datatype.to_string();
        let part = if swap.starts_with("complex") { size / 2 } else { size };
        for t in tiles {
            // The intersection of the tile and the box, in array coordinates.
            let (a, b): (Vec<usize>, Vec<usize>) = t
                .start
                .iter()
                .zip(&t.shape)
                .zip(lo.iter().zip(extent))
                .map(|((&s, &n), (&l, &e))| (s.max(l), (s + n).min(l + e)))
                .unzip();
            if a.iter().zip(&b).any(|(x, y)| x >= y) && !a.is_empty() {
                continue;
            }
            let (data, offset, order) = match &t.data {
                TileData::Block { block, offset, order } => (
                    reader.read_data(*block).map_err(|e| ChunkedError::Block {
                        block: *block,
                        source: Box::new(e),
                    })?,
                    *offset,
                    *order,
                ),
                TileData::Inline(bytes) => (std::borrow::Cow::Borrowed(bytes.as_slice()), 0, Self::byte_order()),
            };
            let fix = |row: &mut [u8]| {
                if order != Self::byte_order() && part > 1 {
                    for e in row.chunks_exact_mut(part) {
                        e.reverse();
                    }
                }
            };
            copy_box(&data, offset, (&t.start, &t.shape), (&mut out, lo, extent), size, fix)
                .map_err(|()| ChunkedError::Metadata("chunk ndarray does not fit its block"))?;
        }
        Ok(out)
    }

    /// The whole array, decoded: C order, native byte order (decoded once, then kept).
    pub fn decoded(&self, reader: &Reader) -> Result<&[u8], ChunkedError> {
        if let Some(d) = self.decoded.get() {
            return Ok(d);
        }
        // A chunked array's shape is not bounded by the file's bytes (unwritten chunks are the
        // fill value): a whole read is held to the limit of a decoded block, and memory the
        // system refuses is an error, not an abort.
        let bytes = self.shape.iter().product::<usize>() * self.datatype.size();
        if bytes as u64 > self.max_bytes {
            return Err(ChunkedError::TooLargeToRead {
                bytes: bytes as u64,
                limit: self.max_bytes,
            });
        }
        if Vec::<u8>::new().try_reserve_exact(bytes).is_err() {
            return Err(ChunkedError::TooLarge);
        }
        let d = self.decode_chunks(reader, None)?;
        Ok(self.decoded.get_or_init(|| d))
    }

    /// The box of the array starting at `lo` with extent `extent`, decoded (C order, native
    /// byte order): only the chunks it touches are read and decoded.
    pub fn decode_box(&self, reader: &Reader, lo: &[usize], extent: &[usize]) -> Result<Vec<u8>, ChunkedError> {
        if let Some(all) = self.decoded.get() {
            // Already decoded whole: cut the box out of it.
            let size = self.datatype.size();
            let sel = asdf_core_types::region::Selection {
                spans: lo
                    .iter()
                    .zip(extent)
                    .map(|(&start, &count)| asdf_core_types::region::Span {
                        start,
                        step: 1,
                        count,
                        keep: true,
                    })
                    .collect(),
            };
            return Ok(sel.gather_bytes_in(&vec![0; self.shape.len()], &self.shape, all, size));
        }
        self.decode_chunks(reader, Some((lo, extent)))
    }

    /// Decodes the box `region` (the whole array when `None`) from the chunks it touches,
    /// and only those (visited box by box over the grid, never chunk by chunk over all).
    fn decode_chunks(&self, reader: &Reader, region: Option<(&[usize], &[usize])>) -> Result<Vec<u8>, ChunkedError> {
        let zeros = vec![0; self.shape.len()];
        let (lo, extent) = region.unwrap_or((&zeros, &self.shape));
        if let Chunks::Tiles(tiles) = &self.source {
            return self.decode_tiles(reader, tiles, lo, extent);
        }
        let total = extent.iter().product::<usize>() * self.datatype.size();
        let mut out = Vec::new();
        out.try_reserve_exact(total).map_err(|_| ChunkedError::TooLarge)?;
        out.resize(total, 0);
        self.decode_chunks_into(reader, lo, extent, &mut out)?;
        Ok(out)
    }

    /// Decodes the box at `lo` with `extent` into `out` (C order, native byte order, exactly
    /// the box's bytes), from the chunks it touches (cut out of the whole array instead when
    /// that is already decoded). The chunks are read on up to 8 threads
    /// at once, in order, and each is decoded (on [`exec::threads`] threads) and copied into
    /// place as soon as its bytes are there: a remote file's transfer and the decoding
    /// overlap, and at most a few chunks' bytes wait in memory.
    ///
    /// [`exec::threads`]: asdf_layout::compression::exec::threads
    pub fn decode_chunks_into(
        &self,
        reader: &Reader,
        lo: &[usize],
        extent: &[usize],
        out: &mut [u8],
    ) -> Result<(), ChunkedError> {
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use zarrs::storage::StoreKey;
        let size = self.datatype.size();
        if out.len() != extent.iter().product::<usize>() * size {
            return Err(ChunkedError::Metadata("the output's size is not the region's"));
        }
        if let Some(all) = self.decoded.get() {
            // Already decoded whole: the box copied out of it.
            let zeros = vec![0; self.shape.len()];
            return copy_box(all, 0, (&zeros, &self.shape), (out, lo, extent), size, |_| {})
                .map_err(|()| ChunkedError::Metadata("a region outside the array"));
        }
        if let Chunks::Tiles(tiles) = &self.source {
            out.copy_from_slice(&self.decode_tiles(reader, tiles, lo, extent)?);
            return Ok(());
        }
        if self.chunks.contains(&0) {
            return Err(ChunkedError::Metadata("a chunk of extent 0"));
        }
        if extent.contains(&0) {
            return Ok(());
        }
        let store = Arc::new(zarrs::storage::store::MemoryStore::new());
        let key = |k: &str| StoreKey::new(k).map_err(|_| ChunkedError::Metadata("chunk key"));
        store
            .set(&key(self.metadata.1)?, self.zarrs_metadata.clone().into_bytes().into())
            .map_err(|_| ChunkedError::Metadata("chunk key"))?;
        // The array over the metadata alone names the chunk keys (its separator or key
        // encoding) and decodes each chunk put beside it.
        let array = zarrs::array::Array::open(store.clone(), "/").map_err(|e| ChunkedError::Create(Box::new(e)))?;
        let grid = grid_of(&self.shape, &self.chunks);
        // The grid box the region touches: [first, last] chunk along each dimension.
        let (first, last): (Vec<usize>, Vec<usize>) = lo
            .iter()
            .zip(extent)
            .zip(&self.chunks)
            .map(|((&l, &e), &c)| (l / c, (l + e - 1) / c))
            .unzip();
        if first.iter().zip(&grid).any(|(f, g)| f >= g) {
            return Err(ChunkedError::Metadata("a region outside the array"));
        }
        // Each touched chunk: its grid position, key and block (None: a file of a store, or
        // not written).
        let mut todo: Vec<(Vec<u64>, StoreKey, Option<usize>)> = Vec::new();
        let mut index = first.clone();
        let mut more = true;
        while more {
            let flat = index.iter().zip(&grid).fold(0usize, |acc, (&i, &g)| acc * g + i);
            let at: Vec<u64> = index.iter().map(|&i| i as u64).collect();
            // The next grid position of the box (odometer, last dimension fastest).
            more = false;
            for d in (0..index.len()).rev() {
                if index[d] < last[d] {
                    index[d] += 1;
                    more = true;
                    break;
                }
                index[d] = first[d];
            }
            let block = match &self.source {
                Chunks::Blocks(map) => match map.get(flat).map(|&b| usize::try_from(b)) {
                    Some(Ok(block)) => Some(block),
                    // Not written: the fill value, decoded with the others.
                    _ => None,
                },
                _ => None,
            };
            let name = array.chunk_key(&at);
            todo.push((at, name, block));
        }
        let chunk_bytes = self.chunks.iter().product::<usize>() * size;
        // What the readers fetch, in the order of the grid: runs of neighbouring blocks
        // (asdf-zarr writes a chunk row's blocks one after another), each read at once, and
        // the files of a directory or URL store one by one.
        let mut wanted: Vec<usize> = todo.iter().filter_map(|t| t.2).collect();
        wanted.sort_unstable();
        wanted.dedup();
        // Runs of at most a 32nd of what is wanted (with 8 readers; 4 to 64 MiB), each
        // streamed: the first chunks arrive, and are decoded, while the later ones are still
        // on their way.
        let offsets = reader.block_offsets();
        let span = match (wanted.first(), wanted.last()) {
            (Some(&f), Some(&l)) => block_end(reader, &offsets, l).saturating_sub(offsets.get(f).copied().unwrap_or(0)),
            _ => 0,
        };
        // As many readers as the source takes reads at once (a remote file's concurrency;
        // 8 for a local one). One reader (concurrency 1): one run, one request.
        let at_once = asdf_layout::ReadAt::reads_at_once(reader.get_ref()).clamp(1, 8);
        let cap = if at_once == 1 {
            u64::MAX
        } else {
            (span / (4 * at_once as u64)).clamp(4 << 20, MAX_RUN_BYTES)
        };
        let runs = neighbour_runs(reader, &wanted, cap);
        let mut users: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
        for (i, t) in todo.iter().enumerate() {
            if let Some(b) = t.2 {
                users.entry(b).or_default().push(i);
            }
        }
        enum Job<'r> {
            Run(&'r [usize]),
            Chunk(usize),
        }
        let jobs: Vec<Job<'_>> = runs
            .iter()
            .map(|r| Job::Run(r.as_slice()))
            .chain(
                todo.iter()
                    .enumerate()
                    .filter(|(_, t)| t.2.is_none())
                    .map(|(i, _)| Job::Chunk(i)),
            )
            .collect();
        let read_file = |name: &StoreKey| -> Result<Option<Vec<u8>>, ChunkedError> {
            match &self.source {
                Chunks::Directory(dir, within) => {
                    // A stored chunk is at most its decoded size plus a compressor's overhead.
                    read_store_file(
                        dir,
                        within.as_deref(),
                        name.as_str(),
                        chunk_bytes as u64 * 2 + (1 << 16),
                    )
                }
                #[cfg(feature = "remote")]
                Chunks::Url(url, opts) => fetch_object(
                    &store_key_url(url, name.as_str())?,
                    opts,
                    chunk_bytes as u64 * 2 + (1 << 16),
                ),
                _ => Ok(None),
            }
        };
        let readers = jobs.len().clamp(1, at_once);
        let decoders = asdf_layout::compression::exec::threads().clamp(1, todo.len().max(1));
        let next_job = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let error: Mutex<Option<ChunkedError>> = Mutex::new(None);
        let fail = |e: ChunkedError| {
            failed.store(true, Ordering::Relaxed);
            let mut slot = error.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            slot.get_or_insert(e);
        };
        let out = Mutex::new(out);
        // A chunk's stored bytes (None: not there, the fill value) by its place in `todo`.
        type Fetched = (usize, Option<Vec<u8>>);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Fetched>(readers.max(decoders) * 2);
        let rx = Mutex::new(rx);
        let options = zarrs::array::codec::api::CodecOptions::default().with_concurrent_target(1);
        let decode_one = |(i, stored): Fetched| -> Result<(), ChunkedError> {
            let (at, name, _) = &todo[i];
            if let Some(bytes) = stored {
                let bytes = if self.lz4 {
                    lz4_decode(&bytes, chunk_bytes)?
                } else {
                    bytes
                };
                store
                    .set(name, bytes.into())
                    .map_err(|_| ChunkedError::Metadata("chunk key"))?;
            }
            let decoded = array.retrieve_chunk_opt::<zarrs::array::ArrayBytes<'static>>(at, &options);
            if store.erase(name).is_err() {
                return Err(ChunkedError::Metadata("chunk key"));
            }
            let decoded = decoded.map_err(|e| ChunkedError::Decode(Box::new(e)))?;
            let fixed = decoded
                .into_fixed()
                .map_err(|_| ChunkedError::Dtype("variable-length".to_owned()))?;
            let start: Vec<usize> = at
                .iter()
                .zip(&self.chunks)
                .map(|(&g, &c)| usize::try_from(g).unwrap_or(usize::MAX).saturating_mul(c))
                .collect();
            let mut out = out.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            copy_box(&fixed, 0, (&start, &self.chunks), (&mut out, lo, extent), size, |_| {})
                .map_err(|()| ChunkedError::Metadata("a decoded chunk smaller than its shape"))
        };
        let todo = &todo;
        std::thread::scope(|s| {
            for _ in 0..readers {
                let tx = tx.clone();
                let (jobs, next_job, failed, fail, users, read_file) =
                    (&jobs, &next_job, &failed, &fail, &users, &read_file);
                s.spawn(move || {
                    while !failed.load(Ordering::Relaxed) {
                        let Some(job) = jobs.get(next_job.fetch_add(1, Ordering::Relaxed)) else {
                            return;
                        };
                        let mut sent = Vec::new();
                        match job {
                            Job::Run(run) => {
                                // Each block goes to the decoders as soon as its bytes are in.
                                let mut emit = |b: usize, bytes: Result<Vec<u8>, ChunkedError>| match bytes {
                                    Ok(bytes) => {
                                        // A block two chunks share (a hostile map) serves
                                        // both; the last (most often the only) user takes it.
                                        let users = users.get(&b).map(Vec::as_slice).unwrap_or_default();
                                        if let Some((&last, rest)) = users.split_last() {
                                            for &i in rest {
                                                if tx.send((i, Some(bytes.clone()))).is_err() {
                                                    return false;
                                                }
                                            }
                                            return tx.send((last, Some(bytes))).is_ok()
                                                && !failed.load(Ordering::Relaxed);
                                        }
                                        true
                                    }
                                    Err(e) => {
                                        fail(e);
                                        false
                                    }
                                };
                                if !stream_run(reader, run, chunk_bytes, &mut emit) {
                                    return;
                                }
                            }
                            Job::Chunk(i) => match read_file(&todo[*i].1) {
                                Ok(bytes) => sent.push((*i, bytes)),
                                Err(e) => {
                                    fail(e);
                                    return;
                                }
                            },
                        }
                        for f in sent {
                            if tx.send(f).is_err() {
                                return;
                            }
                        }
                    }
                });
            }
            drop(tx);
            for _ in 0..decoders {
                let (rx, failed, fail, decode_one) = (&rx, &failed, &fail, &decode_one);
                s.spawn(move || {
                    loop {
                        let next = rx.lock().unwrap_or_else(std::sync::PoisonError::into_inner).recv();
                        let Ok(fetched) = next else { return };
                        if failed.load(Ordering::Relaxed) {
                            continue;
                        }
                        if let Err(e) = decode_one(fetched) {
                            fail(e);
                        }
                    }
                });
            }
        });
        match error.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The byte order of the decoded bytes.
    pub fn byte_order() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }
}

/// Where each chunk of an asdf-zarr array with chunks in blocks is: for tools that fetch and
/// decode chunks themselves (one Dask task per chunk), with [`decode_zarr_chunk`].
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkMap {
    /// The Zarr metadata (format 2 `.zarray` or format 3 `zarr.json`) as JSON text.
    pub metadata: String,
    /// The array's shape and its chunk shape.
    pub shape: Vec<usize>,
    /// The chunk shape.
    pub chunks: Vec<usize>,
    /// The chunk grid's extent along each dimension.
    pub grid: Vec<usize>,
    /// Each chunk's block (C order over the grid; `None`: never written, the fill value).
    pub blocks: Vec<Option<usize>>,
}

impl Chunked {
    /// The chunk map, for an array whose chunks are blocks of the file.
    pub fn chunk_map(&self) -> Option<ChunkMap> {
        let Chunks::Blocks(map) = &self.source else { return None };
        Some(ChunkMap {
            metadata: self.metadata.0.clone(),
            shape: self.shape.clone(),
            chunks: self.chunks.clone(),
            grid: grid_of(&self.shape, &self.chunks),
            blocks: map.iter().map(|&b| usize::try_from(b).ok()).collect(),
        })
    }

    /// For an array whose chunks are in a store outside the file (a directory beside it, or
    /// objects under a URL): the metadata document and its key, with the object `key` of the
    /// store (`None`: not there), read as the array's own chunks are, under the same reference
    /// policy and link checks (`Ok(None)` for an array whose chunks are in the file).
    pub fn store_object(&self, key: &str) -> Result<Option<StoreObject>, ChunkedError> {
        // A stored chunk is at most its decoded size plus a compressor's overhead.
        let chunk_bytes = self
            .chunks
            .iter()
            .product::<usize>()
            .saturating_mul(self.datatype.size());
        let limit = (chunk_bytes as u64).saturating_mul(2).saturating_add(1 << 16);
        // A key names an object inside the store: no empty, `.` or `..` segment, no leading `/`.
        if key.split('/').any(|s| s.is_empty() || s == "." || s == "..") || key.contains('\\') {
            return Err(ChunkedError::OutsideKey(key.to_owned()));
        }
        let bytes = match &self.source {
            Chunks::Directory(dir, within) => read_store_file(dir, within.as_deref(), key, limit)?,
            #[cfg(feature = "remote")]
            Chunks::Url(url, opts) => fetch_object(&store_key_url(url, key)?, opts, limit)?,
            _ => return Ok(None),
        };
        Ok(Some(StoreObject {
            metadata: self.metadata.0.clone(),
            metadata_key: self.metadata.1,
            bytes,
        }))
    }
}

/// An object of a chunked array's external store, with the array's metadata
/// (the facade's `AsdfFile::chunk_store_object`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreObject {
    /// The array's metadata document (JSON).
    pub metadata: String,
    /// Its key in the store (`.zarray` for Zarr format 2, `zarr.json` for format 3).
    pub metadata_key: &'static str,
    /// The object's bytes as stored (`None`: not in the store).
    pub bytes: Option<Vec<u8>>,
}

/// Decodes one chunk of a Zarr array (`metadata` as in [`ChunkMap::metadata`]) at grid
/// position `index` from its stored bytes (`None`: a chunk never written, the fill value),
/// through `zarrs`: the whole chunk's elements, C order, native byte order.
///
/// # Errors
/// [`ChunkedError`] for bad metadata or a chunk that does not decode.
pub fn decode_zarr_chunk(metadata: &str, index: &[u64], stored: Option<Vec<u8>>) -> Result<Vec<u8>, ChunkedError> {
    let meta: serde_json::Value = serde_json::from_str(metadata).map_err(|_| ChunkedError::Metadata("not JSON"))?;
    let layout = ChunkLayout::from_json(meta)?;
    let lz4 = without_lz4(&layout.zarray);
    let stored = match (&lz4, stored) {
        (Some(_), Some(b)) => Some(lz4_decode(
            &b,
            layout.chunks.iter().product::<usize>() * layout.datatype.size(),
        )?),
        (_, b) => b,
    };
    let store = Arc::new(zarrs::storage::store::MemoryStore::new());
    let key = zarrs::storage::StoreKey::new(layout.key()).map_err(|_| ChunkedError::Metadata("chunk key"))?;
    store
        .set(&key, for_zarrs(&layout.zarray).to_string().into_bytes().into())
        .map_err(|_| ChunkedError::Metadata("chunk key"))?;
    let array = zarrs::array::Array::open(store.clone(), "/").map_err(|e| ChunkedError::Create(Box::new(e)))?;
    let grid = grid_of(&layout.shape, &layout.chunks);
    if index.len() != grid.len() || index.iter().zip(&grid).any(|(&i, &g)| i >= g as u64) {
        return Err(ChunkedError::Metadata("chunk index outside the grid"));
    }
    if let Some(bytes) = stored {
        store
            .set(&array.chunk_key(index), bytes.into())
            .map_err(|_| ChunkedError::Metadata("chunk key"))?;
    }
    let bytes: zarrs::array::ArrayBytes<'static> = array
        .retrieve_chunk(index)
        .map_err(|e| ChunkedError::Decode(Box::new(e)))?;
    Ok(bytes
        .into_fixed()
        .map_err(|_| ChunkedError::Dtype("variable-length".to_owned()))?
        .into_owned())
}

/// The longest run of neighbouring blocks when several readers share a read.
const MAX_RUN_BYTES: u64 = 64 << 20;

/// `blocks` (sorted, unique) in runs of neighbours: consecutive indices, read together by
/// [`stream_run`], up to `cap` bytes a run.
fn neighbour_runs(reader: &Reader, blocks: &[usize], cap: u64) -> Vec<Vec<usize>> {
    let offsets = reader.block_offsets();
    let mut runs: Vec<Vec<usize>> = Vec::new();
    for &b in blocks {
        let joins = runs.last().is_some_and(|run| {
            let (first, last) = (run[0], run[run.len() - 1]);
            last + 1 == b
                && offsets
                    .get(first)
                    .is_some_and(|start| block_end(reader, &offsets, b).saturating_sub(*start) <= cap)
        });
        match runs.last_mut() {
            Some(run) if joins => run.push(b),
            _ => runs.push(vec![b]),
        }
    }
    runs
}

/// Where block `b`'s bytes end at the latest: the next block's start, or the end of the file
/// for the last block (its block index, a few lines, read with it).
fn block_end(reader: &Reader, offsets: &[u64], b: usize) -> u64 {
    offsets.get(b + 1).copied().unwrap_or_else(|| reader.file_len())
}

/// The decoded data of the neighbouring blocks `run`, each handed to `emit` as soon as its
/// bytes are in: one streamed read from the first block's header to the next block's start
/// (the file's end after the last block; one request to a remote file), each header parsed
/// from it and each block decoded. Where that cannot serve (checksums to verify, a draft's
/// layout, a streamed block, a header that does not parse or claims more than `chunk_bytes`
/// allows, a read that fails), those blocks are read one by one as the reader reads them.
/// Memory: the blocks not yet complete, not the run. False when `emit` said stop.
fn stream_run(
    reader: &Reader,
    run: &[usize],
    chunk_bytes: usize,
    emit: &mut (dyn FnMut(usize, Result<Vec<u8>, ChunkedError>) -> bool + Send),
) -> bool {
    let one = |b: usize| {
        reader
            .read_data(b)
            .map(std::borrow::Cow::into_owned)
            .map_err(|e| ChunkedError::Block {
                block: b,
                source: Box::new(e),
            })
    };
    let offsets = reader.block_offsets();
    let (Some(&first), Some(&last)) = (run.first(), run.last()) else {
        return true;
    };
    let usable = !reader.options().verify_checksums && reader.file_header().dialect == asdf_layout::Dialect::Asdf;
    let span = offsets
        .get(first)
        .map(|&s| (s, block_end(reader, &offsets, last)))
        .filter(|(s, e)| usable && e > s);
    let Some((start, end)) = span else {
        return run.iter().all(|&b| emit(b, one(b)));
    };
    // The largest stored block taken from the stream (a compressor's worst case and more).
    let most = (chunk_bytes as u64).saturating_mul(4) + (1 << 20);
    let mut next = 0usize; // the next block of `run` to take
    let mut alone: Vec<usize> = Vec::new(); // blocks to read one by one after the stream
    let mut stopped = false;
    let mut pending: Vec<u8> = Vec::new(); // bytes from `pending_at` not yet used
    let mut pending_at = start;
    let mut streamed = start; // where the bytes received so far end
    // Takes the blocks complete in `data` (the file's bytes from `data_at`); returns where
    // the bytes still needed begin, or None when `emit` said stop.
    let mut take = |data: &[u8], data_at: u64, next: &mut usize, alone: &mut Vec<usize>| -> Option<u64> {
        while let Some(&b) = run.get(*next) {
            let Some(&at) = offsets.get(b) else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(rel) = at.checked_sub(data_at).and_then(|r| usize::try_from(r).ok()) else {
                // Before the bytes kept (a hostile index's overlapping blocks).
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(avail) = data.get(rel..).filter(|a| a.len() >= 6) else {
                return Some(at);
            };
            let header_len = 6 + usize::from(u16::from_be_bytes([avail[4], avail[5]]));
            if avail.len() < header_len {
                return Some(at);
            }
            let header = asdf_layout::BlockHeader::parse(avail, at)
                .ok()
                .filter(|h| !h.is_streamed() && h.data_size <= most && h.used_size <= most);
            let Some(h) = header else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(from) = usize::try_from(h.total_header_len()).ok() else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(to) = usize::try_from(h.used_size).ok().and_then(|u| from.checked_add(u)) else {
                alone.push(b);
                *next += 1;
                continue;
            };
            let Some(stored) = avail.get(from..to) else {
                return Some(at);
            };
            let decoded = if h.compression.is_none() {
                (h.used_size == h.data_size).then(|| stored.to_vec())
            } else {
                reader.options().registry.get(h.compression).and_then(|codec| {
                    let mut out = vec![0u8; usize::try_from(h.data_size).ok()?];
                    codec.decode(stored, &mut out).ok()?;
                    Some(out)
                })
            };
            *next += 1;
            match decoded {
                Some(d) => {
                    if !emit(b, Ok(d)) {
                        return None;
                    }
                }
                None => alone.push(b),
            }
        }
        Some(u64::MAX)
    };
    let mut sink = |piece: &[u8]| -> std::io::Result<()> {
        let piece_at = streamed;
        streamed += piece.len() as u64;
        let keep_from = if pending.is_empty() {
            // Straight from the piece (a source in memory hands the whole run at once).
            let keep = take(piece, piece_at, &mut next, &mut alone);
            pending_at = piece_at;
            keep.map(|k| {
                let k = k.clamp(piece_at, streamed);
                pending.extend_from_slice(&piece[usize::try_from(k - piece_at).unwrap_or(piece.len())..]);
                pending_at = k;
                k
            })
        } else {
            pending.extend_from_slice(piece);
            let keep = take(&pending, pending_at, &mut next, &mut alone);
            keep.map(|k| {
                let k = k.clamp(pending_at, streamed);
                pending.drain(..usize::try_from(k - pending_at).unwrap_or(pending.len()));
                pending_at = k;
                k
            })
        };
        if keep_from.is_none() {
            stopped = true;
            return Err(std::io::Error::other("the chunks' readers were stopped"));
        }
        Ok(())
    };
    let read = asdf_layout::ReadAt::read_streamed(reader.get_ref(), start, end - start, &mut sink);
    if stopped {
        return false;
    }
    // The blocks the stream did not bring (a failed read, or a header claiming more than
    // the bytes up to the next block): each read alone, so that a failure says which.
    drop(read);
    alone.extend(run.get(next..).unwrap_or_default());
    alone.into_iter().all(|b| emit(b, one(b)))
}

/// Copies where a source box and a destination box meet, row by row along the last
/// dimension: the source box starts at `start` with `shape` (C order, from byte `offset` of
/// `src`), the destination box at `lo` with `extent` (C order, all of `dst`); `fix` is applied
/// to each row written (a byte swap). `Err(())` when either side's bytes are too short.
fn copy_box(
    src: &[u8],
    offset: usize,
    (start, shape): (&[usize], &[usize]),
    (dst, lo, extent): (&mut [u8], &[usize], &[usize]),
    size: usize,
    fix: impl Fn(&mut [u8]),
) -> Result<(), ()> {
    let nd = start.len();
    let (a, b): (Vec<usize>, Vec<usize>) = start
        .iter()
        .zip(shape)
        .zip(lo.iter().zip(extent))
        .map(|((&s, &n), (&l, &e))| (s.max(l), (s + n).min(l + e)))
        .unzip();
    if a.iter().zip(&b).any(|(x, y)| x >= y) {
        return Ok(());
    }
    // Byte strides of a C-ordered box.
    let strides = |dims: &[usize]| {
        let mut st = vec![size; dims.len()];
        for d in (0..dims.len().saturating_sub(1)).rev() {
            st[d] = st[d + 1].saturating_mul(dims[d + 1]);
        }
        st
    };
    let (from_strides, to_strides) = (strides(shape), strides(extent));
    let row = if nd == 0 { size } else { (b[nd - 1] - a[nd - 1]) * size };
    let mut idx = a.clone();
    loop {
        let from = offset
            + idx
                .iter()
                .zip(start)
                .zip(&from_strides)
                .map(|((&i, &s), &st)| (i - s) * st)
                .sum::<usize>();
        let to = idx
            .iter()
            .zip(lo)
            .zip(&to_strides)
            .map(|((&i, &l), &st)| (i - l) * st)
            .sum::<usize>();
        let piece = src.get(from..from + row).ok_or(())?;
        let target = dst.get_mut(to..to + row).ok_or(())?;
        target.copy_from_slice(piece);
        fix(target);
        // The next row: the odometer over every dimension but the last.
        let mut d = nd.saturating_sub(1);
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < b[d] {
                break;
            }
            idx[d] = a[d];
        }
    }
}

/// The chunk grid's extent along each dimension.
fn grid_of(shape: &[usize], chunks: &[usize]) -> Vec<usize> {
    shape.iter().zip(chunks).map(|(s, c)| s.div_ceil(*c)).collect()
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
