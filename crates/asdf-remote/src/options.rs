//! How to reach and cache a remote file ([`RemoteOptions`]).

use crate::error::Error;
use std::sync::Arc;

/// The smallest part of a large read, unless set otherwise ([`RemoteOptions::part_size`]).
pub const PART: usize = 8 << 20;
/// The settings this crate reads itself (the others are the store's).
const OWN_SETTINGS: [&str; 8] = [
    "concurrency",
    "part_size",
    "split_below",
    "park",
    "whole_limit",
    "request_timeout",
    "deadline",
    "cross_origin_redirects",
];
/// The largest file read whole from a server that ignores `Range`, unless set otherwise
/// ([`RemoteOptions::whole_limit`]): 256 MiB, the same as the browser viewer's.
pub const WHOLE_LIMIT: u64 = 256 << 20;
/// The environment variable that sets [`RemoteOptions::whole_limit`] (in bytes) when the
/// setting `whole_limit` is not given: how a user of `asdf-cli` sets it.
pub const WHOLE_LIMIT_ENV: &str = "ASDF_RS_WHOLE_LIMIT";
/// The environment variable that sets [`RemoteOptions::request_timeout`] (in seconds) when
/// the setting `request_timeout` is not given.
pub const REQUEST_TIMEOUT_ENV: &str = "ASDF_RS_REQUEST_TIMEOUT";
/// The environment variable that sets [`RemoteOptions::deadline`] (in seconds) when the
/// setting `deadline` is not given.
pub const DEADLINE_ENV: &str = "ASDF_RS_DEADLINE";
/// The environment variable that sets [`RemoteOptions::cross_origin_redirects`] (`true` or
/// `false`) when the setting `cross_origin_redirects` is not given.
pub const CROSS_ORIGIN_REDIRECTS_ENV: &str = "ASDF_RS_CROSS_ORIGIN_REDIRECTS";
/// The longest time a request or a deadline is given, whatever the setting (about 31 years):
/// larger values are taken as this.
const MAX_SECONDS: f64 = 1e9;

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
    /// retried (setting `request_timeout`, in seconds; else the environment's
    /// [`REQUEST_TIMEOUT_ENV`], `ASDF_RS_REQUEST_TIMEOUT`; 30 s by default).
    pub request_timeout: std::time::Duration,
    /// The longest one request of a read may take, its retries included (a large read is
    /// fetched in parts of [`PART`] bytes, each with this deadline): a server that drips its
    /// headers or its body fails the read after this, not after retries x timeouts (setting
    /// `deadline`, in seconds; else the environment's [`DEADLINE_ENV`], `ASDF_RS_DEADLINE`;
    /// 120 s by default).
    pub deadline: std::time::Duration,
    /// Follow HTTP redirects to another origin (scheme, host, port). Off by default: a
    /// redirect elsewhere is an error, so that a server cannot send the reader (and what it
    /// sends) to a host the URL did not name (setting `cross_origin_redirects`, `true` or
    /// `false`; else the environment's [`CROSS_ORIGIN_REDIRECTS_ENV`]).
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
    /// The options with the settings this crate reads itself (`concurrency`, `part_size`,
    /// `split_below`, `park`, `whole_limit`, `request_timeout`, `deadline`,
    /// `cross_origin_redirects`) taken out of [`RemoteOptions::settings`] into their fields;
    /// those not given are taken from the environment where a variable stands for them
    /// (`ASDF_RS_WHOLE_LIMIT`, `ASDF_RS_REQUEST_TIMEOUT`, `ASDF_RS_DEADLINE`,
    /// `ASDF_RS_CROSS_ORIGIN_REDIRECTS`: how a user of `asdf-cli` sets them).
    ///
    /// # Errors
    /// A value that is not a positive number (`park`, `cross_origin_redirects`: not true or
    /// false), the setting or the variable named.
    pub(crate) fn own_settings(&self, url: &str) -> Result<Self, Error> {
        let mut o = self.clone();
        let given = |name: &str| self.settings.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
        let env = |var: &str| std::env::var_os(var).map(|v| v.to_string_lossy().into_owned());
        let bad = |key: &str, value: &str, environment: bool, expected: &'static str| Error::Setting {
            url: url.to_string(),
            environment,
            key: key.to_string(),
            value: value.to_string(),
            expected,
        };
        if !given("whole_limit")
            && let Some(v) = env(WHOLE_LIMIT_ENV)
        {
            o.whole_limit = count(&v).ok_or_else(|| bad(WHOLE_LIMIT_ENV, &v, true, BYTES))?;
        }
        if !given("request_timeout")
            && let Some(v) = env(REQUEST_TIMEOUT_ENV)
        {
            o.request_timeout = seconds(&v).ok_or_else(|| bad(REQUEST_TIMEOUT_ENV, &v, true, SECONDS))?;
        }
        if !given("deadline")
            && let Some(v) = env(DEADLINE_ENV)
        {
            o.deadline = seconds(&v).ok_or_else(|| bad(DEADLINE_ENV, &v, true, SECONDS))?;
        }
        if !given("cross_origin_redirects")
            && let Some(v) = env(CROSS_ORIGIN_REDIRECTS_ENV)
        {
            o.cross_origin_redirects =
                yes_or_no(&v).ok_or_else(|| bad(CROSS_ORIGIN_REDIRECTS_ENV, &v, true, TRUE_OR_FALSE))?;
        }
        for (k, v) in &self.settings {
            let key = k.to_ascii_lowercase();
            if !OWN_SETTINGS.contains(&key.as_str()) {
                continue;
            }
            match key.as_str() {
                "park" => o.park = yes_or_no(v).ok_or_else(|| bad(&key, v, false, TRUE_OR_FALSE))?,
                "cross_origin_redirects" => {
                    o.cross_origin_redirects = yes_or_no(v).ok_or_else(|| bad(&key, v, false, TRUE_OR_FALSE))?;
                }
                "request_timeout" => o.request_timeout = seconds(v).ok_or_else(|| bad(&key, v, false, SECONDS))?,
                "deadline" => o.deadline = seconds(v).ok_or_else(|| bad(&key, v, false, SECONDS))?,
                _ => {
                    let n = count(v).ok_or_else(|| bad(&key, v, false, "a positive number"))?;
                    let small = usize::try_from(n).unwrap_or(usize::MAX);
                    match key.as_str() {
                        "concurrency" => o.concurrency = small.min(256),
                        "split_below" => o.split_below = n,
                        "whole_limit" => o.whole_limit = n,
                        _ => o.part_size = small.max(64 << 10),
                    }
                }
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

/// What a count of bytes takes, as messages say it.
const BYTES: &str = "a positive number of bytes";
/// What a time takes, as messages say it.
const SECONDS: &str = "a positive number of seconds";
/// What a switch takes, as messages say it.
const TRUE_OR_FALSE: &str = "true or false";

/// The positive number `value` (`100`, `1e30`, `2.5e9`, `18446744073709551616`) as a whole
/// count, at most `u64::MAX`: a larger number is taken as `u64::MAX` (no limit, in effect),
/// a fraction is dropped. `None` for what is not a number, or is below 1.
fn count(value: &str) -> Option<u64> {
    let v = value.trim();
    let v = v.strip_prefix('+').unwrap_or(v);
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: exact, or past u64::MAX (a larger limit than any file).
        let n = v.parse::<u64>().unwrap_or(u64::MAX);
        return (n > 0).then_some(n);
    }
    let x = number(v)?;
    // `as` saturates: 1e30 is u64::MAX.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let n = x as u64;
    (x >= 1.0).then_some(n)
}

/// The positive number of seconds `value` (`30`, `2.5`, `1e3`) as a duration, at most
/// [`MAX_SECONDS`]. `None` for what is not a number, or is not above 0.
fn seconds(value: &str) -> Option<std::time::Duration> {
    let x = number(value.trim())?;
    (x > 0.0).then(|| std::time::Duration::from_secs_f64(x.min(MAX_SECONDS)))
}

/// `text` as a number written with digits (`inf` and `nan` are not: they are no size or
/// time); an exponent too large gives infinity.
fn number(text: &str) -> Option<f64> {
    if !text.bytes().any(|b| b.is_ascii_digit())
        || text
            .bytes()
            .any(|b| b.is_ascii_alphabetic() && !matches!(b, b'e' | b'E'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| !x.is_nan())
}

/// `true`/`false` (and `1`/`0`, `yes`/`no`).
fn yes_or_no(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{count, seconds};

    #[test]
    fn counts_saturate_and_only_what_is_not_a_positive_number_is_refused() {
        for (text, want) in [
            ("1", Some(1)),
            (" 268435456 ", Some(268_435_456)),
            ("+5", Some(5)),
            ("18446744073709551615", Some(u64::MAX)),
            ("18446744073709551616", Some(u64::MAX)),
            ("100000000000000000000000000000000", Some(u64::MAX)),
            ("1e30", Some(u64::MAX)),
            ("1E+30", Some(u64::MAX)),
            ("1e400", Some(u64::MAX)),
            ("2.5e3", Some(2500)),
            ("1.9", Some(1)),
            ("0", None),
            ("0.5", None),
            ("-3", None),
            ("lots", None),
            ("", None),
            ("inf", None),
            ("nan", None),
            ("1e", None),
            ("0x10", None),
        ] {
            assert_eq!(count(text), want, "{text:?}");
        }
        assert_eq!(seconds("2.5"), Some(std::time::Duration::from_millis(2500)));
        assert_eq!(seconds("1e30"), Some(std::time::Duration::from_secs(1_000_000_000)));
        assert_eq!(seconds("0"), None);
        assert_eq!(seconds("soon"), None);
    }
}
