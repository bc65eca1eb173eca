//! What goes wrong reading or writing a chunked array.

use std::path::PathBuf;

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
