//! The byte layout of a block-backed array (shape, strides, offset, element size), checked
//! against its block once, and what can be done with it without decoding every element: the
//! byte offset of one element, the byte range the view touches, typed copies in native order,
//! and zero-copy slices where the layout allows.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::ops::Range;

use crate::datatype::{ByteOrder, Datatype, ScalarType};
use crate::ndarray::{Decoded, Element, NdArray, NdArrayError, decode_element};

impl NdArray {
    /// Decodes the elements: from `block` (the decoded bytes of the array's block) for arrays
    /// with a `source`, from the inline data otherwise.
    ///
    /// # Errors
    /// The view reaching outside the block, inline data not matching shape or datatype, a
    /// missing block.
    pub fn decode(&self, block: Option<&[u8]>) -> Result<Decoded, NdArrayError> {
        if self.source.is_none() {
            return self.decode_inline();
        }
        let block = block.ok_or(NdArrayError::MissingBlock)?;
        let view = View::new(self, block.len() as u64)?;
        let elements = view.decode_all(block)?;
        Ok(Decoded {
            datatype: view.datatype,
            shape: view.shape,
            elements,
            nulls: Vec::new(),
        })
    }
}

/// The layout of a block-backed array, checked against its block's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// The element type.
    pub datatype: Datatype,
    /// Byte order of the data.
    pub byteorder: ByteOrder,
    /// The shape (a streamed first dimension resolved).
    pub shape: Vec<usize>,
    /// Bytes between consecutive elements along each dimension.
    pub strides: Vec<i64>,
    /// Byte offset of element `[0, 0, ...]` in the block.
    pub offset: u64,
}

/// More elements than memory can hold (a view with zero strides can claim any number).
fn too_many(count: usize) -> NdArrayError {
    NdArrayError::TooLarge { elements: count }
}

/// Why an element index is refused.
fn bad_index() -> NdArrayError {
    NdArrayError::Invalid("index")
}

impl View {
    /// The layout of `array` in a block of `block_len` decoded bytes.
    ///
    /// # Errors
    /// Missing datatype or shape, strides of the wrong length, a view reaching outside the block.
    pub fn new(array: &NdArray, block_len: u64) -> Result<Self, NdArrayError> {
        let datatype = array.datatype.clone().ok_or(NdArrayError::Invalid("datatype"))?;
        let shape = array.resolved_shape(Some(block_len))?;
        let size = datatype.size();
        let strides: Vec<i64> = match &array.strides {
            Some(s) if s.len() == shape.len() => s.clone(),
            Some(_) => return Err(NdArrayError::Invalid("strides")),
            None => c_strides(&shape, size),
        };
        let v = View {
            datatype,
            byteorder: array.byteorder,
            shape,
            strides,
            offset: array.offset,
        };
        if v.shape.len() > crate::ndarray::MAX_DIMS {
            return Err(NdArrayError::TooManyDims { ndim: v.shape.len() });
        }
        let Some((lo, hi)) = v.checked_extent() else {
            return Err(NdArrayError::SizeOverflow);
        };
        if v.count() > 0 && (lo < 0 || hi > i128::from(block_len)) {
            return Err(NdArrayError::OutOfBlock {
                offset: v.offset,
                end: if lo < 0 { lo } else { hi },
                len: block_len,
            });
        }
        Ok(v)
    }

