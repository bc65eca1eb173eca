//! Built without the feature `network`: the names the `asdf` facade uses, every call
//! answering that this build reads and writes no URLs (and nothing of the network is built).

use std::sync::Arc;

/// The options of remote reads and writes (this build has none: feature `network`).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RemoteOptions {}

/// What a remote source fetched (this build has no remote sources: feature `network`).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Stats {}

impl Stats {
    /// The object's size and ETag as first read: never, in this build.
    #[must_use]
    pub fn version(&self) -> Option<(u64, Option<String>)> {
        None
    }
}

/// A URL given to a build without remote files.
#[derive(Debug, thiserror::Error)]
#[error("{url}: this build reads and writes no URLs (it was built without the feature `remote`)")]
pub struct Error {
    url: String,
}

impl Error {
    fn new(url: &str) -> Self {
        Error { url: url.to_owned() }
    }

    /// Whether a store refused a write over an object that changed: never, in this build.
    #[must_use]
    pub fn is_changed(&self) -> bool {
        false
    }

    /// Always: asking a build without remote files for a URL is the caller's mistake.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// Uploads (none in this build).
pub mod upload {
    /// What must hold of the object when an upload completes.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Condition {
        /// Nothing: whatever is there is replaced.
        Overwrite,
        /// There is no object (a new file).
        Create,
        /// The object is still the version with this ETag.
        Match(String),
    }
}

/// Whether two URLs are objects of one store: never asked of this build.
#[must_use]
pub fn same_origin(_: &str, _: &str) -> bool {
    false
}

/// Refused: this build reads no URLs.
///
/// # Errors
/// Always.
pub fn open(url: &str, _: &RemoteOptions) -> Result<(Box<dyn asdf_layout::ReadAt>, Arc<Stats>), Error> {
    Err(Error::new(url))
}

/// Refused: this build reads no URLs.
///
/// # Errors
/// Always.
pub fn head(url: &str, _: &RemoteOptions) -> Result<Option<(u64, Option<String>)>, Error> {
    Err(Error::new(url))
}

/// Refused: this build writes no URLs.
///
/// # Errors
/// Always.
pub fn write_condition(url: &str, _: &RemoteOptions, _: Option<String>) -> Result<upload::Condition, Error> {
    Err(Error::new(url))
}

/// Refused: this build reads no URLs.
///
/// # Errors
/// Always.
pub fn check_condition(url: &str, _: &RemoteOptions, _: &upload::Condition) -> Result<(), Error> {
    Err(Error::new(url))
}

/// Refused: this build writes no URLs.
///
/// # Errors
/// Always.
pub fn put_file(
    url: &str,
    _: &RemoteOptions,
    _: &std::fs::File,
    _: &upload::Condition,
    _: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<String>, Error> {
    Err(Error::new(url))
}
