//! Built without the feature `zarrs`: the names the `asdf` facade uses. A chunked array is
//! neither read nor written here: both are refused with [`ChunkedError::Disabled`], which names
//! the missing feature.

use std::sync::Arc;

use asdf_core_types::{ByteOrder, Datatype};

use crate::Context;
use asdf_layout::Label;
use asdf_yaml::{Document, Node};

type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

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

/// A chunked array: none in this build.
#[derive(Debug)]
pub enum Chunked {}

impl Chunked {
    /// The byte order a chunked array is decoded in (the machine's).
    #[must_use]
    pub fn byte_order() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// The array's shape.
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        match *self {}
    }

    /// The element type.
    #[must_use]
    pub fn datatype(&self) -> &Datatype {
        match *self {}
    }

    /// The array's decoded bytes as storage.
    #[must_use]
    pub fn storage<'a>(self: &Arc<Self>, _: &'a Reader) -> Arc<dyn asdf_layout::storage::ArrayBytes<'a> + 'a> {
        match **self {}
    }

    /// The chunk map.
    #[must_use]
    pub fn chunk_map(&self) -> Option<ChunkMap> {
        match *self {}
    }

    /// An object of the store beside the file.
    ///
    /// # Errors
    /// Never: there is no chunked array to ask.
    pub fn store_object(&self, _: &str) -> Result<Option<StoreObject>, ChunkedError> {
        match *self {}
    }
}

/// `None` for a node not tagged as a chunked array; for one that is, refused: this build reads
/// none (so a read names the missing feature rather than calling the node no array).
///
/// # Errors
/// [`ChunkedError::Disabled`] for a node tagged as a chunked array.
pub fn open(_: &Context<'_>, _: &Document, node: &Node) -> Result<Option<Arc<Chunked>>, ChunkedError> {
    match node.tag.as_deref() {
        Some(t) if crate::is_zarr_tag(t) || crate::is_chunked_ndarray_tag(t) => Err(ChunkedError::Disabled),
        _ => Ok(None),
    }
}

/// An array encoded in asdf-zarr's layout (never, in this build).
#[derive(Debug)]
pub struct AsBlocks {
    /// The chunks' blocks.
    pub blocks: Vec<Vec<u8>>,
    /// The chunk map's block.
    pub map: Vec<u8>,
    /// The node.
    pub node: Node,
}

/// Refused: this build writes no chunked arrays.
///
/// # Errors
/// Always [`ChunkedError::Disabled`].
#[allow(clippy::needless_pass_by_value)]
pub fn encode_as_blocks(
    _: &Datatype,
    _: ByteOrder,
    _: &[usize],
    _: &[usize],
    _: Vec<u8>,
    _: Option<Label>,
    _: usize,
) -> Result<AsBlocks, ChunkedError> {
    Err(ChunkedError::Disabled)
}

/// Refused: this build writes no chunked arrays.
///
/// # Errors
/// Always [`ChunkedError::Disabled`].
pub fn zarr_compressor(_: Option<Label>) -> Result<(), ChunkedError> {
    Err(ChunkedError::Disabled)
}
