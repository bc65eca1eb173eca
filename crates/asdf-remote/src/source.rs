//! `RemoteSource`: a remote file read by ranges, with its first answer parked, a cache of
//! small reads, the version it was opened at, and what it fetched.

use crate::error::{AnswerError, Waited, answer_err, explain_timeout};
use crate::store::{block_on, build_store, run, within, within_left};
use crate::{Error, RemoteOptions, error, location, redact, warn};

use asdf_layout::ReadAt;
use bytes::Bytes;
use object_store::path::Path as StorePath;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt};
use std::io;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The most bytes of the parked first answer read and dropped to reach a read further on
/// (rather than a new request): 1 MiB is about 10 ms at 100 MB/s, less than a request's round
/// trip to most stores.
pub(crate) const PARKED_SKIP: u64 = 1 << 20;

/// At most this many byte ranges are kept in [`Stats::ranges`].
pub(crate) const MAX_LOGGED_RANGES: usize = 100_000;

/// What a source has fetched so far.
#[derive(Debug, Default)]
pub struct Stats {
    /// The object's size and ETag, from the first answer.
    pub(crate) version: OnceLock<(u64, Option<String>)>,
    pub(crate) requests: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) ranges: Mutex<Vec<(u64, u64)>>,
    /// Whether the server ignored `Range` and the file was read whole.
    pub(crate) whole: std::sync::atomic::AtomicBool,
}

impl Stats {
    /// Whether the server ignored `Range` (it answered with the whole file) and the file,
    /// within [`RemoteOptions::whole_limit`], was read whole into memory: every read is
    /// answered from there.
    pub fn read_whole(&self) -> bool {
        self.whole.load(Ordering::Relaxed)
    }
    /// The object's size and ETag as the first answer gave them: pass them to
    /// [`fetch_range`] so that a later read of the same file refuses another version.
    pub fn version(&self) -> Option<(u64, Option<String>)> {
        self.version.get().cloned()
    }
    /// GET requests made.
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    /// Bytes received.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    /// The byte ranges fetched, in order (the first 100,000).
    pub fn ranges(&self) -> Vec<(u64, u64)> {
        self.ranges.lock().map(|r| r.clone()).unwrap_or_default()
    }
    /// More bytes of a request already counted.
    pub(crate) fn record_more(&self, r: &Range<u64>) {
        self.bytes.fetch_add(r.end.saturating_sub(r.start), Ordering::Relaxed);
    }
    pub(crate) fn record(&self, r: &Range<u64>, url: &str) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(r.end - r.start, Ordering::Relaxed);
        if let Ok(mut v) = self.ranges.lock()
            && v.len() < MAX_LOGGED_RANGES
        {
            v.push((r.start, r.end));
        }
        if let Some(path) = std::env::var_os("ASDF_RS_RANGE_LOG") {
            use std::io::Write;
            // One short write per request, appended: lines from many processes stay whole.
            if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                // The URL's secrets hidden, as in every message.
                let _ = f.write_all(format!("{} {} {}\n", redact(url), r.start, r.end).as_bytes());
            }
        }
    }
}

/// What the first answer said of the object: every later answer must say the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Version {
    /// The object's size (the total of `Content-Range`).
    pub(crate) size: u64,
    /// Its ETag, when the store gave one.
    pub(crate) etag: Option<String>,
    /// Its `Last-Modified`, kept when it has no ETag (a server without ETags): then the
    /// only other sign of a new version of the same size.
    pub(crate) modified: Option<String>,
}

/// Reads a body of at most `asked` bytes: a body that goes on past them (a `Content-Length`
/// of 2^40 behind an honest `Content-Range`) is cut off with an error, never collected.
pub(crate) async fn bounded_body(r: object_store::GetResult, asked: u64) -> object_store::Result<Bytes> {
    use futures::StreamExt as _;
    let cap = usize::try_from(asked).unwrap_or(usize::MAX);
    let mut stream = r.into_stream();
    let mut out: Vec<u8> = Vec::new();
    while let Some(piece) = stream.next().await {
        let piece = piece?;
        if piece.len() > cap - out.len() {
            return Err(answer_err(AnswerError::TooLong { asked }));
        }
        if out.is_empty() && piece.len() == cap {
            return Ok(piece);
        }
        if out.capacity() == 0 {
            out.reserve_exact(cap.min(64 << 20));
        }
        out.extend_from_slice(&piece);
    }
    Ok(Bytes::from(out))
}

/// Bytes `range` of the object, only while it is still `version` (its ETag, asked for with
/// `If-Match`, and its size, checked in every answer): a file replaced by another writer, or
/// a server that ignores `If-Match`, is an error, not a mix of two files. The body is read
/// to at most the bytes asked for.
pub(crate) async fn fetch(
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    range: Range<u64>,
    version: Option<Version>,
    deadline: std::time::Duration,
) -> object_store::Result<Bytes> {
    let t0 = std::time::Instant::now();
    let r = within(
        deadline,
        Waited::Headers,
        get_version(&store, &path, Some(range.clone()), version.as_ref()),
    )
    .await?;
    let left = deadline.saturating_sub(t0.elapsed());
    within_left(deadline, left, Waited::Body, bounded_body(r, range.end - range.start)).await
}

