//! Where a URL points: the store it names and the object's key in it, taken from the URL's
//! text as written.
//!
//! **Object-store URLs** (`s3://`, `s3a://`, `gs://`, `gcs://`, `az://`, `abfs://`,
//! `abfss://`) are read as `aws s3 cp`, `gsutil` and fsspec read them: `SCHEME://BUCKET/KEY`,
//! where `KEY` is every character after the bucket's `/`, literally. Nothing is decoded and
//! nothing is resolved: `s3://b/run/%41.asdf` is the key `run/%41.asdf` (not `run/A.asdf`),
//! `s3://b/x#1.asdf` the key `x#1.asdf` (not `x` with a fragment), `s3://b/q?.asdf` the key
//! `q?.asdf`. A listing's keys become URLs the same way ([`object_url`]), so every listed key
//! comes back to the same key. Keys that the object store client (`object_store`'s `Path`)
//! cannot address are refused, never changed into another key: a `.` or `..` segment
//! (`tmp/../keep.asdf` would otherwise be read or written as `keep.asdf`, or as
//! `tmp/%2E%2E/keep.asdf`), an empty segment (`a//b`), a leading `/` (`s3://b//x` is the key
//! `/x`, which object_store would address as `x`), a control character,
//! and for an object (not a prefix) a key that is empty or ends in `/`.
//!
//! **HTTP(S) URLs** are URLs: percent-escapes, `?query` and `#fragment` mean what they mean
//! to every HTTP client, and the request goes to the URL as given (its query kept, its
//! escapes as written; the fragment is not sent). A `.` or `..` segment (also escaped,
//! `%2e%2e`) is refused: every HTTP client resolves it away, so the request would go to
//! another resource than the one the URL names.

use crate::error::{Error, KeyProblem};
use object_store::path::Path as StorePath;

/// The schemes whose URLs name a bucket (or container) and a key.
const OBJECT_SCHEMES: [&str; 7] = ["s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"];

/// What a URL is used for: one object, or a prefix to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    Object,
    Prefix,
}

/// A URL taken apart: the URL of the store (the bucket's root for object stores, the whole
/// URL for HTTP) and the object's path in it.
#[derive(Debug)]
pub(crate) struct Location {
    /// For object stores `SCHEME://BUCKET/`; for HTTP(S) the URL itself (without fragment).
    pub(crate) base: url::Url,
    /// The key (object stores); empty for HTTP(S), whose URL is `base`.
    pub(crate) path: StorePath,
}

/// Whether `scheme` (lower case) names an object store (bucket and key).
pub(crate) fn is_object_scheme(scheme: &str) -> bool {
    OBJECT_SCHEMES.contains(&scheme)
}

/// The store and key `text` names (see the module's documentation).
pub(crate) fn locate(text: &str, what: Use) -> Result<Location, Error> {
    let parsed = url::Url::parse(text).map_err(|source| Error::Url {
        url: text.to_string(),
        source,
    })?;
    let key_err = |key: &str, problem| Error::Key {
        url: text.to_string(),
        key: key.to_string(),
        problem,
    };
    if !is_object_scheme(parsed.scheme()) {
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::Scheme { url: text.to_string() });
        }
        if let Some(segment) = http_dot_segment(text) {
            return Err(Error::HttpDotSegment {
                url: text.to_string(),
                segment,
            });
        }
        let mut base = parsed;
        base.set_fragment(None);
        return Ok(Location {
            base,
            path: StorePath::default(),
        });
    }
    // SCHEME://AUTHORITY/KEY, the key as written.
    let after = text.split_once("://").map_or("", |(_, rest)| rest);
    let (authority, key) = after.split_once('/').unwrap_or((after, ""));
    let base_text = format!("{}://{authority}/", parsed.scheme());
    let base = url::Url::parse(&base_text).map_err(|source| Error::Url {
        url: text.to_string(),
        source,
    })?;
    if base.query().is_some() || base.fragment().is_some() || base.host_str().is_none_or(str::is_empty) {
        return Err(Error::Bucket { url: text.to_string() });
    }
    let path = object_path(key, what).map_err(|problem| key_err(key, problem))?;
    Ok(Location { base, path })
}

