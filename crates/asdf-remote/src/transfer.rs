//! Single requests: a range, a HEAD, a conditional check, a file put.

use crate::cancel::{CANCEL, Uploading};
use crate::error::{AnswerError, Waited, answer_err, explain_timeout};
use crate::source::{Cache, RemoteSource, Stats, Version, fetch_whole, ignores_range, warn_whole};
use crate::store::{Built, block_on, build_store, build_typed, run, within};
use crate::{Error, RemoteOptions, guard, location, upload};

use object_store::ObjectStoreExt;
use std::io;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// Fetches `range` of `url` in one request (no cache): what a Dask task reads. With `expect`
/// (the size and ETag [`Stats::version`] gave when the file was opened), an answer about
/// another version of the object is an error.
///
/// # Errors
/// As [`RemoteSource::open`], and the request's failure.
pub fn fetch_range(
    url: &str,
    opts: &RemoteOptions,
    range: Range<u64>,
    expect: Option<(u64, Option<String>)>,
) -> Result<Vec<u8>, Error> {
    let opts = opts.own_settings(url)?;
    let (store, path) = build_store(url, &opts)?;
    if range.start == range.end {
        return Ok(Vec::new());
    }
    let src = RemoteSource {
        url: url.to_string(),
        store,
        path,
        len: range.end,
        version: expect.map(|(size, etag)| Version {
            size,
            etag,
            modified: None,
        }),
        opts,
        cache: Mutex::new(Cache::default()),
        stats: Arc::new(Stats::default()),
        parked: Mutex::new(None),
        fast: std::sync::atomic::AtomicBool::new(false),
        whole: None,
    };
    let len = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)
        .map_err(|_| Error::Runtime(io::ErrorKind::OutOfMemory.into()))?;
    buf.resize(len, 0);
    let Err(e) = src.try_direct(range.start, &mut buf).map_err(Error::Runtime)? else {
        return Ok(buf);
    };
    let failed = |source| location::store_error(url, source);
    if !ignores_range(&e) {
        return Err(failed(explain_timeout(e, src.opts.request_timeout)));
    }
    // A server that ignores `Range`: the whole file, within `whole_limit`, as an open reads it.
    let limit = src.opts.whole_limit;
    let deadline = src.opts.deadline;
    let got = run(fetch_whole(
        Arc::clone(&src.store),
        src.path.clone(),
        limit,
        deadline,
        deadline,
    ))?
    .map_err(|e| failed(explain_timeout(e, src.opts.request_timeout)))?;
    let (bytes, etag) = got.map_err(|size| Error::NoRanges {
        url: url.to_string(),
        size,
        limit,
    })?;
    let size = bytes.len() as u64;
    if let Some(v) = &src.version
        && (v.size != size || (v.etag.is_some() && v.etag != etag))
    {
        return Err(failed(answer_err(AnswerError::Changed {
            first_size: v.size,
            first_etag: v.etag.clone(),
            size,
            etag,
        })));
    }
    warn_whole(url, size, limit);
    let piece = usize::try_from(range.start)
        .ok()
        .zip(usize::try_from(range.end).ok())
        .and_then(|(a, b)| bytes.get(a..b))
        .ok_or_else(|| {
            failed(answer_err(AnswerError::TooShort {
                asked: range.end,
                got: size,
            }))
        })?;
    Ok(piece.to_vec())
}

/// The size and ETag of the object at `url`, or `None` when there is none.
///
/// # Errors
/// A bad URL; the store's failure other than "not found".
pub fn head(url: &str, opts: &RemoteOptions) -> Result<Option<(u64, Option<String>)>, Error> {
    let opts = opts.own_settings(url)?;
    let (store, path) = build_store(url, &opts)?;
    match run(within(opts.deadline, Waited::Headers, async move {
        store.head(&path).await
    }))? {
        Ok(meta) => Ok(Some((meta.size, meta.e_tag))),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(source) => Err(location::store_error(url, source)),
    }
}

