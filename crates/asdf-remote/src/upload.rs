//! Writing an object: the bytes of a local file uploaded as a multipart upload, in parts read
//! from the file (memory bounded by the part size times the parts in flight), visible only
//! once the upload completes; a failed or cancelled upload is aborted (its parts deleted).
//!
//! The write is conditional, as the local write guard is: over the version of the object the
//! writer read (`If-Match` with its ETag), or only if there is still no object
//! (`If-None-Match: *`). Stores check these headers on completion (S3 since 2024); the
//! object's ETag is also checked just before completing, for stores that do not.

use crate::redact::{RedactedError, redact};
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as StorePath;
use object_store::signer::{SignedUrlOptions, Signer};
use object_store::{ObjectStore, ObjectStoreExt as _, PutPayload};

/// What must hold of the object when the upload completes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// Nothing: whatever is there is replaced.
    Overwrite,
    /// There is no object (a new file).
    Create,
    /// The object is still the version with this ETag.
    Match(String),
}

/// Why an upload did not complete (the store's own errors aside). Its texts hold no secret of
/// a URL: the store's errors are kept redacted at every level of their chain
/// ([`RedactedError`]), and so are the HTTP client's.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// The store refused or failed.
    #[error(transparent)]
    Store(RedactedError),
    /// The object is not the version the condition names: written by someone else since it
    /// was read, or created since the write began.
    #[error("the object changed since it was read ({0}); nothing was written")]
    Changed(String),
    /// Cancelled (an interrupt); nothing was written.
    #[error("the upload was cancelled; nothing was written")]
    Cancelled,
    /// Reading the local file failed.
    #[error("reading the file to upload: {0}")]
    Io(#[from] std::io::Error),
    /// The store's answer to the completion could not be understood.
    #[error("completing the upload: {0}")]
    Complete(String),
    /// An HTTP server answered the PUT with this status (405 or 501: it takes no writes).
    #[error("the server refused the PUT: HTTP {0}")]
    Refused(u16),
}

impl From<object_store::Error> for UploadError {
    fn from(e: object_store::Error) -> Self {
        UploadError::Store(RedactedError::new(&e))
    }
}

/// The HTTP client's error `e` (which names the URL requested, a presigned one's signature
/// included) as text with the URL's secrets hidden.
fn client_failure(e: &reqwest::Error) -> UploadError {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    UploadError::Complete(redact(&text))
}

/// The parts of an upload.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Bytes a part (the last one fewer).
    pub part_size: usize,
    /// Parts in flight at once.
    pub concurrency: usize,
}

impl Plan {
    /// Parts of at least `part_size` bytes (and at least S3's 5 MiB), few enough for S3's
    /// 10,000 parts.
    #[must_use]
    pub fn for_len(len: u64, part_size: usize, concurrency: usize) -> Self {
        let min = (part_size.max(5 << 20)) as u64;
        let part = min.max(len.div_ceil(10_000));
        Self {
            part_size: usize::try_from(part).unwrap_or(usize::MAX),
            concurrency: concurrency.max(1),
        }
    }

    /// Whether `len` bytes go as a multipart upload (more than one part) rather than one PUT.
    #[must_use]
    pub fn is_multipart(&self, len: u64) -> bool {
        len > self.part_size as u64
    }
}

/// What a store offers a write: parts, and (where it can sign URLs) a conditional completion.
pub trait Target: MultipartStore + ObjectStore {
    /// The store's signer, for completing with conditions in the request.
    fn signer(&self) -> Option<&dyn Signer>;
}

impl Target for object_store::aws::AmazonS3 {
    fn signer(&self) -> Option<&dyn Signer> {
        Some(self)
    }
}

// Google's and Azure's completions take no S3 conditions: the ETag check before completing
// is what guards them.
impl Target for object_store::gcp::GoogleCloudStorage {
    fn signer(&self) -> Option<&dyn Signer> {
        None
    }
}

impl Target for object_store::azure::MicrosoftAzure {
    fn signer(&self) -> Option<&dyn Signer> {
        None
    }
}