    /// The number of elements.
    #[must_use]
    pub fn count(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |a, d| a.checked_mul(*d))
            .unwrap_or(usize::MAX)
    }

    /// The lowest byte any element touches and one past the highest (may be out of range
    /// before the check in [`View::new`]).
    fn extent(&self) -> (i128, i128) {
        self.checked_extent().unwrap_or((i128::MIN, i128::MAX))
    }

    /// [`View::extent`], or `None` when it overflows (checked in [`View::new`]).
    fn checked_extent(&self) -> Option<(i128, i128)> {
        let size = i128::try_from(self.datatype.checked_size()?).ok()?;
        let (mut lo, mut hi) = (i128::from(self.offset), i128::from(self.offset).checked_add(size)?);
        for (d, s) in self.shape.iter().zip(&self.strides) {
            let span = i128::from(*s).checked_mul(i128::try_from(*d).ok()?.checked_sub(1)?)?;
            if span < 0 {
                lo = lo.checked_add(span)?;
            } else {
                hi = hi.checked_add(span)?;
            }
        }
        Some((lo, hi))
    }

    /// For a region of `shape` (the whole view: its own shape) that its strides make far
    /// larger than the data the view spans (over 1 GiB, and over 64 times those bytes: zero or
    /// overlapping strides repeat data), the bytes it claims and the bytes behind them:
    /// writing every element out would run for hours. `None` for every other region.
    #[must_use]
    pub fn repeated(&self, shape: &[usize]) -> Option<(u128, u128)> {
        let size = self.datatype.size() as u128;
        let bytes = shape.iter().fold(size, |n, &d| n.saturating_mul(d as u128));
        if bytes <= 1 << 30 {
            return None;
        }
        let span = self.byte_range();
        let data = u128::from(span.end.saturating_sub(span.start)).max(size);
        (bytes > data.saturating_mul(64)).then_some((bytes, data))
    }

    /// The bytes of the block this view touches (empty for an empty array).
    #[must_use]
    pub fn byte_range(&self) -> Range<u64> {
        if self.count() == 0 {
            return self.offset..self.offset;
        }
        let (lo, hi) = self.extent();
        u64::try_from(lo).unwrap_or(0)..u64::try_from(hi).unwrap_or(0)
    }

    /// True when the elements lie back to back in C order.
    #[must_use]
    pub fn is_c_contiguous(&self) -> bool {
        self.count() == 0 || self.strides == c_strides(&self.shape, self.datatype.size())
    }

    /// The byte offset in the block of the element at `index` (one index per dimension).
    ///
    /// # Errors
    /// [`NdArrayError::Invalid`] (`index`) for the wrong number of indices or one out of range.
    pub fn element_offset(&self, index: &[usize]) -> Result<u64, NdArrayError> {
        if index.len() != self.shape.len() || index.iter().zip(&self.shape).any(|(i, d)| i >= d) {
            return Err(bad_index());
        }
        let pos = i128::from(self.offset)
            + index
                .iter()
                .zip(&self.strides)
                .map(|(i, s)| *i as i128 * i128::from(*s))
                .sum::<i128>();
        u64::try_from(pos).map_err(|_| bad_index())
    }

    /// Decodes one element from the bytes at its offset (`bytes` starts at the element and
    /// holds at least one element).
    ///
    /// # Errors
    /// [`NdArrayError::Invalid`] when `bytes` is too short.
    pub fn decode_one(&self, bytes: &[u8]) -> Result<Element, NdArrayError> {
        if bytes.len() < self.datatype.size() {
            return Err(NdArrayError::Invalid("element bytes"));
        }
        Ok(decode_element(&self.datatype, bytes, self.byteorder))
    }

    /// Every element, decoded, in C order. `block` is the whole decoded block.
    ///
    /// # Errors
    /// A block shorter than the view.
    pub fn decode_all(&self, block: &[u8]) -> Result<Vec<Element>, NdArrayError> {
        self.check_block(block)?;
        let size = self.datatype.size();
        let mut out = Vec::new();
        out.try_reserve_exact(self.count())
            .map_err(|_| too_many(self.count()))?;
        for pos in self.positions() {
            out.push(decode_element(&self.datatype, &block[pos..pos + size], self.byteorder));
        }
        Ok(out)
    }

    /// Every element, decoded one at a time in C order, without holding them: a view that
    /// repeats its block's bytes (zero strides) costs no memory for its repeats.
    ///
    /// # Errors
    /// A block shorter than the view.
    pub fn elements<'a>(&'a self, block: &'a [u8]) -> Result<impl Iterator<Item = Element> + 'a, NdArrayError> {
        self.check_block(block)?;
        let size = self.datatype.size();
        Ok(self
            .positions()
            .map(move |pos| decode_element(&self.datatype, &block[pos..pos + size], self.byteorder)))
    }

    fn check_block(&self, block: &[u8]) -> Result<(), NdArrayError> {
        let r = self.byte_range();
        if r.end > block.len() as u64 {
            return Err(NdArrayError::OutOfBlock {
                offset: self.offset,
                end: i128::from(r.end),
                len: block.len() as u64,
            });
        }
        Ok(())
    }

    /// Byte positions of the elements in C order (the view must be inside the block).
    fn positions(&self) -> impl Iterator<Item = usize> + '_ {
        let count = self.count();
        let mut idx = vec![0usize; self.shape.len()];
        let mut pos = i128::from(self.offset);
        (0..count).map(move |_| {
            let here = usize::try_from(pos).unwrap_or(0);
            for k in (0..idx.len()).rev() {
                idx[k] += 1;
                pos += i128::from(self.strides[k]);
                if idx[k] < self.shape[k] {
                    break;
                }
                pos -= i128::from(self.strides[k]) * self.shape[k] as i128;
                idx[k] = 0;
            }
            here
        })
    }

    /// The elements as a `Vec<T>` in native byte order, C order. The datatype must be `T`'s
    /// exactly (no conversion).
    ///
    /// # Errors
    /// [`NdArrayError::TypeMismatch`] when the datatype is not `T`'s; a block shorter than the
    /// view.
    pub fn to_vec<T: Scalar>(&self, block: &[u8]) -> Result<Vec<T>, NdArrayError> {
        self.check_type::<T>()?;
        self.check_block(block)?;
        let size = std::mem::size_of::<T>();
        if self.is_c_contiguous() {
            let start = usize::try_from(self.offset).map_err(|_| bad_index())?;
            let bytes = &block[start..start + self.count() * size];
            let mut out: Vec<T> = Vec::new();
            out.try_reserve_exact(self.count())
                .map_err(|_| too_many(self.count()))?;
            out.extend(bytes.chunks_exact(size).map(|c| T::read(c, self.byteorder)));
            return Ok(out);
        }
        let mut out: Vec<T> = Vec::new();
        out.try_reserve_exact(self.count())
            .map_err(|_| too_many(self.count()))?;
        out.extend(self.positions().map(|p| T::read(&block[p..p + size], self.byteorder)));
        Ok(out)
    }

    /// The elements as an `ndarray::ArrayD<T>` (native order, the array's shape).
    ///
    /// # Errors
    /// As [`View::to_vec`].
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray<T: Scalar>(&self, block: &[u8]) -> Result<ndarray::ArrayD<T>, NdArrayError> {
        let v = self.to_vec::<T>(block)?;
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&self.shape), v).map_err(|_| NdArrayError::ShapeMismatch)
    }

    /// The elements as a slice of `block`, without copying, when the layout allows it: the
    /// datatype is `T`'s, the byte order native, the view C-contiguous and the bytes aligned
    /// for `T`. `None` otherwise (use [`View::to_vec`]).
    #[must_use]
    pub fn as_slice<'b, T: Scalar + bytemuck::Pod>(&self, block: &'b [u8]) -> Option<&'b [T]> {
        if self.check_type::<T>().is_err() || self.check_block(block).is_err() || !self.is_c_contiguous() {
            return None;
        }
        let native = if cfg!(target_endian = "little") {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        if self.byteorder != native && std::mem::size_of::<T>() > 1 {
            return None;
        }
        let start = usize::try_from(self.offset).ok()?;
        let bytes = block.get(start..start + self.count() * std::mem::size_of::<T>())?;
        bytemuck::try_cast_slice(bytes).ok()
    }

    /// The elements one by one, in native order and C order, read straight from `block`
    /// (borrowed or owned): no copy of the array, whatever its alignment or byte order.
    ///
    /// # Errors
    /// As [`View::to_vec`].
    pub fn iter<'b, T: Scalar>(&self, block: Cow<'b, [u8]>) -> Result<Elements<'b, T>, NdArrayError> {
        self.check_type::<T>()?;
        self.check_block(&block)?;
        Ok(Elements {
            block,
            view: self.clone(),
            index: vec![0; self.shape.len()],
            pos: i128::from(self.offset),
            left: self.count(),
            contiguous: self.is_c_contiguous(),
            _t: PhantomData,
        })
    }

    fn check_type<T: Scalar>(&self) -> Result<(), NdArrayError> {
        match &self.datatype {
            Datatype::Scalar(t) if *t == T::TYPE => Ok(()),
            other => Err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: other.to_string(),
            }),
        }
    }
}

