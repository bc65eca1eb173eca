//! Chunked arrays with the feature `zarr` (asdf-zarr's layout, ASDF.jl's chunked ndarrays):
//! the facade's side of `asdf-chunked`: opening one as an [`Array`], reading its chunks,
//! writing arrays chunked.

use std::path::Path;
use std::sync::Arc;

use asdf_core_types::{ByteOrder, Datatype};
use asdf_layout::{Label, ReadAt, Reader};
use asdf_yaml::{Document, Node};

use crate::options::ReferencePolicy;

pub use asdf_chunked::{ChunkMap, ChunkedError, StoreObject};

/// What the crate root re-exports: the chunk types, and (this build reads chunked arrays)
/// the Zarr helpers the command line and the Python bindings use.
pub mod exports {
    pub use asdf_chunked::{ChunkLayout, ChunkMap, ChunkedError, StoreObject, decode_zarr_chunk, zarr_compressor};
}

/// Whether this build reads chunked arrays (their tags are then known, not reported).
pub(crate) const READS: bool = true;

/// A chunked array's chunks, decoded as one block.
pub(crate) type Chunk = Arc<asdf_chunked::Chunked>;

/// The byte order a chunked array is decoded in (the machine's).
pub(crate) fn byte_order() -> ByteOrder {
    asdf_chunked::Chunked::byte_order()
}

/// A chunked array's shape and datatype.
pub(crate) fn shape_and_type(c: &Chunk) -> (&[usize], &Datatype) {
    (&c.shape, &c.datatype)
}

/// Where a chunked array is read from: the file's blocks and directory, and what may be
/// opened beside it.
pub(crate) struct Place<'a> {
    pub(crate) reader: &'a Reader<Box<dyn ReadAt>>,
    pub(crate) absolute: &'a dyn Fn(i64, usize) -> Option<usize>,
    pub(crate) dir: Option<&'a Path>,
    pub(crate) policy: ReferencePolicy,
    pub(crate) max_bytes: u64,
    /// The URL the file was read from, with its options (read by builds with `remote`: the
    /// stores beside a remote file).
    #[allow(dead_code)]
    pub(crate) remote: Option<(String, crate::net::RemoteOptions)>,
}

/// The chunked array `node` of `doc` is (`None`: the node is not tagged as one).
pub(crate) fn open(place: Place<'_>, doc: &Document, node: &Node) -> Result<Option<Chunk>, ChunkedError> {
    if !node
        .tag
        .as_deref()
        .is_some_and(|t| asdf_chunked::is_zarr_tag(t) || asdf_chunked::is_chunked_ndarray_tag(t))
    {
        return Ok(None);
    }
    let cx = asdf_chunked::Context {
        reader: place.reader,
        absolute: place.absolute,
        dir: place.dir,
        policy: place.policy,
        max_bytes: place.max_bytes,
        #[cfg(feature = "remote")]
        remote: place.remote,
    };
    asdf_chunked::Chunked::open(&cx, doc, node).map(|c| Some(Arc::new(c)))
}

pub(crate) use asdf_chunked::AsBlocks as Encoded;

/// `data` (C order, `order`) encoded in chunks of `chunks`, each compressed with
/// `compression`'s Zarr compressor, as blocks `first`, `first + 1`, ... and their chunk map.
pub(crate) fn encode(
    datatype: &Datatype,
    order: ByteOrder,
    shape: &[usize],
    chunks: &[usize],
    data: Vec<u8>,
    compression: Option<Label>,
    first: usize,
) -> Result<Encoded, ChunkedError> {
    asdf_chunked::encode_as_blocks(datatype, order, shape, chunks, data, compression, first)
}

/// A chunked array's storage: its chunks read through the file's reader.
pub(crate) fn bytes<'a>(
    c: &Chunk,
    reader: &'a Reader<Box<dyn ReadAt>>,
) -> Arc<dyn asdf_layout::storage::ArrayBytes<'a> + 'a> {
    Arc::new(asdf_chunked::ChunkedBytes {
        chunked: c.clone(),
        reader,
    })
}

/// Where the chunks are, when they are blocks of the file.
pub(crate) fn chunk_map(c: &Chunk) -> Option<ChunkMap> {
    c.chunk_map()
}

/// Object `key` of the store outside the file the chunks are in.
pub(crate) fn store_object(c: &Chunk, key: &str) -> Result<Option<StoreObject>, ChunkedError> {
    c.store_object(key)
}

/// The path of a Zarr directory store (`store` or `meta_store` of an asdf-zarr node).
pub(crate) fn local_store_path(store: &Node) -> Option<&str> {
    asdf_chunked::local_store_path(store)
}

/// Whether `compression` has a Zarr compressor.
pub(crate) fn check_compressor(compression: Option<asdf_layout::Label>) -> Result<(), ChunkedError> {
    asdf_chunked::zarr_compressor(compression).map(drop)
}
