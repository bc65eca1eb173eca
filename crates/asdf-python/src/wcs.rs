//! World coordinates: a file's gwcs WCS evaluated natively (asdf-wcs), for `AsdfFile.wcs`.
//! The points are read where numpy holds them (the buffer protocol: C-contiguous float64
//! arrays, no copy); the results are written into new `bytearray`s (numpy's `frombuffer` makes
//! writable arrays of them, no copy); the GIL is released while the points are evaluated.

use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

use crate::errors::usage;

/// A WCS read from a file (it holds no reference to the file).
#[pyclass(module = "asdf_rs._native", frozen)]
pub(crate) struct NativeWcs {
    pub(crate) wcs: asdf_wcs::Wcs,
}

pub(crate) fn wcs_err(e: &asdf_wcs::Error) -> PyErr {
    match e {
        asdf_wcs::Error::Unsupported { .. } | asdf_wcs::Error::NoInverse { .. } => {
            pyo3::exceptions::PyNotImplementedError::new_err(e.to_string())
        }
        asdf_wcs::Error::Units { .. } => pyo3::exceptions::PyValueError::new_err(format!("UnitsError: {e}")),
        asdf_wcs::Error::OutOfTable { .. } | asdf_wcs::Error::Usage(_) | asdf_wcs::Error::Malformed { .. } => {
            pyo3::exceptions::PyValueError::new_err(e.to_string())
        }
        asdf_wcs::Error::File(f) if f.kind() == asdf::ErrorKind::NotFound => {
            pyo3::exceptions::PyLookupError::new_err(e.to_string())
        }
        _ => usage(e.to_string()),
    }
}

/// Output arrays and where their data is.
type Outputs<'py> = (Vec<Bound<'py, PyByteArray>>, Vec<(usize, usize)>);

/// New `bytearray`s of `n` float64 each (numpy makes writable arrays of them without a copy),
/// and where their data is.
fn new_outputs(py: Python<'_>, count: usize, n: usize) -> PyResult<Outputs<'_>> {
    let len = n.checked_mul(8).ok_or_else(|| usage("too many points"))?;
    let size = pyo3::ffi::Py_ssize_t::try_from(len).map_err(|_| usage("too many points"))?;
    let mut arrays = Vec::with_capacity(count);
    let mut spans = Vec::with_capacity(count);
    for _ in 0..count {
        // SAFETY: `PyByteArray_FromStringAndSize(NULL, n)` returns a new reference to a
        // `bytearray` of `n` bytes (not initialised), or NULL with an exception set (the error).
        let a = unsafe {
            Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyByteArray_FromStringAndSize(std::ptr::null(), size))?
                .cast_into_unchecked::<PyByteArray>()
        };
        // SAFETY: the object is a `bytearray` (made just above); its buffer is `len` bytes.
        let at = unsafe { pyo3::ffi::PyByteArray_AsString(a.as_ptr()) };
        if at.is_null() {
            return Err(usage("a bytearray without a buffer"));
        }
        spans.push((at as usize, len));
        arrays.push(a);
    }
    Ok((arrays, spans))
}

