//! Updating a file where it is: the tree written over the old one when it fits in the old
//! tree's space (and the padding after it), new arrays appended after the last block, the
//! block index rewritten; existing blocks are never touched. When the tree does not fit (or
//! the layout does not allow it), the whole file is rewritten safely instead (temporary file,
//! then rename).

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use asdf_layout::{BlockOptions, Writer};

use crate::target::{Compression, WriteOptions};
use crate::{AsdfFile, Error};

/// What [`AsdfFile::update`] did.
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
    /// Every block is to be recompressed ([`Compression::All`]).
    Recompress,
    /// The file has no tree, or its last block cannot be read.
    Layout,
    /// The file is ASDF in FITS: the FITS file is written again (with all its HDUs).
    Fits,
}

impl AsdfFile {
    /// Writes the changes made since opening (tree edits, arrays added) back to the file it
    /// was opened from. In place when possible: the new tree over the old one, padded with
    /// NULs up to the first block, added arrays appended after the last block, a new block
    /// index; the existing blocks stay where they are, unread and unwritten. Otherwise the
    /// whole file is rewritten atomically, as [`AsdfFile::write`] does (with
    /// [`WriteOptions::pad_blocks`] to leave room for later updates). The file is then read
    /// again, so this value shows what is on disk.
    ///
    /// Writing in place is not atomic: a crash while the tree is being written can leave a
    /// damaged tree (blocks and index are written first). Use [`AsdfFile::write`] when
    /// that matters more than speed.
    ///
    /// # Errors
    /// [`Error::NoPath`] for a file not opened from a path; validation failures (with
    /// `validate`); I/O errors.
    pub fn update(&mut self, options: &WriteOptions) -> Result<Update, Error> {
        asdf_layout::compression::exec::with_threads(options.threads, || self.update_with(options))
    }

    fn update_with(&mut self, options: &WriteOptions) -> Result<Update, Error> {
        let path = self.path.clone().ok_or(Error::NoPath)?;
        if self.fits.is_some() {
            // Writing ASDF over the FITS file would destroy it: the FITS file is written
            // again, atomically, with every HDU and header card it had.
            self.write_path(&path, options)?;
            let reopened = crate::Open::path(&path)
                .options(self.options.clone().validate(false))
                .open()?;
            let kept = self.options.clone();
            *self = reopened;
            self.options = kept;
            return Ok(Update::Rewritten(RewriteReason::Fits));
        }
        // Held until the file is written: another writer waits, then finds it changed.
        let lock = self.lock_unchanged(&path)?;
        let outcome = match self.in_place_obstacle(options) {
            Some(reason) => Err(reason),
            None => self.try_in_place(&lock, &path, options)?,
        };
        let result = match outcome {
            Ok(done) => done,
            Err(reason) => {
                self.write_atomic(&path, options, false)?;
                Update::Rewritten(reason)
            }
        };
        // A `File` has nothing to drop on wasm32 (no files of its own there).
        #[cfg_attr(target_arch = "wasm32", allow(clippy::drop_non_drop))]
        drop(lock);
        let reopened = crate::Open::path(&path)
            .options(self.options.clone().validate(false))
            .open()?;
        let options = self.options.clone();
        *self = reopened;
        self.options = options;
        Ok(result)
    }

    fn in_place_obstacle(&self, options: &WriteOptions) -> Option<RewriteReason> {
        if matches!(options.compression, Compression::All(_)) {
            return Some(RewriteReason::Recompress);
        }
        let r = &self.reader;
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

    /// The in-place write; `Ok(Err(reason))` when it turns out not to fit (nothing written).
    fn try_in_place(
        &self,
        file: &std::fs::File,
        path: &Path,
        options: &WriteOptions,
    ) -> Result<Result<Update, RewriteReason>, Error> {
        let r = &self.reader;
        let first = r.block(0)?;
        let last = r.block(r.block_count() - 1)?;
        let tree_start = r.tree_range().map_or(0, |t| t.start);
        let room = first.offset.saturating_sub(tree_start);
        let end = last.data_offset + last.header.allocated_size;
        let tree = self.finished_tree(self.doc()?, asdf_yaml::Edits::default(), options)?;
        let need = tree.len() as u64;
        if need > room {
            return Ok(Err(RewriteReason::TreeTooLarge { need, room }));
        }
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = file;
        // 1. New blocks and the index after the last block; then cut what is left of the old
        //    index. The old tree still describes a valid file at every step.
        file.seek(SeekFrom::Start(end)).map_err(io)?;
        let mut w = Writer::resume(
            std::io::BufWriter::with_capacity(1 << 20, file),
            end,
            r.block_offsets(),
            r.options().registry.clone(),
        );
        let opts = BlockOptions::default()
            .checksum(options.checksums)
            .pad_blocks(options.pad_blocks);
        for (done, b) in self.pending.iter().enumerate() {
            if let Some(p) = &options.progress {
                (p.0)(done, self.pending.len());
            }
            w.write_block_overlapped(&b.data, &opts.compression(options.new_block_label(b.compression)))?;
        }
        let new_end = w.position();
        let buf = w.finish(options.index)?;
        buf.into_inner().map_err(|e| io(e.into_error()))?;
        let len_after = if options.index {
            file.stream_position().map_err(io)?
        } else {
            new_end
        };
        file.set_len(len_after).map_err(io)?;
        file.sync_all().map_err(io)?;
        // 2. The tree, then NULs up to the first block.
        file.seek(SeekFrom::Start(tree_start)).map_err(io)?;
        let mut w = std::io::BufWriter::new(file);
        w.write_all(&tree).map_err(io)?;
        let mut left = room - need;
        let zeros = [0u8; 4096];
        while left > 0 {
            let n = usize::try_from(left.min(4096)).unwrap_or(4096);
            w.write_all(&zeros[..n]).map_err(io)?;
            left -= n as u64;
        }
        w.flush().map_err(io)?;
        drop(w);
        file.sync_all().map_err(io)?;
        if let Some(p) = &options.progress {
            (p.0)(self.pending.len(), self.pending.len());
        }
        Ok(Ok(Update::InPlace {
            tree_bytes: need,
            room,
            appended: self.pending.len(),
        }))
    }
}