/// Whether `condition` holds of the object at `url` now (a write checks this before it makes
/// anything, and again before its upload completes).
///
/// # Errors
/// [`Error::Upload`] ([`Error::is_changed`]) when it does not hold; the store's failure.
pub fn check_condition(url: &str, opts: &RemoteOptions, condition: &upload::Condition) -> Result<(), Error> {
    let opts = opts.own_settings(url)?;
    let (store, path) = build_store(url, &opts)?;
    let condition = condition.clone();
    run(within(opts.deadline, Waited::Headers, async move {
        Ok::<_, object_store::Error>(upload::check(store.as_ref(), &path, &condition).await)
    }))?
    .map_err(|source| location::store_error(url, source))?
    .map_err(|source| {
        crate::location::no_bucket(url, &source).unwrap_or_else(|| Error::Upload {
            url: url.to_string(),
            source,
        })
    })
}

/// Writes the bytes of `file` (all of it) to the object at `url` by a multipart upload (parts
/// of [`RemoteOptions::part_size`] bytes or more, [`RemoteOptions::concurrency`] in flight):
/// nothing is visible until the upload completes, and completes only while `condition`
/// holds. `progress(done, total)` is called as parts are stored. Returns the new object's ETag.
///
/// # Errors
/// [`Error::Upload`] (see [`Error::is_changed`]) after aborting the upload; a URL that is not
/// writable ([`Error::NotWritable`]); the store's failure.
pub fn put_file(
    url: &str,
    opts: &RemoteOptions,
    file: &std::fs::File,
    condition: &upload::Condition,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<String>, Error> {
    let opts = opts.own_settings(url)?;
    let (built, path) = build_typed(url, &opts, location::Use::Object)?;
    let len = file
        .metadata()
        .map_err(|e| Error::Upload {
            url: url.to_string(),
            source: e.into(),
        })?
        .len();
    let plan = upload::Plan::for_len(len, opts.part_size, opts.concurrency);
    // No redirects: a streamed body cannot be sent again, and a write goes where it was named.
    let client = reqwest::Client::builder()
        .user_agent(concat!("asdf-rs/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(opts.request_timeout)
        .build()
        .map_err(|e| Error::Runtime(io::Error::other(e)))?;
    let _uploading = Uploading::start();
    // A multipart upload to a store that has them is created by its guard (if one is set).
    let guarded = if plan.is_multipart(len) && !matches!(built, Built::Http(_)) {
        guard::start(url, &opts)
    } else {
        None
    };
    let (guard, created) = match guarded {
        Some((g, id)) => (Mutex::new(Some(g)), Some(id)),
        None => (Mutex::new(None), None),
    };
    let settled = || {
        let g = guard.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(r) = g {
            r.settled();
        }
    };
    let begun = upload::Begun {
        created: created.as_deref(),
        settled: &settled,
    };
    let cancelled =
        || CANCEL.load(Ordering::Relaxed) || opts.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
    let up = |store: &dyn upload::Target| {
        block_on(upload::upload(
            store, &client, &path, file, len, plan, condition, &cancelled, progress, begun,
        ))
    };
    let done = match &built {
        Built::S3(s, _) => up(s)?,
        Built::Gcs(s) => up(s)?,
        Built::Azure(s) => up(s)?,
        // A plain HTTP(S) server: one conditional PUT.
        Built::Http(_) => {
            // The request's timeout, plus a second a MiB of body (1 MiB/s at least).
            let timeout = opts
                .request_timeout
                .saturating_add(std::time::Duration::from_secs(len >> 20));
            match block_on(upload::put_http(
                &client, url, file, len, condition, timeout, &cancelled, progress,
            ))? {
                Err(upload::UploadError::Refused(405 | 501)) => {
                    return Err(Error::NotWritable { url: url.to_string() });
                }
                other => other,
            }
        }
    };
    done.map_err(|source| {
        crate::location::no_bucket(url, &source).unwrap_or_else(|| Error::Upload {
            url: url.to_string(),
            source,
        })
    })
}

/// What must hold of the object at `url` for a write over it to complete: still the version
/// `read` (the ETag the written file was read at), checked now (refused, `is_changed`, when
/// it is another version or gone); else what is there now (one HEAD): that version, or none.
///
/// # Errors
/// [`Error::Upload`] when the object is not the version read; the store's failure.
pub fn write_condition(url: &str, opts: &RemoteOptions, read: Option<String>) -> Result<upload::Condition, Error> {
    if let Some(etag) = read {
        let condition = upload::Condition::Match(etag);
        check_condition(url, opts, &condition)?;
        return Ok(condition);
    }
    Ok(match head(url, opts)? {
        Some((_, Some(etag))) => upload::Condition::Match(etag),
        Some((_, None)) => upload::Condition::Overwrite,
        None => upload::Condition::Create,
    })
}