/// The answer to a GET of `range` (None: the whole object), only while the object is still
/// `version`: its ETag asked for with `If-Match`, its size and ETag checked in the answer.
pub(crate) async fn get_version(
    store: &Arc<dyn ObjectStore>,
    path: &StorePath,
    range: Option<Range<u64>>,
    version: Option<&Version>,
) -> object_store::Result<object_store::GetResult> {
    let options = GetOptions {
        range: range.map(GetRange::Bounded),
        if_match: version.and_then(|v| v.etag.clone()),
        ..GetOptions::default()
    };
    let r = store.get_opts(path, options).await.map_err(|e| replaced(e, version))?;
    if let Some(version) = version
        && (r.meta.size != version.size || r.meta.e_tag != version.etag)
    {
        return Err(answer_err(AnswerError::Changed {
            first_size: version.size,
            first_etag: version.etag.clone(),
            size: r.meta.size,
            etag: r.meta.e_tag.clone(),
        }));
    }
    if let Some(first) = version.and_then(|v| v.modified.as_ref()) {
        let now = r.meta.last_modified.to_rfc2822();
        if *first != now {
            return Err(answer_err(AnswerError::Modified {
                first: first.clone(),
                now,
            }));
        }
    }
    Ok(r)
}

/// A refused `If-Match` (the object is another version now) said as such.
pub(crate) fn replaced(e: object_store::Error, version: Option<&Version>) -> object_store::Error {
    match (e, version) {
        (object_store::Error::Precondition { .. }, Some(v)) => answer_err(AnswerError::Replaced {
            first_etag: v.etag.clone().unwrap_or_default(),
        }),
        (e, _) => e,
    }
}

/// Why a streamed read stopped: the store's answer, or the caller's sink.
pub(crate) enum Halt {
    Store(object_store::Error),
    Sink(io::Error),
}

impl From<object_store::Error> for Halt {
    fn from(e: object_store::Error) -> Self {
        Halt::Store(e)
    }
}

/// Bytes `want` of the object handed to `sink` in order as the body arrives, under the same
/// checks as [`fetch`] (a body longer or shorter than asked is an error). With `whole`, the
/// request asks for the whole object (no `Range`) and the bytes outside `want` are dropped:
/// for a read of nearly all of an object, one plain GET, which a server that reads the whole
/// object for every ranged request (moto's) answers at once, and S3 with a few bytes more.
pub(crate) async fn fetch_streamed(
    store: &Arc<dyn ObjectStore>,
    path: &StorePath,
    want: Range<u64>,
    whole: bool,
    version: Option<&Version>,
    deadline: std::time::Duration,
    sink: &mut asdf_layout::source::Sink<'_>,
) -> Result<(), Halt> {
    let t0 = std::time::Instant::now();
    let mut body = within(
        deadline,
        Waited::Headers,
        Body::open(store, path, &want, whole, version),
    )
    .await?;
    let left = deadline.saturating_sub(t0.elapsed());
    within_halt(deadline, left, body.pipe(want.start, want.end, sink)).await
}

/// An answer's body being read: where its next byte sits in the object and where it must
/// end (the checks of [`fetch_streamed`], kept across calls so that one request can be
/// read in steps).
pub(crate) struct Body {
    pub(crate) stream: futures::stream::BoxStream<'static, object_store::Result<Bytes>>,
    /// The object offset of the body's next byte.
    pub(crate) at: u64,
    /// Where the body must end (the range asked for, or the object's size).
    pub(crate) end: u64,
    /// Bytes asked for (for the errors).
    pub(crate) asked: u64,
    /// How to ask again, once, from where this body stopped, should it fail: set on the
    /// first request's body when it is parked (a connection the server closed while it
    /// waited, or the client's time limit on the whole request, is no reason to fail a read).
    pub(crate) resume: Option<(Arc<dyn ObjectStore>, StorePath, Option<Version>)>,
    /// Where the second request, made when this body failed, began.
    pub(crate) resumed_at: Option<u64>,
}

impl Body {
    /// Asks for `want` (the whole object with `whole`) as [`get_version`] does.
    pub(crate) async fn open(
        store: &Arc<dyn ObjectStore>,
        path: &StorePath,
        want: &Range<u64>,
        whole: bool,
        version: Option<&Version>,
    ) -> object_store::Result<Self> {
        let r = get_version(store, path, (!whole).then(|| want.clone()), version).await?;
        let (at, end) = if whole {
            (0, r.meta.size)
        } else {
            (want.start, want.end)
        };
        Ok(Body {
            stream: r.into_stream(),
            at,
            end,
            asked: end - at,
            resume: None,
            resumed_at: None,
        })
    }