/// The store path of the literal key `key`, or why it cannot be one.
fn object_path(key: &str, what: Use) -> Result<StorePath, KeyProblem> {
    // object_store's `Path` drops a leading `/`: `/x` would be addressed as `x`.
    if key.starts_with('/') {
        return Err(KeyProblem::LeadingSlash);
    }
    let body = match what {
        Use::Prefix => key.strip_suffix('/').unwrap_or(key),
        Use::Object => {
            if key.is_empty() {
                return Err(KeyProblem::Empty);
            }
            if key.ends_with('/') {
                return Err(KeyProblem::TrailingSlash);
            }
            key
        }
    };
    if body.is_empty() {
        return Ok(StorePath::default());
    }
    for seg in body.split('/') {
        match seg {
            "" => return Err(KeyProblem::EmptySegment),
            "." | ".." => return Err(KeyProblem::DotSegment),
            s if s.chars().any(|c| c.is_ascii_control()) => return Err(KeyProblem::Control),
            _ => {}
        }
    }
    // Checked above: what `Path::parse` refuses does not reach it, and it keeps the rest as
    // written.
    let path = StorePath::parse(body).map_err(|_| KeyProblem::Control)?;
    if path.as_ref() != body {
        return Err(KeyProblem::Control);
    }
    Ok(path)
}

/// Why the listed key `key` cannot be addressed as an object, if it cannot (a key ending in
/// `/` is a folder marker, and not a problem here).
pub(crate) fn key_problem(key: &str) -> Option<KeyProblem> {
    let body = key.strip_suffix('/').unwrap_or(key);
    if body.is_empty() {
        return Some(KeyProblem::EmptySegment);
    }
    object_path(body, Use::Object).err()
}

/// The bucket (or container) an object-store URL names.
pub(crate) fn bucket_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    if !is_object_scheme(parsed.scheme()) {
        return None;
    }
    // abfs://container@account...: the container is the user part.
    match parsed.username() {
        "" => parsed.host_str().map(str::to_owned),
        c => Some(c.to_owned()),
    }
}

/// The first `.` or `..` segment (escaped or not) of an HTTP(S) URL's path, as written.
fn http_dot_segment(text: &str) -> Option<String> {
    let after = text.split_once("://").map_or(text, |(_, rest)| rest);
    let end = after.find(['?', '#']).unwrap_or(after.len());
    let before_query = &after[..end];
    // The path starts at the first `/` (or `\`, which HTTP URLs take for `/`).
    let start = before_query.find(['/', '\\'])?;
    let path = &before_query[start..];
    path.split(['/', '\\'])
        .find(|seg| {
            let decoded = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
            matches!(decoded.as_ref(), "." | "..")
        })
        .map(str::to_string)
}

/// The URL of `key` in the store whose root is `base` (`SCHEME://BUCKET/`, as
/// [`Location::base`] gives it): the inverse of [`locate`], so that the URL names `key`
/// itself, whatever characters it holds.
pub(crate) fn object_url(base: &url::Url, key: &str) -> String {
    // The key is literal in object-store URLs (see the module's documentation): appended as
    // it is, it is exactly the key `locate` takes back out.
    format!("{base}{key}")
}

