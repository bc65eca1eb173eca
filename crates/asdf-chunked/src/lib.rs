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

// Built without the feature `zarrs` (the `asdf` facade without its feature `zarr`), the names
// the facade uses exist and no node is a chunked array: see `off`.
#[cfg(not(feature = "zarrs"))]
mod off;
#[cfg(not(feature = "zarrs"))]
pub use off::*;

#[cfg(feature = "zarrs")]
mod codec;
#[cfg(feature = "zarrs")]
mod error;
#[cfg(feature = "zarrs")]
mod meta;
mod place;
#[cfg(feature = "zarrs")]
mod read;
#[cfg(feature = "zarrs")]
mod runs;
mod select;
#[cfg(feature = "zarrs")]
mod storage;
#[cfg(feature = "zarrs")]
mod store;

pub use asdf_core_types::chunk_tags::{ZARR_TAG_PREFIX, is_chunked_ndarray_tag, is_zarr_tag};
pub use place::{Context, local_store_path};
pub use select::chunkable;
#[cfg(feature = "zarrs")]
pub use {
    codec::{AsBlocks, Encoded, decode_zarr_chunk, encode, encode_as_blocks, zarr_compressor},
    error::ChunkedError,
    meta::{ChunkLayout, json_node},
    read::{ChunkMap, Chunked, StoreObject, open},
    storage::ChunkedBytes,
};

/// Whether this build reads chunked arrays (without the feature `zarrs`, no node is one).
pub const READS: bool = cfg!(feature = "zarrs");