/// The elements of a [`View`], read one by one from its block; see [`View::iter`].
#[derive(Debug)]
pub struct Elements<'b, T> {
    block: Cow<'b, [u8]>,
    view: View,
    index: Vec<usize>,
    pos: i128,
    left: usize,
    contiguous: bool,
    _t: PhantomData<T>,
}

impl<T: Scalar> Iterator for Elements<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let size = std::mem::size_of::<T>();
        let here = usize::try_from(self.pos).ok()?;
        let value = T::read(self.block.get(here..here + size)?, self.view.byteorder);
        if self.contiguous {
            self.pos += size as i128;
        } else {
            let v = &self.view;
            for k in (0..self.index.len()).rev() {
                self.index[k] += 1;
                self.pos += i128::from(v.strides[k]);
                if self.index[k] < v.shape[k] {
                    break;
                }
                self.pos -= i128::from(v.strides[k]) * v.shape[k] as i128;
                self.index[k] = 0;
            }
        }
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }

    /// Contiguous data is folded straight over its bytes (this is what `sum`, `max`,
    /// `for_each` and friends use), which the compiler can vectorise.
    fn fold<B, F: FnMut(B, T) -> B>(mut self, init: B, mut f: F) -> B {
        let size = std::mem::size_of::<T>();
        if !self.contiguous {
            let mut acc = init;
            for x in self.by_ref() {
                acc = f(acc, x);
            }
            return acc;
        }
        let start = usize::try_from(self.pos).unwrap_or(usize::MAX);
        let bytes = self
            .left
            .checked_mul(size)
            .and_then(|n| start.checked_add(n))
            .and_then(|end| self.block.get(start..end))
            .unwrap_or_default();
        let order = self.view.byteorder;
        bytes.chunks_exact(size).map(|c| T::read(c, order)).fold(init, f)
    }
}

