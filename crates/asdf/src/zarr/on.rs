//! Chunked arrays with the feature `zarr` (asdf-zarr's layout, ASDF.jl's chunked ndarrays):
//! the facade's side of `asdf-chunked`: opening one as an [`Array`], reading its chunks,
//! writing arrays chunked.

use std::sync::Arc;

use asdf_core_types::{ByteOrder, NdArray, Source, View};
use asdf_layout::{ReadAt, Reader};
use asdf_yaml::Node;

use crate::array::{Array, Storage};
use crate::builder::NewArray;
use crate::error::{Error, array_error};
use crate::file::{AsdfFile, BlockRef, NewBlock};

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

/// Where a chunked array's data is (its chunk shape and compressor).
pub(crate) fn storage(c: &Chunk) -> Storage {
    Storage::Chunked {
        chunks: c.chunks.clone(),
        compressor: c.compressor.clone(),
    }
}

/// Where the chunks are, when they are blocks of the file.
pub(crate) fn chunk_map(c: &Chunk) -> Option<ChunkMap> {
    c.chunk_map()
}

/// Object `key` of the store outside the file the chunks are in.
pub(crate) fn store_object(c: &Chunk, key: &str) -> Result<Option<StoreObject>, ChunkedError> {
    c.store_object(key)
}

/// The whole array decoded.
pub(crate) fn decoded(c: &Chunk, reader: &Reader<Box<dyn ReadAt>>) -> Result<Vec<u8>, ChunkedError> {
    c.decoded(reader).map(|d| d.to_vec())
}

/// The C-ordered box `lo`, `extent` decoded.
pub(crate) fn decode_box(
    c: &Chunk,
    reader: &Reader<Box<dyn ReadAt>>,
    lo: &[usize],
    extent: &[usize],
) -> Result<Vec<u8>, ChunkedError> {
    c.decode_box(reader, lo, extent)
}

/// The C-ordered box `lo`, `extent` decoded straight into `out`.
pub(crate) fn decode_into(
    c: &Chunk,
    reader: &Reader<Box<dyn ReadAt>>,
    lo: &[usize],
    extent: &[usize],
    out: &mut [u8],
) -> Result<ByteOrder, ChunkedError> {
    c.decode_chunks_into(reader, lo, extent, out)?;
    Ok(byte_order())
}

/// Every stored chunk read and decoded, one row of the chunk grid at a time (memory: one such
/// row, decoded).
pub(crate) fn decode_every_chunk(c: &Chunk, reader: &Reader<Box<dyn ReadAt>>) -> Result<(), ChunkedError> {
    let shape = &c.shape;
    if shape.contains(&0) {
        return Ok(());
    }
    let Some((&rows, _)) = shape.split_first() else {
        return c.decode_box(reader, &[], &[]).map(|_| ());
    };
    let step = c.chunks.first().copied().unwrap_or(1).max(1);
    let mut start = 0;
    while start < rows {
        let mut lo = vec![0; shape.len()];
        lo[0] = start;
        let mut extent = shape.clone();
        extent[0] = step.min(rows - start);
        c.decode_box(reader, &lo, &extent)?;
        start += extent[0];
    }
    Ok(())
}

/// The path of a Zarr directory store (`store` or `meta_store` of an asdf-zarr node).
pub(crate) fn local_store_path(store: &Node) -> Option<&str> {
    asdf_chunked::local_store_path(store)
}

/// Whether `compression` has a Zarr compressor.
pub(crate) fn check_compressor(compression: Option<asdf_layout::Label>) -> Result<(), ChunkedError> {
    asdf_chunked::zarr_compressor(compression).map(drop)
}

