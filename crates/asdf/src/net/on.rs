//! Remote files with the feature `remote`: opening a URL, writing to an object store, an
//! exploded file's blocks beside a remote file.

use std::path::{Path, PathBuf};

use asdf_layout::ReadAt;

use crate::error::{Error, ErrorKind, ReferenceProblem};
use crate::file::AsdfFile;
use crate::options::OpenOptions;
use crate::write::WriteOptions;

pub use asdf_remote::{Error as RemoteError, RemoteOptions, Stats as RemoteStats, is_url};

/// The kind of a remote error.
pub(crate) fn remote_kind(e: &RemoteError) -> ErrorKind {
    if e.is_changed() {
        return ErrorKind::Refused;
    }
    match e {
        RemoteError::Url { .. }
        | RemoteError::Scheme { .. }
        | RemoteError::NotWritable { .. }
        | RemoteError::Setting { .. } => ErrorKind::Usage,
        _ => ErrorKind::Io,
    }
}

pub(crate) fn open_url(url: &str, options: OpenOptions, remote: &RemoteOptions) -> Result<AsdfFile, Error> {
    let src = asdf_remote::RemoteSource::open(url, remote).map_err(|e| Error::Remote(Box::new(e)))?;
    let stats = src.stats();
    // Its blocks past the first are found on first need: an open that reads the tree and
    // the first block makes no request for the file's tail (its block index).
    let source = asdf_layout::Prefetched::new(Box::new(src) as Box<dyn ReadAt>).map_err(asdf_layout::Error::from)?;
    let mut f = crate::open::open_prefetched(source, None, options, true)?;
    f.remote = Some(stats);
    f.remote_origin = Some((url.to_owned(), remote.clone()));
    Ok(f)
}

impl AsdfFile {
    /// Where a write to `path` goes when `path` is an object store's URL: the URL and the
    /// storage options (this file's when it came from the same store, else the defaults).
    pub(crate) fn remote_target(&self, path: &Path) -> Result<Option<(String, RemoteOptions)>, Error> {
        let Some(url) = path.to_str().filter(|p| is_url(p)) else {
            return Ok(None);
        };
        let remote = self
            .remote_origin
            .as_ref()
            .filter(|(from, _)| asdf_remote::same_origin(from, url))
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        Ok(Some((url.to_owned(), remote)))
    }

    /// For a file read from a URL, block 0 of the exploded file `uri` beside it (`None` for a
    /// local file).
    pub(crate) fn remote_external_block(&self, uri: &str, pointer: &str) -> Option<Result<Vec<u8>, Error>> {
        let (url, remote) = self.remote_origin.as_ref()?;
        Some((|| {
            let missing = || Error::Array {
                pointer: pointer.to_owned(),
                source: asdf_core_types::NdArrayError::MissingBlock,
            };
            let plain =
                !uri.contains("://") && !uri.starts_with('/') && !uri.split('/').any(|c| c == ".." || c.is_empty());
            if !plain || self.options.references == crate::options::ReferencePolicy::None {
                return Err(Error::Reference {
                    pointer: pointer.to_owned(),
                    reference: uri.to_owned(),
                    problem: ReferenceProblem::NotRelative,
                });
            }
            let base = url.split(['?', '#']).next().unwrap_or(url);
            let Some(dir) = base.rfind('/').map(|i| &base[..=i]) else {
                return Err(missing());
            };
            let other = format!("{dir}{uri}");
            let ext = crate::Open::url(&other)
                .options(self.options.clone().validate(false))
                .storage_options(remote.clone())
                .open()
                .map_err(|e| Error::External {
                    pointer: pointer.to_owned(),
                    file: PathBuf::from(&other),
                    source: Box::new(e),
                })?;
            let d = ext.reader.read_data(0).map_err(|e| Error::External {
                pointer: pointer.to_owned(),
                file: PathBuf::from(&other),
                source: Box::new(Error::Layout(e)),
            })?;
            Ok(d.into_owned())
        })())
    }
}
impl AsdfFile {
    /// Writes the file to an object store (`s3://`, `gs://`, `az://`): made in a temporary
    /// local file (unnamed, removed when closed; block headers are completed after their
    /// data, which an upload cannot go back to), then uploaded in parts
    /// ([`asdf_remote::put_file`]: memory bounded by the parts in flight, nothing visible
    /// until the upload completes, a failed upload aborted).
    ///
    /// The write is refused, and nothing written, when the object changed meanwhile: over
    /// the object this file was opened from, it must still be the version that was read
    /// (its ETag); over another object, the one there when the write began (or none).
    ///
    /// # Errors
    /// As [`AsdfFile::write`]; [`Error::Remote`] for the store's refusal
    /// ([`asdf_remote::Error::is_changed`]: [`crate::ErrorKind::Refused`]) or failure.
    pub(crate) fn write_url(
        &self,
        url: &str,
        options: &WriteOptions,
        remote: &asdf_remote::RemoteOptions,
    ) -> Result<(), Error> {
        let (condition, just_seen) = self.write_condition(url, remote)?;
        // Refused before anything is made when the object already changed since it was read.
        if !just_seen {
            asdf_remote::check_condition(url, remote, &condition).map_err(|e| Error::Remote(Box::new(e)))?;
        }
        self.upload(url, options, remote, &condition)
    }