/// How a multipart upload is begun and whom to tell when it has settled: the upload guard,
/// which creates the upload itself (so that it knows of it before this process does), or
/// nobody.
#[derive(Clone, Copy)]
pub struct Begun<'a> {
    /// The id of an upload already created for this write (by its guard); `None`: created here.
    pub created: Option<&'a str>,
    /// Told once the upload has completed, or was aborted by this process (not when its abort
    /// failed: then the guard must abort it).
    pub settled: &'a (dyn Fn() + Sync),
}

impl std::fmt::Debug for Begun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Begun")
            .field("created", &self.created)
            .finish_non_exhaustive()
    }
}

/// Uploads `len` bytes of `file` to `path`. `progress(done, total)` is called as parts finish;
/// `cancel` is looked at before each part and while parts are in flight; `begun` says whether
/// the multipart upload exists already and whom to tell when it settled. Whether a write is
/// multipart: [`Plan::is_multipart`].
///
/// # Errors
/// [`UploadError`]; on every error the upload is aborted (best effort: a store that cannot
/// be reached any more keeps the parts until its guard or its lifecycle rules remove them).
#[allow(clippy::too_many_arguments)]
pub async fn upload(
    store: &dyn Target,
    client: &reqwest::Client,
    path: &StorePath,
    file: &std::fs::File,
    len: u64,
    plan: Plan,
    condition: &Condition,
    cancel: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
    begun: Begun<'_>,
) -> Result<Option<String>, UploadError> {
    if !plan.is_multipart(len) {
        return put_whole(store, path, file, len, condition, cancel, progress).await;
    }
    let id = match begun.created {
        Some(id) => id.to_string(),
        None => store.create_multipart(path).await?,
    };
    let result = parts_and_complete(store, client, path, &id, file, len, plan, condition, cancel, progress).await;
    if result.is_ok() || store.abort_multipart(path, &id).await.is_ok() {
        (begun.settled)();
    }
    result
}

