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
//! Not yet read: arrays whose chunks are in a store outside the file (`store:` with a
//! directory or fsspec store); numcodecs' `lz4` compressor (no `zarrs` codec).

use std::sync::{Arc, OnceLock};

use asdf_core_types::{ByteOrder, Datatype};
use asdf_yaml::{Node, NodeKind, Value};
use zarrs::storage::WritableStorageTraits as _;

/// The file's blocks, as the facade holds them.
type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

/// The tags of asdf-zarr's arrays start with this.
pub const ZARR_TAG_PREFIX: &str = "asdf://asdf-format.org/zarr/tags/zarr-";

/// Whether `tag` is one of asdf-zarr's array tags.
#[must_use]
pub fn is_zarr_tag(tag: &str) -> bool {
    tag.starts_with(ZARR_TAG_PREFIX)
}

/// The largest chunk (decoded) accepted beyond the array's own size.
const MAX_CHUNK_BYTES: usize = 1 << 28;

/// Why a chunked array cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkedError {
    /// The `.zarray` metadata is missing a key or has one of the wrong type.
    #[error("`.zarray`: {0}")]
    Metadata(&'static str),
    /// `zarrs` refused the metadata.
    #[error("Zarr metadata: {0}")]
    Create(#[source] Box<zarrs::array::ArrayCreateError>),
    /// `zarrs` could not decode the chunks.
    #[error("Zarr chunks: {0}")]
    Decode(#[source] Box<zarrs::array::ArrayError>),
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
    /// A block index in the chunk map (or the map's own) that the file does not have.
    #[error("block {block} named by the chunk map is not in the file ({count} blocks)")]
    MissingBlock {
        /// The index.
        block: i64,
        /// The file's blocks.
        count: usize,
    },
    /// The array's chunks are in a store beside the file, which this version does not read.
    #[error("the chunks are in a Zarr store outside the file (`store`), which is not read yet")]
    ExternalStore,
    /// Shape or chunk counts whose product overflows, or a chunk of size 0.
    #[error("the shape and chunk shape give more elements or chunks than memory can hold")]
    TooLarge,
}

/// A chunked array: its metadata, its chunk map, and its decoded bytes once read.
#[derive(Debug)]
pub(crate) struct Chunked {
    /// `.zarray` as JSON text.
    zarray: String,
    pub(crate) shape: Vec<usize>,
    pub(crate) chunks: Vec<usize>,
    pub(crate) datatype: Datatype,
    /// The compressor's numcodecs id (`None`: uncompressed).
    pub(crate) compressor: Option<String>,
    /// The separator of chunk keys (`.` or `/`).
    separator: String,
    /// The block of each chunk (C order over the chunk grid; negative: missing).
    map: Vec<i32>,
    /// The whole array, decoded (C order, native byte order), once read.
    decoded: OnceLock<Vec<u8>>,
}

/// The Zarr dtype `s` (`<f4`, `>i2`, `|u1`, `|b1`, `<c16`) as an ASDF datatype name.
fn datatype_of(s: &str) -> Option<&'static str> {
    let kind = s.get(1..2)?;
    let size = s.get(2..)?;
    Some(match (kind, size) {
        ("b", "1") => "bool8",
        ("i", "1") => "int8",
        ("i", "2") => "int16",
        ("i", "4") => "int32",
        ("i", "8") => "int64",
        ("u", "1") => "uint8",
        ("u", "2") => "uint16",
        ("u", "4") => "uint32",
        ("u", "8") => "uint64",
        ("f", "2") => "float16",
        ("f", "4") => "float32",
        ("f", "8") => "float64",
        ("c", "8") => "complex64",
        ("c", "16") => "complex128",
        _ => return None,
    })
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
    /// The layout of the zarr-tagged node `node` of `doc`.
    ///
    /// # Errors
    /// [`ChunkedError`] for metadata that is missing, of the wrong type, or too large.
    pub fn from_node(doc: &asdf_yaml::Document, node: &Node) -> Result<Self, ChunkedError> {
        let meta = node.get(".zarray").ok_or(ChunkedError::Metadata("missing"))?;
        let meta = to_json(doc, meta);
        let shape = usize_list(meta.get("shape"), "shape")?;
        let chunks = usize_list(meta.get("chunks"), "chunks")?;
        if chunks.len() != shape.len() || chunks.contains(&0) {
            return Err(ChunkedError::Metadata("chunks"));
        }
        let dtype = meta
            .get("dtype")
            .and_then(serde_json::Value::as_str)
            .ok_or(ChunkedError::Metadata("dtype"))?;
        let name = datatype_of(dtype).ok_or_else(|| ChunkedError::Dtype(dtype.to_owned()))?;
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
        let compressor = meta
            .get("compressor")
            .and_then(|c| c.get("id"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned);
        Ok(Self {
            shape,
            chunks,
            datatype,
            compressor,
            zarray: meta,
        })
    }
}

impl Chunked {
    /// The chunked array of the zarr-tagged node `node` of `file`.
    /// `absolute` turns a block source (negative: from the end) into a block index.
    pub(crate) fn open(
        reader: &Reader,
        doc: &asdf_yaml::Document,
        node: &Node,
        absolute: &dyn Fn(i64, usize) -> Option<usize>,
    ) -> Result<Self, ChunkedError> {
        if node.get("chunk_block_map").is_none() && node.get("store").is_some() {
            return Err(ChunkedError::ExternalStore);
        }
        let ChunkLayout {
            shape,
            chunks,
            datatype,
            compressor,
            zarray: meta,
        } = ChunkLayout::from_node(doc, node)?;
        let grid: Vec<usize> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
        let count = grid
            .iter()
            .try_fold(1usize, |a, &g| a.checked_mul(g))
            .ok_or(ChunkedError::TooLarge)?;
        let separator = meta
            .get("dimension_separator")
            .and_then(serde_json::Value::as_str)
            .unwrap_or(".")
            .to_owned();
        let map_block = node
            .get("chunk_block_map")
            .and_then(Node::as_i64)
            .ok_or(ChunkedError::Metadata("chunk_block_map"))?;
        let blocks = reader.block_count();
        let missing = |block: i64| ChunkedError::MissingBlock { block, count: blocks };
        let map_index = absolute(map_block, blocks).ok_or_else(|| missing(map_block))?;
        let bytes = reader.read_data(map_index).map_err(|_| missing(map_block))?;
        let want = count.checked_mul(4).ok_or(ChunkedError::TooLarge)?;
        if bytes.len() != want {
            return Err(ChunkedError::MapSize {
                have: bytes.len(),
                want,
                chunks: count,
            });
        }
        // asdf-zarr writes the map as numpy's native int32: little-endian on every machine it runs on.
        let map: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        for &b in &map {
            if b >= 0 && usize::try_from(b).is_ok_and(|b| b >= blocks) {
                return Err(missing(i64::from(b)));
            }
        }
        Ok(Self {
            zarray: meta.to_string(),
            shape,
            chunks,
            datatype,
            compressor,
            separator,
            map,
            decoded: OnceLock::new(),
        })
    }

    /// The chunk grid's extent along each dimension.
    fn grid(&self) -> Vec<usize> {
        self.shape
            .iter()
            .zip(&self.chunks)
            .map(|(s, c)| s.div_ceil(*c))
            .collect()
    }

    /// The whole array, decoded: C order, native byte order (decoded once, then kept).
    pub(crate) fn decoded(&self, reader: &Reader) -> Result<&[u8], ChunkedError> {
        if let Some(d) = self.decoded.get() {
            return Ok(d);
        }
        let d = self.decode_all(reader)?;
        Ok(self.decoded.get_or_init(|| d))
    }

    /// The box of the array starting at `lo` with extent `extent`, decoded (C order, native
    /// byte order): only the chunks it touches are read and decoded.
    pub(crate) fn decode_box(&self, reader: &Reader, lo: &[usize], extent: &[usize]) -> Result<Vec<u8>, ChunkedError> {
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
            let elements: Vec<&[u8]> = all.chunks_exact(size).collect();
            return Ok(sel
                .gather_in(&vec![0; self.shape.len()], &self.shape, &elements)
                .concat());
        }
        let touched = |flat_index: &[usize]| {
            flat_index
                .iter()
                .zip(&self.chunks)
                .zip(lo.iter().zip(extent))
                .all(|((&g, &c), (&l, &e))| e > 0 && g * c < l + e && (g + 1) * c > l)
        };
        self.decode_chunks(reader, &touched, Some((lo, extent)))
    }

    fn decode_all(&self, reader: &Reader) -> Result<Vec<u8>, ChunkedError> {
        self.decode_chunks(reader, &|_| true, None)
    }

    /// Decodes the box `region` (the whole array when `None`) from the chunks `wanted` picks
    /// (by grid position).
    fn decode_chunks(
        &self,
        reader: &Reader,
        wanted: &dyn Fn(&[usize]) -> bool,
        region: Option<(&[usize], &[usize])>,
    ) -> Result<Vec<u8>, ChunkedError> {
        use zarrs::storage::StoreKey;
        let store = Arc::new(zarrs::storage::store::MemoryStore::new());
        let key = |k: &str| StoreKey::new(k).map_err(|_| ChunkedError::Metadata("chunk key"));
        store
            .set(&key(".zarray")?, self.zarray.clone().into_bytes().into())
            .map_err(|_| ChunkedError::Metadata("chunk key"))?;
        let grid = self.grid();
        let mut index = vec![0usize; grid.len()];
        for (flat, &block) in self.map.iter().enumerate() {
            // The chunk's grid position from its flat index (C order).
            let mut rest = flat;
            for d in (0..grid.len()).rev() {
                index[d] = rest % grid[d];
                rest /= grid[d];
            }
            let Ok(block) = usize::try_from(block) else { continue };
            if !wanted(&index) {
                continue;
            }
            let name = if grid.is_empty() {
                "0".to_owned()
            } else {
                index
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(&self.separator)
            };
            let bytes = reader.read_data(block).map_err(|_| ChunkedError::MissingBlock {
                block: i64::try_from(block).unwrap_or(i64::MAX),
                count: reader.block_count(),
            })?;
            store
                .set(&key(&name)?, bytes.into_owned().into())
                .map_err(|_| ChunkedError::Metadata("chunk key"))?;
        }
        let array = zarrs::array::Array::open(store, "/").map_err(|e| ChunkedError::Create(Box::new(e)))?;
        let subset = match region {
            None => array.subset_all(),
            Some((lo, extent)) => zarrs::array::ArraySubset::new_with_ranges(
                &lo.iter()
                    .zip(extent)
                    .map(|(&l, &e)| l as u64..(l + e) as u64)
                    .collect::<Vec<_>>(),
            ),
        };
        let bytes: zarrs::array::ArrayBytes<'static> = array
            .retrieve_array_subset(&subset)
            .map_err(|e| ChunkedError::Decode(Box::new(e)))?;
        let fixed = bytes
            .into_fixed()
            .map_err(|_| ChunkedError::Dtype("variable-length".to_owned()))?;
        Ok(fixed.into_owned())
    }

    /// The byte order of the decoded bytes.
    pub(crate) fn byte_order() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }
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