/// Evaluates `f` with the GIL released on the points (`cols`: C-contiguous float64 arrays, read
/// through the buffer protocol) into new `bytearray`s, each seen as float64.
fn evaluate<'py>(
    py: Python<'py>,
    cols: &[Bound<'py, PyAny>],
    n_out: usize,
    f: impl FnOnce(&[&[f64]], &mut [&mut [f64]]) -> Result<(), asdf_wcs::Error> + Send,
) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
    let bufs: Vec<PyBuffer<f64>> = cols.iter().map(PyBuffer::get).collect::<PyResult<_>>()?;
    if bufs
        .iter()
        .any(|b| !b.is_c_contiguous() || !(b.buf_ptr() as usize).is_multiple_of(std::mem::align_of::<f64>()))
    {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "coordinates must be aligned C-contiguous float64 arrays",
        ));
    }
    let ins: Vec<(usize, usize)> = bufs.iter().map(|b| (b.buf_ptr() as usize, b.item_count())).collect();
    let n = ins.first().map_or(0, |(_, count)| *count);
    let (arrays, outs) = new_outputs(py, n_out, n)?;
    let result = py.detach(move || {
        let points: Vec<&[f64]> = ins
            .iter()
            .map(|&(at, count)| {
                if count == 0 {
                    &[][..]
                } else {
                    // SAFETY: each span is the memory of a C-contiguous buffer of `count` float64 exported
                    // to `bufs` (the format and item size checked by `PyBuffer::get`, the alignment
                    // above), which stays exported, so allocated and unmoved, until `bufs` is
                    // dropped after this closure. This code only reads it. Another Python thread may
                    // write the array meanwhile, as it may during numpy's own functions, which release the
                    // GIL too: the values then read are whichever were there, as numpy's would be.
                    unsafe { std::slice::from_raw_parts(at as *const f64, count) }
                }
            })
            .collect();
        // SAFETY: each span is the buffer of a new `bytearray` made above for this call and
        // held by `arrays` until it returns; no other code has seen it yet, so nothing else
        // reads, writes or resizes it; the spans do not overlap.
        let mut out_raw: Vec<&mut [u8]> = outs
            .iter()
            .map(|&(at, len)| unsafe { std::slice::from_raw_parts_mut(at as *mut u8, len) })
            .collect();
        let aligned = out_raw
            .iter()
            .all(|o| asdf::bytemuck::try_cast_slice::<u8, f64>(o).is_ok());
        if aligned {
            let mut slices: Vec<&mut [f64]> = out_raw
                .iter_mut()
                .map(|o| asdf::bytemuck::try_cast_slice_mut(o).unwrap_or(&mut []))
                .collect();
            f(&points, &mut slices)
        } else {
            let mut tmp = vec![vec![0.0f64; n]; out_raw.len()];
            let mut slices: Vec<&mut [f64]> = tmp.iter_mut().map(Vec::as_mut_slice).collect();
            f(&points, &mut slices)?;
            for (o, t) in out_raw.iter_mut().zip(&tmp) {
                o.copy_from_slice(asdf::bytemuck::cast_slice(t));
            }
            Ok(())
        }
    });
    drop(bufs);
    result.map_err(|e| wcs_err(&e))?;
    Ok(arrays)
}

/// `(name, kind, [(axis name, unit, axis type, physical type)], reference frame tag, a temporal
/// frame's reference time (value, scale))`.
type FrameTuple = (
    String,
    String,
    Vec<(String, Option<String>, String, Option<String>)>,
    Option<String>,
    Option<(String, Option<String>)>,
    Vec<(String, Option<(String, Option<String>)>)>,
);

fn frame_tuple(f: &asdf_wcs::Frame) -> FrameTuple {
    (
        f.name.clone(),
        format!("{:?}", f.kind),
        f.axes
            .iter()
            .map(|a| {
                (
                    a.name.clone(),
                    a.unit.clone(),
                    a.axis_type.clone(),
                    a.physical_type.clone(),
                )
            })
            .collect(),
        f.reference_frame.clone(),
        f.reference_time.clone(),
        f.frame_attributes.clone(),
    )
}

#[pymethods]
impl NativeWcs {
    /// Pixel to world (gwcs's `__call__`): one C-contiguous float64 array per pixel axis in,
    /// one `bytearray` of float64 per world axis out.
    #[pyo3(signature = (cols, with_bounding_box = true))]
    fn forward<'py>(
        &self,
        py: Python<'py>,
        cols: Vec<Bound<'py, PyAny>>,
        with_bounding_box: bool,
    ) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
        evaluate(py, &cols, self.wcs.world_n_dim(), |p, o| {
            self.wcs.pixel_to_world_with(p, o, with_bounding_box)
        })
    }

    /// World to pixel (gwcs's `invert`), as `forward`.
    #[pyo3(signature = (cols, with_bounding_box = true))]
    fn backward<'py>(
        &self,
        py: Python<'py>,
        cols: Vec<Bound<'py, PyAny>>,
        with_bounding_box: bool,
    ) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
        evaluate(py, &cols, self.wcs.pixel_n_dim(), |p, o| {
            self.wcs.world_to_pixel_with(p, o, with_bounding_box)
        })
    }

    /// `(pixel axes, world axes)`.
    fn dims(&self) -> (usize, usize) {
        (self.wcs.pixel_n_dim(), self.wcs.world_n_dim())
    }

    /// The input and output frames.
    fn frames(&self) -> (FrameTuple, FrameTuple) {
        (
            frame_tuple(self.wcs.input_frame()),
            frame_tuple(self.wcs.output_frame()),
        )
    }

    /// The bounding box per pixel axis (`None` for an axis it ignores), or `None`.
    fn bounding_box(&self) -> Option<Vec<Option<(f64, f64)>>> {
        self.wcs.bounding_box().map(<[_]>::to_vec)
    }

    /// The footprint: the world coordinates of the bounding box's corners, a row per corner.
    fn footprint(&self, py: Python<'_>) -> PyResult<Vec<Vec<f64>>> {
        py.detach(|| self.wcs.footprint()).map_err(|e| wcs_err(&e))
    }
}