    /// Copies the body into `dst` (whose first byte is the object's byte `start`) until the
    /// body has passed `until` or `dst`'s end: the bytes before `start` are dropped, and so
    /// are those past `dst` (another request fetches them). A body that ends before it has
    /// filled `dst` up to `until` is an error, and so is one longer than asked.
    pub(crate) async fn fill(&mut self, start: u64, dst: &mut [u8], until: u64) -> object_store::Result<()> {
        let limit = start + dst.len() as u64;
        let mut copy = |at: u64, bytes: &[u8]| -> io::Result<()> {
            let from = usize::try_from(at - start).map_err(io::Error::other)?;
            dst.get_mut(from..from + bytes.len())
                .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?
                .copy_from_slice(bytes);
            Ok(())
        };
        match self.drain(start, until.min(limit), limit, &mut copy).await {
            Ok(()) => Ok(()),
            Err(Halt::Store(e)) => Err(e),
            Err(Halt::Sink(_)) => Err(answer_err(AnswerError::TooLong { asked: self.asked })),
        }
    }

    /// Hands the body's bytes `start..end` to `sink` as they arrive (those before `start`
    /// are dropped).
    pub(crate) async fn pipe(
        &mut self,
        start: u64,
        end: u64,
        sink: &mut asdf_layout::source::Sink<'_>,
    ) -> Result<(), Halt> {
        self.drain(start, end, end, &mut |_, bytes| sink(bytes)).await
    }

    /// [`Body::drain_once`]; a body that can be resumed and fails is asked for again once,
    /// from where it stopped to `limit`.
    pub(crate) async fn drain(
        &mut self,
        start: u64,
        until: u64,
        limit: u64,
        sink: &mut (dyn FnMut(u64, &[u8]) -> io::Result<()> + Send),
    ) -> Result<(), Halt> {
        match self.drain_once(start, until, limit, sink).await {
            Err(Halt::Store(_)) if self.resume.is_some() => {
                let Some((store, path, version)) = self.resume.take() else {
                    return Ok(());
                };
                let from = self.at.max(start);
                let fresh = Body::open(&store, &path, &(from..limit), false, version.as_ref()).await?;
                *self = Body {
                    resumed_at: Some(from),
                    ..fresh
                };
                self.drain_once(start, until, limit, sink).await
            }
            r => r,
        }
    }

    /// Reads the body until it has passed `until`, handing `sink` each piece's bytes inside
    /// `start..limit` with the object offset of their first byte. A body that ends before
    /// `until` is an error, and so is one longer than asked.
    pub(crate) async fn drain_once(
        &mut self,
        start: u64,
        until: u64,
        limit: u64,
        sink: &mut (dyn FnMut(u64, &[u8]) -> io::Result<()> + Send),
    ) -> Result<(), Halt> {
        use futures::StreamExt as _;
        while self.at < until {
            let Some(piece) = self.stream.next().await else {
                let got = self.asked - (self.end - self.at);
                return Err(answer_err(AnswerError::TooShort { asked: self.asked, got }).into());
            };
            let piece = piece?;
            let piece_end = self.at + piece.len() as u64;
            if piece_end > self.end {
                return Err(answer_err(AnswerError::TooLong { asked: self.asked }).into());
            }
            let (from, to) = (self.at.max(start), piece_end.min(limit));
            if from < to {
                // Both within this piece, so they fit in usize.
                let a = usize::try_from(from - self.at).unwrap_or(piece.len());
                let b = usize::try_from(to - self.at).unwrap_or(piece.len());
                sink(from, piece.get(a..b).unwrap_or_default()).map_err(Halt::Sink)?;
            }
            self.at = piece_end;
        }
        Ok(())
    }
}

/// Reads `body` on into `dst` (whose first byte is the object's byte `start`) to `dst`'s end,
/// each part's worth of bytes within `deadline`.
pub(crate) async fn finish(
    body: &mut Body,
    start: u64,
    dst: &mut [u8],
    step: u64,
    deadline: std::time::Duration,
) -> object_store::Result<()> {
    let limit = start + dst.len() as u64;
    while body.at < limit {
        let until = body.at.saturating_add(step);
        tokio::time::timeout(deadline, body.fill(start, dst, until))
            .await
            .unwrap_or_else(|_| Err(answer_err(AnswerError::Stalled { deadline, step })))?;
    }
    Ok(())
}

/// A body streamed within `left` of `deadline`, or the deadline's error (as [`within_left`],
/// for streamed reads).
pub(crate) async fn within_halt(
    deadline: std::time::Duration,
    left: std::time::Duration,
    fut: impl std::future::Future<Output = Result<(), Halt>>,
) -> Result<(), Halt> {
    tokio::time::timeout(left, fut).await.unwrap_or_else(|_| {
        Err(Halt::Store(answer_err(AnswerError::Deadline {
            deadline,
            waited: Waited::Body,
        })))
    })
}

