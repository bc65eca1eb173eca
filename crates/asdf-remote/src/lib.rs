//! ASDF files where they are stored: `http(s)://` servers and `s3://` buckets, read by ranges.
//!
//! [`RemoteSource`] is an [`asdf_layout::ReadAt`]: the layout reader and the `asdf` facade open
//! it as they open a local file, and every read becomes a ranged GET through the
//! [`object_store`] crate (its retries, its credential chain). What a file's open needs is
//! few, small reads near its start and its end, then single elements or whole blocks; so:
//!
//! - the first request fetches the file's first [`RemoteOptions::head_bytes`] (the header
//!   and, for most files, the whole tree and the first block header) and learns the file's
//!   size from the answer's `Content-Range`;
//! - reads smaller than [`RemoteOptions::page_size`] (headers, the index, single elements)
//!   go through a cache of at most [`RemoteOptions::cache_bytes`] (least recently used
//!   leave first): a miss fetches a page from where the read starts (not from an aligned
//!   page, so reading a block's header fetches nothing of the block before it), and reads
//!   that follow each other read ahead, doubling up to [`RemoteOptions::max_read_ahead`];
//! - larger reads (a block, a range of rows) take what the cache already holds of their
//!   start (a block's first bytes, fetched with its header's page) and fetch exactly the
//!   rest, in [`PART`]-sized parts at once, straight into the caller's buffer.
//!
//! Memory is bounded by the cache and the caller's buffers, whatever the file's size.
//! Requests and bytes are counted ([`Stats`]); with `ASDF_RS_RANGE_LOG` set to a path, each
//! request appends a line `URL START END` to that file (how the tests see which bytes a
//! Dask task read), the URL's secrets hidden as in messages ([`redact`]).
//!
//! Every error names its URL through [`redact`], along its whole chain of sources and in its
//! `Debug` form too. The settings a user has no Rust to set are storage options (Python's
//! `storage_options`) and, for `asdf-cli`, environment variables: `whole_limit`
//! (`ASDF_RS_WHOLE_LIMIT`), `request_timeout` and `deadline` in seconds
//! (`ASDF_RS_REQUEST_TIMEOUT`, `ASDF_RS_DEADLINE`), `cross_origin_redirects`
//! (`ASDF_RS_CROSS_ORIGIN_REDIRECTS`); the messages that meet these limits name both ways.

// Built without the feature `network` (the `asdf` facade without its feature `remote`), the
// same names exist and every call answers that this build reads and writes no URLs: see `off`.
#[cfg(not(feature = "network"))]
mod off;
#[cfg(not(feature = "network"))]
pub use off::*;

#[cfg(feature = "network")]
mod cancel;
#[cfg(feature = "network")]
mod error;
#[cfg(feature = "network")]
mod guard;
#[cfg(feature = "network")]
mod listing;
#[cfg(feature = "network")]
mod location;
#[cfg(feature = "network")]
mod options;
#[cfg(feature = "network")]
mod profiles;
#[cfg(feature = "network")]
mod redact;
#[cfg(feature = "network")]
mod source;
#[cfg(feature = "network")]
mod store;
#[cfg(feature = "network")]
mod transfer;
#[cfg(feature = "network")]
pub mod upload;
#[cfg(feature = "network")]
mod warn;

#[cfg(feature = "network")]
pub use {
    cancel::{cancel_uploads, uploading, uploads_cancelled},
    error::{Error, KeyProblem},
    guard::{GuardOutcome, run_upload_guard, set_upload_guard},
    listing::{Listed, list, list_entries},
    location::child_url,
    options::{
        CROSS_ORIGIN_REDIRECTS_ENV, DEADLINE_ENV, PART, REQUEST_TIMEOUT_ENV, RemoteOptions, WHOLE_LIMIT,
        WHOLE_LIMIT_ENV,
    },
    redact::{RedactedError, redact},
    source::{RemoteSource, Stats, open},
    transfer::{check_condition, fetch_range, head, put_file, write_condition},
    warn::{WarningHook, set_warning_hook},
};

/// Whether the URLs `a` and `b` have the same origin: scheme, host and port (for S3, the
/// bucket is the host).
#[cfg(feature = "network")]
#[must_use]
pub fn same_origin(a: &str, b: &str) -> bool {
    let origin = |u: &str| {
        url::Url::parse(u).ok().map(|u| {
            (
                u.scheme().to_owned(),
                u.host_str().map(str::to_owned),
                u.port_or_known_default(),
            )
        })
    };
    origin(a).is_some() && origin(a) == origin(b)
}

/// Whether `s` names a remote file (`scheme://...` with a scheme this crate reads).
#[must_use]
pub fn is_url(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    !rest.is_empty()
        && matches!(
            scheme.to_ascii_lowercase().as_str(),
            "http" | "https" | "s3" | "s3a" | "gs" | "gcs" | "az" | "abfs" | "abfss"
        )
}
