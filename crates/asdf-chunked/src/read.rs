//! A chunked array opened from its node (Zarr in blocks or a store, ASDF.jl's tiles) and read:
//! whole, or the chunks a region meets.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use asdf_core_types::{ByteOrder, Datatype};
use asdf_yaml::Node;
use zarrs::storage::WritableStorageTraits as _;

use asdf_core_types::chunk_tags::is_chunked_ndarray_tag;

use crate::Context;
use crate::codec::lz4_decode;
use crate::error::ChunkedError;
use crate::meta::{ChunkLayout, for_zarrs, native_order, to_json, usize_list, without_lz4};
use crate::runs::{MAX_RUN_BYTES, Reader, block_end, copy_box, grid_of, neighbour_runs, stream_run};
use crate::store::{MAX_METADATA_BYTES, read_store_file, store_dir};
#[cfg(feature = "remote")]
use crate::{
    place::local_fs_store,
    store::{fetch_object, store_key_url, url_store},
};

/// Where a chunked array's chunks are.
#[derive(Debug)]
pub(crate) enum Chunks {
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
pub(crate) struct Tile {
    start: Vec<usize>,
    shape: Vec<usize>,
    data: TileData,
}

/// Where a chunk of ASDF.jl's chunked ndarray has its elements.
#[derive(Debug)]
pub(crate) enum TileData {
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
pub(crate) fn element_bytes(elements: &[asdf_core_types::Element], t: asdf_core_types::ScalarType) -> Option<Vec<u8>> {
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

/// The chunked array `node` of `doc` is (`None`: the node is not tagged as one), shared: its
/// storage ([`Chunked::storage`]) and the caller's handle hold it.
///
/// # Errors
/// As [`Chunked::open`].
pub fn open(cx: &Context<'_>, doc: &asdf_yaml::Document, node: &Node) -> Result<Option<Arc<Chunked>>, ChunkedError> {
    if !node
        .tag
        .as_deref()
        .is_some_and(|t| crate::is_zarr_tag(t) || is_chunked_ndarray_tag(t))
    {
        return Ok(None);
    }
    Chunked::open(cx, doc, node).map(|c| Some(Arc::new(c)))
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
        native_order()
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn datatype(&self) -> &Datatype {
        &self.datatype
    }

    /// The array's decoded bytes as storage read through `reader` (the file it is in).
    pub fn storage<'a>(self: &Arc<Self>, reader: &'a Reader) -> Arc<dyn asdf_layout::storage::ArrayBytes<'a> + 'a> {
        Arc::new(crate::ChunkedBytes {
            chunked: self.clone(),
            reader,
        })
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
