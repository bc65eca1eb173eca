//! Built without the feature `zarr`: the same names as `on.rs`. A chunked array is not an
//! ndarray here (reading one says so, as for any node that is not an ndarray), and writing
//! one is refused.

use std::path::Path;

use asdf_core_types::{ByteOrder, Datatype};
use asdf_layout::{Label, ReadAt, Reader};
use asdf_yaml::{Document, Node};

use crate::options::ReferencePolicy;

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

pub(crate) fn byte_order() -> ByteOrder {
    if cfg!(target_endian = "big") {
        ByteOrder::Big
    } else {
        ByteOrder::Little
    }
}

pub(crate) fn shape_and_type(c: &Chunk) -> (&[usize], &Datatype) {
    match *c {}
}

/// Where a chunked array is read from (never, in this build).
#[allow(dead_code)]
pub(crate) struct Place<'a> {
    pub(crate) reader: &'a Reader<Box<dyn ReadAt>>,
    pub(crate) absolute: &'a dyn Fn(i64, usize) -> Option<usize>,
    pub(crate) dir: Option<&'a Path>,
    pub(crate) policy: ReferencePolicy,
    pub(crate) max_bytes: u64,
    pub(crate) remote: Option<(String, crate::net::RemoteOptions)>,
}

/// Nothing: no node is a chunked array in this build.
#[allow(clippy::unnecessary_wraps, clippy::needless_pass_by_value)]
pub(crate) fn open(_: Place<'_>, _: &Document, _: &Node) -> Result<Option<Chunk>, ChunkedError> {
    Ok(None)
}

/// An array encoded in asdf-zarr's layout (never, in this build).
#[allow(dead_code)]
pub(crate) struct Encoded {
    pub(crate) blocks: Vec<Vec<u8>>,
    pub(crate) map: Vec<u8>,
    pub(crate) node: Node,
}

/// Refused: this build writes no chunked arrays.
#[allow(clippy::needless_pass_by_value)]
pub(crate) fn encode(
    _: &Datatype,
    _: ByteOrder,
    _: &[usize],
    _: &[usize],
    _: Vec<u8>,
    _: Option<Label>,
    _: usize,
) -> Result<Encoded, ChunkedError> {
    Err(ChunkedError::Disabled)
}

/// A chunked array's storage.
pub(crate) fn bytes<'a>(
    c: &Chunk,
    _: &'a Reader<Box<dyn ReadAt>>,
) -> std::sync::Arc<dyn asdf_layout::storage::ArrayBytes<'a> + 'a> {
    match *c {}
}

pub(crate) fn chunk_map(c: &Chunk) -> Option<ChunkMap> {
    match *c {}
}

pub(crate) fn store_object(c: &Chunk, _: &str) -> Result<Option<StoreObject>, ChunkedError> {
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
pub(crate) fn check_compressor(_: Option<Label>) -> Result<(), ChunkedError> {
    Err(ChunkedError::Disabled)
}
