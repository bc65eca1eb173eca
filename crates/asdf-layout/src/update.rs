//! Updating a file where it is: the tree written over the old one when it fits in the old
//! tree's space (and the padding after it), new blocks appended after the last block, the
//! block index rewritten; existing blocks are never touched. What stands in the way is named
//! ([`RewriteReason`]) for the caller to rewrite the file whole instead.

use std::io::{Seek, SeekFrom, Write};

use crate::{BlockOptions, Error, Label, ReadAt, Reader, Writer};

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Update {
    /// The tree was written over the old one and new blocks appended after the last block;
    /// no existing block was rewritten.
    InPlace {
        /// Bytes of the new tree.
        tree_bytes: u64,
        /// Bytes available for it (the old tree and the padding up to the first block).
        room: u64,
        /// New blocks appended.
        appended: usize,
    },
    /// The file was rewritten whole (atomically), for this reason.
    Rewritten(RewriteReason),
}

/// Why an update could not be made in place.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RewriteReason {
    /// The new tree needs more bytes than the old tree and its padding.
    TreeTooLarge {
        /// Bytes of the new tree.
        need: u64,
        /// Bytes available.
        room: u64,
    },
    /// The file has no blocks, so there is no fixed point to write the tree up to.
    NoBlocks,
    /// The file ends with a streamed block, after which nothing can be appended.
    StreamedBlock,
    /// Every block is to be recompressed (the caller asked for a compression of every block).
    Recompress,
    /// The file has no tree, or its last block cannot be read.
    Layout,
    /// The file is ASDF in FITS: the FITS file is written again (with all its HDUs).
    Fits,
}

impl std::fmt::Display for RewriteReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RewriteReason::TreeTooLarge { need, room } => write!(
                f,
                "the new tree needs {need} bytes and the old one left room for {room}"
            ),
            RewriteReason::NoBlocks => f.write_str("the file has no blocks to write the tree up to"),
            RewriteReason::StreamedBlock => {
                f.write_str("the file ends with a streamed block, after which nothing can be appended")
            }
            RewriteReason::Recompress => f.write_str("every block is to be compressed anew"),
            RewriteReason::Layout => f.write_str("the file has no tree, or its last block cannot be read"),
            RewriteReason::Fits => f.write_str("the file is ASDF in FITS: the FITS file is written again"),
        }
    }
}

/// What stands in the way of an update in place of the file `reader` reads, if anything
/// (`recompress`: every block is to be compressed anew).
#[must_use]
pub fn obstacle<S: ReadAt>(reader: &Reader<S>, recompress: bool) -> Option<RewriteReason> {
    if recompress {
        return Some(RewriteReason::Recompress);
    }
    let r = reader;
    if r.block_count() == 0 {
        return Some(RewriteReason::NoBlocks);
    }
    if r.tree_range().is_none() {
        return Some(RewriteReason::Layout);
    }
    match r.block(r.block_count() - 1) {
        Ok(b) if b.header.is_streamed() => Some(RewriteReason::StreamedBlock),
        Ok(_) => None,
        Err(_) => Some(RewriteReason::Layout),
    }
}

/// How an update in place writes.
#[derive(Clone, Copy)]
pub struct InPlace<'a> {
    /// Checksums and padding of the new blocks.
    pub options: BlockOptions,
    /// A block index after the blocks.
    pub index: bool,
    /// Called with (new blocks written, new blocks in all).
    pub progress: Option<&'a (dyn Fn(usize, usize) + Send + Sync)>,
}

impl std::fmt::Debug for InPlace<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InPlace")
            .field("options", &self.options)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// Writes `tree` over the tree of the file `reader` reads (open as `file`) and `new` blocks
/// (bytes and compression) after its last block, with a new block index: first the blocks and
/// the index (the old tree still describes a valid file at every step), synced; then the tree,
/// NULs up to the first block, synced. `Ok(Err(reason))` when the tree does not fit (nothing
/// written). Not atomic: a crash while the tree is written can leave a damaged tree.
///
/// # Errors
/// Reading the block headers, codec and I/O errors.
pub fn update_in_place<S: ReadAt>(
    reader: &Reader<S>,
    file: &std::fs::File,
    tree: &[u8],
    new: &[(&[u8], Label)],
    how: &InPlace<'_>,
) -> Result<Result<Update, RewriteReason>, Error> {
    let r = reader;
    let first = r.block(0)?;
    let last = r.block(r.block_count() - 1)?;
    let tree_start = r.tree_range().map_or(0, |t| t.start);
    let room = first.offset.saturating_sub(tree_start);
    let end = last.data_offset + last.header.allocated_size;
    let need = tree.len() as u64;
    if need > room {
        return Ok(Err(RewriteReason::TreeTooLarge { need, room }));
    }
    let mut file = file;
    file.seek(SeekFrom::Start(end))?;
    let mut w = Writer::resume(
        std::io::BufWriter::with_capacity(1 << 20, file),
        end,
        r.block_offsets(),
        r.options().registry.clone(),
    );
    for (done, (data, label)) in new.iter().enumerate() {
        if let Some(p) = how.progress {
            p(done, new.len());
        }
        w.write_block_overlapped(data, &how.options.compression(*label))?;
    }
    let new_end = w.position();
    let buf = w.finish(how.index)?;
    buf.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    let len_after = if how.index { file.stream_position()? } else { new_end };
    file.set_len(len_after)?;
    file.sync_all()?;
    file.seek(SeekFrom::Start(tree_start))?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(tree)?;
    let mut left = room - need;
    let zeros = [0u8; 4096];
    while left > 0 {
        let n = usize::try_from(left.min(4096)).unwrap_or(4096);
        w.write_all(&zeros[..n])?;
        left -= n as u64;
    }
    w.flush()?;
    drop(w);
    file.sync_all()?;
    if let Some(p) = how.progress {
        p(new.len(), new.len());
    }
    Ok(Ok(Update::InPlace {
        tree_bytes: need,
        room,
        appended: new.len(),
    }))
}
