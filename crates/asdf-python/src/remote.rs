//! Ranged reads, listings and block decoding for Dask's tasks and object stores; the upload
//! guard.

use asdf::Label;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffers::{bytes_filled, bytes_of};
use crate::errors::{AsdfError, py_err, usage};

pub(crate) fn remote_options(settings: Vec<(String, String)>, anonymous: bool) -> asdf_remote::RemoteOptions {
    asdf_remote::RemoteOptions {
        settings,
        anonymous,
        ..asdf_remote::RemoteOptions::default()
    }
}

/// `end - start` bytes at `start` of a path or URL, in one ranged request (or one
/// positioned read): what a Dask task fetches.
#[pyfunction]
#[pyo3(signature = (target, start, end, settings=Vec::new(), anonymous=false, size=None, etag=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_range(
    py: Python<'_>,
    target: std::path::PathBuf,
    start: u64,
    end: u64,
    settings: Vec<(String, String)>,
    anonymous: bool,
    size: Option<u64>,
    etag: Option<String>,
) -> PyResult<Py<PyAny>> {
    if end < start {
        return Err(usage(format!("range {start}..{end} ends before it starts")));
    }
    let len = usize::try_from(end - start).map_err(|_| usage("a range larger than memory"))?;
    let out = bytes_filled(
        py,
        len,
        |buf| -> Result<(), String> {
            if let Some(url) = target.to_str().filter(|t| asdf::is_url(t)) {
                let got = asdf_remote::fetch_range(
                    url,
                    &remote_options(settings, anonymous),
                    start..end,
                    size.map(|s| (s, etag)),
                )
                .map_err(|e| e.to_string())?;
                buf.copy_from_slice(&got);
            } else {
                let name = target.display();
                let f = std::fs::File::open(&target).map_err(|e| format!("{name}: {e}"))?;
                asdf::ReadAt::read_exact_at(&f, start, buf)
                    .map_err(|e| format!("{name}: bytes {start}..{end}: {e}"))?;
            }
            Ok(())
        },
        |_, e| AsdfError::new_err(e),
    )?;
    out.into_py_any(py)
}

/// Whether `target` is a URL (http, https, s3) rather than a path.
#[pyfunction]
pub(crate) fn is_url(target: &str) -> bool {
    asdf::is_url(target)
}

/// Decodes a block's stored bytes (`compression` a label such as `zlib`) into `data_len`
/// bytes.
#[pyfunction]
pub(crate) fn decode_block(py: Python<'_>, compression: &str, stored: &[u8], data_len: usize) -> PyResult<Py<PyAny>> {
    let label = Label::from_name(compression).ok_or_else(|| usage(format!("unknown compression {compression:?}")))?;
    if label == Label::NONE {
        return PyBytes::new(py, stored).into_py_any(py);
    }
    let registry = asdf::compression::Registry::shared_default();
    let codec = registry
        .get(label)
        .ok_or_else(|| usage(format!("no codec for {compression:?} in this build")))?;
    bytes_filled(
        py,
        data_len,
        |buf| codec.decode(stored, buf),
        |_, e| AsdfError::new_err(format!("{compression}: {e}")),
    )?
    .into_py_any(py)
}

/// Bytes `lo..hi` of a block's decoded data, the block's stored bytes being `stored_len` bytes
/// at `stored_offset` of a path or URL: a codec with random access (a Blosc2 frame) fetches
/// only its header, chunk index and the chunks the range touches; others fetch the whole
/// block. What a Dask task over one chunk of a frame reads. The GIL is released.
#[pyfunction]
#[pyo3(signature = (target, stored_offset, stored_len, compression, data_len, lo, hi, settings=Vec::new(), anonymous=false, size=None, etag=None))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, as read_range's
pub(crate) fn read_block_range(
    py: Python<'_>,
    target: std::path::PathBuf,
    stored_offset: u64,
    stored_len: u64,
    compression: &str,
    data_len: usize,
    lo: usize,
    hi: usize,
    settings: Vec<(String, String)>,
    anonymous: bool,
    size: Option<u64>,
    etag: Option<String>,
) -> PyResult<Py<PyAny>> {
    let label = Label::from_name(compression).ok_or_else(|| usage(format!("unknown compression {compression:?}")))?;
    if lo > hi || hi > data_len {
        return Err(usage(format!("range {lo}..{hi} is not inside {data_len} bytes")));
    }
    let out = py
        .detach(|| -> Result<Vec<u8>, String> {
            let registry = asdf::compression::Registry::shared_default();
            let codec = registry
                .get(label)
                .ok_or_else(|| format!("no codec for {compression:?} in this build"))?;
            let opts = remote_options(settings, anonymous);
            let url = target.to_str().filter(|t| asdf::is_url(t));
            let name = target.display();
            let local = if url.is_some() {
                None
            } else {
                Some(std::fs::File::open(&target).map_err(|e| format!("{name}: {e}"))?)
            };
            let mut failed = None;
            let mut read = |off: u64, len: usize| -> Result<Vec<u8>, asdf::compression::CodecError> {
                let at = stored_offset + off;
                let got = match &local {
                    Some(f) => {
                        let mut buf = vec![0u8; len];
                        asdf::ReadAt::read_exact_at(f, at, &mut buf)
                            .map(|()| buf)
                            .map_err(|e| e.to_string())
                    }
                    None => asdf_remote::fetch_range(
                        url.unwrap_or_default(),
                        &opts,
                        at..at + len as u64,
                        size.map(|s| (s, etag.clone())),
                    )
                    .map(|b| b.to_vec())
                    .map_err(|e| e.to_string()),
                };
                got.map_err(|e| {
                    failed = Some(format!("{name}: bytes {at}..{}: {e}", at + len as u64));
                    asdf::compression::CodecError::Truncated { consumed: off }
                })
            };
            let r = codec.decode_range_from(stored_len, &mut read, data_len, lo..hi);
            if let Some(e) = failed {
                return Err(e);
            }
            r.map_err(|e| format!("{compression}: {e}"))
        })
        .map_err(AsdfError::new_err)?;
    bytes_of(py, out)
}

