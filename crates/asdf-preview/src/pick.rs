//! What to draw from a file: an array's values (a region of them) as numbers, the arrays
//! that look like images, and the picture an array makes.

use asdf::{AsdfFile, ByteOrder, Datatype, Element, Region, Scalar, ScalarType};

use crate::error::Error;
use crate::image::Plane;

/// An array's values (or a region's) as `f64` in C order, with its shape and mask.
#[derive(Debug, Clone, PartialEq)]
pub struct Values {
    /// The shape (of the region).
    pub shape: Vec<usize>,
    /// The values: integers and booleans converted, complex numbers as their magnitude.
    pub values: Vec<f64>,
    /// True where masked (`None`: the array has no mask).
    pub masked: Option<Vec<bool>>,
}

/// What an array makes: an image (a plane) or a line plot.
#[derive(Debug, Clone, PartialEq)]
pub enum Picture {
    /// A 2-D array or region.
    Image(Plane),
    /// A 1-D array or region.
    Line(Vec<f64>),
}

fn numeric(d: &Datatype) -> Option<ScalarType> {
    match d {
        Datatype::Scalar(t) => Some(*t),
        _ => None,
    }
}

/// `n` values of type `t` from bytes in `order` as `f64`.
fn to_f64(t: ScalarType, bytes: &[u8], order: ByteOrder) -> Vec<f64> {
    fn each<T: Scalar>(bytes: &[u8], order: ByteOrder, f: impl Fn(T) -> f64) -> Vec<f64> {
        bytes
            .chunks_exact(size_of::<T>())
            .map(|b| f(T::read(b, order)))
            .collect()
    }
    match t {
        ScalarType::Bool8 => bytes.iter().map(|b| f64::from(u8::from(*b != 0))).collect(),
        ScalarType::Int8 => each::<i8>(bytes, order, f64::from),
        ScalarType::Int16 => each::<i16>(bytes, order, f64::from),
        ScalarType::Int32 => each::<i32>(bytes, order, f64::from),
        ScalarType::Int64 => each::<i64>(bytes, order, |v| v as f64),
        ScalarType::UInt8 => each::<u8>(bytes, order, f64::from),
        ScalarType::UInt16 => each::<u16>(bytes, order, f64::from),
        ScalarType::UInt32 => each::<u32>(bytes, order, f64::from),
        ScalarType::UInt64 => each::<u64>(bytes, order, |v| v as f64),
        ScalarType::Float16 => each::<u16>(bytes, order, asdf::core_types::ndarray::f16_to_f64),
        ScalarType::Float32 => each::<f32>(bytes, order, f64::from),
        ScalarType::Float64 => each::<f64>(bytes, order, |v| v),
        ScalarType::Complex64 => bytes
            .chunks_exact(8)
            .map(|b| f64::from(f32::read(&b[..4], order)).hypot(f64::from(f32::read(&b[4..], order))))
            .collect(),
        ScalarType::Complex128 => bytes
            .chunks_exact(16)
            .map(|b| f64::read(&b[..8], order).hypot(f64::read(&b[8..], order)))
            .collect(),
        // A scalar type added later: not drawn as numbers it might not be.
        _ => vec![f64::NAN; bytes.len() / t.size().max(1)],
    }
}

fn element_f64(e: &Element) -> f64 {
    match e {
        Element::Bool(b) => f64::from(u8::from(*b)),
        Element::Int(i) => *i as f64,
        Element::UInt(u) => *u as f64,
        Element::Float(f) => *f,
        Element::Complex(c) => c.re.hypot(c.im),
        _ => f64::NAN,
    }
}

/// Refuses, before anything is allocated, a read that materialises `elements` elements of
/// `bytes_each` bytes (every buffer the read holds at once, summed) of the array at `pointer`
/// when memory cannot hold them: the limit a typed read of the library applies (a fallible
/// reservation, [`asdf::NdArrayError::TooLarge`]), for the reads that would otherwise allocate
/// without it (a region's bytes, values as `f64`, a picture's pixels). A view whose strides
/// overlap can claim any number of elements over a few bytes of block.
///
/// # Errors
/// [`asdf::Error::Array`] with [`asdf::NdArrayError::TooLarge`], naming the array and the
/// number of elements.
pub fn check_memory(pointer: &str, elements: usize, bytes_each: usize) -> Result<(), asdf::Error> {
    let too_large = || asdf::Error::Array {
        pointer: pointer.to_owned(),
        source: asdf::NdArrayError::TooLarge { elements },
    };
    let bytes = elements.checked_mul(bytes_each).ok_or_else(too_large)?;
    // Reserved, never touched, then given back: the answer of the allocator without the cost.
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(bytes).map_err(|_| too_large())
}

/// The number of elements of `shape` (`usize::MAX` past it: more than memory holds).
fn element_count(shape: &[usize]) -> usize {
    shape.iter().fold(1usize, |n, d| n.saturating_mul(*d))
}

