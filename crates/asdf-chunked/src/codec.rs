//! Chunks encoded and decoded: the compressor of a block compression, an array cut into
//! chunks for writing, numcodecs' `lz4` framing (which `zarrs` has no codec for), one chunk of a
//! store decoded alone.

use std::sync::Arc;

use asdf_core_types::{ByteOrder, Datatype};
use zarrs::storage::WritableStorageTraits as _;

use crate::error::ChunkedError;
use crate::meta::{ChunkLayout, dtype_of, for_zarrs, native_order, without_lz4};
use crate::runs::grid_of;

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
    if order != native_order() && size > 1 {
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

/// A chunk of numcodecs' `lz4`: its decoded size (4 bytes, little-endian) and one LZ4 block;
/// the size is held to `max` (the chunk's size) before anything is allocated.
pub(crate) fn lz4_decode(stored: &[u8], max: usize) -> Result<Vec<u8>, ChunkedError> {
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
pub(crate) fn lz4_encode(raw: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(raw.len()).unwrap_or(u32::MAX).to_le_bytes().to_vec();
    out.extend_from_slice(&lz4_flex::block::compress(raw));
    out
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

/// An array encoded in asdf-zarr's layout with its chunks as blocks of an ASDF file: the
/// chunks stored (a chunk of fill values is not), the chunk map's bytes (the block after them)
/// and the node.
#[derive(Debug)]
pub struct AsBlocks {
    /// The stored chunks, to be blocks `first`, `first + 1`, ...
    pub blocks: Vec<Vec<u8>>,
    /// The chunk map (int32 block numbers, little-endian; -1: not stored).
    pub map: Vec<u8>,
    /// The array's node (tag `zarr-1.0.0`).
    pub node: asdf_yaml::Node,
}

/// `data` (C order, `order`) encoded in chunks of `chunks`, each compressed with
/// `compression`'s Zarr compressor ([`zarr_compressor`]), its chunks to be blocks `first`,
/// `first + 1`, ... of an ASDF file and its chunk map the block after them.
///
/// # Errors
/// Chunks that do not fit the shape, a compression with no Zarr compressor, a datatype Zarr
/// does not have, more blocks than a chunk map can name.
pub fn encode_as_blocks(
    datatype: &Datatype,
    order: ByteOrder,
    shape: &[usize],
    chunks: &[usize],
    data: Vec<u8>,
    compression: Option<asdf_layout::Label>,
    first: usize,
) -> Result<AsBlocks, ChunkedError> {
    use asdf_yaml::Node;
    if chunks.len() != shape.len() || chunks.contains(&0) {
        return Err(ChunkedError::Metadata("chunks"));
    }
    let compressor = zarr_compressor(compression)?;
    let enc = encode(datatype, order, shape, chunks, data, compressor)?;
    let mut blocks = Vec::new();
    let mut map = Vec::with_capacity(enc.chunks.len() * 4);
    for chunk in enc.chunks {
        let index = match chunk {
            Some(data) => {
                let index = first + blocks.len();
                blocks.push(data);
                i32::try_from(index).map_err(|_| ChunkedError::TooLarge)?
            }
            None => -1,
        };
        map.extend_from_slice(&index.to_le_bytes());
    }
    let map_index = first + blocks.len();
    let node = Node::map(vec![
        (Node::str(".zarray"), crate::json_node(&enc.zarray)),
        (
            Node::str("chunk_block_map"),
            Node::int(i64::try_from(map_index).unwrap_or(i64::MAX)),
        ),
    ])
    .with_tag(format!("{}1.0.0", crate::ZARR_TAG_PREFIX));
    Ok(AsBlocks { blocks, map, node })
}
