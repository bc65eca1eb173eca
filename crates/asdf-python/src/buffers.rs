//! Python `bytes` filled with the GIL released.

use asdf::Error;
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{py_err, usage};

/// A new `bytes` of `len` bytes, written by `fill` with the GIL released. `fill` must write
/// every byte when it succeeds (every reader given to it does: a region's bytes, a block's
/// data); on its error the object is dropped unread. Unlike `PyBytes::new_with`, the bytes
/// are not zeroed first: for a 256 MiB array that pass (and its page faults) took the GIL
/// for about 0.1 s before any decoding began, where now the decoding threads touch each
/// page once.
pub(crate) fn bytes_filled_without_gil<'py>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), Error> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_filled(py, len, fill, |py, e| py_err(py, &e))
}

/// As [`bytes_filled_without_gil`], `fill`'s error made a Python error by `err`.
pub(crate) fn bytes_filled<'py, E: Send>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [u8]) -> Result<(), E> + Send,
    err: impl FnOnce(Python<'py>, E) -> PyErr,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = pyo3::ffi::Py_ssize_t::try_from(len).map_err(|_| usage("a region larger than memory"))?;
    // SAFETY: `PyBytes_FromStringAndSize(NULL, n)` returns a new reference to a `bytes` object
    // of `n` bytes (or NULL with an exception set, turned into the error), which we own.
    let bytes = unsafe {
        Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), size))?
            .cast_into_unchecked::<PyBytes>()
    };
    // SAFETY: the object is a `bytes` of `len` bytes that no other code has seen yet (nothing
    // else can read or write it while the GIL is released below, and its storage does not
    // move: `bytes` never resize); its buffer is valid for `len` bytes for as long as
    // `bytes` lives, which outlives the slice. The slice is only written before it is read
    // (see above), so its not yet initialised bytes are never read.
    let buf: &mut [u8] = unsafe {
        let at = pyo3::ffi::PyBytes_AsString(bytes.as_ptr()).cast::<u8>();
        if at.is_null() {
            return Err(usage("a bytes object without a buffer"));
        }
        std::slice::from_raw_parts_mut(at, len)
    };
    py.detach(move || fill(buf)).map_err(|e| err(py, e))?;
    Ok(bytes)
}

/// `bytes` holding `v`, copied with the GIL released (a chunk or a block of a GB copied
/// with it held stalls every other thread for a large part of a second).
pub(crate) fn bytes_of(py: Python<'_>, v: Vec<u8>) -> PyResult<Py<PyAny>> {
    if v.len() < 1 << 20 {
        return PyBytes::new(py, &v).into_py_any(py);
    }
    bytes_filled(
        py,
        v.len(),
        |buf| {
            buf.copy_from_slice(&v);
            Ok::<(), std::convert::Infallible>(())
        },
        |_, e| match e {},
    )?
    .into_py_any(py)
}
