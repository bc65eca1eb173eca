//! Updating a file where it is: the tree written over the old one when it fits in the old
//! tree's space (and the padding after it), new arrays appended after the last block, the
//! block index rewritten; existing blocks are never touched. When the tree does not fit (or
//! the layout does not allow it), the whole file is rewritten safely instead (temporary file,
//! then rename).

use std::path::Path;

use asdf_layout::BlockOptions;
use asdf_layout::update::{InPlace, obstacle, update_in_place};
pub use asdf_layout::update::{RewriteReason, Update};

use crate::target::{Compression, WriteOptions};
use crate::{AsdfFile, Error};

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
            self.reopen(&path)?;
            return Ok(Update::Rewritten(RewriteReason::Fits));
        }
        // Held until the file is written: another writer waits, then finds it changed.
        let lock = self.lock_unchanged(&path)?;
        let outcome = match obstacle(&self.reader, matches!(options.compression, Compression::All(_))) {
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
        self.reopen(&path)?;
        Ok(result)
    }

    /// This file, as written at `path`, opened again with its options.
    fn reopen(&mut self, path: &Path) -> Result<(), Error> {
        let options = self.options.clone();
        *self = crate::Open::path(path)
            .options(options.clone().validate(false))
            .open()?;
        self.options = options;
        Ok(())
    }

    fn try_in_place(
        &self,
        file: &std::fs::File,
        path: &Path,
        options: &WriteOptions,
    ) -> Result<Result<Update, RewriteReason>, Error> {
        let tree = self.finished_tree(self.doc(), asdf_yaml::Edits::default(), options)?;
        let new: Vec<(&[u8], asdf_layout::Label)> = self
            .pending
            .iter()
            .map(|b| (b.data.as_slice(), options.new_block_label(b.compression)))
            .collect();
        let how = InPlace {
            options: BlockOptions::default()
                .checksum(options.checksums)
                .pad_blocks(options.pad_blocks),
            index: options.index,
            progress: options.progress.as_ref().map(|p| &*p.0),
        };
        update_in_place(&self.reader, file, &tree, &new, &how).map_err(|e| match e {
            // I/O errors name the file.
            asdf_layout::Error::Io { offset: None, source } => Error::Io {
                path: path.to_path_buf(),
                source,
            },
            e => e.into(),
        })
    }
}
