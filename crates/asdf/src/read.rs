//! The one generic read of an [`Array`]: [`Array::read`] (the whole array) and
//! [`Array::read_region`] (numpy's basic slicing), giving whatever implements [`FromRegion`]:
//! `Vec<T>`, `Cow<[T]>` (borrowed from a mapped file where it can be), [`RegionBytes`] (any
//! datatype), `ndarray::ArrayD<T>` (feature `ndarray`).

use std::borrow::Cow;

use asdf_core_types::region::Region;
use asdf_core_types::{ByteOrder, Scalar};

use crate::array::Array;
use crate::error::Error;

mod sealed {
    pub trait Sealed {}
}

/// What [`Array::read`] and [`Array::read_region`] can give (as zarrs' `FromArrayBytes`):
///
/// - `Vec<T>`: the elements, C order, native byte order (`T` must be the datatype: `f32` for
///   float32);
/// - `Cow<'f, [T]>`: the same, borrowed straight from the file's bytes (a memory map, a file
///   held in memory) when the whole array is read from an uncompressed block, in native byte
///   order, C-contiguous and aligned; a copy otherwise;
/// - [`RegionBytes`]: the elements' bytes for any datatype (records, strings, complex), with
///   their byte order and the region's shape (arrays in blocks: an inline array's elements are
///   in the tree, [`crate::Error::NotSupported`]);
/// - `ndarray::ArrayD<T>` (feature `ndarray`): shaped as the region.
pub trait FromRegion<'f>: Sized + sealed::Sealed {
    /// Reads `region` (`None`: the whole array) of `array`.
    ///
    /// # Errors
    /// As [`Array::read_region`].
    #[doc(hidden)]
    fn from_region(array: &Array<'f>, region: Option<&Region>) -> Result<Self, Error>;
}

/// A region's elements as bytes, for any datatype: C order, each element in `byte_order`
/// (the array's own, or the machine's for a chunked array; a record's fields each keep the
/// order its datatype gives them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RegionBytes {
    /// The elements' bytes (elements times the datatype's size).
    pub bytes: Vec<u8>,
    /// The byte order of every element.
    pub byte_order: ByteOrder,
    /// The region's shape (axes taken by an index dropped, as numpy does).
    pub shape: Vec<usize>,
}

impl<T: Scalar> sealed::Sealed for Vec<T> {}
impl<'f, T: Scalar> FromRegion<'f> for Vec<T> {
    fn from_region(array: &Array<'f>, region: Option<&Region>) -> Result<Self, Error> {
        match region {
            None => array.read_vec(),
            Some(r) => array.region_vec(r),
        }
    }
}

impl<T: Scalar + bytemuck::Pod> sealed::Sealed for Cow<'_, [T]> {}
impl<'f, T: Scalar + bytemuck::Pod> FromRegion<'f> for Cow<'f, [T]> {
    fn from_region(array: &Array<'f>, region: Option<&Region>) -> Result<Self, Error> {
        match region {
            None => array.cow_slice(),
            Some(r) => array.region_vec(r).map(Cow::Owned),
        }
    }
}

impl sealed::Sealed for RegionBytes {}
impl<'f> FromRegion<'f> for RegionBytes {
    fn from_region(array: &Array<'f>, region: Option<&Region>) -> Result<Self, Error> {
        let whole = Region::default();
        let region = region.unwrap_or(&whole);
        let shape = array.region_shape(region)?;
        let (bytes, byte_order) = array.region_bytes(region)?;
        Ok(RegionBytes {
            bytes,
            byte_order,
            shape,
        })
    }
}

/// Reads as `ndarray::ArrayD<T>` (feature `ndarray`), shaped as the region.
#[cfg(feature = "ndarray")]
mod nd {
    use super::{Array, Error, FromRegion, Region, Scalar, sealed};

    impl<T: Scalar> sealed::Sealed for ndarray::ArrayD<T> {}
    impl<'f, T: Scalar> FromRegion<'f> for ndarray::ArrayD<T> {
        fn from_region(array: &Array<'f>, region: Option<&Region>) -> Result<Self, Error> {
            let (shape, v) = match region {
                None => (array.shape().to_vec(), array.read_vec::<T>()?),
                Some(r) => (array.region_shape(r)?, array.region_vec::<T>(r)?),
            };
            ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v)
                .map_err(|_| crate::error::array_error(array.pointer())(asdf_core_types::NdArrayError::ShapeMismatch))
        }
    }
}

impl<'f> Array<'f> {
    /// The whole array, as `O` (see [`FromRegion`]): `Vec<T>` (C order, native byte order),
    /// `Cow<[T]>` (zero-copy from a mapped file when it can be), [`RegionBytes`] (any
    /// datatype), `ndarray::ArrayD<T>`.
    ///
    /// ```no_run
    /// let file = asdf::open("image.asdf")?;
    /// let pixels: Vec<f32> = file.array("/sci/data")?.read()?;
    /// # Ok::<(), asdf::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Array`] with `TypeMismatch` when `T` is not the datatype;
    /// [`Error::ReadTooLarge`] past the limit of a decoded block; block and codec errors.
    pub fn read<O: FromRegion<'f>>(&self) -> Result<O, Error> {
        self.with_threads(|| O::from_region(self, None))
    }

    /// The elements of `region` (numpy's basic slicing: `"100:300, 1400:1600"`, `"2, ..."`,
    /// `"::-1"`) as `O` (see [`FromRegion`]), C order, shaped as [`Array::region_shape`]
    /// says. Only what the region touches is read: the chunks it touches of a chunked array,
    /// the byte range it spans of an uncompressed block (a ranged read), the Blosc2 chunks it
    /// spans of a frame; another compressed block is decoded once and kept for the handle's
    /// life.
    ///
    /// # Errors
    /// [`Error::Region`] when the region does not fit the array; as [`Array::read`].
    pub fn read_region<O: FromRegion<'f>>(&self, region: &Region) -> Result<O, Error> {
        self.with_threads(|| O::from_region(self, Some(region)))
    }

    /// Runs `f` with the file's thread count ([`crate::OpenOptions::threads`]).
    pub(crate) fn with_threads<R>(&self, f: impl FnOnce() -> R) -> R {
        asdf_layout::compression::exec::with_threads(self.file.options.threads, f)
    }
}