/// The URL of the object `key` under the prefix URL `prefix` (`s3://bucket/run/`):
/// `s3://bucket/run/KEY` with the key as it is (object-store URLs are literal); for an
/// HTTP(S) prefix, the key's bytes percent-encoded where a URL path needs it (`%`, `#`, `?`,
/// spaces, non-ASCII), each `/` kept as a separator.
///
/// # Errors
/// A prefix that is not a URL, or not one of a store this crate reads.
pub fn child_url(prefix: &str, key: &str) -> Result<String, Error> {
    let parsed = url::Url::parse(prefix).map_err(|source| Error::Url {
        url: prefix.to_string(),
        source,
    })?;
    let sep = if prefix.ends_with('/') { "" } else { "/" };
    if is_object_scheme(parsed.scheme()) {
        return Ok(format!("{prefix}{sep}{key}"));
    }
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Scheme {
            url: prefix.to_string(),
        });
    }
    let mut encoded = Vec::new();
    for seg in key.split('/') {
        if matches!(seg, "." | "..") {
            // A URL parser resolves these, escaped or not: no URL names such a key.
            return Err(Error::Key {
                url: prefix.to_string(),
                key: key.to_string(),
                problem: KeyProblem::DotSegment,
            });
        }
        encoded.push(percent_encoding::utf8_percent_encode(seg, SEGMENT).to_string());
    }
    let mut url = parsed;
    url.set_fragment(None);
    url.set_query(None);
    let mut path = url.path().to_string();
    if !path.ends_with('/') {
        path.push('/');
    }
    path.push_str(&encoded.join("/"));
    url.set_path(&path);
    Ok(url.to_string())
}

/// The bytes a URL path segment escapes: controls, space, `"#%<>?[\]^`{|}` and `/` (the
/// segment's own separator), and everything not ASCII.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'/');

/// The error of a request to `url` that failed with `source`, said for what it is: a bucket
/// that does not exist ([`Error::NoBucket`]), no object of that key, or no file at an HTTP(S)
/// URL ([`Error::NotFound`]); otherwise the store's answer, every URL in it redacted at every
/// level ([`Error::Store`]).
pub(crate) fn store_error(url: &str, source: object_store::Error) -> Error {
    if let Some(e) = no_bucket(url, &source) {
        return e;
    }
    if matches!(source, object_store::Error::NotFound { .. }) {
        let key = bucket_of(url).and_then(|_| {
            let after = url.split_once("://").map_or("", |(_, rest)| rest);
            after.split_once('/').map(|(_, key)| key.to_string())
        });
        return Error::NotFound {
            url: url.to_string(),
            bucket: key.as_ref().and(bucket_of(url)),
            key,
        };
    }
    Error::Store {
        url: url.to_string(),
        source: crate::redact::RedactedError::new(&source),
    }
}

