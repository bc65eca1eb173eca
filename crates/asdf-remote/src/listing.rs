//! Listing a prefix of an object store: every key under it, as the store gives it.
//!
//! S3 is listed by requests of this crate's own (ListObjectsV2, presigned by object_store's
//! signer, or unsigned for public buckets), read from S3's XML answer: every key exactly as
//! stored, with its size, one request a page of 1,000 keys. object_store's own listing
//! cannot give every key: its `Path` drops a key's leading `/` (`/x` listed as `x`, another
//! object) and refuses the whole page of a key it cannot address (`a/../b`, `a//b`, a control
//! character). Google's and Azure's stores are listed by object_store's pages; a page that
//! holds such a key is asked for again in shorter pages (about ten requests) to take the
//! entries before the key, and that key's size is not known.

use crate::error::{Error, KeyProblem, Waited};
use crate::location;
use crate::options::RemoteOptions;
use crate::store::{Built, S3Listing, build_typed, run, within};

/// Keys asked for in one page of a listing (S3's most).
const LIST_PAGE: usize = 1000;

/// An entry of a listing ([`list_entries`]): an object, or a key that cannot be addressed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// The object's URL (its key literally, see [`crate::child_url`]).
    pub url: String,
    /// The key, as the store listed it (on S3 exactly as stored: a folder marker ends in `/`;
    /// object_store's listing of Google's and Azure's stores gives a marker without its `/`).
    pub key: String,
    /// Its size as the listing gave it; `None` when the listing did not give it (a key that
    /// cannot be addressed, listed by object_store's pages: Google's and Azure's stores).
    pub size: Option<u64>,
    /// Why the key cannot be read or written (a leading `/`, a `.` or `..` segment, `//`, a
    /// control character), if so: opening [`Listed::url`] is refused with [`Error::Key`].
    pub problem: Option<KeyProblem>,
}

/// The objects under `prefix` (a URL ending in `/`, such as `s3://bucket/run42/`), every
/// level below it, as URLs with their sizes, sorted; at most `limit` (an error beyond, so a
/// bucket of millions is not listed by mistake). A key that cannot be addressed (see
/// [`Listed::problem`]) is listed too, so that nothing under the prefix is passed over in
/// silence: opening its URL is refused with [`Error::Key`], which names the key. Its size is
/// the listing's; where the listing did not give it (see [`Listed::size`]) it is `u64::MAX`,
/// never 0 (an empty object).
///
/// # Errors
/// A bad URL, a store that cannot list (plain HTTP), the store's failure, more than `limit`
/// objects.
pub fn list(prefix: &str, opts: &RemoteOptions, limit: usize) -> Result<Vec<(String, u64)>, Error> {
    Ok(list_entries(prefix, opts, limit)?
        .into_iter()
        .map(|e| (e.url, e.size.unwrap_or(u64::MAX)))
        .collect())
}

/// The entries under `prefix` as [`list`] gives them, sorted by key, each with its key and,
/// for a key that cannot be addressed, why (see the module's documentation for how each store
/// is listed).
///
/// # Errors
/// As [`list`].
pub fn list_entries(prefix: &str, opts: &RemoteOptions, limit: usize) -> Result<Vec<Listed>, Error> {
    let opts = opts.own_settings(prefix)?;
    let (built, path) = build_typed(prefix, &opts, location::Use::Prefix)?;
    let base = location::locate(prefix, location::Use::Prefix)?.base;
    if matches!(built, Built::Http(_)) {
        return Err(Error::NotListable {
            url: prefix.to_string(),
        });
    }
    let deadline = opts.deadline.saturating_mul(10);
    // The prefix with its `/`, as object_store's `list` asks for it.
    let key_prefix = (!path.as_ref().is_empty()).then(|| format!("{}/", path.as_ref()));
    let listed = run(within(deadline, Waited::Listing, async move {
        match &built {
            Built::S3(s3, listing @ (S3Listing::Signed | S3Listing::Unsigned(_))) => {
                s3_pages(s3, listing, key_prefix, limit, &opts).await
            }
            _ => list_pages(&built, key_prefix, limit).await,
        }
    }))?
    .map_err(|source| location::store_error(prefix, source))?;
    let mut listed = listed.ok_or_else(|| Error::TooMany {
        url: prefix.to_string(),
        limit,
    })?;
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(listed
        .into_iter()
        .map(|(key, size)| Listed {
            url: location::object_url(&base, &key),
            problem: location::key_problem(&key),
            key,
            size,
        })
        .collect())
}

