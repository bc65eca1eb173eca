//! Remote files with the feature `remote`: `asdf-remote`'s types and calls, as the facade
//! uses them.

use std::sync::Arc;

use asdf_layout::ReadAt;

pub use asdf_remote::{Error as RemoteError, RemoteOptions, Stats as RemoteStats, is_url};

/// What must hold of an object for an upload to complete.
pub(crate) use asdf_remote::upload::Condition;

/// Whether `e` is a store's refusal of a write over an object that changed.
pub(crate) fn is_changed(e: &RemoteError) -> bool {
    e.is_changed()
}

/// Whether `e` is the caller's mistake (a URL, a scheme, a setting, a store not written to).
pub(crate) fn is_usage(e: &RemoteError) -> bool {
    matches!(
        e,
        RemoteError::Url { .. }
            | RemoteError::Scheme { .. }
            | RemoteError::NotWritable { .. }
            | RemoteError::Setting { .. }
    )
}

/// The remote file at `url`, read by ranges, and what it fetches.
pub(crate) fn open_source(
    url: &str,
    remote: &RemoteOptions,
) -> Result<(Box<dyn ReadAt>, Arc<RemoteStats>), RemoteError> {
    let src = asdf_remote::RemoteSource::open(url, remote)?;
    let stats = src.stats();
    Ok((Box::new(src), stats))
}

/// Whether two URLs are objects of one store (the same storage options apply).
pub(crate) fn same_origin(a: &str, b: &str) -> bool {
    asdf_remote::same_origin(a, b)
}

/// The object's size and ETag, `None` when there is no object.
pub(crate) fn head(url: &str, remote: &RemoteOptions) -> Result<Option<(u64, Option<String>)>, RemoteError> {
    asdf_remote::head(url, remote)
}

/// Refused when the object at `url` does not meet `condition`.
pub(crate) fn check_condition(url: &str, remote: &RemoteOptions, condition: &Condition) -> Result<(), RemoteError> {
    asdf_remote::check_condition(url, remote, condition)
}

/// `file` uploaded to `url` in parts, completed only when `condition` holds.
pub(crate) fn put_file(
    url: &str,
    remote: &RemoteOptions,
    file: &std::fs::File,
    condition: &Condition,
    report: &(dyn Fn(u64, u64) + Sync),
) -> Result<(), RemoteError> {
    asdf_remote::put_file(url, remote, file, condition, report).map(drop)
}

/// The ETag of the object as a file read from it saw it.
pub(crate) fn version_read(stats: &RemoteStats) -> Option<String> {
    stats.version().and_then(|(_, etag)| etag)
}
