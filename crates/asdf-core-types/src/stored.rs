//! An array's elements where they are stored: its [`View`] over the bytes of a storage
//! ([`ArrayBytes`]: a block, an HDU's data, a chunked array's chunks), and the reads that go
//! through it (whole, a region, one element, in pieces), each reading only what it needs of
//! the storage. The facade's `Array` holds one of these; nothing here matches a kind of
//! storage.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use asdf_layout::storage::{ArrayBytes, RangeCost, StorageError};

use crate::region::Selection;
use crate::view::{Piece, c_strides};
use crate::{ByteOrder, Datatype, Element, NdArrayError, Scalar, View};

/// A storage of array bytes, shared.
pub type Bytes<'a> = Arc<dyn ArrayBytes<'a> + 'a>;

/// Why stored elements cannot be read.
#[derive(Debug)]
pub enum ReadError {
    /// The storage's.
    Storage(StorageError),
    /// The view's (an offset or index outside the data, a type mismatch).
    Array(NdArrayError),
    /// A buffer of this many bytes cannot be had.
    TooLarge(u128),
}

/// What a region read decodes.
#[derive(Debug)]
pub enum RegionData<'a> {
    /// Nothing: the region is empty.
    Empty,
    /// A view of the region's elements over these bytes.
    View(View, Cow<'a, [u8]>),
    /// The C-ordered box around the region (native byte order), starting at `lo`.
    Boxed {
        /// The box's view.
        view: View,
        /// Its bytes.
        bytes: Vec<u8>,
        /// Its first index.
        lo: Vec<usize>,
    },
}

/// An array's view and the storage it reads.
pub struct Stored<'a> {
    /// How the elements lie in the storage's decoded bytes.
    pub view: View,
    /// The storage.
    pub at: Bytes<'a>,
    /// Bytes of a compressed stream decoded by a region read, from the offset given, kept for
    /// the handle's life: the whole block, or the span of a view over at most half of it.
    decoded: OnceLock<(u64, Vec<u8>)>,
}

impl std::fmt::Debug for Stored<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored")
            .field("view", &self.view)
            .field("storage", &self.at.storage())
            .finish_non_exhaustive()
    }
}

impl<'a> Stored<'a> {
    /// The view `view` over `at`.
    #[must_use]
    pub fn new(view: View, at: Bytes<'a>) -> Self {
        Self {
            view,
            at,
            decoded: OnceLock::new(),
        }
    }

    /// The bytes the view reads, and the view over them: only the range it touches where a
    /// range costs its bytes, or (compressed) where it touches at most half of the data
    /// (Blosc2 frames decode just the chunks it spans, streaming codecs stop at its end). A
    /// 4-element view over a block that decodes to gigabytes costs its 4 elements' chunk.
    ///
    /// # Errors
    /// The storage's.
    pub fn data(&self) -> Result<(View, Cow<'a, [u8]>), ReadError> {
        let mut view = self.view.clone();
        let range = view.byte_range();
        let len = self.at.len().map_err(ReadError::Storage)?;
        let ranged = match self.at.range_cost() {
            RangeCost::Bytes => true,
            RangeCost::Chunks | RangeCost::Prefix => range.end - range.start <= len / 2,
        };
        if ranged && range.end <= len {
            let data = self.at.read_range(range.clone()).map_err(ReadError::Storage)?;
            view.offset -= range.start;
            return Ok((view, data));
        }
        Ok((view, self.at.read().map_err(ReadError::Storage)?))
    }

    /// The elements as `Vec<T>`, C order, native byte order.
    ///
    /// # Errors
    /// A type mismatch; the storage's.
    pub fn to_vec<T: Scalar>(&self) -> Result<Vec<T>, ReadError> {
        let (view, data) = self.data()?;
        view.to_vec(&data).map_err(ReadError::Array)
    }

