//! How to reach and cache a remote file ([`RemoteOptions`]).

use crate::error::Error;
use std::sync::Arc;

/// The smallest part of a large read, unless set otherwise ([`RemoteOptions::part_size`]).
pub const PART: usize = 8 << 20;
/// The settings this crate reads itself (the others are the store's).
const OWN_SETTINGS: [&str; 5] = ["concurrency", "part_size", "split_below", "park", "whole_limit"];
/// The largest file read whole from a server that ignores `Range`, unless set otherwise
/// ([`RemoteOptions::whole_limit`]): 256 MiB, the same as the browser viewer's.
pub const WHOLE_LIMIT: u64 = 256 << 20;
/// The environment variable that sets [`RemoteOptions::whole_limit`] (in bytes) when the
/// setting `whole_limit` is not given: how a user of `asdf-cli` sets it.
pub const WHOLE_LIMIT_ENV: &str = "ASDF_RS_WHOLE_LIMIT";

/// How to reach and cache a remote file.
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// Store settings, as `object_store` names them (`aws_endpoint`, `aws_region`,
    /// `aws_access_key_id`, ...) or as fsspec does (`endpoint_url`, `region`, `key`,
    /// `secret`, `token`). They override the environment.
    pub settings: Vec<(String, String)>,
    /// Unsigned requests (public buckets): no credentials are looked for.
    pub anonymous: bool,
    /// The first request's size: header and tree in one request for most files.
    pub head_bytes: usize,
    /// The cache's page: reads at least this long take only what the cache already holds of
    /// their start, and fetch the rest exactly (no page, no read-ahead).
    pub page_size: usize,
    /// The cache's capacity in bytes (its pieces are a page, or more with read-ahead).
    pub cache_bytes: usize,
    /// The largest read-ahead of consecutive small reads.
    pub max_read_ahead: usize,
    /// Retries of a failed request (with exponential backoff).
    pub retries: usize,
    /// The longest one request (headers and body) may take before it is abandoned and
    /// retried.
    pub request_timeout: std::time::Duration,
    /// The longest one request of a read may take, its retries included (a large read is
    /// fetched in parts of [`PART`] bytes, each with this deadline): a server that drips its
    /// headers or its body fails the read after this, not after retries x timeouts.
    pub deadline: std::time::Duration,
    /// Follow HTTP redirects to another origin (scheme, host, port). Off by default: a
    /// redirect elsewhere is an error, so that a server cannot send the reader (and what it
    /// sends) to a host the URL did not name.
    pub cross_origin_redirects: bool,
    /// Requests of one large read in flight at once (setting `concurrency`). A read of `n`
    /// bytes goes in parts of `max(part_size, n / concurrency)` bytes: as few requests as
    /// the concurrency allows (a store's cost per request is often larger than its cost per
    /// byte), all of them at once.
    pub concurrency: usize,
    /// The smallest part of a large read (setting `part_size`, in bytes).
    pub part_size: usize,
    /// A large read is fetched by one request as long as that request delivers at least
    /// this many bytes a second (measured over its first part); slower, the rest of the read
    /// is split between `concurrency` requests (setting `split_below`, bytes a second; 256
    /// MiB/s by default: faster than one connection to a cloud store, slower than one to a
    /// server on the same machine or network).
    pub split_below: u64,
    /// The open asks for the whole object, reads its head and keeps the rest of the answer
    /// for the first large read that starts there (a file's first block: one request fewer),
    /// dropping it when the source is dropped (setting `park`, `true`/`false`). Off by
    /// default: an open that reads only the tree then still has the server send what the
    /// sockets' buffers hold (up to a few MiB) for nothing; on for reads of whole files.
    pub park: bool,
    /// The largest file read whole, into memory, from a server that ignores `Range` (it
    /// answers a ranged request with the whole file, as `python -m http.server` does):
    /// such a file is fetched once and every read is answered from memory (a warning says
    /// so); a larger one is refused ([`Error::NoRanges`](crate::Error::NoRanges)). Setting
    /// `whole_limit`, in bytes; else the environment's [`WHOLE_LIMIT_ENV`]
    /// (`ASDF_RS_WHOLE_LIMIT`); else [`WHOLE_LIMIT`].
    pub whole_limit: u64,
    /// Set to true, cancels the uploads made with these options (each is aborted, its parts
    /// deleted, before its next part; nothing is written): how a caller's interrupt (Python's
    /// Ctrl-C) reaches an upload running on another thread. [`crate::cancel_uploads`] cancels every
    /// upload of the process.
    pub cancel: Option<Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            settings: Vec::new(),
            anonymous: false,
            head_bytes: 256 << 10,
            page_size: 64 << 10,
            cache_bytes: 8 << 20,
            max_read_ahead: 4 << 20,
            retries: 5,
            request_timeout: std::time::Duration::from_secs(30),
            deadline: std::time::Duration::from_secs(120),
            cross_origin_redirects: false,
            concurrency: 8,
            part_size: PART,
            split_below: 256 << 20,
            park: false,
            whole_limit: WHOLE_LIMIT,
            cancel: None,
        }
    }
}

impl RemoteOptions {
    /// The options with the settings this crate reads itself (`concurrency`, `part_size`)
    /// taken out of [`RemoteOptions::settings`] into their fields (`split_below`, `park` and
    /// `whole_limit` too).
    ///
    /// # Errors
    /// A value that is not a positive integer (`park`: not true or false).
    pub(crate) fn own_settings(&self, url: &str) -> Result<Self, Error> {
        let mut o = self.clone();
        let given = self.settings.iter().any(|(k, _)| k.eq_ignore_ascii_case("whole_limit"));
        if !given && let Some(v) = std::env::var_os(WHOLE_LIMIT_ENV) {
            o.whole_limit = positive(url, WHOLE_LIMIT_ENV, &v.to_string_lossy(), "a positive number of bytes")?;
        }
        for (k, v) in &self.settings {
            let key = k.to_ascii_lowercase();
            if !OWN_SETTINGS.contains(&key.as_str()) {
                continue;
            }
            if key == "park" {
                o.park = match v.trim().to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => true,
                    "false" | "0" | "no" => false,
                    _ => {
                        return Err(Error::Setting {
                            url: url.to_string(),
                            key: key.clone(),
                            value: v.clone(),
                            expected: "true or false",
                        });
                    }
                };
                continue;
            }
            let n = positive(url, &key, v, "a positive integer")?;
            let small = usize::try_from(n).unwrap_or(usize::MAX);
            match key.as_str() {
                "concurrency" => o.concurrency = small.min(256),
                "split_below" => o.split_below = n,
                "whole_limit" => o.whole_limit = n,
                _ => o.part_size = small.max(64 << 10),
            }
        }
        o.settings
            .retain(|(k, _)| !OWN_SETTINGS.contains(&k.to_ascii_lowercase().as_str()));
        o.concurrency = o.concurrency.max(1);
        o.part_size = o.part_size.max(64 << 10);
        Ok(o)
    }

    /// Adds a store setting (see [`RemoteOptions::settings`]).
    #[must_use]
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }

    /// Unsigned requests.
    #[must_use]
    pub fn anonymous(mut self, yes: bool) -> Self {
        self.anonymous = yes;
        self
    }
}

/// The positive integer `value` of the setting `key` (an [`Error::Setting`] naming both, and
/// what was `expected`, otherwise).
fn positive(url: &str, key: &str, value: &str, expected: &'static str) -> Result<u64, Error> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::Setting {
            url: url.to_string(),
            key: key.to_string(),
            value: value.to_string(),
            expected,
        })
}