/// Whether `e` says the server answered a ranged request with the whole file (status 200):
/// object_store's HTTP store says `NotSupported` (range requests not supported), its other
/// stores a non-partial response.
pub(crate) fn ignores_range(e: &object_store::Error) -> bool {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&s.to_string());
        source = s.source();
    }
    matches!(e, object_store::Error::NotSupported { .. }) && text.contains("Range request not supported")
        || text.contains("non-partial response when range requested")
}

/// The whole object in one plain GET, with its ETag, when its size is at most `limit`
/// (else the size, and the body is not read).
pub(crate) async fn fetch_whole(
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    limit: u64,
    deadline: std::time::Duration,
    left: std::time::Duration,
) -> object_store::Result<Result<(Bytes, Option<String>), u64>> {
    let t0 = std::time::Instant::now();
    let r = within_left(
        deadline,
        left,
        Waited::Headers,
        store.get_opts(&path, GetOptions::default()),
    )
    .await?;
    let size = r.meta.size;
    if size > limit {
        return Ok(Err(size));
    }
    let etag = r.meta.e_tag.clone();
    let left = left.saturating_sub(t0.elapsed());
    let bytes = within_left(deadline, left, Waited::Body, bounded_body(r, size)).await?;
    if bytes.len() as u64 != size {
        return Err(answer_err(AnswerError::TooShort {
            asked: size,
            got: bytes.len() as u64,
        }));
    }
    Ok(Ok((bytes, etag)))
}

/// Says once per URL (a warning, see [`set_warning_hook`]) that a file was read whole from a server that
/// ignores `Range` ([`Stats::read_whole`] tells a program).
pub(crate) fn warn_whole(url: &str, size: u64, limit: u64) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    if let Ok(mut said) = SAID.lock()
        && !said.iter().any(|u| u == url)
    {
        said.push(url.to_string());
        let url = redact(url);
        warn::warn(&format!(
            "{url}: the server does not answer range requests (it sent the whole file): its {size} bytes were read whole into memory (the limit for that is {limit} bytes; to change it, {})",
            error::WHOLE_LIMIT_HOW
        ));
    }
}

/// Pieces of the file fetched for small reads, each from where a read missed.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    /// (start, bytes, last use).
    pub(crate) segments: Vec<(u64, Bytes, u64)>,
    pub(crate) clock: u64,
    /// Where the last miss's fetch ended, and the read-ahead it earned.
    pub(crate) last_end: u64,
    pub(crate) ahead: u64,
}

impl Cache {
    pub(crate) fn find(&mut self, at: u64) -> Option<(Bytes, u64)> {
        self.clock += 1;
        let now = self.clock;
        let seg = self
            .segments
            .iter_mut()
            .find(|(s, b, _)| *s <= at && at < *s + b.len() as u64)?;
        seg.2 = now;
        Some((seg.1.clone(), seg.0))
    }

    pub(crate) fn insert(&mut self, start: u64, bytes: Bytes, capacity: usize) {
        self.clock += 1;
        self.segments.push((start, bytes, self.clock));
        // The newest piece stays even when it alone is over the bound.
        while self.segments.len() > 1 && self.segments.iter().map(|s| s.1.len()).sum::<usize>() > capacity {
            let Some(oldest) = self
                .segments
                .iter()
                .enumerate()
                .min_by_key(|(_, (_, _, used))| *used)
                .map(|(i, _)| i)
            else {
                break;
            };
            self.segments.swap_remove(oldest);
        }
    }
}

/// A remote file as positioned, read-only bytes (see the crate's documentation).
pub struct RemoteSource {
    pub(crate) url: String,
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) path: StorePath,
    pub(crate) len: u64,
    /// The size and ETag of the first answer: later reads ask for that version only.
    pub(crate) version: Option<Version>,
    pub(crate) opts: RemoteOptions,
    pub(crate) cache: Mutex<Cache>,
    pub(crate) stats: Arc<Stats>,
    /// With [`RemoteOptions::park`], the first request's answer, read as far as the open
    /// needed: asked for from byte 0 to the end, it goes on with the first large read that
    /// starts about where it stopped (a file's first block, right after its tree) instead of
    /// a new request.
    pub(crate) parked: Mutex<Option<Body>>,
    /// Whether the last answer measured (the open's head, a large read's first part) came at
    /// [`RemoteOptions::split_below`] or faster: then reads go one at a time
    /// ([`ReadAt::reads_at_once`] is 1), as a large read stays one request.
    pub(crate) fast: std::sync::atomic::AtomicBool,
    /// The whole file, when the server ignores `Range` and the file is within
    /// [`RemoteOptions::whole_limit`]: every read is answered from it.
    pub(crate) whole: Option<Bytes>,
}