    /// As [`crate::Target::Url`], written only over the version of the object whose
    /// ETag is `etag` (a read-modify-write whose read was not this file's: the ETag its
    /// reader saw); refused ([`asdf_remote::Error::is_changed`]) when the object is another
    /// version or gone.
    ///
    /// # Errors
    /// As [`crate::Target::Url`].
    pub(crate) fn write_url_over(
        &self,
        url: &str,
        etag: &str,
        options: &WriteOptions,
        remote: &asdf_remote::RemoteOptions,
    ) -> Result<(), Error> {
        let condition = asdf_remote::upload::Condition::Match(etag.to_string());
        asdf_remote::check_condition(url, remote, &condition).map_err(|e| Error::Remote(Box::new(e)))?;
        self.upload(url, options, remote, &condition)
    }

    fn upload(
        &self,
        url: &str,
        options: &WriteOptions,
        remote: &asdf_remote::RemoteOptions,
        condition: &asdf_remote::upload::Condition,
    ) -> Result<(), Error> {
        use std::io::Write as _;
        let remote_err = |e| Error::Remote(Box::new(e));
        let io_err = |source| Error::Io {
            path: url.into(),
            source,
        };
        let spool = tempfile::tempfile().map_err(io_err)?;
        let mut w = crate::write::Volatile(std::io::BufWriter::with_capacity(
            1 << 20,
            spool.try_clone().map_err(io_err)?,
        ));
        self.write_doc_into(self.doc()?, &mut w, options, &crate::write::KeptOut::default())?;
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
        asdf_remote::put_file(url, remote, &spool, condition, &report).map_err(remote_err)?;
        Ok(())
    }

    /// What must hold of the object at `url` for a write to complete, and whether that was
    /// seen just now (a HEAD of the object), rather than when this file was read.
    fn write_condition(
        &self,
        url: &str,
        remote: &asdf_remote::RemoteOptions,
    ) -> Result<(asdf_remote::upload::Condition, bool), Error> {
        use asdf_remote::upload::Condition;
        let own = self.remote_origin.as_ref().is_some_and(|(from, _)| from == url);
        let read = self.remote.as_ref().and_then(|s| s.version());
        if own && let Some((_, Some(etag))) = read {
            return Ok((Condition::Match(etag), false));
        }
        let now = match asdf_remote::head(url, remote).map_err(|e| Error::Remote(Box::new(e)))? {
            Some((_, Some(etag))) => Condition::Match(etag),
            Some((_, None)) => Condition::Overwrite,
            None => Condition::Create,
        };
        Ok((now, true))
    }
}