/// The values of `region` of the array at `pointer`. Only what the region touches is read,
/// except for masked and inline arrays (read whole, then cut).
///
/// # Errors
/// [`Error::NotNumeric`] for strings and records; the file's errors.
pub fn read_values(file: &AsdfFile, pointer: &str, region: &Region) -> Result<Values, Error> {
    let a = file.array(pointer)?;
    let Some(t) = numeric(a.datatype()) else {
        return Err(Error::NotNumeric {
            pointer: pointer.to_owned(),
            datatype: a.datatype().to_string(),
        });
    };
    let shape = a.region_shape(region)?;
    // The region's bytes, its values as f64 and its pixels (RGBA) are held at once.
    let count = element_count(&shape);
    check_memory(pointer, count, a.datatype().size().saturating_add(8 + 4 + 1))?;
    if !a.is_masked() && a.view().is_ok() {
        let r: asdf::RegionBytes = a.read_region(region)?;
        return Ok(Values {
            shape,
            values: to_f64(t, &r.bytes, r.byte_order),
            masked: None,
        });
    }
    // Masked and inline arrays are read whole (as dynamically typed elements), then cut.
    check_memory(pointer, element_count(a.shape()), 48)?;
    let all = a.values()?;
    let sel = region.resolve(&all.shape).map_err(|source| asdf::Error::Region {
        pointer: pointer.to_owned(),
        source,
    })?;
    let lo = vec![0; all.shape.len()];
    let values: Vec<f64> = all.elements.iter().map(element_f64).collect();
    Ok(Values {
        values: sel.gather_in(&lo, &all.shape, &values),
        masked: all.mask.map(|m| sel.gather_in(&lo, &all.shape, &m)),
        shape,
    })
}

/// Whether an array looks like an image: numbers, at least 2 dimensions, the last two at least 2.
fn image_like(shape: &[usize], d: &Datatype) -> bool {
    numeric(d).is_some() && shape.len() >= 2 && shape[shape.len() - 2..].iter().all(|n| *n >= 2) && !shape.contains(&0)
}

/// The pointers of the file's arrays that look like images, in the tree's order.
///
/// # Errors
/// The file's.
pub fn image_pointers(file: &AsdfFile) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for p in file.array_pointers() {
        if let Ok(a) = file.array(&p)
            && image_like(a.shape(), a.datatype())
        {
            out.push(p);
        }
    }
    Ok(out)
}

/// The region drawn when none is given: all of a 1-D or 2-D array, the first plane of a cube
/// (index 0 on every axis before the last two).
#[must_use]
pub fn default_region(shape: &[usize]) -> Region {
    default_slice(shape).parse().unwrap_or_default()
}

/// [`default_region`] as numpy's slicing text (`"0, :, :"`).
#[must_use]
pub fn default_slice(shape: &[usize]) -> String {
    let lead = shape.len().saturating_sub(2);
    let text: Vec<&str> = std::iter::repeat_n("0", lead)
        .chain(std::iter::repeat_n(":", shape.len() - lead))
        .collect();
    text.join(", ")
}

/// The picture of `region` of the array at `pointer` (`None`: [`default_region`]).
///
/// # Errors
/// [`Error::NotAPicture`] when the region has no axis or more than two; [`Error::Empty`] when
/// it has no element; as [`read_values`].
pub fn picture(file: &AsdfFile, pointer: &str, region: Option<&Region>) -> Result<Picture, Error> {
    let shape = file.array(pointer)?.shape().to_vec();
    let default = default_region(&shape);
    let v = read_values(file, pointer, region.unwrap_or(&default))?;
    if v.shape.contains(&0) && matches!(v.shape.len(), 1 | 2) {
        return Err(Error::Empty {
            pointer: pointer.to_owned(),
            shape: v.shape,
        });
    }
    match v.shape[..] {
        [n] => Ok(Picture::Line(match v.masked {
            // Masked samples leave gaps, as NaN does.
            Some(m) => v
                .values
                .iter()
                .zip(m)
                .map(|(x, m)| if m { f64::NAN } else { *x })
                .collect(),
            None => {
                debug_assert_eq!(n, v.values.len());
                v.values
            }
        })),
        [h, w] => Ok(Picture::Image(Plane {
            width: w,
            height: h,
            values: v.values,
            masked: v.masked,
        })),
        _ => Err(Error::NotAPicture {
            pointer: pointer.to_owned(),
            shape: v.shape,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_regions_take_the_first_plane() {
        assert_eq!(default_region(&[3, 4, 5]), "0, :, :".parse().unwrap());
        assert_eq!(default_region(&[7]), ":".parse().unwrap());
        assert_eq!(default_region(&[2, 3, 4, 5]), "0, 0, :, :".parse().unwrap());
        assert!(image_like(&[4, 5], &Datatype::Scalar(ScalarType::UInt16)));
        assert!(!image_like(&[4, 1], &Datatype::Scalar(ScalarType::UInt16)));
        assert!(!image_like(&[100], &Datatype::Scalar(ScalarType::Float32)));
    }

    #[test]
    fn bytes_of_every_type_become_numbers() {
        assert_eq!(to_f64(ScalarType::Int16, &[0xff, 0xfe], ByteOrder::Big), vec![-2.0]);
        assert_eq!(to_f64(ScalarType::Float16, &[0x00, 0x3c], ByteOrder::Little), vec![1.0]);
        let c: Vec<u8> = [3.0f32, 4.0].iter().flat_map(|f| f.to_le_bytes()).collect();
        assert_eq!(to_f64(ScalarType::Complex64, &c, ByteOrder::Little), vec![5.0]);
        assert_eq!(to_f64(ScalarType::Bool8, &[0, 2], ByteOrder::Little), vec![0.0, 1.0]);
    }
}