impl std::fmt::Debug for RemoteSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteSource")
            .field("url", &self.url)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl RemoteSource {
    /// Opens `url`: one request fetches the file's first bytes and tells its size.
    ///
    /// # Errors
    /// [`Error`]: a bad URL, an unsupported scheme, the store's refusal (not found, denied,
    /// a server that ignores `Range`).
    pub fn open(url: &str, opts: &RemoteOptions) -> Result<Self, Error> {
        let mut opts = opts.own_settings(url)?;
        let (store, path) = build_store(url, &opts)?;
        opts.page_size = opts.page_size.max(4096);
        opts.head_bytes = opts.head_bytes.max(opts.page_size).div_ceil(opts.page_size) * opts.page_size;
        let src = RemoteSource {
            url: url.to_string(),
            store,
            path,
            len: 0,
            version: None,
            opts,
            cache: Mutex::new(Cache::default()),
            stats: Arc::new(Stats::default()),
            parked: Mutex::new(None),
            fast: std::sync::atomic::AtomicBool::new(false),
            whole: None,
        };
        src.first_request()
    }

    pub(crate) fn first_request(mut self) -> Result<Self, Error> {
        let store = Arc::clone(&self.store);
        let path = self.path.clone();
        let head = self.opts.head_bytes as u64;
        let deadline = self.opts.deadline;
        let park = self.opts.park;
        let t0 = std::time::Instant::now();
        // The head; with `park`, the whole object, read until the head is in: the rest of
        // the answer waits (the server held back by TCP's flow control, the sockets' buffers
        // in flight) for a large read that starts there.
        let got = run(async move {
            use futures::StreamExt as _;
            let range = if park {
                GetRange::Offset(0)
            } else {
                GetRange::Bounded(0..head)
            };
            let asked = store.get_opts(
                &path,
                GetOptions {
                    range: Some(range),
                    ..GetOptions::default()
                },
            );
            let r = within(deadline, Waited::Headers, asked).await?;
            let (size, range, etag) = (r.meta.size, r.range.clone(), r.meta.e_tag.clone());
            let modified = etag.is_none().then(|| r.meta.last_modified.to_rfc2822());
            let body_end = if park { size } else { head.min(size) };
            if range.start != 0 || range.end != body_end {
                return Err(answer_err(AnswerError::TooLong { asked: body_end }));
            }
            let mut stream = r.into_stream();
            let mut bytes: Vec<u8> = Vec::new();
            // The body's pace, from its headers on (the server's time to answer left out).
            let t1 = std::time::Instant::now();
            let left = deadline.saturating_sub(t0.elapsed());
            while (bytes.len() as u64) < head.min(size) {
                let next = within_left(deadline, left.saturating_sub(t1.elapsed()), Waited::Body, async {
                    Ok(stream.next().await)
                });
                let Some(piece) = next.await? else {
                    return Err(answer_err(AnswerError::TooShort {
                        asked: body_end,
                        got: bytes.len() as u64,
                    }));
                };
                let piece = piece?;
                if piece.len() as u64 > body_end - bytes.len() as u64 {
                    return Err(answer_err(AnswerError::TooLong { asked: body_end }));
                }
                bytes.extend_from_slice(&piece);
            }
            let pace = (bytes.len() >= 64 << 10).then(|| bytes.len() as f64 / t1.elapsed().as_secs_f64().max(1e-6));
            let at = bytes.len() as u64;
            let rest = (at < body_end).then(|| Body {
                stream,
                at,
                end: size,
                asked: size,
                resume: None,
                resumed_at: None,
            });
            Ok::<_, object_store::Error>((size, Bytes::from(bytes), etag, modified, rest, pace))
        })?;
        let (size, bytes, etag, modified, rest, pace) = match got {
            Ok(x) => x,
            Err(first) => {
                // What follows shares the open's deadline (one deadline, stated and kept).
                let left = deadline.saturating_sub(t0.elapsed());
                let request_timeout = self.opts.request_timeout;
                let failed = |source| location::store_error(&self.url, explain_timeout(source, request_timeout));
                // Nothing there (no such key, bucket or file): said at once, no HEAD after it.
                if left.is_zero() || matches!(first, object_store::Error::NotFound { .. }) {
                    return Err(failed(first));
                }
                let store = Arc::clone(&self.store);
                let path = self.path.clone();
                if ignores_range(&first) {
                    // The whole file, when it fits the limit: every read is answered from it.
                    let limit = self.opts.whole_limit;
                    let got = run(fetch_whole(store, path, limit, deadline, left))?;
                    let (bytes, etag) = match got.map_err(failed)? {
                        Ok(x) => x,
                        Err(size) => {
                            return Err(Error::NoRanges {
                                url: self.url.clone(),
                                size,
                                limit,
                            });
                        }
                    };
                    warn_whole(&self.url, bytes.len() as u64, limit);
                    self.stats.whole.store(true, Ordering::Relaxed);
                    self.whole = Some(bytes.clone());
                    (bytes.len() as u64, bytes, etag, None, None, None)
                } else {
                    // An empty object has no byte 0 to ask for: its size says so.
                    match run(within_left(deadline, left, Waited::Headers, async move {
                        store.head(&path).await
                    }))? {
                        Ok(meta) if meta.size == 0 => (0, Bytes::new(), meta.e_tag, None, None, None),
                        _ => return Err(failed(first)),
                    }
                }
            }
        };
        let end = bytes.len() as u64;
        if let Some(pace) = pace {
            self.fast.store(pace >= self.opts.split_below as f64, Ordering::Relaxed);
        }
        self.stats.record(&(0..end), &self.url);
        self.len = size;
        let _ = self.stats.version.set((size, etag.clone()));
        let version = Version { size, etag, modified };
        self.version = Some(version.clone());
        self.parked = Mutex::new(rest.map(|mut body| {
            body.resume = Some((Arc::clone(&self.store), self.path.clone(), Some(version)));
            body
        }));
        let mut c = Cache {
            last_end: end,
            ..Cache::default()
        };
        c.insert(0, bytes, self.opts.cache_bytes);
        self.cache = Mutex::new(c);
        Ok(self)
    }

    /// The parked first answer, when it can go on with a read of `offset..end`: it stopped
    /// inside the read (the bytes before it, from the cache, are returned with it) or at most
    /// [`PARKED_SKIP`] bytes before it.
    pub(crate) fn take_parked(&self, offset: u64, end: u64) -> Option<(Body, Bytes)> {
        let mut parked = self.parked.lock().ok()?;
        let at = parked.as_ref()?.at;
        if at >= end || at.saturating_add(PARKED_SKIP) < offset {
            return None;
        }
        let mut prefix = Bytes::new();
        if at > offset {
            let mut cache = self.cache.lock().ok()?;
            let (bytes, start) = cache.find(offset)?;
            let from = usize::try_from(offset - start).ok()?;
            let n = usize::try_from(at - offset).ok()?;
            if from.checked_add(n)? > bytes.len() {
                return None;
            }
            prefix = bytes.slice(from..from + n);
        }
        Some((parked.take()?, prefix))
    }

    /// The URL this source reads.
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The counters of what was fetched (shared: they go on counting after the source is
    /// handed to a reader).
    #[must_use]
    pub fn stats(&self) -> Arc<Stats> {
        Arc::clone(&self.stats)
    }

    /// The error of a read of `range` that failed with `e`: the URL (its secrets hidden) and
    /// the bytes named, a timeout said as one.
    pub(crate) fn read_err(&self, range: Range<u64>, e: object_store::Error) -> io::Error {
        if matches!(e, object_store::Error::NotFound { .. }) {
            return io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{}: bytes {}..{}: not found: the file is no longer there (deleted since it was opened)",
                    redact(&self.url),
                    range.start,
                    range.end
                ),
            );
        }
        let e = explain_timeout(e, self.opts.request_timeout);
        io::Error::other(redact(&format!(
            "{}: bytes {}..{}: {e}",
            self.url, range.start, range.end
        )))
    }

    /// Fetches `range` in one request.
    pub(crate) fn get(&self, range: Range<u64>) -> io::Result<Bytes> {
        let store = Arc::clone(&self.store);
        let path = self.path.clone();
        let bytes = run(fetch(
            store,
            path,
            range.clone(),
            self.version.clone(),
            self.opts.deadline,
        ))
        .map_err(io::Error::other)?
        .map_err(|e| self.read_err(range.start..range.end, e))?;
        self.stats.record(&range, &self.url);
        if bytes.len() as u64 != range.end - range.start {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{}: asked for bytes {}..{}, got {}",
                    redact(&self.url),
                    range.start,
                    range.end,
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }

    /// `buf.len()` bytes at `offset` (inside the file), each answer's body streamed straight
    /// into its part of `buf` (no copy of the read is held). One request first; once it has
    /// delivered a part ([`RemoteOptions::part_size`] bytes), its pace decides: at
    /// [`RemoteOptions::split_below`] or faster it finishes the read alone (a server near by,
    /// for which more requests are more work, not more bandwidth: moto reads the whole
    /// object for each); slower, the rest is split between it and up to `concurrency - 1`
    /// more requests of at least a part each, all at once (the pace of one connection to a
    /// distant store, S3's, is a fraction of what several give).
    pub(crate) fn get_direct(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let len = buf.len() as u64;
        self.try_direct(offset, buf)?
            .map_err(|e| self.read_err(offset..offset + len, e))
    }

    /// [`RemoteSource::get_direct`], the store's failure as it said it (the runtime's as the
    /// outer error).
    pub(crate) fn try_direct(&self, offset: u64, buf: &mut [u8]) -> io::Result<object_store::Result<()>> {
        let len = buf.len() as u64;
        let end = offset + len;
        let whole = self.asks_whole(len);
        let step = self.opts.part_size.max(1) as u64;
        let concurrency = self.opts.concurrency.max(1) as u64;
        let split_below = self.opts.split_below;
        let store = &self.store;
        let path = &self.path;
        // The deadline bounds each part's worth of bytes, not the whole read: a 1 GiB block
        // over a slow but steady link is not cut off, a stalled one is.
        let deadline = self.opts.deadline;
        let version = self.version.as_ref();
        let parked = self.take_parked(offset, end).map(|(body, prefix)| {
            if let Some(dst) = buf.get_mut(..prefix.len()) {
                dst.copy_from_slice(&prefix);
            }
            body
        });
        let continued = parked.as_ref().map(|b| b.at);
        let fut = async {
            // The request and its first part share one deadline; each part after that has it.
            let t0 = std::time::Instant::now();
            let left = || deadline.saturating_sub(t0.elapsed());
            let want = offset..end;
            let mut first = match parked {
                Some(body) => body,
                None => {
                    within(
                        deadline,
                        Waited::Headers,
                        Body::open(store, path, &want, whole.is_some(), version),
                    )
                    .await?
                }
            };
            let asked_from = first.at;
            if continued.is_some() {
                // What waited in the socket's buffers comes at once: the pace is measured on
                // the part after it.
                within_left(
                    deadline,
                    left(),
                    Waited::Body,
                    first.fill(offset, buf, first.at.max(offset).saturating_add(step)),
                )
                .await?;
            }
            let probe_from = first.at;
            let t1 = std::time::Instant::now();
            within_left(
                deadline,
                left(),
                Waited::Body,
                first.fill(offset, buf, first.at.max(offset).saturating_add(step)),
            )
            .await?;
            let secs = t1.elapsed().as_secs_f64();
            let rate = (first.at - probe_from) as f64 / secs.max(1e-6);
            if first.at - probe_from >= 64 << 10 {
                self.fast.store(rate >= split_below as f64, Ordering::Relaxed);
            }
            let at = first.at.min(end);
            let remaining = end - at;
            let k = concurrency.min(remaining / step);
            let mut done = Vec::new();
            if k >= 2 && rate < split_below as f64 {
                // The first request keeps a share of the rest; the others split the remainder.
                let m = at + remaining / k;
                let cut = usize::try_from(m - offset).unwrap_or(buf.len()).min(buf.len());
                let (left, right) = buf.split_at_mut(cut);
                let part = usize::try_from((end - m).div_ceil(k - 1)).unwrap_or(usize::MAX).max(1);
                let mut others = Vec::new();
                for (i, dst) in right.chunks_mut(part).enumerate() {
                    let start = m + (i * part) as u64;
                    let range = start..start + dst.len() as u64;
                    others.push(async move {
                        // Its request within the deadline, then each part of its body.
                        let opened = Body::open(store, path, &range, false, version);
                        let mut body = within(deadline, Waited::Headers, opened).await?;
                        finish(&mut body, range.start, dst, step, deadline)
                            .await
                            .map(|()| range)
                    });
                }
                let rest = async {
                    use futures::StreamExt as _;
                    let mut got = Vec::new();
                    let mut s = futures::stream::iter(others).buffer_unordered(usize::try_from(k - 1).unwrap_or(1));
                    while let Some(r) = s.next().await {
                        got.push(r?);
                    }
                    Ok::<_, object_store::Error>(got)
                };
                let (_, got) =
                    futures::future::try_join(finish(&mut first, offset, left, step, deadline), rest).await?;
                done.extend(got);
            } else {
                finish(&mut first, offset, buf, step, deadline).await?;
            }
            // The first request's part (a parked answer's is counted with its open).
            match (continued, first.resumed_at) {
                (None, _) => done.push(asked_from..first.at),
                (Some(_), Some(from)) => done.push(from..first.at),
                (Some(_), None) => {}
            }
            Ok::<_, object_store::Error>((done, continued.map(|c| c..first.resumed_at.unwrap_or(first.at))))
        };
        let (done, more) = match block_on(fut).map_err(io::Error::other)? {
            Ok(done) => done,
            Err(e) => return Ok(Err(e)),
        };
        for r in &done {
            self.stats.record(r, &self.url);
        }
        if let Some(r) = more {
            self.stats.record_more(&r);
        }
        Ok(Ok(()))
    }

    /// Whether a read of `len` bytes (in one request) asks for the whole object instead: when
    /// the bytes it would fetch beyond those wanted are at most a 64th of the object.
    /// (The object's size is its version's: a source made for one range, as
    /// [`fetch_range`]'s, knows no more of the object than that.)
    pub(crate) fn asks_whole(&self, len: u64) -> Option<u64> {
        let size = self.version.as_ref()?.size;
        (size.saturating_sub(len) <= size / 64).then_some(size)
    }

    /// Copies into `buf` what the cache holds from `offset` on, without fetching: how many
    /// bytes (0 on a miss).
    pub(crate) fn cached_prefix(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut cache = self.cache.lock().map_err(|_| io::Error::other("cache poisoned"))?;
        let mut done = 0usize;
        while done < buf.len() {
            let at = offset + done as u64;
            let Some((bytes, start)) = cache.find(at) else { break };
            let from = usize::try_from(at - start).map_err(io::Error::other)?;
            let n = bytes.len().saturating_sub(from).min(buf.len() - done);
            if n == 0 {
                break;
            }
            buf[done..done + n].copy_from_slice(&bytes[from..from + n]);
            done += n;
        }
        Ok(done)
    }

    pub(crate) fn read_cached(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let poisoned = || io::Error::other("cache poisoned");
        let mut done = 0usize;
        loop {
            done += self.cached_prefix(offset + done as u64, &mut buf[done..])?;
            if done == buf.len() {
                return Ok(());
            }
            let at = offset + done as u64;
            let want = (buf.len() - done).max(self.opts.page_size) as u64;
            let range = {
                let mut c = self.cache.lock().map_err(|_| poisoned())?;
                // Reads that follow each other earn read-ahead, doubling to the bound.
                c.ahead = if at == c.last_end {
                    (c.ahead * 2).clamp(self.opts.page_size as u64, self.opts.max_read_ahead as u64)
                } else {
                    0
                };
                let end = (at + want + c.ahead).min(self.len);
                c.last_end = end;
                at..end
            };
            let bytes = self.get(range)?;
            self.cache
                .lock()
                .map_err(|_| poisoned())?
                .insert(at, bytes.clone(), self.opts.cache_bytes);
            // From the fetched piece itself (another thread's insert may have evicted it).
            let n = bytes.len().min(buf.len() - done);
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            buf[done..done + n].copy_from_slice(&bytes[..n]);
            done += n;
        }
    }
}