/// One chunk of a Zarr array (`metadata` JSON text) at grid position `index`, decoded from
/// its stored bytes (`None`: never written, the fill value): the whole chunk's elements in C
/// order and this machine's byte order, decoded with the GIL released.
#[pyfunction]
#[pyo3(signature = (metadata, index, stored=None))]
pub(crate) fn decode_zarr_chunk(
    py: Python<'_>,
    metadata: String,
    index: Vec<u64>,
    stored: Option<Vec<u8>>,
) -> PyResult<Py<PyAny>> {
    let out = py
        .detach(move || asdf::decode_zarr_chunk(&metadata, &index, stored))
        .map_err(|e| AsdfError::new_err(format!("Zarr chunk: {e}")))?;
    bytes_of(py, out)
}

/// Runs `work` on a thread of the executor's pool (`asdf_codecs::exec`, two threads at
/// least) without the GIL, looking at Python's signals every tenth of a second: on an
/// interrupt (Ctrl-C's `KeyboardInterrupt`, or what a signal handler raises), sets `cancel`,
/// waits for `work` to wind up (an upload aborts: nothing written), and raises the interrupt.
pub(crate) fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &std::sync::atomic::AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    use asdf::compression::exec;
    use std::sync::mpsc::RecvTimeoutError;
    let (tx, mut rx) = std::sync::mpsc::channel();
    let watch = move || loop {
        // The receiver goes to the GIL-free closure and back (it is not `Sync`).
        let (answer, back) = py.detach(move || (rx.recv_timeout(std::time::Duration::from_millis(100)), rx));
        rx = back;
        match answer {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "asdf_rs: the writing thread ended without an answer",
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                    // The work sees the flag before its next part and winds up.
                    let _ = py.detach(move || rx.recv());
                    return Err(interrupt);
                }
            }
        }
    };
    let two = exec::threads().max(2);
    // `watch` holds the GIL between its waits; the work runs without it on the pool.
    let ((), answer) = exec::with_threads(Some(two), || {
        exec::join(
            move || {
                let _ = tx.send(work());
            },
            watch,
        )
    });
    answer
}

/// Sets the command started to guard each multipart upload (`asdf_rs` sets its interpreter
/// running `upload_guard`), or none.
#[pyfunction]
pub(crate) fn set_upload_guard(command: Option<Vec<String>>) {
    asdf_remote::set_upload_guard(command.map(|c| c.into_iter().map(Into::into).collect()));
}

/// The upload guard's body: reads its request from standard input and, when the writer goes
/// away before its upload settled, aborts the upload. Returns the exit status.
#[pyfunction]
pub(crate) fn upload_guard(py: Python<'_>) -> i32 {
    match py.detach(|| asdf_remote::run_upload_guard(std::io::stdin().lock(), std::io::stdout().lock())) {
        // The writer reports the store's answer itself.
        Ok(asdf_remote::GuardOutcome::Settled | asdf_remote::GuardOutcome::NotCreated) => 0,
        Ok(asdf_remote::GuardOutcome::Aborted) => {
            eprintln!("asdf_rs: the writer ended before its upload did; the upload was aborted (nothing written)");
            0
        }
        Err(e) => {
            eprintln!("asdf_rs: the upload guard could not abort the upload: {e}");
            1
        }
    }
}

/// The objects under a prefix of an object store (`s3://bucket/run/`): (URL, size) pairs.
#[pyfunction]
#[pyo3(signature = (prefix, settings=Vec::new(), anonymous=false))]
pub(crate) fn list(
    py: Python<'_>,
    prefix: String,
    settings: Vec<(String, String)>,
    anonymous: bool,
) -> PyResult<Vec<(String, u64)>> {
    let opts = remote_options(settings, anonymous);
    py.detach(move || asdf_remote::list(&prefix, &opts, 1_000_000))
        .map_err(|e| py_err(py, &asdf::Error::Remote(Box::new(e))))
}