/// The key of a listing's entry that object_store refused to parse (the whole page with it).
fn unaddressable_key(e: &object_store::Error) -> Option<&str> {
    use object_store::path::Error as P;
    match e {
        object_store::Error::InvalidPath {
            source: P::BadSegment { path, .. } | P::EmptySegment { path },
        } => Some(path),
        _ => None,
    }
}

/// Every key under `prefix` with its size (`None`: a key object_store cannot address), in
/// object_store's pages; `None` past `limit` entries.
async fn list_pages(
    built: &Built,
    prefix: Option<String>,
    limit: usize,
) -> object_store::Result<Option<Vec<(String, Option<u64>)>>> {
    use object_store::list::PaginatedListOptions;
    let Some(store) = built.paginated() else {
        return Err(object_store::Error::NotSupported {
            source: "a plain HTTP server cannot list".into(),
        });
    };
    let page = |offset: &Option<String>, token: &Option<String>, max: usize| {
        store.list_paginated(
            prefix.as_deref(),
            PaginatedListOptions {
                offset: offset.clone(),
                page_token: token.clone(),
                max_keys: Some(max),
                ..PaginatedListOptions::default()
            },
        )
    };
    let mut out: Vec<(String, Option<u64>)> = Vec::new();
    // Where the next page starts: the previous page's token, or (after a key that cannot be
    // addressed) the key itself.
    let (mut offset, mut token) = (None::<String>, None::<String>);
    loop {
        let (objects, next, bad) = match page(&offset, &token, LIST_PAGE).await {
            Ok(p) => (p.result.objects, p.page_token, None),
            Err(e) => {
                let Some(bad) = unaddressable_key(&e).map(str::to_owned) else {
                    return Err(e);
                };
                // A page that does not move past the entries taken would be asked for forever.
                if out.last().is_some_and(|(k, _)| bad.as_str() <= k.as_str()) {
                    return Err(e);
                }
                // The entries before it: the longest page from the same start that object_store
                // takes (pages from one start are each other's beginnings, in key order).
                let (mut lo, mut hi, mut before) = (0, LIST_PAGE, Vec::new());
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    match page(&offset, &token, mid).await {
                        Ok(p) => {
                            lo = mid;
                            before = p.result.objects;
                        }
                        Err(e) if unaddressable_key(&e).is_some() => hi = mid,
                        Err(e) => return Err(e),
                    }
                }
                (before, None, Some(bad))
            }
        };
        for meta in objects {
            if out.len() == limit {
                return Ok(None);
            }
            out.push((meta.location.to_string(), Some(meta.size)));
        }
        match bad {
            Some(bad) => {
                if out.len() == limit {
                    return Ok(None);
                }
                out.push((bad.clone(), None));
                (offset, token) = (Some(bad), None);
            }
            None => match next {
                Some(t) => (offset, token) = (None, Some(t)),
                None => return Ok(Some(out)),
            },
        }
    }
}