impl AsdfFile {
    /// The chunked array (asdf-zarr) at `pointer`, if the node there is one.
    pub(crate) fn chunked_array(&self, pointer: &str) -> Result<Option<Array<'_>>, Error> {
        // Not a chunked array unless the tree says so: a tree that cannot be had (a strict lazy
        // open of an invalid tree) or a pointer that misses leaves the ndarray error as it was.
        let Ok(doc) = self.doc() else { return Ok(None) };
        let Ok(node) = asdf_yaml::pointer::get(doc, pointer) else {
            return Ok(None);
        };
        let node = doc.resolve(node);
        if !node
            .tag
            .as_deref()
            .is_some_and(|t| asdf_chunked::is_zarr_tag(t) || asdf_chunked::is_chunked_ndarray_tag(t))
        {
            return Ok(None);
        }
        let cx = asdf_chunked::Context {
            reader: &self.reader,
            absolute: &crate::file::absolute_index,
            dir: self.dir.as_deref(),
            policy: self.options.references,
            max_bytes: self.options.layout_limits.max_block_bytes,
            #[cfg(feature = "remote")]
            remote: self.remote_origin.clone(),
        };
        let c = asdf_chunked::Chunked::open(&cx, doc, node).map_err(|source| Error::Chunked {
            pointer: pointer.to_owned(),
            source,
        })?;
        // Read as one block holding the decoded array: C order, native byte order.
        let nd = NdArray {
            source: Some(Source::Block(0)),
            data: None,
            datatype: Some(c.datatype.clone()),
            byteorder: asdf_chunked::Chunked::byte_order(),
            shape: Some(c.shape.iter().map(|&d| asdf_core_types::Dim::Fixed(d)).collect()),
            offset: 0,
            strides: None,
            mask: None,
            extra: Vec::new(),
            form: asdf_core_types::ndarray::Form::default(),
        };
        let len = c.shape.iter().product::<usize>() * c.datatype.size();
        let view = View::new(&nd, len as u64).map_err(array_error(pointer))?;
        Ok(Some(Array {
            file: self,
            pointer: pointer.to_owned(),
            shape: c.shape.clone(),
            datatype: c.datatype.clone(),
            nd,
            located: Some((view, BlockRef::Chunked(std::sync::Arc::new(c)))),
            inline: None,
            decoded: std::sync::OnceLock::new(),
        }))
    }

    /// The node of `array` stored chunked (asdf-zarr's layout), its chunks and chunk map
    /// added as blocks.
    pub(crate) fn chunked_node(&mut self, pointer: &str, array: NewArray) -> Result<Node, Error> {
        let chunks = array.chunks.clone().unwrap_or_default();
        let chunks = chunks.as_slice();
        let err = |source| Error::Chunked {
            pointer: pointer.to_owned(),
            source,
        };
        if chunks.len() != array.shape.len() || chunks.contains(&0) {
            return Err(err(asdf_chunked::ChunkedError::Metadata("chunks")));
        }
        let compressor = asdf_chunked::zarr_compressor(array.compression).map_err(err)?;
        let enc = asdf_chunked::encode(
            &array.datatype,
            array.byteorder,
            &array.shape,
            chunks,
            array.data,
            compressor,
        )
        .map_err(err)?;
        let first = self.reader.block_count() + self.pending.len();
        // Negative sources count from the last block, which is about to change.
        crate::file::absolute_sources(&mut self.doc_mut()?.root, i64::try_from(first).unwrap_or(i64::MAX));
        let mut map = Vec::with_capacity(enc.chunks.len() * 4);
        for chunk in enc.chunks {
            let index = match chunk {
                Some(data) => {
                    let index = self.reader.block_count() + self.pending.len();
                    self.pending.push(NewBlock {
                        data,
                        compression: None,
                        as_is: true,
                    });
                    i32::try_from(index).map_err(|_| err(asdf_chunked::ChunkedError::TooLarge))?
                }
                None => -1,
            };
            map.extend_from_slice(&index.to_le_bytes());
        }
        let map_index = self.reader.block_count() + self.pending.len();
        self.pending.push(NewBlock {
            data: map,
            compression: None,
            as_is: true,
        });
        Ok(Node::map(vec![
            (Node::str(".zarray"), asdf_chunked::json_node(&enc.zarray)),
            (
                Node::str("chunk_block_map"),
                Node::int(i64::try_from(map_index).unwrap_or(i64::MAX)),
            ),
        ])
        .with_tag(format!("{}1.0.0", asdf_chunked::ZARR_TAG_PREFIX)))
    }
}