    /// The elements as a slice of `T`: borrowed straight from the storage's bytes (a memory
    /// map, a file held in memory) when the data is uncompressed, the byte order native, the
    /// layout C-contiguous and the data aligned; a copy otherwise.
    ///
    /// # Errors
    /// As [`Stored::to_vec`].
    pub fn cow_slice<T: Scalar + bytemuck::Pod>(&self) -> Result<Cow<'a, [T]>, ReadError> {
        let (view, data) = self.data()?;
        match data {
            Cow::Borrowed(b) => match view.as_slice::<T>(b) {
                Some(s) => Ok(Cow::Borrowed(s)),
                None => view.to_vec(b).map(Cow::Owned).map_err(ReadError::Array),
            },
            Cow::Owned(b) => view.to_vec(&b).map(Cow::Owned).map_err(ReadError::Array),
        }
    }

    /// One element: only its bytes read.
    ///
    /// # Errors
    /// An index out of range; the storage's.
    pub fn element(&self, index: &[usize]) -> Result<Element, ReadError> {
        let off = self.view.element_offset(index).map_err(ReadError::Array)?;
        let size = self.view.datatype.size() as u64;
        let bytes = self.at.read_range(off..off + size).map_err(ReadError::Storage)?;
        self.view.decode_one(&bytes).map_err(ReadError::Array)
    }

    /// Hands `g` the elements in C order: the bytes of whole elements with their byte order,
    /// or (strided views, another datatype) elements one by one; bounded memory where the
    /// storage hands its bytes in pieces (a compressed block decoded about 1 MiB at a time, a
    /// chunked array a row of chunks at a time).
    ///
    /// # Errors
    /// As [`Stored::to_vec`].
    pub fn pieces<T: Scalar>(&self, g: &mut dyn FnMut(Piece<'_, T>)) -> Result<(), ReadError> {
        let view = &self.view;
        let size = std::mem::size_of::<T>();
        if view.datatype != Datatype::Scalar(T::TYPE) || !view.is_c_contiguous() {
            let (view, data) = self.data()?;
            for x in view.iter::<T>(data).map_err(ReadError::Array)? {
                g(Piece::One(x));
            }
            return Ok(());
        }
        let range = view.byte_range();
        let order = view.byteorder;
        // Position in the decoded data, and the bytes of an element split between pieces.
        let (mut pos, mut carry) = (0u64, Vec::<u8>::with_capacity(size));
        self.at
            .pieces(&mut |piece: &[u8]| {
                let start = pos;
                pos += piece.len() as u64;
                let lo = usize::try_from(range.start.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
                let hi = usize::try_from(range.end.saturating_sub(start).min(piece.len() as u64)).unwrap_or(0);
                let mut part = &piece[lo..hi.max(lo)];
                if !carry.is_empty() {
                    let take = (size - carry.len()).min(part.len());
                    carry.extend_from_slice(&part[..take]);
                    part = &part[take..];
                    if carry.len() == size {
                        g(Piece::Bytes(&carry, order));
                        carry.clear();
                    }
                }
                let whole = part.len() - part.len() % size;
                if whole > 0 {
                    g(Piece::Bytes(&part[..whole], order));
                }
                carry.extend_from_slice(&part[whole..]);
            })
            .map_err(ReadError::Storage)
    }

    /// What a read of the region `sel` decodes: a view over bytes holding its elements, or (a
    /// chunked array) the C-ordered box around it. Only what the region touches is read: the
    /// chunks it touches of a chunked array, the byte range it spans of an uncompressed block,
    /// the Blosc2 chunks it spans of a frame; another compressed stream is decoded once and
    /// kept (its span, or the whole block for a view over most of it).
    ///
    /// # Errors
    /// The storage's; an offset outside the data.
    pub fn region(&self, sel: &Selection) -> Result<RegionData<'a>, ReadError> {
        let (view, at) = (&self.view, &self.at);
        if sel.count() == 0 {
            return Ok(RegionData::Empty);
        }
        let (lo, extent) = sel.bounding_box();
        if let Some(bytes) = at.read_box(&lo, &extent) {
            let bytes = bytes.map_err(ReadError::Storage)?;
            let view = View {
                strides: c_strides(&extent, view.datatype.size()),
                shape: extent,
                offset: 0,
                ..view.clone()
            };
            return Ok(RegionData::Boxed { view, bytes, lo });
        }
        let mut sub = view.select(sel);
        let range = sub.byte_range();
        if at.range_cost() != RangeCost::Prefix {
            // A ranged read; a Blosc2 frame decodes only the chunks the range spans.
            let data = at.read_range(range.clone()).map_err(ReadError::Storage)?;
            sub.offset -= range.start;
            return Ok(RegionData::View(sub, data));
        }
        // A compressed stream: decoded once and kept for the handle's life, the next regions
        // cut from it. A 2-element array in a block that decodes to gigabytes keeps its 16
        // bytes, not the block.
        let span = view.byte_range();
        let (start, kept) = match self.decoded.get() {
            Some((start, d)) => (*start, d),
            None => {
                let len = at.len().map_err(ReadError::Storage)?;
                // An array over most of the block takes the whole decode (the codec's own,
                // parallel where it has one); a small one its span, streamed up to its end.
                let d = if span.end - span.start > len / 2 {
                    (0, at.read().map_err(ReadError::Storage)?.into_owned())
                } else {
                    let d = at.read_range(span.clone()).map_err(ReadError::Storage)?;
                    (span.start, d.into_owned())
                };
                let (start, d) = self.decoded.get_or_init(|| d);
                (*start, d)
            }
        };
        // Borrowed from the handle: the touched range copied out to outlive this borrow.
        let bad = || ReadError::Array(NdArrayError::Invalid("offset"));
        let cut = |at: u64| at.checked_sub(start).and_then(|d| usize::try_from(d).ok());
        let (lo, hi) = (cut(range.start).ok_or_else(bad)?, cut(range.end).ok_or_else(bad)?);
        let touched = kept.get(lo..hi).ok_or_else(bad)?.to_vec();
        sub.offset -= range.start;
        Ok(RegionData::View(sub, Cow::Owned(touched)))
    }

    /// The bytes of the elements of the region `sel`, C order, in the byte order returned.
    ///
    /// # Errors
    /// As [`Stored::region`]; a buffer that cannot be had.
    pub fn region_bytes(&self, sel: &Selection) -> Result<(Vec<u8>, ByteOrder), ReadError> {
        let size = self.view.datatype.size();
        match self.region(sel)? {
            RegionData::Empty => Ok((Vec::new(), self.view.byteorder)),
            RegionData::View(sub, data) => {
                // Reserved fallibly: within the caller's limit, but perhaps not within this
                // machine.
                let mut out = Vec::new();
                out.try_reserve_exact(sub.count().saturating_mul(size))
                    .map_err(|_| ReadError::TooLarge(sub.count() as u128 * size as u128))?;
                let bad = || ReadError::Array(NdArrayError::Invalid("offset"));
                // The elements in C order, the last axis fastest (an odometer over the index).
                let mut index = vec![0usize; sub.shape.len()];
                loop {
                    let o = index
                        .iter()
                        .zip(&sub.strides)
                        .fold(i128::from(sub.offset), |acc, (&k, &st)| {
                            acc + k as i128 * i128::from(st)
                        });
                    let at = usize::try_from(o).map_err(|_| bad())?;
                    out.extend_from_slice(data.get(at..at + size).ok_or_else(bad)?);
                    let mut d = index.len();
                    loop {
                        if d == 0 {
                            return Ok((out, sub.byteorder));
                        }
                        d -= 1;
                        index[d] += 1;
                        if index[d] < sub.shape[d] {
                            break;
                        }
                        index[d] = 0;
                    }
                }
            }
            // The decoded box is the selection when the selection is a box (a whole read): no
            // copy; otherwise rows copied out of it.
            RegionData::Boxed { view, bytes, .. } if sel.is_box() => Ok((bytes, view.byteorder)),
            RegionData::Boxed { view, bytes, lo } => {
                Ok((sel.gather_bytes_in(&lo, &view.shape, &bytes, size), view.byteorder))
            }
        }
    }

    /// The region `sel`'s bytes into `out` (exactly their size): a box of a chunked array is
    /// decoded straight into `out`, each chunk as it arrives; other storage through
    /// [`Stored::region_bytes`].
    ///
    /// # Errors
    /// As [`Stored::region_bytes`].
    pub fn region_into(&self, sel: &Selection, out: &mut [u8]) -> Result<ByteOrder, ReadError> {
        if sel.is_box() && !out.is_empty() {
            let (lo, extent) = sel.bounding_box();
            if let Some(done) = self.at.read_box_into(&lo, &extent, out) {
                done.map_err(ReadError::Storage)?;
                return Ok(self.view.byteorder);
            }
        }
        let (bytes, order) = self.region_bytes(sel)?;
        if bytes.len() != out.len() {
            return Err(ReadError::Array(NdArrayError::ShapeMismatch));
        }
        out.copy_from_slice(&bytes);
        Ok(order)
    }

    /// The elements of `sel` as `Vec<T>`, C order, native byte order.
    ///
    /// # Errors
    /// As [`Stored::region`]; a type mismatch.
    pub fn region_vec<T: Scalar>(&self, sel: &Selection) -> Result<Vec<T>, ReadError> {
        match self.region(sel)? {
            RegionData::Empty => Ok(Vec::new()),
            RegionData::View(sub, data) => sub.to_vec(&data).map_err(ReadError::Array),
            RegionData::Boxed { view, bytes, lo } => {
                let v: Vec<T> = view.to_vec(&bytes).map_err(ReadError::Array)?;
                Ok(sel.gather_in(&lo, &view.shape, &v))
            }
        }
    }
}
