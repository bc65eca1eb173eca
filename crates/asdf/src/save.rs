//! Where a write goes: [`AsdfFile::write`] writes a path as ASDF, or (over a file read from
//! FITS) as the FITS file it came from.

use std::path::Path;

use crate::error::Error;
use crate::file::AsdfFile;
use crate::fits_write::FitsWriteOptions;
use crate::write::WriteOptions;

impl AsdfFile {
    /// Writes the file to `path` atomically: into a temporary file in the same directory, then
    /// renamed over `path`, so a crash leaves either the old file or the new one.
    ///
    /// # Errors
    /// As [`AsdfFile::write`], plus I/O errors.
    ///
    /// Over the file's own path (the file was opened from `path`), the write holds an advisory
    /// lock on the file and first checks that no other writer changed it since it was opened
    /// ([`Error::Changed`] otherwise; nothing is written).
    ///
    /// A `path` that is a URL of an object store (`s3://`, `gs://`, `az://`; feature `remote`)
    /// is written there, as [`crate::Target::Url`] writes it (with the storage options
    /// this file was opened with when it came from the same store, else the defaults).
    pub(crate) fn write_path(&self, path: impl AsRef<Path>, options: &WriteOptions) -> Result<(), Error> {
        let path = path.as_ref();
        if let Some((url, remote)) = self.remote_target(path)? {
            return self.write_url(&url, options, &remote);
        }
        let own = self.is_own_file(path);
        if own && let Some(form) = self.fits.as_ref().map(|f| f.asdf_form()) {
            // A file read from FITS, written over itself, stays FITS: its other HDUs, their
            // header cards and FITS readers' access are kept (plain ASDF would lose them).
            let fo = FitsWriteOptions {
                asdf: options.clone(),
                ..FitsWriteOptions::default()
            }
            .asdf_hdu(form);
            return self.write_fits(path, &fo);
        }
        let _lock = if own { Some(self.lock_unchanged(path)?) } else { None };
        self.write_atomic(path, options, !own)
    }
}