impl<T: Scalar> ExactSizeIterator for Elements<'_, T> {}

/// C-order strides for `shape` with elements of `size` bytes.
#[must_use]
pub fn c_strides(shape: &[usize], size: usize) -> Vec<i64> {
    let mut st = vec![0i64; shape.len()];
    let mut acc = i64::try_from(size).unwrap_or(i64::MAX);
    for (i, d) in shape.iter().enumerate().rev() {
        st[i] = acc;
        acc = acc.saturating_mul(i64::try_from(*d).unwrap_or(i64::MAX));
    }
    st
}

/// A Rust type that an ASDF scalar datatype maps onto exactly.
pub trait Scalar: Copy {
    /// The datatype.
    const TYPE: ScalarType;
    /// Reads one value from the first `size_of::<Self>()` bytes of `b`.
    fn read(b: &[u8], order: ByteOrder) -> Self;
    /// The value of a decoded element of this type (`None` for another kind of element).
    fn from_element(e: &Element) -> Option<Self>;
    /// Appends the elements whose bytes are `b` (whole elements; a partial one at the end is
    /// ignored) to `out`.
    fn extend_from_bytes(out: &mut Vec<Self>, b: &[u8], order: ByteOrder) {
        out.extend(
            b.chunks_exact(std::mem::size_of::<Self>())
                .map(|c| Self::read(c, order)),
        );
    }
    /// `b` (whole elements) seen in place as elements, when that needs no conversion: the
    /// byte order is this machine's, every bit pattern is a value of `Self` and `b` is
    /// aligned for it. `None` otherwise (the caller converts, as `extend_from_bytes` does).
    fn as_native(b: &[u8], order: ByteOrder) -> Option<&[Self]> {
        let _ = (b, order);
        None
    }
}

macro_rules! scalar {
    ($($t:ty => $st:ident, $conv:expr);*) => {$(
        impl Scalar for $t {
            const TYPE: ScalarType = ScalarType::$st;
            #[inline]
            fn read(b: &[u8], order: ByteOrder) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(&b[..std::mem::size_of::<$t>()]);
                match order {
                    ByteOrder::Big => <$t>::from_be_bytes(a),
                    ByteOrder::Little => <$t>::from_le_bytes(a),
                }
            }
            #[inline]
            fn from_element(e: &Element) -> Option<Self> {
                $conv(e)
            }
            fn as_native(b: &[u8], order: ByteOrder) -> Option<&[Self]> {
                let native = if cfg!(target_endian = "little") { ByteOrder::Little } else { ByteOrder::Big };
                if order != native && std::mem::size_of::<$t>() > 1 {
                    return None;
                }
                if b.is_empty() {
                    return Some(&[]);
                }
                // Aligned whole elements only (bytemuck checks; these types are `Pod`).
                bytemuck::try_cast_slice::<u8, $t>(b).ok()
            }
            /// Fixed-size chunks: a loop the compiler turns into a copy (or byte swaps).
            fn extend_from_bytes(out: &mut Vec<Self>, b: &[u8], order: ByteOrder) {
                let (chunks, _) = b.as_chunks::<{ std::mem::size_of::<$t>() }>();
                match order {
                    ByteOrder::Big => out.extend(chunks.iter().map(|c| <$t>::from_be_bytes(*c))),
                    ByteOrder::Little => out.extend(chunks.iter().map(|c| <$t>::from_le_bytes(*c))),
                }
            }
        }
    )*};
}

