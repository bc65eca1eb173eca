//! Built without the feature `remote`: the same names as `on.rs`, every call answering that
//! this build reads and writes no URLs.

use std::sync::Arc;

use asdf_layout::ReadAt;

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

/// What must hold of an object for an upload to complete (no uploads in this build: never
/// looked at).
#[derive(Debug, Clone)]
#[allow(dead_code)]
pub(crate) enum Condition {
    /// The object is this version.
    Match(String),
    /// The object may be replaced.
    Overwrite,
    /// There is no object.
    Create,
}

/// Whether `s` is a URL of the schemes remote builds read (`http(s)`, `s3`, `gs`, `az`, ...):
/// such a path is refused here rather than taken for a local file's name.
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

fn refused(url: &str) -> RemoteError {
    RemoteError { url: url.to_owned() }
}

pub(crate) fn is_changed(_: &RemoteError) -> bool {
    false
}

/// Always: asking a build without remote files for a URL is the caller's mistake.
pub(crate) fn is_usage(_: &RemoteError) -> bool {
    true
}

pub(crate) fn open_source(url: &str, _: &RemoteOptions) -> Result<(Box<dyn ReadAt>, Arc<RemoteStats>), RemoteError> {
    Err(refused(url))
}

pub(crate) fn same_origin(_: &str, _: &str) -> bool {
    false
}

pub(crate) fn head(url: &str, _: &RemoteOptions) -> Result<Option<(u64, Option<String>)>, RemoteError> {
    Err(refused(url))
}

pub(crate) fn check_condition(url: &str, _: &RemoteOptions, _: &Condition) -> Result<(), RemoteError> {
    Err(refused(url))
}

pub(crate) fn put_file(
    url: &str,
    _: &RemoteOptions,
    _: &std::fs::File,
    _: &Condition,
    _: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), RemoteError> {
    Err(refused(url))
}

pub(crate) fn version_read(_: &RemoteStats) -> Option<String> {
    None
}