/// Every key under `prefix` of the S3 bucket `s3` with its size, exactly as S3 lists it, by
/// ListObjectsV2 requests of our own (see the module's documentation); `None` past `limit`
/// entries.
async fn s3_pages(
    s3: &object_store::aws::AmazonS3,
    listing: &S3Listing,
    prefix: Option<String>,
    limit: usize,
    opts: &RemoteOptions,
) -> object_store::Result<Option<Vec<(String, Option<u64>)>>> {
    let client = reqwest::Client::builder()
        .user_agent(concat!("asdf-rs/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(opts.request_timeout)
        .connect_timeout(opts.request_timeout.min(crate::error::CONNECT_TIMEOUT))
        .build()
        .map_err(|e| generic(e.to_string()))?;
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut query = vec![
            ("list-type", "2".to_string()),
            ("encoding-type", "url".to_string()),
            ("max-keys", LIST_PAGE.to_string()),
        ];
        if let Some(p) = &prefix {
            query.push(("prefix", p.clone()));
        }
        if let Some(t) = &token {
            query.push(("continuation-token", t.clone()));
        }
        let page = s3_page(s3, listing, &client, &query, opts.retries).await?;
        for entry in page.entries {
            if out.len() == limit {
                return Ok(None);
            }
            out.push((entry.0, Some(entry.1)));
        }
        match page.next {
            Some(t) if page.truncated => token = Some(t),
            _ => return Ok(Some(out)),
        }
    }
}

/// A page of an S3 listing as S3 gave it.
#[derive(Debug, Default, PartialEq, Eq)]
struct S3Page {
    /// Each key (decoded) and its size.
    entries: Vec<(String, u64)>,
    /// Whether more pages follow.
    truncated: bool,
    /// The continuation token of the next page.
    next: Option<String>,
}

/// `text` as an object_store error (so that a bucket that is not there is said as such).
fn generic(text: String) -> object_store::Error {
    object_store::Error::Generic {
        store: "S3",
        source: text.into(),
    }
}

/// One page of a listing (`query`): presigned, or unsigned to the bucket endpoint; retried
/// up to `retries` times when the request fails on the way or S3 answers 5xx or 429.
async fn s3_page(
    s3: &object_store::aws::AmazonS3,
    listing: &S3Listing,
    client: &reqwest::Client,
    query: &[(&str, String)],
    retries: usize,
) -> object_store::Result<S3Page> {
    use object_store::signer::{SignedUrlOptions, Signer as _};
    let url = match listing {
        S3Listing::Unsigned(endpoint) => {
            let mut url = url::Url::parse(&format!("{}/", endpoint.trim_end_matches('/')))
                .map_err(|e| generic(format!("the bucket endpoint {endpoint}: {e}")))?;
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
            url
        }
        _ => {
            let options = SignedUrlOptions::new().with_query(query.iter().map(|(k, v)| (*k, v.clone())));
            s3.signed_url_opts(
                http::Method::GET,
                &object_store::path::Path::default(),
                std::time::Duration::from_secs(3600),
                &options,
            )
            .await?
        }
    };
    let mut wait = std::time::Duration::from_millis(100);
    let mut attempt = 0;
    loop {
        let failed = match client.get(url.clone()).send().await {
            Ok(answer) => {
                let status = answer.status();
                let text = answer.text().await;
                match text {
                    Ok(text) if status.is_success() => return parse_s3_page(&text),
                    Ok(text) if !status.is_server_error() && status.as_u16() != 429 => {
                        return Err(s3_refusal(status, &text));
                    }
                    Ok(text) => s3_refusal(status, &text),
                    Err(e) => generic(format!("reading a listing's answer: {e}")),
                }
            }
            Err(e) => generic(format!("listing: {e}")),
        };
        if attempt >= retries {
            return Err(failed);
        }
        attempt += 1;
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(std::time::Duration::from_secs(5));
    }
}

/// S3's error document (`<Error><Code>..</Code><Message>..</Message></Error>`).
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct S3Error {
    code: Option<String>,
    message: Option<String>,
}

/// S3's refusal of a listing: the status, its error code and message (`NoSuchBucket`,
/// `AccessDenied`, ...).
fn s3_refusal(status: reqwest::StatusCode, text: &str) -> object_store::Error {
    let (code, message) = match quick_xml::de::from_str::<S3Error>(text) {
        Ok(e) => (e.code, e.message),
        Err(_) => (None, None),
    };
    let said = match (code, message) {
        (Some(c), Some(m)) => format!(": {c}: {m}"),
        (Some(c), None) => format!(": {c}"),
        _ => String::new(),
    };
    generic(format!("the listing was refused: HTTP {status}{said}"))
}

/// A ListObjectsV2 answer (`<ListBucketResult>`), the elements read here.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct ListBucketResult {
    #[serde(default)]
    is_truncated: bool,
    next_continuation_token: Option<String>,
    encoding_type: Option<String>,
    #[serde(default)]
    contents: Vec<Contents>,
}

