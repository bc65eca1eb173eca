//! Where a write goes: [`AsdfFile::write`] writes a path as ASDF, or (over a file read from
//! FITS) as the FITS file it came from.

use std::path::Path;

use crate::error::Error;
use crate::file::AsdfFile;
use crate::target::{FitsWriteOptions, WriteOptions};

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

    /// Where a write to `path` goes when `path` is an object store's URL: the URL and the
    /// storage options (this file's when it came from the same store, else the defaults).
    pub(crate) fn remote_target(&self, path: &Path) -> Result<Option<(String, crate::RemoteOptions)>, Error> {
        let Some(url) = path.to_str().filter(|p| crate::net::is_url(p)) else {
            return Ok(None);
        };
        let remote = self
            .remote_origin
            .as_ref()
            .filter(|(from, _)| crate::net::same_origin(from, url))
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        Ok(Some((url.to_owned(), remote)))
    }

    /// Writes the file to an object store (`s3://`, `gs://`, `az://`): made in a temporary
    /// local file (unnamed, removed when closed; block headers are completed after their
    /// data, which an upload cannot go back to), then uploaded in parts
    /// (`asdf_remote::put_file`: memory bounded by the parts in flight, nothing visible
    /// until the upload completes, a failed upload aborted).
    ///
    /// The write is refused, and nothing written, when the object changed meanwhile: over
    /// the object this file was opened from, it must still be the version that was read
    /// (its ETag); over another object, the one there when the write began (or none).
    ///
    /// # Errors
    /// As [`AsdfFile::write`]; [`Error::Remote`] for the store's refusal
    /// (`is_changed`: [`crate::ErrorKind::Refused`]) or failure.
    pub(crate) fn write_url(
        &self,
        url: &str,
        options: &WriteOptions,
        remote: &crate::RemoteOptions,
    ) -> Result<(), Error> {
        let own = self.remote_origin.as_ref().is_some_and(|(from, _)| from == url);
        let read = self.remote.as_deref().filter(|_| own).and_then(|s| s.version()?.1);
        let condition = crate::net::write_condition(url, remote, read).map_err(|e| Error::Remote(Box::new(e)))?;
        self.upload(url, options, remote, &condition)
    }

    /// As [`crate::Target::Url`], written only over the version of the object whose
    /// ETag is `etag` (a read-modify-write whose read was not this file's: the ETag its
    /// reader saw); refused (`is_changed`) when the object is another
    /// version or gone.
    ///
    /// # Errors
    /// As [`crate::Target::Url`].
    pub(crate) fn write_url_over(
        &self,
        url: &str,
        etag: &str,
        options: &WriteOptions,
        remote: &crate::RemoteOptions,
    ) -> Result<(), Error> {
        let condition =
            crate::net::write_condition(url, remote, Some(etag.to_owned())).map_err(|e| Error::Remote(Box::new(e)))?;
        self.upload(url, options, remote, &condition)
    }

    fn upload(
        &self,
        url: &str,
        options: &WriteOptions,
        remote: &crate::RemoteOptions,
        condition: &crate::net::Condition,
    ) -> Result<(), Error> {
        use std::io::Write as _;
        let remote_err = |e| Error::Remote(Box::new(e));
        let io_err = |source| Error::Io {
            path: url.into(),
            source,
        };
        let spool = tempfile::tempfile().map_err(io_err)?;
        let mut w = asdf_layout::atomic::Volatile(std::io::BufWriter::with_capacity(
            1 << 20,
            spool.try_clone().map_err(io_err)?,
        ));
        self.write_doc_into(self.doc(), &mut w, options, &crate::write::KeptOut::default())?;
        w.0.flush().map_err(io_err)?;
        drop(w);
        let progress = options.progress.clone();
        let report = move |done: u64, total: u64| {
            if let Some(p) = &progress {
                (p.0)(
                    usize::try_from(done).unwrap_or(usize::MAX),
                    usize::try_from(total).unwrap_or(usize::MAX),
                );
            }
        };
        crate::net::put_file(url, remote, &spool, condition, &report).map_err(remote_err)?;
        Ok(())
    }
}