impl ReadAt for RemoteSource {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len)
    }

    /// The concurrency, or 1 while the answers come fast (see `RemoteSource::fast`).
    fn reads_at_once(&self) -> usize {
        if self.fast.load(Ordering::Relaxed) {
            1
        } else {
            self.opts.concurrency
        }
    }

    /// One request for all of `len` bytes (the whole object when they are nearly all of it),
    /// its body handed on as it arrives.
    fn read_streamed(&self, offset: u64, len: u64, sink: &mut asdf_layout::source::Sink<'_>) -> io::Result<()> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len);
        let Some(end) = end else {
            return Err(io::ErrorKind::UnexpectedEof.into());
        };
        if let Some(whole) = &self.whole {
            let (a, b) = (usize::try_from(offset), usize::try_from(end));
            let piece = a.ok().zip(b.ok()).and_then(|(a, b)| whole.get(a..b));
            return sink(piece.ok_or(io::ErrorKind::UnexpectedEof)?);
        }
        if len < self.opts.page_size as u64 {
            return asdf_layout::source::streamed_by_pieces(self, offset, len, sink);
        }
        if let Some((mut body, prefix)) = self.take_parked(offset, end) {
            if !prefix.is_empty() {
                sink(&prefix)?;
            }
            let continued = body.at;
            let fut = within_halt(self.opts.deadline, self.opts.deadline, body.pipe(offset, end, sink));
            match block_on(fut).map_err(io::Error::other)? {
                Ok(()) => {}
                Err(Halt::Sink(e)) => return Err(e),
                Err(Halt::Store(e)) => return Err(self.read_err(offset..end, e)),
            }
            self.stats.record_more(&(continued..body.resumed_at.unwrap_or(body.at)));
            if let Some(from) = body.resumed_at {
                self.stats.record(&(from..body.at), &self.url);
            }
            return Ok(());
        }
        let whole = self.asks_whole(len);
        let fut = fetch_streamed(
            &self.store,
            &self.path,
            offset..end,
            whole.is_some(),
            self.version.as_ref(),
            self.opts.deadline,
            sink,
        );
        match block_on(fut).map_err(io::Error::other)? {
            Ok(()) => {}
            Err(Halt::Sink(e)) => return Err(e),
            Err(Halt::Store(e)) => return Err(self.read_err(offset..end, e)),
        }
        self.stats.record(&whole.map_or(offset..end, |size| 0..size), &self.url);
        Ok(())
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        if offset >= self.len || buf.is_empty() {
            return Ok(0);
        }
        let n = usize::try_from(self.len - offset).map_or(buf.len(), |left| left.min(buf.len()));
        let buf = &mut buf[..n];
        if let Some(whole) = &self.whole {
            let from = usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::UnexpectedEof))?;
            let piece = whole.get(from..from + n).ok_or(io::ErrorKind::UnexpectedEof)?;
            buf.copy_from_slice(piece);
            return Ok(n);
        }
        if n >= self.opts.page_size {
            // What the cache holds from `offset` on (a block's first bytes, read with its
            // header's page) is not fetched again.
            let k = self.cached_prefix(offset, buf)?;
            // The rest is fetched exactly, however short (no page, no read-ahead).
            if k < n {
                self.get_direct(offset + k as u64, &mut buf[k..])?;
            }
        } else {
            self.read_cached(offset, buf)?;
        }
        Ok(n)
    }
}

/// The remote file at `url` as a source the layout reader reads (by ranges), and what it
/// fetches.
///
/// # Errors
/// As [`RemoteSource::open`].
pub fn open(url: &str, opts: &RemoteOptions) -> Result<(Box<dyn asdf_layout::ReadAt>, Arc<Stats>), Error> {
    let src = RemoteSource::open(url, opts)?;
    let stats = src.stats();
    Ok((Box::new(src), stats))
}