fn int<T: TryFrom<i64> + TryFrom<u64>>(e: &Element) -> Option<T> {
    match e {
        Element::Int(i) => T::try_from(*i).ok(),
        Element::UInt(u) => T::try_from(*u).ok(),
        _ => None,
    }
}

fn float(e: &Element) -> Option<f64> {
    match e {
        Element::Float(f) => Some(*f),
        _ => None,
    }
}

/// Float32 elements were decoded from f32, so narrowing them back is exact.
#[allow(clippy::cast_possible_truncation)]
fn float32(e: &Element) -> Option<f32> {
    float(e).map(|f| f as f32)
}

scalar!(i8 => Int8, int; i16 => Int16, int; i32 => Int32, int; i64 => Int64, int; u8 => UInt8, int;
    u16 => UInt16, int; u32 => UInt32, int; u64 => UInt64, int;
    f32 => Float32, float32; f64 => Float64, float);

impl Scalar for bool {
    const TYPE: ScalarType = ScalarType::Bool8;
    #[inline]
    fn read(b: &[u8], _: ByteOrder) -> Self {
        b[0] != 0
    }
    #[inline]
    fn from_element(e: &Element) -> Option<Self> {
        match e {
            Element::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_read<T: Scalar + PartialEq + std::fmt::Debug>(bytes: &[u8]) {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut fast = vec![];
            T::extend_from_bytes(&mut fast, bytes, order);
            let slow: Vec<T> = bytes
                .chunks_exact(std::mem::size_of::<T>())
                .map(|c| T::read(c, order))
                .collect();
            assert_eq!(fast, slow, "{:?} {order:?}", T::TYPE);
        }
    }

    /// The fixed-size conversions give what element-by-element reading gives, both byte
    /// orders, every type, with a partial element at the end ignored.
    #[test]
    fn extend_from_bytes_is_read_in_a_loop() {
        let bytes: Vec<u8> = (0..1003u32).map(|i| (i * 37 + i / 7).to_le_bytes()[0]).collect();
        same_as_read::<i8>(&bytes);
        same_as_read::<i16>(&bytes);
        same_as_read::<i32>(&bytes);
        same_as_read::<i64>(&bytes);
        same_as_read::<u8>(&bytes);
        same_as_read::<u16>(&bytes);
        same_as_read::<u32>(&bytes);
        same_as_read::<u64>(&bytes);
        same_as_read::<bool>(&bytes);
        // Floats compared by bits (NaNs among the patterns).
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut a = vec![];
            f64::extend_from_bytes(&mut a, &bytes, order);
            let b: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::read(c, order)).collect();
            assert!(a.iter().map(|x| x.to_bits()).eq(b.iter().map(|x| x.to_bits())));
            let mut a = vec![];
            f32::extend_from_bytes(&mut a, &bytes, order);
            let b: Vec<f32> = bytes.chunks_exact(4).map(|c| f32::read(c, order)).collect();
            assert!(a.iter().map(|x| x.to_bits()).eq(b.iter().map(|x| x.to_bits())));
        }
    }

    /// Elements seen in place are the elements read one by one; only where the bytes are in
    /// native order, aligned and whole elements; never for bool (not every byte is a bool).
    fn in_place_as_read<T: Scalar + std::fmt::Debug>(bytes: &[u8], bits: impl Fn(&T) -> u64) {
        let size = std::mem::size_of::<T>();
        // Starts counted from an 8-aligned base: aligned and misaligned starts for every type.
        let base = bytes.as_ptr().align_offset(8);
        let all = &bytes[base..];
        let native = if cfg!(target_endian = "little") {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        for start in 0..8 {
            for len in [0, size, 5 * size, 5 * size + 1] {
                let b = &all[start..start + len];
                for order in [ByteOrder::Little, ByteOrder::Big] {
                    let got = T::as_native(b, order);
                    let whole = len == 0 || (start % std::mem::align_of::<T>() == 0 && len % size == 0);
                    let can = whole && (order == native || size == 1);
                    assert_eq!(
                        got.is_some(),
                        can,
                        "{} at {start} len {len} {order:?}",
                        std::any::type_name::<T>()
                    );
                    if let Some(got) = got {
                        let want: Vec<u64> = b.chunks_exact(size).map(|c| bits(&T::read(c, order))).collect();
                        assert_eq!(got.iter().map(&bits).collect::<Vec<_>>(), want);
                    }
                }
            }
        }
    }

    #[test]
    fn as_native_only_where_no_conversion_is_needed() {
        let bytes: Vec<u8> = (0..120u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8)
            .collect();
        in_place_as_read::<u8>(&bytes, |x| u64::from(*x));
        in_place_as_read::<i16>(&bytes, |x| *x as u64);
        in_place_as_read::<u32>(&bytes, |x| u64::from(*x));
        in_place_as_read::<i64>(&bytes, |x| *x as u64);
        in_place_as_read::<f32>(&bytes, |x| u64::from(x.to_bits()));
        in_place_as_read::<f64>(&bytes, |x| x.to_bits());
        let b = [1u8, 0, 2];
        assert!(bool::as_native(&b, ByteOrder::Little).is_none());
    }
}

