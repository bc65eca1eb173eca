//! Errors as Python exceptions: `AsdfError` and its kinds, with the pointer, line, column
//! and byte offset where they apply.

use asdf::Error;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    AsdfError,
    PyException,
    "An ASDF file that cannot be read or written as asked."
);

pyo3::create_exception!(
    _native,
    AsdfValidationError,
    AsdfError,
    "A tree that violates its schemas."
);

/// An `asdf::Error` as a Python exception carrying `kind`, `pointer`, `line`, `column` and
/// `offset` (those that apply; `None` otherwise).
pub(crate) fn py_err(py: Python<'_>, e: &Error) -> PyErr {
    let (pointer, line, column, offset): (Option<String>, Option<u32>, Option<u32>, Option<u64>) = match e {
        Error::NotFound(p) => (Some(p.clone()), None, None, None),
        Error::Array { pointer, .. } => (Some(pointer.clone()), None, None, None),
        Error::Invalid(v) => (
            v.first().map(|x| x.instance.clone()),
            v.first().map(|x| x.span.line),
            v.first().map(|x| x.span.column),
            None,
        ),
        Error::Yaml(y) => (None, y.span().map(|s| s.line), y.span().map(|s| s.column), None),
        Error::Layout(l) => (None, None, None, l.offset()),
        _ => (None, None, None, None),
    };
    let err = if matches!(e, Error::Invalid(_)) {
        AsdfValidationError::new_err(e.to_string())
    } else if let Some(name) = if is_index_error(e) {
        // What numpy raises IndexError for: an AsdfIndexError (an AsdfError and an IndexError).
        Some("AsdfIndexError")
    } else if matches!(e, Error::NotFound(_)) {
        // No node at a pointer: what a dict (and Python asdf's `af[key]`) raises KeyError for.
        Some("AsdfKeyError")
    } else if matches!(
        e,
        Error::Region {
            source: asdf::RegionError::ZeroStep,
            ..
        }
    ) {
        // numpy's ValueError ("slice step cannot be zero").
        Some("AsdfValueError")
    } else {
        None
    } && let Ok(t) = py
        .import("asdf_rs._native")
        .and_then(|m| m.getattr(name))
        .and_then(|t| t.cast_into::<pyo3::types::PyType>().map_err(PyErr::from))
    {
        PyErr::from_type(t, e.to_string())
    } else {
        AsdfError::new_err(e.to_string())
    };
    let value = err.value(py);
    let _ = value.setattr("kind", format!("{:?}", e.kind()));
    let _ = value.setattr("pointer", pointer);
    let _ = value.setattr("line", line);
    let _ = value.setattr("column", column);
    let _ = value.setattr("offset", offset);
    err
}

/// Whether numpy raises `IndexError` for this: an index outside its axis, more indices than
/// axes, an index beyond 64 bits, two ellipses.
pub(crate) fn is_index_error(e: &Error) -> bool {
    use asdf::RegionError as R;
    matches!(
        e,
        Error::Region {
            source: R::OutOfBounds { .. } | R::TooManyAxes { .. } | R::IndexTooLarge(_) | R::Ellipses,
            ..
        }
    )
}

pub(crate) fn usage(msg: impl Into<String>) -> PyErr {
    AsdfError::new_err(msg.into())
}

/// What cannot be read under a key that no JSON pointer names (see [`entry_tokens`]).
pub(crate) fn unnamed(pointer: &str, what: &str) -> PyErr {
    usage(format!(
        "{pointer}: {what} under a key that another key of its mapping shares the text of (or \
         that is null or a number with a fraction) is not read: asdf_rs reads ndarrays there \
         (in a block of the file or in the tree), not this"
    ))
}

/// Where [`write`] makes each array before moving it to its place.
pub(crate) const PLACE: &str = "/array";

/// An error of making the array at [`PLACE`] as the error of the array at `pointer`, its
/// place in the tree written.
pub(crate) fn placed(py: Python<'_>, e: &Error, pointer: &str) -> PyErr {
    let err = py_err(py, e);
    let at = if pointer.is_empty() { "/" } else { pointer };
    let text = e.to_string();
    let Some(rest) = text.strip_prefix(PLACE) else {
        return err;
    };
    let moved = AsdfError::new_err(format!("{at}{rest}"));
    let value = moved.value(py);
    for attr in ["kind", "line", "column", "offset"] {
        if let Ok(v) = err.value(py).getattr(attr) {
            let _ = value.setattr(attr, v);
        }
    }
    let _ = value.setattr("pointer", at);
    moved
}