/// A `<Contents>` of a ListObjectsV2 answer.
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Contents {
    key: String,
    size: u64,
}

/// A ListObjectsV2 answer read (by quick-xml): each `<Contents>`' key and size,
/// `<IsTruncated>`, `<NextContinuationToken>`. Keys are URL-encoded when the answer says
/// `<EncodingType>url` (as asked: a key may hold characters XML cannot), XML-escaped otherwise.
fn parse_s3_page(text: &str) -> Result<S3Page, object_store::Error> {
    let r: ListBucketResult = quick_xml::de::from_str(text)
        .map_err(|e| generic(format!("a listing answer that is not S3's ListObjectsV2 XML: {e}")))?;
    let url_encoded = r.encoding_type.as_deref().is_some_and(|e| e.trim() == "url");
    let entries = r
        .contents
        .into_iter()
        .map(|c| {
            let key = if url_encoded {
                // `+` is a space (S3 encodes a `+` as `%2B`).
                let spaced = c.key.replace('+', " ");
                percent_encoding::percent_decode_str(&spaced)
                    .decode_utf8_lossy()
                    .into_owned()
            } else {
                c.key
            };
            (key, c.size)
        })
        .collect();
    Ok(S3Page {
        entries,
        truncated: r.is_truncated,
        next: r.next_continuation_token,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_pages_are_read_key_for_key() {
        let xml = "<?xml version=\"1.0\"?><ListBucketResult><IsTruncated>true</IsTruncated>\
            <Contents><Key>/lead.asdf</Key><Size>58</Size></Contents>\
            <Contents><Key>walk/sp%20ace%2Bplus%26%3C.asdf</Key><ETag>&quot;x&quot;</ETag><Size>0</Size></Contents>\
            <Contents><Key>walk/tab%09+x.asdf</Key><Size>7</Size></Contents>\
            <Contents><Key>walk/%C3%A9/</Key><Size>0</Size></Contents>\
            <EncodingType>url</EncodingType><NextContinuationToken>a+b/c=</NextContinuationToken></ListBucketResult>";
        let page = parse_s3_page(xml).unwrap();
        assert_eq!(
            page,
            S3Page {
                entries: vec![
                    ("/lead.asdf".into(), 58),
                    ("walk/sp ace+plus&<.asdf".into(), 0),
                    ("walk/tab\t x.asdf".into(), 7),
                    ("walk/é/".into(), 0),
                ],
                truncated: true,
                next: Some("a+b/c=".into()),
            }
        );
        // Not URL-encoded (a server that ignores `encoding-type`): XML-escaped.
        let page = parse_s3_page(
            "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a&amp;b&#9;&lt;+%41</Key><Size>3</Size></Contents></ListBucketResult>",
        )
        .unwrap();
        assert_eq!(page.entries, [("a&b\t<+%41".to_string(), 3)]);
        assert!(!page.truncated && page.next.is_none());
        // Contents between other elements (read all the same).
        let page = parse_s3_page(
            "<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents><KeyCount>2</KeyCount><Contents><Key>b</Key><Size>2</Size></Contents></ListBucketResult>",
        )
        .unwrap();
        assert_eq!(page.entries, [("a".to_string(), 1), ("b".to_string(), 2)]);
        // Not a listing, or an entry without its size: an error, never a size of 0.
        assert!(parse_s3_page("<html>").is_err());
        assert!(parse_s3_page("<ListBucketResult><Contents><Key>a</Key></Contents></ListBucketResult>").is_err());
    }
}
