//! A chunked array's chunks as the storage of its decoded bytes ([`ChunkedBytes`]): whole,
//! a box of the grid at a time, or a row of chunks at a time.

use std::borrow::Cow;
use std::sync::Arc;

use asdf_layout::storage::{ArrayBytes, Storage, StorageError};

use crate::{Chunked, ChunkedError};

type Reader = asdf_layout::Reader<Box<dyn asdf_layout::ReadAt>>;

/// A chunked array read through the file's reader (its chunk blocks, or a store beside it).
pub struct ChunkedBytes<'a> {
    /// The array.
    pub chunked: Arc<Chunked>,
    /// The file it is in.
    pub reader: &'a Reader,
}

impl std::fmt::Debug for ChunkedBytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkedBytes")
            .field("chunked", &self.chunked)
            .finish_non_exhaustive()
    }
}

fn owner(e: ChunkedError) -> StorageError {
    StorageError::Owner(Box::new(e))
}

impl<'a> ArrayBytes<'a> for ChunkedBytes<'a> {
    fn storage(&self) -> Storage {
        Storage::Chunked {
            chunks: self.chunked.chunks.clone(),
            compressor: self.chunked.compressor.clone(),
        }
    }

    fn len(&self) -> Result<u64, StorageError> {
        let c = &self.chunked;
        c.shape
            .iter()
            .try_fold(c.datatype.size() as u64, |acc, &d| acc.checked_mul(d as u64))
            .ok_or_else(|| owner(ChunkedError::TooLarge))
    }

    /// A copy of the array decoded whole (kept by the array once decoded).
    fn read(&self) -> Result<Cow<'a, [u8]>, StorageError> {
        self.chunked
            .decoded(self.reader)
            .map(|d| Cow::Owned(d.to_vec()))
            .map_err(owner)
    }

    /// One row of the chunk grid at a time, decoded (memory: one such row).
    fn pieces(&self, sink: &mut dyn FnMut(&[u8])) -> Result<(), StorageError> {
        let c = &self.chunked;
        if c.shape.contains(&0) {
            return Ok(());
        }
        let Some((&rows, _)) = c.shape.split_first() else {
            sink(&c.decode_box(self.reader, &[], &[]).map_err(owner)?);
            return Ok(());
        };
        let step = c.chunks.first().copied().unwrap_or(1).max(1);
        let mut start = 0;
        while start < rows {
            let mut lo = vec![0; c.shape.len()];
            lo[0] = start;
            let mut extent = c.shape.clone();
            extent[0] = step.min(rows - start);
            sink(&c.decode_box(self.reader, &lo, &extent).map_err(owner)?);
            start += extent[0];
        }
        Ok(())
    }

    fn read_box(&self, lo: &[usize], extent: &[usize]) -> Option<Result<Vec<u8>, StorageError>> {
        Some(self.chunked.decode_box(self.reader, lo, extent).map_err(owner))
    }

    fn read_box_into(&self, lo: &[usize], extent: &[usize], out: &mut [u8]) -> Option<Result<(), StorageError>> {
        Some(
            self.chunked
                .decode_chunks_into(self.reader, lo, extent, out)
                .map_err(owner),
        )
    }
}
