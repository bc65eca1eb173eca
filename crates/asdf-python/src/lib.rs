//! `asdf_rs._native`: the Rust side of the Python package `asdf_rs`.
//!
//! The Python side (`python/asdf_rs/`) gives the API its Python shape (a lazy tree of mapping
//! and sequence views, numpy arrays, Dask graphs); this module gives it the file: nodes by
//! JSON pointer, array data as `bytes` decoded straight into Python's memory (or, for an
//! uncompressed block of a local file, where numpy can map it), validation, blocks, ranged
//! reads and block decoding for Dask's tasks, and writing. The GIL is released around every
//! read, decode and write.

mod buffers;
mod errors;
mod file;
mod layout;
mod remote;
mod tree;
mod wcs;
mod write;

use pyo3::prelude::*;
use pyo3::types::IntoPyDict;

use crate::errors::{AsdfError, AsdfValidationError};
use crate::file::{NativeFile, has_extension_schemas, open, set_extension_schemas};
use crate::remote::{
    decode_block, decode_zarr_chunk, is_url, list, read_block_range, read_range, set_upload_guard, upload_guard,
};

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_class::<wcs::NativeWcs>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(read_range, m)?)?;
    m.add_function(wrap_pyfunction!(list, m)?)?;
    m.add_function(wrap_pyfunction!(decode_block, m)?)?;
    m.add_function(wrap_pyfunction!(decode_zarr_chunk, m)?)?;
    m.add_function(wrap_pyfunction!(read_block_range, m)?)?;
    m.add_function(wrap_pyfunction!(write::write, m)?)?;
    m.add_function(wrap_pyfunction!(set_upload_guard, m)?)?;
    m.add_function(wrap_pyfunction!(upload_guard, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    m.add_function(wrap_pyfunction!(set_extension_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(has_extension_schemas, m)?)?;
    m.add("AsdfError", m.py().get_type::<AsdfError>())?;
    m.add("AsdfValidationError", m.py().get_type::<AsdfValidationError>())?;
    // AsdfErrors that are also the builtin error numpy or a dict raises for the same thing.
    for (name, builtin, doc) in [
        (
            "AsdfIndexError",
            m.py().get_type::<pyo3::exceptions::PyIndexError>(),
            "An index outside an array (an AsdfError and an IndexError, as numpy's).",
        ),
        (
            "AsdfKeyError",
            m.py().get_type::<pyo3::exceptions::PyKeyError>(),
            "No node at a JSON pointer (an AsdfError and a KeyError, as Python asdf's `af[key]`).",
        ),
        (
            "AsdfValueError",
            m.py().get_type::<pyo3::exceptions::PyValueError>(),
            "A region numpy refuses with ValueError, as a slice step of 0 (an AsdfError and a ValueError).",
        ),
    ] {
        let t = m.py().import("builtins")?.getattr("type")?.call1((
            name,
            (m.py().get_type::<AsdfError>(), builtin),
            [("__module__", "asdf_rs._native"), ("__doc__", doc)].into_py_dict(m.py())?,
        ))?;
        m.add(name, t)?;
    }
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
