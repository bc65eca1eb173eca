//! What goes wrong reaching a remote file, and why an answer is refused.

use crate::redact::redact;
use crate::upload;
use std::io;

/// The longest wait for a connection (or `request_timeout`, if shorter).
pub(crate) const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How to set the limit of a file read whole, as messages say it.
pub(crate) const WHOLE_LIMIT_HOW: &str =
    "set ASDF_RS_WHOLE_LIMIT=BYTES in the environment (asdf-cli), or the storage option whole_limit";

/// What went wrong opening a remote file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Not a URL.
    #[error("{}: not a URL: {source}", redact(.url))]
    Url {
        /// The text given.
        url: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// A URL of a kind this build does not read.
    #[error("{}: unsupported URL scheme (http, https, s3, s3a, gs, gcs, az, abfs and abfss are read)", redact(.url))]
    Scheme {
        /// The URL.
        url: String,
    },
    /// An object key that `object_store` cannot address, refused rather than read or written
    /// as another key (object-store URLs take the key literally: see [`crate::child_url`]).
    #[error("{}: the object key {key:?} {problem}; nothing was read or written", redact(.url))]
    Key {
        /// The URL.
        url: String,
        /// The key, as written in the URL.
        key: String,
        /// What is wrong with it.
        problem: KeyProblem,
    },
    /// An HTTP(S) URL with a `.` or `..` path segment, which HTTP clients resolve away.
    #[error(
        "{}: the URL's path has a `.` or `..` segment ({segment:?}), which an HTTP request resolves away (it would go to another resource than the URL names); refused",
        redact(.url)
    )]
    HttpDotSegment {
        /// The URL.
        url: String,
        /// The segment, as written.
        segment: String,
    },
    /// An object-store URL without a bucket (or container).
    #[error("{}: no bucket named (SCHEME://BUCKET/KEY is expected)", redact(.url))]
    Bucket {
        /// The URL.
        url: String,
    },
    /// A server that ignores `Range` (it sent the whole file), with a file over the limit of
    /// a file read whole.
    #[error(
        "{}: the server does not answer range requests (it sent the whole file), and the file's {size} bytes are over the limit of {limit} bytes for a file read whole (to raise it, {how})",
        redact(.url),
        how = WHOLE_LIMIT_HOW
    )]
    NoRanges {
        /// The URL.
        url: String,
        /// The file's size, as the server gave it (or the bytes received before the limit).
        size: u64,
        /// The limit ([`crate::RemoteOptions::whole_limit`]).
        limit: u64,
    },
    /// The store refused or failed (not found, access denied, no range support, network).
    #[error("{}: {}", redact(.url), redact(&.source.to_string()))]
    Store {
        /// The URL.
        url: String,
        /// What the store said.
        source: object_store::Error,
    },
    /// The background runtime could not start.
    #[error("cannot start the I/O runtime: {0}")]
    Runtime(io::Error),
    /// An upload that did not complete (nothing was written).
    #[error("{}: {}", redact(.url), redact(&.source.to_string()))]
    Upload {
        /// The URL written to.
        url: String,
        /// Why.
        source: upload::UploadError,
    },
    /// A write to a bucket (or container) that does not exist.
    #[error("{}: the bucket {bucket:?} does not exist (nothing was written)", redact(.url))]
    NoBucket {
        /// The URL written to.
        url: String,
        /// The bucket (or container).
        bucket: String,
    },
    /// A URL that cannot be written to.
    #[error("{}: the server takes no writes (it refused PUT)", redact(.url))]
    NotWritable {
        /// The URL.
        url: String,
    },
    /// A URL whose store cannot list a prefix (plain HTTP).
    #[error("{}: listing is supported for s3, gs and az URLs, not over plain HTTP(S)", redact(.url))]
    NotListable {
        /// The URL.
        url: String,
    },
    /// A listing over its limit.
    #[error("{}: more than {limit} objects under this prefix", redact(.url))]
    TooMany {
        /// The prefix.
        url: String,
        /// The limit.
        limit: usize,
    },
    /// A setting this crate reads itself with a value it cannot use.
    #[error("{}: setting {key} = {value:?}: {expected} is expected", redact(.url))]
    Setting {
        /// The URL.
        url: String,
        /// The setting.
        key: String,
        /// Its value.
        value: String,
        /// What it takes ("a positive integer", "true or false").
        expected: &'static str,
    },
}

impl Error {
    /// Whether an upload was refused because the object changed since it was read (or was
    /// created since the write began).
    #[must_use]
    pub fn is_changed(&self) -> bool {
        matches!(
            self,
            Error::Upload {
                source: upload::UploadError::Changed(_),
                ..
            }
        )
    }