/// The bucket error of a request to `url` that failed with `e`, when `e` says the bucket (or
/// container) is not there: S3's `NoSuchBucket`, Azure's `ContainerNotFound`, Google's
/// "bucket does not exist".
pub(crate) fn no_bucket(url: &str, e: &(dyn std::error::Error + 'static)) -> Option<Error> {
    let mut text = String::new();
    let mut source = Some(e);
    while let Some(s) = source {
        text.push_str(&s.to_string());
        source = s.source();
    }
    let said = ["NoSuchBucket", "ContainerNotFound", "bucket does not exist"]
        .iter()
        .any(|w| text.contains(w));
    let bucket = bucket_of(url)?;
    said.then(|| Error::NoBucket {
        url: url.to_string(),
        bucket,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn key(url: &str) -> Result<String, String> {
        locate(url, Use::Object)
            .map(|l| l.path.as_ref().to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn object_keys_are_taken_literally() {
        assert_eq!(key("s3://b/run/%41.asdf").unwrap(), "run/%41.asdf");
        assert_eq!(key("s3://b/x#1.asdf").unwrap(), "x#1.asdf");
        assert_eq!(key("s3://b/q?.asdf").unwrap(), "q?.asdf");
        assert_eq!(key("s3://b/a b+c.asdf").unwrap(), "a b+c.asdf");
        assert_eq!(key("s3://b/tmp/%2e%2e/keep.asdf").unwrap(), "tmp/%2e%2e/keep.asdf");
        assert_eq!(key("gs://b/ünï/çødé.asdf").unwrap(), "ünï/çødé.asdf");
        assert_eq!(key("s3://b/a..b/.x/x.").unwrap(), "a..b/.x/x.");
    }

    #[test]
    fn keys_object_store_cannot_address_are_refused_never_changed() {
        for (url, why) in [
            ("s3://b/tmp/../keep.asdf", "`.` or `..`"),
            ("s3://b/./keep.asdf", "`.` or `..`"),
            ("s3://b/a//b.asdf", "empty segment"),
            ("s3://b//b.asdf", "starts with `/`"),
            ("s3://b///b.asdf", "starts with `/`"),
            ("s3://b/dir/", "ends in `/`"),
            ("s3://b/", "no key"),
            ("s3://b/a\tb", "control"),
        ] {
            let e = key(url).unwrap_err();
            assert!(e.contains(why), "{url}: {e}");
            assert!(e.starts_with(&crate::redact(url)), "{url}: {e}");
        }
        assert!(locate("s3://b/tmp/../", Use::Prefix).is_err());
        // A prefix `/` is not the bucket's root (it lists the keys that start with `/`).
        assert!(locate("s3://b//", Use::Prefix).is_err());
        assert!(locate("s3://b//run/", Use::Prefix).is_err());
        // A listed key that starts with `/` is not another key without it.
        assert_eq!(key_problem("/lead.asdf"), Some(KeyProblem::LeadingSlash));
        assert_eq!(key_problem("run/x.asdf/"), None);
        assert_eq!(locate("s3://b/run/", Use::Prefix).unwrap().path.as_ref(), "run");
        assert_eq!(locate("s3://b/", Use::Prefix).unwrap().path.as_ref(), "");
    }

    #[test]
    fn http_urls_go_as_written_and_dot_segments_are_refused() {
        let l = locate("http://h:8/a%20b/x%3F.asdf?sig=1%2B2#frag", Use::Object).unwrap();
        assert_eq!(l.base.as_str(), "http://h:8/a%20b/x%3F.asdf?sig=1%2B2");
        assert_eq!(l.path.as_ref(), "");
        for url in [
            "http://h/tmp/../keep.asdf",
            "https://h/tmp/%2e%2E/keep.asdf",
            "http://h/tmp/.%2e/keep.asdf",
            "http://h/./keep.asdf",
            "http://h/tmp\\..\\keep.asdf",
        ] {
            let e = locate(url, Use::Object).unwrap_err().to_string();
            assert!(e.contains("`.` or `..`"), "{url}: {e}");
        }
        // Dots inside a query are not path segments.
        assert!(locate("http://h/x.asdf?p=../y", Use::Object).is_ok());
    }

    #[test]
    fn listed_keys_come_back_to_the_same_key() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet: Vec<char> = "ab.%#?+ /~&=é中😀-_:;,'\"@!$()*[]{}^`|<>\\".chars().collect();
        for _ in 0..2000 {
            let mut k = String::new();
            for _ in 0..1 + (x % 12) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                k.push(alphabet[usize::try_from(x % alphabet.len() as u64).unwrap()]);
            }
            let base = url::Url::parse("s3://bucket/").unwrap();
            let url = object_url(&base, &k);
            match locate(&url, Use::Object) {
                Ok(l) => assert_eq!(l.path.as_ref(), k, "{url}"),
                // Refused only for what object_store cannot address.
                Err(e) => assert!(
                    k.split('/').any(|s| matches!(s, "" | "." | ".."))
                        || k.ends_with('/')
                        || k.chars().any(|c| c.is_ascii_control()),
                    "{k:?}: {e}"
                ),
            }
            // Under an HTTP prefix the key is escaped, and the URL's path decodes to it.
            let Ok(http) = child_url("http://h/p/", &k) else {
                assert!(k.split('/').any(|s| matches!(s, "." | "..")), "{k:?}");
                continue;
            };
            let parsed = url::Url::parse(&http).unwrap();
            let segs: Vec<String> = parsed
                .path_segments()
                .unwrap()
                .skip(1)
                .map(|s| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8()
                        .unwrap()
                        .into_owned()
                })
                .collect();
            assert_eq!(segs.join("/"), k, "{http}");
            assert!(parsed.query().is_none() && parsed.fragment().is_none(), "{http}");
        }
    }
}