/// Elements handed over in order, as bytes of whole elements where they lie so, else one by one.
#[derive(Debug)]
pub enum Piece<'a, T> {
    /// The bytes of whole elements in this byte order.
    Bytes(&'a [u8], crate::ByteOrder),
    /// One element.
    One(T),
}

/// Elements per slice [`chunks_from_pieces`] hands over (64 KiB of `f64`): the `asdf` facade's
/// `Array::for_each_chunk`.
pub const CHUNK_ELEMENTS: usize = 8192;

/// The elements `pieces` hands over, given to `f` in chunks of [`CHUNK_ELEMENTS`] (the last
/// shorter): straight from the bytes where they need no conversion, else converted into one
/// reused buffer.
///
/// # Errors
/// What `pieces` returns.
pub fn chunks_from_pieces<T: Scalar, E>(
    pieces: impl FnOnce(&mut dyn FnMut(Piece<'_, T>)) -> Result<(), E>,
    mut f: impl FnMut(&[T]),
) -> Result<(), E> {
    let size = std::mem::size_of::<T>();
    let mut buf: Vec<T> = Vec::with_capacity(CHUNK_ELEMENTS);
    pieces(&mut |p| match p {
        Piece::Bytes(mut bytes, order) => {
            // Whole chunks straight from the bytes where they need no conversion (native
            // order, aligned: a mapped block usually is), without a copy.
            if buf.is_empty()
                && let Some(all) = T::as_native(bytes, order)
            {
                let mut it = all.chunks_exact(CHUNK_ELEMENTS);
                for c in &mut it {
                    f(c);
                }
                let rest = it.remainder();
                buf.extend_from_slice(rest);
                bytes = &[];
            }
            while !bytes.is_empty() {
                let n = (CHUNK_ELEMENTS - buf.len()).min(bytes.len() / size);
                T::extend_from_bytes(&mut buf, &bytes[..n * size], order);
                bytes = &bytes[n * size..];
                if buf.len() == CHUNK_ELEMENTS {
                    f(&buf);
                    buf.clear();
                }
            }
        }
        Piece::One(x) => {
            buf.push(x);
            if buf.len() == CHUNK_ELEMENTS {
                f(&buf);
                buf.clear();
            }
        }
    })?;
    if !buf.is_empty() {
        f(&buf);
    }
    Ok(())
}

impl Decoded {
    /// The elements as `T`, C order.
    ///
    /// # Errors
    /// [`NdArrayError::TypeMismatch`] when `T` is not the datatype.
    pub fn typed<T: Scalar>(&self) -> Result<Vec<T>, NdArrayError> {
        if self.datatype != Datatype::Scalar(T::TYPE) {
            return Err(NdArrayError::TypeMismatch {
                want: T::TYPE,
                have: self.datatype.to_string(),
            });
        }
        self.elements
            .iter()
            .map(|e| T::from_element(e).ok_or(NdArrayError::Invalid("data")))
            .collect()
    }
}
