//! Built without the feature `remote`: the same names as `on.rs`, answering that this build
//! reads and writes no URLs.

use std::path::Path;

use crate::error::{Error, ErrorKind};
use crate::file::AsdfFile;
use crate::options::OpenOptions;
use crate::write::WriteOptions;

/// The options of remote reads and writes (this build has none: feature `remote`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RemoteOptions {}

/// What a remote source fetched (this build has no remote sources: feature `remote`).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct RemoteStats {}

/// A URL given to a build without remote files.
#[derive(Debug, thiserror::Error)]
#[error("{url}: this build reads and writes no URLs (it was built without the feature `remote`)")]
pub struct RemoteError {
    url: String,
}

/// Whether `s` is a URL of the schemes remote builds read (`http(s)`, `s3`, `gs`, `az`, ...):
/// such a path is refused here rather than taken for a local file.
#[must_use]
pub fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, rest)| {
        !rest.is_empty()
            && matches!(
                scheme.to_ascii_lowercase().as_str(),
                "http" | "https" | "s3" | "s3a" | "gs" | "gcs" | "az" | "abfs" | "abfss"
            )
    })
}

fn refused(url: &str) -> Error {
    Error::Remote(Box::new(RemoteError { url: url.to_owned() }))
}

/// The kind of a remote error: a build without remote files was asked for one.
pub(crate) fn remote_kind(_: &RemoteError) -> ErrorKind {
    ErrorKind::Usage
}

/// Refused: this build opens no URLs.
pub(crate) fn open_url(url: &str, _: OpenOptions, _: &RemoteOptions) -> Result<AsdfFile, Error> {
    Err(refused(url))
}

impl AsdfFile {
    /// A path that is a URL is refused (not written as a local file of that name).
    pub(crate) fn remote_target(&self, path: &Path) -> Result<Option<(String, RemoteOptions)>, Error> {
        match path.to_str().filter(|p| is_url(p)) {
            Some(url) => Err(refused(url)),
            None => Ok(None),
        }
    }

    /// Nothing: no file of this build is read from a URL (a URL it names is refused).
    pub(crate) fn remote_external_block(&self, _: &str, _: &str) -> Option<Result<Vec<u8>, Error>> {
        self.remote_origin.as_ref().map(|(url, _)| Err(refused(url)))
    }

    /// Refused: this build writes no URLs.
    pub(crate) fn write_url(&self, url: &str, _: &WriteOptions, _: &RemoteOptions) -> Result<(), Error> {
        Err(refused(url))
    }

    /// Refused: this build writes no URLs.
    pub(crate) fn write_url_over(&self, url: &str, _: &str, _: &WriteOptions, _: &RemoteOptions) -> Result<(), Error> {
        Err(refused(url))
    }
}