    /// Whether the store said the object is not there.
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            Error::Store {
                source: object_store::Error::NotFound { .. },
                ..
            }
        )
    }
}

/// Why an object key cannot be read or written (see [`Error::Key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyProblem {
    /// No key at all (`s3://bucket/`).
    #[error("is empty: no key (SCHEME://BUCKET/KEY names an object)")]
    Empty,
    /// A key ending in `/` (a prefix, for a listing).
    #[error("ends in `/`: object_store cannot address such a key (a listing takes such a URL as a prefix)")]
    TrailingSlash,
    /// An empty segment (`a//b`, a leading `/`).
    #[error("has an empty segment (`//`, or a leading `/`), which object_store cannot address")]
    EmptySegment,
    /// A `.` or `..` segment.
    #[error(
        "has a `.` or `..` segment: keys are literal (`tmp/../x` is not `x`), and object_store cannot address such a key, so it is refused rather than taken for another"
    )]
    DotSegment,
    /// A control character.
    #[error("has a control character, which object_store cannot address")]
    Control,
}

/// Why an answer was refused (the store's own errors aside).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AnswerError {
    #[error(
        "the file changed while it was read: the first answer said {first_size} bytes and ETag {first_etag:?}, this one {size} bytes and ETag {etag:?}"
    )]
    Changed {
        first_size: u64,
        first_etag: Option<String>,
        size: u64,
        etag: Option<String>,
    },
    #[error(
        "the file changed while it was read: the server gives no ETag, and its Last-Modified went from {first} to {now}"
    )]
    Modified { first: String, now: String },
    #[error("the answer's body is longer than the {asked} bytes asked for")]
    TooLong { asked: u64 },
    #[error("the file changed since it was opened: the store no longer has the version with ETag {first_etag}")]
    Replaced { first_etag: String },
    #[error("the answer's body ended after {got} of the {asked} bytes asked for")]
    TooShort { asked: u64, got: u64 },
    #[error(
        "gave up waiting for {waited} at the deadline of {deadline:?} (RemoteOptions::deadline; the store's retries included)"
    )]
    Deadline {
        deadline: std::time::Duration,
        waited: Waited,
    },
    #[error(
        "timed out waiting for {waited}: each request is given {limit:?} ({setting}), and the store's retries, if any, timed out too"
    )]
    TimedOut {
        waited: Waited,
        limit: std::time::Duration,
        setting: &'static str,
    },
    #[error(
        "the answer stalled: its next {step} bytes did not come within the deadline of {deadline:?} (a large read is given the deadline for each part of {step} bytes)"
    )]
    Stalled { deadline: std::time::Duration, step: u64 },
}

/// What a request was waiting for when its time ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// A connection to the server.
    Connect,
    /// The answer's status and headers (the connection included).
    Headers,
    /// The answer's body.
    Body,
    /// The pages of a listing.
    Listing,
}

impl std::fmt::Display for Waited {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Waited::Connect => "a connection to the server",
            Waited::Headers => "the answer's headers (connecting included)",
            Waited::Body => "the answer's body",
            Waited::Listing => "the listing's pages",
        })
    }
}

/// `e` said as the timeout it is, when it is one (object_store says a request that reached
/// the client's time limit as "Generic HTTP error", without the limit): what was waited for,
/// and the limit kept (`request_timeout`; connecting: at most 10 s of it).
pub(crate) fn explain_timeout(e: object_store::Error, request_timeout: std::time::Duration) -> object_store::Error {
    let mut waited = None;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            waited = Some(if r.is_connect() {
                Waited::Connect
            } else if r.is_body() || r.is_decode() {
                Waited::Body
            } else {
                Waited::Headers
            });
            break;
        }
        if let Some(h) = s.downcast_ref::<object_store::client::HttpError>()
            && h.kind() == object_store::client::HttpErrorKind::Timeout
        {
            waited = Some(Waited::Headers);
        }
        source = s.source();
    }
    match waited {
        Some(Waited::Connect) => answer_err(AnswerError::TimedOut {
            waited: Waited::Connect,
            limit: request_timeout.min(CONNECT_TIMEOUT),
            setting: "RemoteOptions::request_timeout, at most 10 s of it to connect",
        }),
        Some(waited) => answer_err(AnswerError::TimedOut {
            waited,
            limit: request_timeout,
            setting: "RemoteOptions::request_timeout, from the request to the end of its body",
        }),
        None => e,
    }
}

pub(crate) fn answer_err(e: AnswerError) -> object_store::Error {
    object_store::Error::Generic {
        store: "asdf-remote",
        source: Box::new(e),
    }
}
