//! Built without the feature `zarr`: the same names as `on.rs`. A chunked array is not an
//! ndarray here (reading one says so, as for any node that is not an ndarray), and writing
//! one is refused.

use asdf_core_types::ByteOrder;
use asdf_layout::{ReadAt, Reader};
use asdf_yaml::Node;

use crate::array::{Array, Storage};
use crate::builder::NewArray;
use crate::error::Error;
use crate::file::AsdfFile;

/// Why a chunked array cannot be read or written (this build: it has none).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChunkedError {
    /// This build reads and writes no chunked arrays.
    #[error("this build reads and writes no chunked arrays (it was built without the feature `zarr`)")]
    Disabled,
}

/// Where a chunked array's chunks are (this build reads none).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkMap {}

/// An object of a chunked array's store (this build reads none).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreObject {}

/// What the crate root re-exports: the chunk types.
pub mod exports {
    pub use super::{ChunkMap, ChunkedError, StoreObject};
}

/// Whether this build reads chunked arrays: no (their tags stay reported as unknown).
pub(crate) const READS: bool = false;

/// A chunked array's chunks: none in this build.
#[derive(Debug, Clone)]
pub(crate) enum Chunk {}

pub(crate) fn storage(c: &Chunk) -> Storage {
    match *c {}
}

pub(crate) fn chunk_map(c: &Chunk) -> Option<ChunkMap> {
    match *c {}
}

pub(crate) fn store_object(c: &Chunk, _: &str) -> Result<Option<StoreObject>, ChunkedError> {
    match *c {}
}

pub(crate) fn decoded(c: &Chunk, _: &Reader<Box<dyn ReadAt>>) -> Result<Vec<u8>, ChunkedError> {
    match *c {}
}

pub(crate) fn decode_box(
    c: &Chunk,
    _: &Reader<Box<dyn ReadAt>>,
    _: &[usize],
    _: &[usize],
) -> Result<Vec<u8>, ChunkedError> {
    match *c {}
}

pub(crate) fn decode_into(
    c: &Chunk,
    _: &Reader<Box<dyn ReadAt>>,
    _: &[usize],
    _: &[usize],
    _: &mut [u8],
) -> Result<ByteOrder, ChunkedError> {
    match *c {}
}

pub(crate) fn decode_every_chunk(c: &Chunk, _: &Reader<Box<dyn ReadAt>>) -> Result<(), ChunkedError> {
    match *c {}
}

/// The path of a Zarr directory store: the folder a `DirectoryStore`, `NestedDirectoryStore`
/// or `LocalStore` names.
pub(crate) fn local_store_path(store: &Node) -> Option<&str> {
    match store.get("type_string").and_then(Node::as_str) {
        Some("DirectoryStore" | "NestedDirectoryStore" | "LocalStore") => store.get("path").and_then(Node::as_str),
        _ => None,
    }
}

/// Refused: this build writes no chunked arrays.
pub(crate) fn check_compressor(_: Option<asdf_layout::Label>) -> Result<(), ChunkedError> {
    Err(ChunkedError::Disabled)
}

impl AsdfFile {
    /// Nothing: this build reads no chunked arrays.
    #[allow(clippy::unnecessary_wraps, clippy::unused_self)]
    pub(crate) fn chunked_array(&self, _: &str) -> Result<Option<Array<'_>>, Error> {
        Ok(None)
    }

    /// Refused: this build writes no chunked arrays.
    #[allow(clippy::unused_self, clippy::needless_pass_by_value)]
    pub(crate) fn chunked_node(&mut self, pointer: &str, _: NewArray) -> Result<Node, Error> {
        Err(Error::Chunked {
            pointer: pointer.to_owned(),
            source: ChunkedError::Disabled,
        })
    }
}