#[allow(clippy::too_many_arguments)]
async fn parts_and_complete(
    store: &dyn Target,
    client: &reqwest::Client,
    path: &StorePath,
    id: &String,
    file: &std::fs::File,
    len: u64,
    plan: Plan,
    condition: &Condition,
    cancel: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<String>, UploadError> {
    use futures::StreamExt as _;
    let part = plan.part_size as u64;
    let n = usize::try_from(len.div_ceil(part).max(1)).map_err(|_| UploadError::Complete("too many parts".into()))?;
    let mut ids: Vec<Option<PartId>> = vec![None; n];
    let mut inflight = futures::stream::FuturesUnordered::new();
    let mut done = 0u64;
    let cancelled = cancel;
    for i in 0..n {
        if cancelled() {
            return Err(UploadError::Cancelled);
        }
        let start = i as u64 * part;
        let bytes = read_part(file, start, part.min(len - start.min(len)))?;
        while inflight.len() >= plan.concurrency {
            let Some(r) = inflight.next().await else { break };
            let (j, size, r): (usize, u64, object_store::Result<PartId>) = r;
            ids[j] = Some(r?);
            done += size;
            progress(done, len);
            if cancelled() {
                return Err(UploadError::Cancelled);
            }
        }
        let size = bytes.len() as u64;
        inflight.push(async move { (i, size, store.put_part(path, id, i, PutPayload::from(bytes)).await) });
    }
    while let Some((j, size, r)) = inflight.next().await {
        ids[j] = Some(r?);
        done += size;
        progress(done, len);
        if cancelled() {
            return Err(UploadError::Cancelled);
        }
    }
    let parts: Vec<PartId> = ids.into_iter().flatten().collect();
    check(store, path, condition).await?;
    if cancelled() {
        return Err(UploadError::Cancelled);
    }
    match (condition, store.signer()) {
        (Condition::Overwrite, _) | (_, None) => Ok(store.complete_multipart(path, id, parts).await?.e_tag),
        (c, Some(signer)) => complete_conditionally(signer, client, path, id, &parts, c).await,
    }
}

/// A file of one part: one conditional PUT (atomic by itself; no upload to abort).
async fn put_whole(
    store: &dyn Target,
    path: &StorePath,
    file: &std::fs::File,
    len: u64,
    condition: &Condition,
    cancel: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<String>, UploadError> {
    use object_store::{PutMode, PutOptions, UpdateVersion};
    if cancel() {
        return Err(UploadError::Cancelled);
    }
    let bytes = read_part(file, 0, len)?;
    let mode = match condition {
        Condition::Overwrite => PutMode::Overwrite,
        Condition::Create => PutMode::Create,
        Condition::Match(e) => PutMode::Update(UpdateVersion {
            e_tag: Some(e.clone()),
            version: None,
        }),
    };
    let options = PutOptions {
        mode,
        ..PutOptions::default()
    };
    match store.put_opts(path, PutPayload::from(bytes), options).await {
        Ok(r) => {
            progress(len, len);
            Ok(r.e_tag)
        }
        Err(object_store::Error::AlreadyExists { .. }) => {
            Err(UploadError::Changed("an object was created meanwhile".into()))
        }
        Err(object_store::Error::Precondition { .. }) => Err(UploadError::Changed(format!(
            "the store refused the write over the version with ETag {}",
            match condition {
                Condition::Match(e) => e.as_str(),
                _ => "(none)",
            }
        ))),
        Err(e) => Err(e.into()),
    }
}

/// A file written to a plain HTTP(S) server by one `PUT` (servers that take writes: WebDAV
/// servers and others), the body streamed from the file in pieces of 1 MiB (memory: a piece
/// or two), conditional as an upload is: `If-Match` with the ETag read, `If-None-Match: *` for
/// a new file (RFC 9110's conditional requests; a server that ignores them is guarded by the
/// check made before the write began only). Whether a half-sent body is ever visible is the
/// server's to say; a cancelled or failed PUT stops sending (the connection is dropped).
/// `timeout` bounds the whole request, body included.
///
/// # Errors
/// [`UploadError::Changed`] for 412, [`UploadError::Refused`] for another refusal,
/// [`UploadError::Cancelled`], [`UploadError::Complete`] for the transport's failure.
#[allow(clippy::too_many_arguments)]
pub async fn put_http(
    client: &reqwest::Client,
    url: &str,
    file: &std::fs::File,
    len: u64,
    condition: &Condition,
    timeout: std::time::Duration,
    cancel: &(dyn Fn() -> bool + Sync),
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Option<String>, UploadError> {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    const PIECE: u64 = 1 << 20;
    if cancel() {
        return Err(UploadError::Cancelled);
    }
    let sent = Arc::new(AtomicU64::new(0));
    let source = file.try_clone()?;
    let counter = sent.clone();
    let body = futures::stream::unfold(0u64, move |at| {
        let piece = (len - at.min(len)).min(PIECE);
        let next = if piece == 0 {
            None
        } else {
            let r = read_part(&source, at, piece).map(bytes::Bytes::from);
            counter.store(at + piece, Ordering::Relaxed);
            Some((r, at + piece))
        };
        std::future::ready(next)
    });
    let mut request = client
        .put(url)
        .header(http::header::CONTENT_LENGTH, len)
        .header(http::header::CONTENT_TYPE, "application/octet-stream")
        .timeout(timeout)
        .body(reqwest::Body::wrap_stream(body));
    request = match condition {
        Condition::Overwrite => request,
        Condition::Create => request.header(http::header::IF_NONE_MATCH, "*"),
        Condition::Match(e) => request.header(http::header::IF_MATCH, e.as_str()),
    };
    let send = request.send();
    tokio::pin!(send);
    let answer = loop {
        tokio::select! {
            r = &mut send => break r.map_err(|e| client_failure(&e))?,
            () = tokio::time::sleep(std::time::Duration::from_millis(100)) => {
                progress(sent.load(Ordering::Relaxed), len);
                if cancel() {
                    return Err(UploadError::Cancelled);
                }
            }
        }
    };
    let status = answer.status();
    if status == reqwest::StatusCode::PRECONDITION_FAILED {
        return Err(UploadError::Changed(match condition {
            Condition::Match(e) => format!("the server refused the write over the version with ETag {e}"),
            _ => "the server says a file was created meanwhile".into(),
        }));
    }
    if !status.is_success() {
        return Err(UploadError::Refused(status.as_u16()));
    }
    progress(len, len);
    Ok(answer
        .headers()
        .get(http::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string))
}

fn read_part(file: &std::fs::File, start: u64, len: u64) -> Result<Vec<u8>, UploadError> {
    let mut buf = vec![0u8; usize::try_from(len).map_err(|_| UploadError::Complete("part too large".into()))?];
    #[cfg(unix)]
    std::os::unix::fs::FileExt::read_exact_at(file, &mut buf, start)?;
    #[cfg(windows)]
    {
        let mut at = 0;
        while at < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[at..], start + at as u64)?;
            if n == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
            at += n;
        }
    }
    Ok(buf)
}

fn same_etag(a: &str, b: &str) -> bool {
    a.trim_matches('"') == b.trim_matches('"')
}

/// The object as the condition wants it, just before completing.
pub(crate) async fn check(store: &dyn ObjectStore, path: &StorePath, condition: &Condition) -> Result<(), UploadError> {
    match (condition, store.head(path).await) {
        (Condition::Overwrite, _) => Ok(()),
        (Condition::Create, Err(object_store::Error::NotFound { .. })) => Ok(()),
        (Condition::Create, Ok(meta)) => Err(UploadError::Changed(format!(
            "an object of {} bytes was created meanwhile",
            meta.size
        ))),
        (Condition::Match(want), Ok(meta)) if meta.e_tag.as_deref().is_some_and(|e| same_etag(e, want)) => Ok(()),
        (Condition::Match(want), Ok(meta)) => Err(UploadError::Changed(format!(
            "read with ETag {want}, now ETag {}",
            meta.e_tag.as_deref().unwrap_or("(none)")
        ))),
        (Condition::Match(want), Err(object_store::Error::NotFound { .. })) => {
            Err(UploadError::Changed(format!("read with ETag {want}, now deleted")))
        }
        (_, Err(e)) => Err(e.into()),
    }
}

/// S3's CompleteMultipartUpload with `If-Match` or `If-None-Match`, by a presigned request
/// (object_store completes without conditions).
async fn complete_conditionally(
    signer: &dyn Signer,
    client: &reqwest::Client,
    path: &StorePath,
    id: &str,
    parts: &[PartId],
    condition: &Condition,
) -> Result<Option<String>, UploadError> {
    let (header, value) = match condition {
        Condition::Match(e) => ("If-Match", e.clone()),
        _ => ("If-None-Match", "*".to_string()),
    };
    let options = SignedUrlOptions::new().with_query([("uploadId", id)]);
    let url = signer
        .signed_url_opts(http::Method::POST, path, std::time::Duration::from_secs(3600), &options)
        .await?;
    let mut body = String::from("<CompleteMultipartUpload>");
    for (i, p) in parts.iter().enumerate() {
        body.push_str(&format!(
            "<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>",
            i + 1,
            xml_escape(&p.content_id)
        ));
    }
    body.push_str("</CompleteMultipartUpload>");
    let answer = client
        .post(url)
        .header(header, value)
        .body(body)
        .send()
        .await
        .map_err(|e| client_failure(&e))?;
    let status = answer.status();
    let text = answer.text().await.map_err(|e| client_failure(&e))?;
    // S3 may answer 200 with an error in the body.
    let code = between(&text, "<Code>", "</Code>");
    if status == reqwest::StatusCode::PRECONDITION_FAILED
        || status == reqwest::StatusCode::CONFLICT
        || code == Some("PreconditionFailed")
        || code == Some("ConditionalRequestConflict")
    {
        return Err(UploadError::Changed(format!("the store refused {header}")));
    }
    if !status.is_success() || text.contains("<Error>") {
        return Err(UploadError::Complete(format!(
            "HTTP {status}: {}",
            code.unwrap_or("no error code")
        )));
    }
    Ok(between(&text, "<ETag>", "</ETag>").map(|e| e.replace("&quot;", "\"")))
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let from = text.find(open)? + open.len();
    let to = from + text[from..].find(close)?;
    Some(&text[from..to])
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
