//! What goes wrong reaching a remote file, and why an answer is refused.

use crate::redact::{RedactedError, redact};
use crate::upload;
use std::io;

/// The longest wait for a connection (or `request_timeout`, if shorter).
pub(crate) const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How to set the limit of a file read whole, as messages say it.
pub(crate) const WHOLE_LIMIT_HOW: &str =
    "set ASDF_RS_WHOLE_LIMIT=BYTES in the environment (asdf-cli), or the storage option whole_limit";

/// How to set the time each request is given, as messages say it.
pub(crate) const REQUEST_TIMEOUT_HOW: &str =
    "set ASDF_RS_REQUEST_TIMEOUT=SECONDS in the environment (asdf-cli), or the storage option request_timeout";

/// How to set the deadline of an operation, as messages say it.
pub(crate) const DEADLINE_HOW: &str =
    "set ASDF_RS_DEADLINE=SECONDS in the environment (asdf-cli), or the storage option deadline";

/// How to allow redirects to another origin, as messages say it.
pub(crate) const CROSS_ORIGIN_HOW: &str = "set ASDF_RS_CROSS_ORIGIN_REDIRECTS=true in the environment (asdf-cli), or the storage option cross_origin_redirects=true";

/// What went wrong opening a remote file.
///
/// Every message names URLs with their secrets hidden ([`redact`]), and so does every error
/// of its chain of sources ([`std::error::Error::source`]) and its `Debug` form.
#[derive(thiserror::Error)]
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
    /// No object at the URL: the store (or the server) answered "not found" (HTTP 404) and,
    /// for an object store, the bucket is there but has no object of that key.
    #[error("{}: not found: {}", redact(.url), not_found(bucket.as_deref(), key.as_deref()))]
    NotFound {
        /// The URL.
        url: String,
        /// The bucket (or container), for an object-store URL.
        bucket: Option<String>,
        /// The object's key, for an object-store URL.
        key: Option<String>,
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
    /// The store refused or failed (access denied, no range support, network).
    #[error("{}: {}", redact(.url), .source.with_causes())]
    Store {
        /// The URL.
        url: String,
        /// What the store said (each level of its chain redacted).
        source: RedactedError,
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
    /// A read or a write of a bucket (or container) that does not exist.
    #[error(
        "{}: no such bucket: the bucket {bucket:?} does not exist (nothing was read or written)",
        redact(.url)
    )]
    NoBucket {
        /// The URL read or written.
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
    /// A setting this crate reads itself (a storage option, or the environment variable that
    /// stands for it) with a value it cannot use.
    #[error(
        "{}: {} {key} = {value:?}: {expected} is expected",
        redact(.url),
        if *.environment { "the environment variable" } else { "the storage option" }
    )]
    Setting {
        /// The URL.
        url: String,
        /// Whether `key` is an environment variable (`ASDF_RS_WHOLE_LIMIT`), not a setting.
        environment: bool,
        /// The setting, or the environment variable.
        key: String,
        /// Its value.
        value: String,
        /// What it takes ("a positive integer", "true or false").
        expected: &'static str,
    },
}

impl Error {
    /// Whether the error is the caller's mistake (a URL, a scheme, a setting, a store not
    /// written to) rather than the store's or the network's.
    #[must_use]
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Error::Url { .. } | Error::Scheme { .. } | Error::NotWritable { .. } | Error::Setting { .. }
        )
    }

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

    /// Whether the store said the object is not there (its bucket is: see
    /// [`Error::NoBucket`]).
    #[must_use]
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }
}

impl std::fmt::Debug for Error {
    /// The message, its URLs' secrets hidden (what `unwrap` prints), and the redacted source.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.to_string())
            .field("source", &std::error::Error::source(self).map(ToString::to_string))
            .finish()
    }
}

/// What a "not found" means where it was said: no object of that key in the bucket, or no
/// file at an HTTP(S) URL.
fn not_found(bucket: Option<&str>, key: Option<&str>) -> String {
    match (bucket, key) {
        (Some(b), Some(k)) => format!(
            "no such key: the bucket {:?} exists but has no object with the key {:?}",
            redact(b),
            redact(k)
        ),
        _ => "the server has no file at this URL (HTTP 404 Not Found)".to_string(),
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
    /// An empty segment (`a//b`).
    #[error("has an empty segment (`//`), which object_store cannot address")]
    EmptySegment,
    /// A key starting with `/` (`s3://bucket//key`): object_store would address the key
    /// without it, another object.
    #[error(
        "starts with `/`: keys are literal (`/x` is not `x`), and object_store would address it without its `/` (another object), so it is refused"
    )]
    LeadingSlash,
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
        "gave up waiting for {waited} at the deadline of {deadline:?} (the store's retries included; to change the deadline, {DEADLINE_HOW})"
    )]
    Deadline {
        deadline: std::time::Duration,
        waited: Waited,
    },
    #[error(
        "timed out waiting for {waited}: each request is given {limit:?} ({setting}; to change it, {REQUEST_TIMEOUT_HOW}), and the store's retries, if any, timed out too"
    )]
    TimedOut {
        waited: Waited,
        limit: std::time::Duration,
        setting: &'static str,
    },
    #[error(
        "the answer stalled: its next {step} bytes did not come within the deadline of {deadline:?} (a large read is given the deadline for each part of {step} bytes; to change the deadline, {DEADLINE_HOW})"
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
            setting: "at most 10 s of it to connect",
        }),
        Some(waited) => answer_err(AnswerError::TimedOut {
            waited,
            limit: request_timeout,
            setting: "from the request to the end of its body",
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
